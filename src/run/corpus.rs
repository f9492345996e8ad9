//! Reading user corpora: `.txt`, a directory of `.txt`, `.jsonl[:field]`, `.parquet[:column]`;
//! and the QA files of the tasks that read documents.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use needlework_generators::haystack::documents::{DocFormat, Documents};
use needlework_generators::tasks::ruler2;
use needlework_generators::{Haystack, Task};

use crate::dataset::parquet_read::{Columns, ParquetFile};
use crate::run::paths;
use crate::run::recipe::BUILTIN_HAYSTACKS;
use crate::usage::usage;

const FORMS: &str =
    "a .txt file, a directory of .txt files, file.jsonl[:field] or file.parquet[:column]";

/// Read the documents a `--haystack` path names, in a fixed order.
pub fn read_documents(spec: &str) -> Result<Vec<String>> {
    let (path, field) = paths::split_field(spec);
    let p = Path::new(path);
    if !p.exists() {
        return Err(usage(format!(
            "invalid --haystack '{spec}': no such file or directory; expected generated, noise, needles, or {FORMS}"
        )));
    }
    if p.is_dir() {
        let mut files = Vec::new();
        collect_txt(p, &mut files)?;
        files.sort();
        if files.is_empty() {
            return Err(usage(format!(
                "invalid --haystack '{spec}': the directory has no .txt files"
            )));
        }
        return files.iter().map(|f| read_text(f)).collect();
    }
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".jsonl") || lower.ends_with(".ndjson") {
        read_jsonl(p, field.unwrap_or("text"))
    } else if lower.ends_with(".parquet") {
        read_parquet(p, field.unwrap_or("text"))
    } else if field.is_some() {
        Err(usage(format!(
            "invalid --haystack '{spec}': a :field suffix applies only to .jsonl and .parquet files"
        )))
    } else {
        Ok(vec![read_text(p)?])
    }
}

/// The haystack of a task that reads documents (qa, ruler2's qa variants): the paragraphs and
/// questions of a SQuAD or HotpotQA file. ruler2 follows RULER v2's HotpotQA documents, so a
/// SQuAD file is refused for it.
pub fn load_documents(task: &dyn Task, path: &str) -> Result<Haystack> {
    let expected = if task.name() == ruler2::NAME {
        "a HotpotQA JSON file"
    } else {
        "a SQuAD or HotpotQA JSON file"
    };
    if BUILTIN_HAYSTACKS.contains(&path) {
        return Err(usage(format!(
            "invalid --data '{path}': {} reads {expected}, not a built-in haystack",
            task.name()
        )));
    }
    let bytes = paths::read_input(Path::new(path), paths::MAX_QA_FILE_BYTES, "QA data")?;
    let docs = Documents::parse(path, &bytes).map_err(usage)?;
    if task.name() == ruler2::NAME && docs.format != DocFormat::Hotpotqa {
        return Err(usage(format!(
            "invalid --data '{path}': ruler2 {} reads {expected}, not SQuAD",
            task.variant()
        )));
    }
    // Questions no row could be made of (an answer in no gold paragraph, a repeated id,
    // supporting facts naming no paragraph) are left out; the user is told how many.
    if docs.skipped.any() {
        eprintln!("note: QA data '{path}': {}", docs.skipped.describe());
    }
    Ok(Haystack::of_documents(Arc::new(docs)))
}

/// Every `.txt` file below `dir`, following symbolic links, each directory read once: a
/// directory reached a second time (a link to itself, to an ancestor or to another folder of
/// the corpus) is refused with exit 2, so a link loop is never walked and no file is read twice.
fn collect_txt(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut seen: HashMap<PathBuf, PathBuf> = HashMap::new();
    walk_txt(dir, out, &mut seen)
}

fn walk_txt(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    seen: &mut HashMap<PathBuf, PathBuf>,
) -> Result<()> {
    let real = dir
        .canonicalize()
        .map_err(|e| usage(format!("cannot read directory '{}': {e}", dir.display())))?;
    if let Some(first) = seen.get(&real) {
        return Err(usage(format!(
            "haystack directory '{}' is reached twice, as '{}' and '{}' (a symbolic link to itself or to another of its folders): link each folder once",
            real.display(),
            first.display(),
            dir.display()
        )));
    }
    seen.insert(real, dir.to_path_buf());
    let entries = fs::read_dir(dir)
        .map_err(|e| usage(format!("cannot read directory '{}': {e}", dir.display())))?;
    for entry in entries {
        let entry = entry.map_err(|e| usage(format!("cannot read '{}': {e}", dir.display())))?;
        let path = entry.path();
        if path.is_dir() {
            walk_txt(&path, out, seen)?;
        } else if path.extension().is_some_and(|e| e == "txt") {
            out.push(path);
        }
    }
    Ok(())
}

fn read_text(path: &Path) -> Result<String> {
    let bytes = paths::read_input(path, paths::MAX_CORPUS_FILE_BYTES, "corpus file")?;
    String::from_utf8(bytes).map_err(|e| {
        usage(format!(
            "corpus file '{}' is not UTF-8 (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

fn read_jsonl(path: &Path, field: &str) -> Result<Vec<String>> {
    let text = read_text(path)?;
    let mut docs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(line).map_err(|e| {
            usage(format!(
                "corpus '{}' line {}: not valid JSON ({e})",
                path.display(),
                i + 1
            ))
        })?;
        match value.get(field) {
            Some(serde_json::Value::String(s)) => docs.push(s.clone()),
            _ => {
                return Err(usage(format!(
                    "corpus '{}' line {}: no string field '{field}' (name another with {}:FIELD)",
                    path.display(),
                    i + 1,
                    path.display()
                )))
            }
        }
    }
    Ok(docs)
}

/// The non-null values of the text column `column` of a user's Parquet file, in file order.
/// Every failure is the user's input, so every error is a usage error (exit 2).
fn read_parquet(path: &Path, column: &str) -> Result<Vec<String>> {
    let bad = |e: anyhow::Error| {
        usage(format!(
            "cannot read Parquet corpus '{}': {}",
            path.display(),
            e.root_cause()
        ))
    };
    let file = ParquetFile::open(path).map_err(bad)?;
    if file.schema().index_of(column).is_err() {
        return Err(usage(format!(
            "Parquet corpus '{}' has no column '{column}' (name another with {}:COLUMN)",
            path.display(),
            path.display()
        )));
    }
    let mut docs = Vec::new();
    for batch in file.project(&[column]).map_err(bad)? {
        let batch = batch.map_err(bad)?;
        let text = Columns::new(&batch).strings(column).map_err(|_| {
            usage(format!(
                "column '{column}' of '{}' is not a string column",
                path.display()
            ))
        })?;
        docs.extend(text.iter().flatten().map(str::to_string));
    }
    Ok(docs)
}
