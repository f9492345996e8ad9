//! End-to-end tests of `gen niah`, `gen verify`, `gen inspect` and `gen list`, running the real
//! binary.

use std::path::Path;

use crate::common::*;
use needlework_generators::Tokenizer;

/// The canonical command gives 10 exact-length rows at the 10 depths, answers at
/// their recorded offsets.
#[test]
fn canonical_command_writes_ten_exact_rows() {
    let t = tmp();
    let out = out_arg(t.path(), "ds");
    generate(
        &out,
        &["niah", "--len", "32k", "--depths", "10", "--seed", "7"],
    );
    let rows = rows(Path::new(&out));
    assert_eq!(rows.len(), 10);
    let tok = Tokenizer::O200k;
    let budget = 32768 - 128;
    for (i, r) in rows.iter().enumerate() {
        let want_depth = i as f64 * 100.0 / 9.0;
        assert!((r.depth_percent.unwrap() - want_depth).abs() < 1e-9);
        assert_eq!(
            r.length as usize,
            tok.count(&r.input).unwrap(),
            "length is the count"
        );
        let tolerance = (budget / 500).max(16);
        assert!(
            r.length <= budget && r.length >= budget - tolerance,
            "{}",
            r.length
        );
        assert_eq!(r.variant, "single");
        assert_eq!(r.answers.len(), 1);
        assert_eq!(r.target, r.answers[0]);
        // The needle sits at its recorded token offset and near its requested depth.
        let needle = &r.params["needles"][0];
        let sentence = niah_needle(
            needle["key"].as_str().unwrap(),
            needle["value"].as_str().unwrap(),
        );
        assert!(sentence.contains(&r.target));
        let at = r.input.find(&sentence).expect("needle in input");
        let before = tok.count(&r.input[..at]).unwrap() as i64;
        assert!(
            (before - r.needle_offsets[0]).abs() <= 1,
            "offset {} vs {before} tokens before the needle",
            r.needle_offsets[0]
        );
        assert!(
            (r.needle_depths[0] - want_depth).abs() < 0.5,
            "{} vs {want_depth}",
            r.needle_depths[0]
        );
    }
}

/// Byte-identical files for the same command and any --threads; seed 8 differs.
#[test]
fn output_is_byte_identical_across_runs_and_threads() {
    let t = tmp();
    let run = |name: &str, extra: &[&str]| {
        let out = out_arg(t.path(), name);
        let seed = if name == "seed8" { "8" } else { "7" };
        let mut args = vec![
            "niah",
            "--len",
            "2k,5000",
            "--depths",
            "4",
            "--samples",
            "3",
            "--seed",
            seed,
            "--variant",
            "multikey",
        ];
        args.extend_from_slice(extra);
        generate(&out, &args);
        dataset_bytes(Path::new(&out))
    };
    let a = run("a", &[]);
    let b = run("b", &[]);
    let one = run("one", &["--threads", "1"]);
    let three = run("three", &["--threads", "3"]);
    assert!(!a.is_empty());
    assert_eq!(a, b);
    assert_eq!(a, one);
    assert_eq!(a, three);
    let other = run("seed8", &[]);
    assert_ne!(a, other);
}

/// Rewrite `file` with `edit` applied to the first row's input (a tampered dataset for verify).
fn rewrite_first_input(file: &Path, edit: impl Fn(&str) -> String) {
    use crate::common::parquet_read::Columns;
    use arrow_array::{ArrayRef, LargeStringArray};
    use parquet::arrow::ArrowWriter;
    use std::sync::Arc;
    let batches = read_batches(file);
    let schema = batches[0].schema();
    let mut w =
        ArrowWriter::try_new(std::fs::File::create(file).unwrap(), schema.clone(), None).unwrap();
    for (k, b) in batches.iter().enumerate() {
        let mut cols: Vec<ArrayRef> = b.columns().to_vec();
        if k == 0 {
            let idx = schema.index_of("input").unwrap();
            let inputs = Columns::new(b).strings("input").unwrap();
            let mut values: Vec<String> = inputs.iter().map(|v| v.unwrap().to_string()).collect();
            values[0] = edit(&values[0]);
            cols[idx] = Arc::new(LargeStringArray::from_iter_values(values));
        }
        w.write(&arrow_array::RecordBatch::try_new(schema.clone(), cols).unwrap())
            .unwrap();
    }
    w.close().unwrap();
}

/// Verify passes an untouched dataset and fails, naming the row, when one input
/// was edited; a truncated or missing file fails too.
#[test]
fn verify_catches_edits_truncation_and_missing_files() {
    let t = tmp();
    let out = out_arg(t.path(), "ds");
    gen_ok(&[
        "niah",
        "--len",
        "1k,2k",
        "--depths",
        "3",
        "--seed",
        "3",
        "--rows-per-file",
        "4",
        "-q",
        "--out",
        &out,
    ]);
    let ok = gen_ok(&["verify", &out, "-q"]);
    assert!(String::from_utf8_lossy(&ok.stdout).starts_with("ok: 6 rows"));

    let files = parquet_files(Path::new(&out));
    assert_eq!(files.len(), 2, "rows-per-file 4 splits 6 rows in two files");
    let first_id = rows(Path::new(&out))[0].id.clone();
    rewrite_first_input(&files[0], |s| s.replacen("the", "thy", 1));
    let bad = gen(&["verify", &out, "-q"]);
    assert_eq!(bad.status.code(), Some(1));
    let report = String::from_utf8_lossy(&bad.stdout);
    assert!(report.contains(&first_id), "{report}");
    assert!(report.contains("content differs"), "{report}");

    // Truncate the second file.
    let bytes = std::fs::read(&files[1]).unwrap();
    std::fs::write(&files[1], &bytes[..bytes.len() / 2]).unwrap();
    let bad = gen(&["verify", &out, "-q"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stdout).contains("cannot read file"));

    std::fs::remove_file(&files[1]).unwrap();
    let bad = gen(&["verify", &out, "-q"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stdout).contains("missing file"));
}

/// Bad input exits 2 with one line and leaves nothing behind.
#[test]
fn bad_input_exits_2_with_one_line_and_no_output() {
    let t = tmp();
    let bad_tok = t.path().join("bad.json");
    std::fs::write(&bad_tok, "{\"model\": ").unwrap();
    let empty = t.path().join("empty.txt");
    std::fs::write(&empty, " \n\n ").unwrap();
    let unsplittable = t.path().join("one.txt");
    std::fs::write(&unsplittable, "just words and no sentence end").unwrap();
    let undefined = t.path().join("undef.j2");
    std::fs::write(&undefined, "Read:\n{{ context }}\n{{ answer_key }}").unwrap();
    let syntax = t.path().join("syntax.j2");
    std::fs::write(&syntax, "{{ context }}\n{% for %}").unwrap();
    let busy = t.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("keep.txt"), "mine").unwrap();
    let (bt, em, un, ud, sy) = (
        bad_tok.display().to_string(),
        empty.display().to_string(),
        unsplittable.display().to_string(),
        undefined.display().to_string(),
        syntax.display().to_string(),
    );
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["niah", "--frobnicate"], "--frobnicate"),
        (vec!["haystack"], "haystack"),
        (vec!["niah", "--len", "0"], "--len"),
        (vec!["niah", "--len", "12q"], "12q"),
        (vec!["niah", "--len", "50"], "minimum"),
        (vec!["niah", "--depths", "0"], "--depths"),
        (vec!["niah", "--depths", "0,120"], "120"),
        (vec!["niah", "--keys", "2", "--queries", "3"], "--queries"),
        (vec!["niah", "--tokenizer", &bt], "bad.json"),
        (
            vec!["niah", "--tokenizer", "missing/tokenizer.json"],
            "missing",
        ),
        (vec!["niah", "--tokenizer", "llama-9"], "llama-9"),
        (vec!["niah", "--haystack", &em], "empty"),
        (vec!["niah", "--haystack", &un], "sentence boundaries"),
        (vec!["niah", "--haystack", "no/such/corpus.txt"], "no such"),
        (vec!["niah", "--template", &ud], "undef.j2:3:4"),
        (vec!["niah", "--template", &sy], "syntax.j2:2"),
        (vec!["niah", "--variant", "quadruple"], "quadruple"),
        (vec!["niah", "--split", "test-1"], "--split"),
        (vec!["niah", "--spread", "wide"], "--spread"),
    ];
    for (args, needle) in cases {
        assert_refused(&args, &out_arg(t.path(), "never"), needle);
    }
    // A non-empty --out is refused and left untouched; --force replaces it.
    let b = busy.display().to_string();
    let res = gen(&["niah", "--len", "1k", "--out", &b]);
    assert_eq!(res.status.code(), Some(2));
    assert!(busy.join("keep.txt").exists());
    gen_ok(&["niah", "--len", "1k", "--out", &b, "--force", "-q"]);
    assert!(!busy.join("keep.txt").exists());
    assert!(busy.join("manifest.json").exists());
    // No staging directories are left next to the outputs.
    for e in std::fs::read_dir(t.path()).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.contains(".tmp-"), "{name}");
    }
}

fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The context between the template's document tags, with needles removed.
fn context_sentences(r: &TestRow) -> Vec<String> {
    let start = r.input.find("<document>\n").unwrap() + "<document>\n".len();
    let end = r.input.find("\n</document>").unwrap();
    let mut ctx = r.input[start..end].to_string();
    for n in r.params["needles"].as_array().unwrap() {
        ctx = ctx.replace(
            &niah_needle(n["key"].as_str().unwrap(), n["value"].as_str().unwrap()),
            "",
        );
    }
    let mut out: Vec<String> = ctx
        .split_inclusive(['.', '!', '?'])
        .map(normalize)
        .filter(|s| !s.is_empty())
        .collect();
    out.pop(); // the last may be a partial sentence
    out
}

/// .txt and .jsonl:field corpora are the haystack, really.
#[test]
fn user_corpora_are_the_haystack() {
    let t = tmp();
    let corpus_text: String = ["bread", "clocks", "rivers"]
        .iter()
        .map(|n| std::fs::read_to_string(fixture(&format!("corpus/{n}.txt"))).unwrap())
        .collect::<Vec<_>>()
        .join(" ");
    let corpus_norm = normalize(&corpus_text);
    for haystack in [
        fixture("corpus/clocks.txt"),
        fixture("corpus"),
        format!("{}:body", fixture("corpus.jsonl")),
    ] {
        let out = out_arg(t.path(), "ds");
        gen_ok(&[
            "niah",
            "--len",
            "1500",
            "--depths",
            "3",
            "--haystack",
            &haystack,
            "--out",
            &out,
            "--force",
            "-q",
        ]);
        let rows = rows(Path::new(&out));
        assert_eq!(rows.len(), 3);
        for r in &rows {
            let sentences = context_sentences(r);
            assert!(sentences.len() > 20, "{haystack}: {}", sentences.len());
            for s in sentences {
                assert!(
                    corpus_norm.contains(&s),
                    "{haystack}: {s:?} is not corpus text"
                );
            }
        }
    }
    // jsonl without the field suffix looks for `text`, which this file lacks: a clear error.
    let res = gen(&[
        "niah",
        "--haystack",
        &fixture("corpus.jsonl"),
        "--out",
        &out_arg(t.path(), "x"),
    ]);
    assert_eq!(res.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&res.stderr).contains("no string field 'text'"));
}

/// The named variants.
#[test]
fn variants_have_the_right_needles_and_answers() {
    let t = tmp();
    for (variant, needles, answers) in [
        ("multikey", 4, 1),
        ("multivalue", 4, 4),
        ("multiquery", 4, 4),
        ("none", 1, 1),
    ] {
        let out = out_arg(t.path(), variant);
        generate(
            &out,
            &[
                "niah",
                "--variant",
                variant,
                "--len",
                "4k",
                "--depths",
                "0,50,100",
            ],
        );
        assert!(Path::new(&out).join(format!("niah_{variant}")).is_dir());
        for r in rows(Path::new(&out)) {
            assert_eq!(r.variant, variant);
            assert_eq!(r.needle_offsets.len(), needles, "{variant}");
            assert_eq!(r.answers.len(), answers, "{variant}");
            let mut offs = r.needle_offsets.clone();
            offs.sort();
            offs.dedup();
            assert_eq!(offs.len(), needles, "{variant}: distinct places");
            if variant == "none" {
                assert_eq!((r.target.as_str(), r.metric.as_str()), ("none", "exact"));
                let asked = r.params["asked"][0].as_str().unwrap();
                assert!(!r.input.contains(&format!("assigned to {asked} is")));
                assert!(r.input.contains(asked), "the question names the absent key");
            } else {
                assert_eq!(r.metric, "all");
                for a in &r.answers {
                    assert_eq!(r.input.matches(a.as_str()).count(), 1, "{variant}: {a}");
                }
                assert_eq!(r.target, r.answers.join(", "));
            }
        }
    }
}

/// A tokenizer.json gives lengths equal to the tokenizers crate's
/// count; tests/python/check_dataset.py compares with Hugging Face's Python package in CI.
#[test]
fn hugging_face_tokenizer_files_count_exactly() {
    let t = tmp();
    for file in ["tokenizer-bytelevel.json", "tokenizer-metaspace.json"] {
        let path = fixture(file);
        let out = out_arg(t.path(), file);
        generate(
            &out,
            &[
                "niah",
                "--tokenizer",
                &path,
                "--len",
                "1k,3000",
                "--depths",
                "3",
            ],
        );
        let tok = Tokenizer::from_json_bytes(&std::fs::read(&path).unwrap(), &path).unwrap();
        for r in rows(Path::new(&out)) {
            assert_eq!(r.length as usize, tok.count(&r.input).unwrap());
            // What fits the budget is what the model reads: the input and the answer prefix.
            let prompt = tok
                .count(&format!("{}{}", r.input, r.answer_prefix))
                .unwrap() as i64;
            let budget = r.target_length - 128;
            assert!(
                prompt <= budget && prompt >= budget - 16 && r.length < prompt,
                "{file}: {} {prompt}",
                r.length
            );
        }
        let manifest: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(Path::new(&out).join("manifest.json")).unwrap(),
        )
        .unwrap();
        assert!(manifest["recipe"]["tokenizer_id"]
            .as_str()
            .unwrap()
            .starts_with("hf:"));
        gen_ok(&["verify", &out, "-q"]);
    }
}

/// The written files match the output contract in schemas/columns.json.
#[test]
fn written_files_match_the_schema_contract() {
    let t = tmp();
    let out = out_arg(t.path(), "ds");
    generate(&out, &["niah", "--len", "1k"]);
    let contract: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("schemas/columns.json")).unwrap(),
    )
    .unwrap();
    fn type_name(t: &arrow_schema::DataType) -> String {
        use arrow_schema::DataType::*;
        match t {
            Utf8 => "string".into(),
            LargeUtf8 => "large_string".into(),
            Int32 => "int32".into(),
            Int64 => "int64".into(),
            Float64 => "float64".into(),
            List(f) => format!("list<{}>", type_name(f.data_type())),
            other => format!("{other:?}"),
        }
    }
    for f in parquet_files(Path::new(&out)) {
        let schema = read_batches(&f)[0].schema();
        let cols = contract["columns"].as_array().unwrap();
        assert_eq!(schema.fields().len(), cols.len());
        for (field, col) in schema.fields().iter().zip(cols) {
            assert_eq!(field.name(), col["name"].as_str().unwrap());
            assert_eq!(
                type_name(field.data_type()),
                col["type"].as_str().unwrap(),
                "{}",
                field.name()
            );
            assert_eq!(
                field.is_nullable(),
                col["nullable"].as_bool().unwrap(),
                "{}",
                field.name()
            );
        }
        // created_by is fixed, and the canary is in the key-value metadata.
        let reader =
            parquet::file::reader::SerializedFileReader::new(std::fs::File::open(&f).unwrap())
                .unwrap();
        use parquet::file::reader::FileReader;
        let meta = reader.metadata().file_metadata();
        assert!(meta.created_by().unwrap().starts_with("needlework "));
        let kv = meta.key_value_metadata().unwrap();
        assert!(kv.iter().any(|k| k.key == "needlework.canary"));
    }
    let card = std::fs::read_to_string(Path::new(&out).join("README.md")).unwrap();
    assert!(card.starts_with("---\nconfigs:\n- config_name: niah_single\n"));
    assert!(card.contains("path: niah_single/test-*.parquet"));
}

#[test]
fn inspect_and_list_describe_what_there_is() {
    let t = tmp();
    let out = out_arg(t.path(), "ds");
    generate(
        &out,
        &["niah", "--len", "1k,2k", "--depths", "2", "--samples", "2"],
    );
    let text = String::from_utf8(gen_ok(&["inspect", &out]).stdout).unwrap();
    let table: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    for cell in [
        ["niah", "single", "1024", "0.0", "2"],
        ["niah", "single", "2048", "100.0", "2"],
    ] {
        assert!(
            table.iter().any(|l| l.len() > 5 && l[..5] == cell),
            "{cell:?} in {text}"
        );
    }
    assert!(text.contains("dataset hash"));
    let file = parquet_files(Path::new(&out))[0].display().to_string();
    assert!(String::from_utf8(gen_ok(&["inspect", &file]).stdout)
        .unwrap()
        .contains("8 rows"));
    let list = String::from_utf8(gen_ok(&["list"]).stdout).unwrap();
    for word in ["niah", "o200k", "generated", "niah/default"] {
        assert!(list.contains(word), "{list}");
    }
    assert_eq!(gen(&["list", "widgets"]).status.code(), Some(2));
}

/// --jsonl writes the same rows as the Parquet files.
#[test]
fn jsonl_mirrors_parquet() {
    let t = tmp();
    let out = out_arg(t.path(), "ds");
    generate(&out, &["niah", "--len", "1k", "--depths", "5", "--jsonl"]);
    let rows = rows(Path::new(&out));
    let text =
        std::fs::read_to_string(Path::new(&out).join("niah_single/test-00000-of-00001.rows.jsonl"))
            .unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), rows.len());
    for (l, r) in lines.iter().zip(&rows) {
        assert_eq!(l["id"], r.id.as_str());
        assert_eq!(l["input"], r.input.as_str());
        assert_eq!(l["length"], r.length);
    }
}

/// With the generated haystack, a needle does not stand out by its shape: the asked 7-digit
/// value is not the only 7-digit number in the input, and no haystack sentence names an asked
/// key (the screen keeps the answer unique).
#[test]
fn generated_haystack_does_not_give_the_needle_away() {
    let t = tmp();
    let out = out_arg(t.path(), "shape");
    generate(
        &out,
        &[
            "niah",
            "--variant",
            "multikey",
            "--len",
            "8k,32k",
            "--depths",
            "4",
            "--samples",
            "3",
        ],
    );
    let rows = rows(std::path::Path::new(&out));
    assert_eq!(rows.len(), 24);
    for row in rows {
        let sevens: Vec<&str> = row
            .input
            .split(|c: char| !c.is_ascii_digit())
            .filter(|d| d.len() == 7)
            .collect();
        for value in &row.answers {
            assert!(
                sevens.iter().any(|d| d != value),
                "{}: {value} is the only 7-digit number",
                row.id
            );
            assert_eq!(
                row.input.matches(value.as_str()).count(),
                1,
                "{}: the value occurs outside its needle",
                row.id
            );
        }
        let needles = row.params["needles"].as_array().unwrap();
        for key in row.params["asked"].as_array().unwrap() {
            let key = key.as_str().unwrap();
            let spaced = key.replace('-', " ").to_lowercase();
            let lower = row.input.to_lowercase();
            let in_needles = needles.iter().filter(|n| n["key"] == key).count();
            // The key is in its needles and in the question; no haystack sentence has it,
            // hyphenated or not.
            assert!(
                lower.matches(&key.to_lowercase()).count() <= in_needles + 2,
                "{}: '{key}' appears outside its needles",
                row.id
            );
            assert_eq!(lower.matches(&spaced).count(), 0, "{}: '{spaced}'", row.id);
        }
    }
}
