//! Reading the user's MMLU copy for ruler2's multiple-choice haystacks: the directory of the
//! Hub's `cais/mmlu` `all` config, as Parquet (`test-*.parquet`, `auxiliary_train-*.parquet`)
//! or as JSON Lines named by split (`test.jsonl`, `auxiliary_train.jsonl`, or `test-*.jsonl`).
//! Files are taken in name order and rows in file order, so a copy gives one bank and one
//! hash whichever layout holds it. Every failure is the user's input: exit 2, one line.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use needlework_generators::haystack::mmlu::{McItem, Mmlu};
use needlework_generators::{Haystack, Task};

use crate::dataset::parquet_read::{Columns, ParquetFile};
use crate::run::paths;
use crate::run::recipe::BUILTIN_HAYSTACKS;
use crate::usage::usage;

/// The two splits ruler2 reads: needles from `test`, the haystack from `auxiliary_train`.
pub const SPLITS: [&str; 2] = ["test", "auxiliary_train"];

/// The columns of an item, as the Hub's files hold them.
const COLUMNS: [&str; 4] = ["question", "subject", "choices", "answer"];

/// What a directory must hold, for refusals.
const EXPECTED: &str = "expected the directory of the Hub's cais/mmlu \"all\" config, holding test-*.parquet and auxiliary_train-*.parquet (or test.jsonl and auxiliary_train.jsonl)";

/// What an item must be, for refusals.
const ITEM: &str = "question (string), subject (string), choices (a list of 4 strings) and answer (an integer 0-3)";

/// ruler2's MMLU haystack: the directory `dir`, read and checked. A built-in haystack name is
/// refused: the MMLU variants read the user's copy.
pub fn load_mmlu(task: &dyn Task, dir: &str) -> Result<Haystack> {
    if BUILTIN_HAYSTACKS.contains(&dir) {
        return Err(usage(format!(
            "invalid --data '{dir}': {} {} reads an MMLU directory, not a built-in haystack; {EXPECTED}",
            task.name(),
            task.variant()
        )));
    }
    let (test, aux) = read_mmlu(dir)?;
    let mmlu = Mmlu::new(dir, test, aux).map_err(usage)?;
    Ok(Haystack::of_mmlu(Arc::new(mmlu)))
}

/// The test and auxiliary_train items of the MMLU directory `dir`, each split's files in name
/// order and rows in file order.
pub fn read_mmlu(dir: &str) -> Result<(Vec<McItem>, Vec<McItem>)> {
    let p = Path::new(dir);
    if !p.is_dir() {
        let what = if p.exists() {
            "not a directory"
        } else {
            "no such directory"
        };
        return Err(usage(format!(
            "invalid MMLU data '{dir}': {what}; {EXPECTED}"
        )));
    }
    let names = file_names(p)?;
    let mut splits = Vec::new();
    for split in SPLITS {
        let pick = |ext: &str| -> Vec<PathBuf> {
            names
                .iter()
                .filter(|n| {
                    *n == &format!("{split}.{ext}")
                        || (n.starts_with(&format!("{split}-")) && n.ends_with(&format!(".{ext}")))
                })
                .map(|n| p.join(n))
                .collect()
        };
        let (parquet, jsonl) = (pick("parquet"), pick("jsonl"));
        let mut items = Vec::new();
        match (parquet.is_empty(), jsonl.is_empty()) {
            (true, true) => {
                return Err(usage(format!(
                    "invalid MMLU data '{dir}': no {split} files ({split}-*.parquet or {split}.jsonl); {EXPECTED}"
                )))
            }
            (false, false) => {
                return Err(usage(format!(
                    "invalid MMLU data '{dir}': its {split} split is both Parquet and JSON Lines files: keep one layout"
                )))
            }
            (false, true) => {
                for f in &parquet {
                    read_parquet(f, &mut items)?;
                }
            }
            (true, false) => {
                for f in &jsonl {
                    read_jsonl(f, &mut items)?;
                }
            }
        }
        if items.is_empty() {
            return Err(usage(format!(
                "invalid MMLU data '{dir}': its {split} files hold no rows"
            )));
        }
        splits.push(items);
    }
    let aux = splits.pop().unwrap_or_default();
    let test = splits.pop().unwrap_or_default();
    Ok((test, aux))
}

/// The names of the regular files in `dir` (links followed), sorted.
fn file_names(dir: &Path) -> Result<Vec<String>> {
    let cannot =
        |e: std::io::Error| usage(format!("cannot read directory '{}': {e}", dir.display()));
    let mut names = Vec::new();
    for entry in fs::read_dir(dir).map_err(cannot)? {
        let entry = entry.map_err(cannot)?;
        if entry.path().is_file() {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// One item, checked: 4 choices, an answer 0-3, a question. `at` names the file and row.
fn item(
    at: &dyn Fn() -> String,
    question: Option<&str>,
    subject: Option<&str>,
    choices: Vec<String>,
    answer: Option<i64>,
) -> Result<McItem> {
    let bad = |m: String| usage(format!("MMLU file {}: {m}", at()));
    let question = question.ok_or_else(|| bad("question is null".into()))?;
    if question.trim().is_empty() {
        return Err(bad("the question is empty".into()));
    }
    let subject = subject.ok_or_else(|| bad("subject is null".into()))?;
    if choices.len() != 4 {
        return Err(bad(format!(
            "choices has {} options, expected 4 (A-D)",
            choices.len()
        )));
    }
    let answer = match answer {
        Some(a @ 0..=3) => a as u8,
        Some(a) => return Err(bad(format!("answer is {a}, expected 0, 1, 2 or 3 (A-D)"))),
        None => return Err(bad("answer is null".into())),
    };
    Ok(McItem {
        question: question.to_string(),
        subject: subject.to_string(),
        choices,
        answer,
    })
}

/// The items of one Parquet file, in file order.
fn read_parquet(path: &Path, out: &mut Vec<McItem>) -> Result<()> {
    let bad = |e: anyhow::Error| {
        usage(format!(
            "cannot read MMLU file '{}': {}",
            path.display(),
            e.root_cause()
        ))
    };
    let file = ParquetFile::open(path).map_err(bad)?;
    if let Some(c) = COLUMNS.iter().find(|c| file.schema().index_of(c).is_err()) {
        return Err(usage(format!(
            "MMLU file '{}' has no column '{c}': expected {ITEM}",
            path.display()
        )));
    }
    let mut row = 0usize;
    for batch in file.project(&COLUMNS).map_err(bad)? {
        let batch = batch.map_err(bad)?;
        let cols = Columns::in_file(&batch, path);
        let typed = |e: anyhow::Error| usage(format!("MMLU {e}: expected {ITEM}"));
        let question = cols.strings("question").map_err(typed)?;
        let subject = cols.strings("subject").map_err(typed)?;
        let choices = cols.string_lists("choices").map_err(typed)?;
        // The Hub stores the answer (a class label) as int64; other writers may use int32.
        let answers: Vec<Option<i64>> = match cols.i64s("answer") {
            Ok(a) => (0..cols.num_rows()).map(|r| a.get(r)).collect(),
            Err(e) => match cols.i32s("answer") {
                Ok(a) => (0..cols.num_rows())
                    .map(|r| a.get(r).map(i64::from))
                    .collect(),
                Err(_) => return Err(typed(e)),
            },
        };
        for (r, answer) in answers.into_iter().enumerate() {
            row += 1;
            let at = || format!("'{}' row {row}", path.display());
            out.push(item(
                &at,
                question.get(r),
                subject.get(r),
                choices.value(r),
                answer,
            )?);
        }
    }
    Ok(())
}

/// The items of one JSON Lines file (one object per line, blank lines skipped), in file order.
fn read_jsonl(path: &Path, out: &mut Vec<McItem>) -> Result<()> {
    let bytes = paths::read_input(path, paths::MAX_QA_FILE_BYTES, "MMLU file")?;
    let text = String::from_utf8(bytes).map_err(|e| {
        usage(format!(
            "MMLU file '{}' is not UTF-8 (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })?;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("'{}' line {}", path.display(), i + 1);
        let value: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| usage(format!("MMLU file {}: not valid JSON ({e})", at())))?;
        if let Some(c) = COLUMNS.iter().find(|c| value.get(**c).is_none()) {
            return Err(usage(format!(
                "MMLU file {} has no field '{c}': expected {ITEM}",
                at()
            )));
        }
        let text_of = |k: &str| -> Result<Option<&str>> {
            match &value[k] {
                serde_json::Value::String(s) => Ok(Some(s.as_str())),
                serde_json::Value::Null => Ok(None),
                _ => Err(usage(format!(
                    "MMLU file {}: {k} is not a string: expected {ITEM}",
                    at()
                ))),
            }
        };
        let choices = match &value["choices"] {
            serde_json::Value::Array(items) => items
                .iter()
                .map(|c| c.as_str().map(str::to_string))
                .collect::<Option<Vec<String>>>(),
            _ => None,
        }
        .ok_or_else(|| {
            usage(format!(
                "MMLU file {}: choices is not a list of strings: expected {ITEM}",
                at()
            ))
        })?;
        let answer = match &value["answer"] {
            serde_json::Value::Null => None,
            v => Some(v.as_i64().ok_or_else(|| {
                usage(format!(
                    "MMLU file {}: answer is {v}, expected 0, 1, 2 or 3 (A-D)",
                    at()
                ))
            })?),
        };
        out.push(item(
            &at,
            text_of("question")?,
            text_of("subject")?,
            choices,
            answer,
        )?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::builder::{ListBuilder, StringBuilder};
    use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
    use parquet::arrow::ArrowWriter;

    type Row<'a> = (&'a str, &'a str, Vec<&'a str>, i64);

    fn rows(prefix: &str, n: usize) -> Vec<(String, String, Vec<String>, i64)> {
        (0..n)
            .map(|i| {
                (
                    format!("{prefix} question {i}?"),
                    "arithmetic".to_string(),
                    (0..4).map(|c| format!("{prefix} {i} option {c}")).collect(),
                    (i % 4) as i64,
                )
            })
            .collect()
    }

    fn write_parquet(path: &Path, rows: &[Row], int32: bool) {
        let question: ArrayRef = Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0)));
        let subject: ArrayRef = Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1)));
        let mut choices = ListBuilder::new(StringBuilder::new());
        for r in rows {
            for c in &r.2 {
                choices.values().append_value(c);
            }
            choices.append(true);
        }
        let choices: ArrayRef = Arc::new(choices.finish());
        let answer: ArrayRef = if int32 {
            Arc::new(Int32Array::from_iter_values(
                rows.iter().map(|r| r.3 as i32),
            ))
        } else {
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.3)))
        };
        let batch = RecordBatch::try_from_iter([
            ("question", question),
            ("subject", subject),
            ("choices", choices),
            ("answer", answer),
        ])
        .unwrap();
        let mut w =
            ArrowWriter::try_new(fs::File::create(path).unwrap(), batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }

    fn write_jsonl(path: &Path, rows: &[Row]) {
        let lines: Vec<String> = rows
            .iter()
            .map(|r| {
                serde_json::json!({"question": r.0, "subject": r.1, "choices": r.2, "answer": r.3})
                    .to_string()
            })
            .collect();
        fs::write(path, lines.join("\n") + "\n").unwrap();
    }

    fn borrow(rows: &[(String, String, Vec<String>, i64)]) -> Vec<Row<'_>> {
        rows.iter()
            .map(|r| {
                (
                    r.0.as_str(),
                    r.1.as_str(),
                    r.2.iter().map(String::as_str).collect(),
                    r.3,
                )
            })
            .collect()
    }

    fn refusal(dir: &Path) -> String {
        let e = read_mmlu(dir.to_str().unwrap()).unwrap_err();
        assert!(
            e.downcast_ref::<crate::usage::UsageError>().is_some(),
            "{e}"
        );
        let text = e.to_string();
        assert!(!text.contains('\n'), "{text}");
        text
    }

    /// Both layouts give the same items, files in name order and rows in file order.
    #[test]
    fn parquet_and_jsonl_give_the_same_items() {
        let (t, a1, a2) = (rows("t", 3), rows("a", 5), rows("b", 2));
        let pq = tempfile::tempdir().unwrap();
        write_parquet(
            &pq.path().join("test-00000-of-00001.parquet"),
            &borrow(&t),
            false,
        );
        // Named so that read order is by name, not by creation.
        write_parquet(
            &pq.path().join("auxiliary_train-00001-of-00002.parquet"),
            &borrow(&a2),
            true,
        );
        write_parquet(
            &pq.path().join("auxiliary_train-00000-of-00002.parquet"),
            &borrow(&a1),
            false,
        );
        // Other splits of the config are not read.
        write_parquet(
            &pq.path().join("dev-00000-of-00001.parquet"),
            &borrow(&a2),
            false,
        );
        let js = tempfile::tempdir().unwrap();
        write_jsonl(&js.path().join("test.jsonl"), &borrow(&t));
        let mut a = a1.clone();
        a.extend(a2.clone());
        write_jsonl(&js.path().join("auxiliary_train.jsonl"), &borrow(&a));
        let from_pq = read_mmlu(pq.path().to_str().unwrap()).unwrap();
        let from_js = read_mmlu(js.path().to_str().unwrap()).unwrap();
        assert_eq!(from_pq, from_js);
        assert_eq!(from_pq.0.len(), 3);
        assert_eq!(from_pq.1.len(), 7);
        assert_eq!(from_pq.1[5].question, "b question 0?");
        assert_eq!(from_pq.1[1].answer, 1);
        assert_eq!(from_pq.0[2].choices[3], "t 2 option 3");
    }

    #[test]
    fn bad_copies_are_refused_with_the_file_and_row() {
        let good = rows("a", 3);
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert!(refusal(&d.join("absent")).contains("no such directory"));
        write_jsonl(&d.join("auxiliary_train.jsonl"), &borrow(&good));
        let e = refusal(d);
        assert!(e.contains("no test files"), "{e}");
        write_parquet(
            &d.join("test-00000-of-00001.parquet"),
            &borrow(&good),
            false,
        );
        write_jsonl(&d.join("test.jsonl"), &borrow(&good));
        assert!(refusal(d).contains("both Parquet and JSON Lines"));
        fs::remove_file(d.join("test-00000-of-00001.parquet")).unwrap();
        assert!(read_mmlu(d.to_str().unwrap()).is_ok());
        let mut bad = borrow(&good);
        bad[1].2.pop();
        write_jsonl(&d.join("test.jsonl"), &bad);
        let e = refusal(d);
        assert!(
            e.contains("test.jsonl' line 2: choices has 3 options"),
            "{e}"
        );
        let mut bad = borrow(&good);
        bad[2].3 = 5;
        write_jsonl(&d.join("test.jsonl"), &bad);
        let e = refusal(d);
        assert!(e.contains("line 3: answer is 5"), "{e}");
        fs::remove_file(d.join("test.jsonl")).unwrap();
        write_parquet(&d.join("test-00000-of-00001.parquet"), &bad, false);
        let e = refusal(d);
        assert!(e.contains("row 3: answer is 5"), "{e}");
        fs::write(
            d.join("test.jsonl"),
            "{\"question\": \"q\", \"subject\": \"s\", \"choices\": [\"a\",\"b\",\"c\",\"d\"]}\n",
        )
        .unwrap();
        fs::remove_file(d.join("test-00000-of-00001.parquet")).unwrap();
        let e = refusal(d);
        assert!(e.contains("no field 'answer'"), "{e}");
        fs::remove_file(d.join("test.jsonl")).unwrap();
        // A Parquet file without a column.
        let q: ArrayRef = Arc::new(StringArray::from(vec!["q"]));
        let batch = RecordBatch::try_from_iter([("question", q)]).unwrap();
        let f = fs::File::create(d.join("test-00000-of-00001.parquet")).unwrap();
        let mut w = ArrowWriter::try_new(f, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let e = refusal(d);
        assert!(e.contains("has no column 'subject'"), "{e}");
    }

    /// The committed fixtures hold one copy in two layouts: one bank, one hash.
    #[test]
    fn the_fixture_layouts_are_one_copy() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mmlu");
        let load = |layout: &str| {
            let dir = fixtures.join(layout);
            let (test, aux) = read_mmlu(dir.to_str().unwrap()).unwrap();
            (
                test.len(),
                aux.len(),
                Mmlu::new(layout, test, aux).unwrap().content_hash,
            )
        };
        let (pq, js) = (load("parquet"), load("jsonl"));
        assert_eq!(pq, js);
        assert_eq!((pq.0, pq.1), (200, 1500));
    }
}
