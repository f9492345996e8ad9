//! Every edit a dataset could suffer — to a shard, a mirror, the manifest, the files a loader
//! reads — is caught by `verify`, and what hosting adds is not taken for data.

use crate::common::*;
use std::path::Path;

use super::*;

/// JSON Lines mirrors, stray config folders and the card's front matter are data a
/// loader reads, so verify checks them; tool folders are not data.
#[test]
fn every_file_a_loader_reads_is_checked() {
    let t = tmp();
    let out = out_arg(t.path(), "d");
    generate(&out, &["niah", "--len", "1k", "--depths", "2", "--jsonl"]);
    let dir = Path::new(&out);
    // Tool folders are left out, except data files a glob would still read.
    for tool in ["lm_eval", "inspect", "opencompass", "ruler", "scores"] {
        std::fs::create_dir_all(dir.join(tool).join("sub")).unwrap();
        std::fs::write(dir.join(tool).join("task.yaml"), "not data").unwrap();
        std::fs::write(dir.join(tool).join("sub/scores.json"), "{}").unwrap();
    }
    assert_verifies(&out);
    std::fs::write(dir.join("scores/x.parquet"), "data?").unwrap();
    assert_verify_fails(&out, "unexpected file scores/x.parquet");
    std::fs::remove_file(dir.join("scores/x.parquet")).unwrap();
    // Hidden files are files too (DuckDB's */*.parquet matches them).
    std::fs::write(dir.join("niah_single/.x.parquet"), "data?").unwrap();
    assert_verify_fails(&out, "unexpected file niah_single/.x.parquet");
    std::fs::remove_file(dir.join("niah_single/.x.parquet")).unwrap();
    assert_verifies(&out);
    let mirror = dir.join("niah_single/test-00000-of-00001.rows.jsonl");
    let original = std::fs::read_to_string(&mirror).unwrap();
    std::fs::write(&mirror, original.replacen("access", "excess", 1)).unwrap();
    assert_verify_fails(&out, "niah_single/test-00000-of-00001.rows.jsonl changed");
    std::fs::remove_file(&mirror).unwrap();
    assert_verify_fails(
        &out,
        "missing file niah_single/test-00000-of-00001.rows.jsonl",
    );
    std::fs::write(&mirror, &original).unwrap();
    assert_verifies(&out);
    // A config folder the manifest does not list.
    std::fs::create_dir(dir.join("other")).unwrap();
    std::fs::copy(
        dir.join("niah_single/test-00000-of-00001.parquet"),
        dir.join("other/test-00000-of-00001.parquet"),
    )
    .unwrap();
    assert_verify_fails(&out, "unexpected file other/test-00000-of-00001.parquet");
    std::fs::remove_dir_all(dir.join("other")).unwrap();
    // The card's front matter decides what loaders read.
    let card = std::fs::read_to_string(dir.join("README.md")).unwrap();
    std::fs::write(
        dir.join("README.md"),
        card.replace("path: niah_single/test-*.parquet", "path: '*/*.parquet'"),
    )
    .unwrap();
    assert_verify_fails(&out, "README.md front matter");
    // Its prose is free to edit.
    std::fs::write(dir.join("README.md"), card.clone() + "\nOur notes.\n").unwrap();
    assert_verifies(&out);
}

/// Found by fuzzing: a manifest asking for a 2^40-token instance made verify try to build it.
/// A recipe read back is checked like a command line, and refused with exit 2.
#[test]
fn impossible_recipes_in_a_manifest_are_refused() {
    let t = tmp();
    let out = out_arg(t.path(), "d");
    generate(&out, &["niah", "--len", "1k"]);
    edit_manifest(&out, |m| {
        m["recipe"]["lengths"] = serde_json::json!([1u64 << 40])
    });
    assert_exit_2(&["verify", &out, "-q"], "recipe gen does not make");
}

/// Found by the adversarial review: shards swapped together with their manifest entries, and
/// special files standing in for dataset files.
#[test]
fn shard_order_and_special_files_are_checked() {
    let t = tmp();
    let out = out_arg(t.path(), "d");
    generate(
        &out,
        &[
            "niah",
            "--len",
            "1k",
            "--depths",
            "2",
            "--samples",
            "2",
            "--rows-per-file",
            "2",
        ],
    );
    let dir = Path::new(&out);
    let path = dir.join("manifest.json");
    let original = std::fs::read_to_string(&path).unwrap();
    edit_manifest(&out, |m| {
        let files = m["files"].as_array_mut().unwrap();
        assert_eq!(files.len(), 2);
        files.swap(0, 1);
    });
    let a = dir.join("niah_single/test-00000-of-00002.parquet");
    let b = dir.join("niah_single/test-00001-of-00002.parquet");
    let (ba, bb) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    std::fs::write(&a, &bb).unwrap();
    std::fs::write(&b, &ba).unwrap();
    assert_verify_fails(
        &out,
        "listed where niah_single/test-00000-of-00002.parquet belongs",
    );
    std::fs::write(&a, &ba).unwrap();
    std::fs::write(&b, &bb).unwrap();
    std::fs::write(&path, &original).unwrap();
    assert_verifies(&out);
    #[cfg(unix)]
    if Path::new("/dev/zero").exists() {
        std::fs::rename(&path, dir.join("manifest.bak")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        assert_exit_2(&["verify", &out, "-q"], "not a regular file");
        std::fs::remove_file(&path).unwrap();
        std::fs::rename(dir.join("manifest.bak"), &path).unwrap();
        std::fs::rename(&a, dir.join("a.bak")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &a).unwrap();
        assert_verify_fails(&out, "is not a regular file");
    }
}

/// Found by the adversarial review: an override without the recorded `:field` lost the field,
/// and a dataset of another format exited 1 as if tampered with (it is named, exit 2).
#[test]
fn overrides_keep_the_field_and_other_formats_are_named() {
    let t = tmp();
    let corpus = t.path().join("c.jsonl");
    std::fs::copy(fixture("corpus.jsonl"), &corpus).unwrap();
    let out = out_arg(t.path(), "d");
    let haystack = format!("{}:body", corpus.display());
    generate(&out, &["niah", "--len", "1k", "--haystack", &haystack]);
    let moved = t.path().join("moved.jsonl");
    std::fs::rename(&corpus, &moved).unwrap();
    let m = moved.display().to_string();
    let res = gen(&["verify", &out, "-q", "--haystack", &m]);
    assert!(
        res.status.success(),
        "{}",
        String::from_utf8_lossy(&res.stderr)
    );
    edit_manifest(&out, |v| {
        v["generator"]["format_version"] = serde_json::json!(99)
    });
    assert_exit_2(&["verify", &out, "-q", "--haystack", &m], "format 99");
}

/// Review hole 1a: a `--jsonl` mirror edited with its new hash written into the manifest
/// passed, since only hashes were compared. verify now remakes the mirror's bytes from the
/// regenerated rows.
#[test]
fn a_mirror_edited_together_with_its_hash_fails() {
    let t = tmp();
    let out = out_arg(t.path(), "d");
    generate(&out, &["niah", "--len", "1k", "--depths", "2", "--jsonl"]);
    assert_verifies(&out);
    let rel = "niah_single/test-00000-of-00001.rows.jsonl";
    let text = std::fs::read_to_string(Path::new(&out).join(rel)).unwrap();
    replace_consistently(
        Path::new(&out),
        rel,
        text.replacen("access codes", "excess codes", 1).as_bytes(),
    );
    assert_verify_fails(&out, &format!("file {rel} changed"));
}

/// Rewrite a shard with the same rows through `props`, casting `input` to `utf8` when asked.
fn rewrite_shard(
    path: &Path,
    props: parquet::file::properties::WriterProperties,
    input_as_utf8: bool,
) -> Vec<u8> {
    use arrow_array::{Array, LargeStringArray, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    let batches = read_batches(path);
    let mut schema = (*batches[0].schema()).clone();
    let mut columns: Vec<Vec<arrow_array::ArrayRef>> =
        batches.iter().map(|b| b.columns().to_vec()).collect();
    if input_as_utf8 {
        let i = schema.index_of("input").unwrap();
        let mut fields: Vec<Field> = schema.fields().iter().map(|f| (**f).clone()).collect();
        fields[i] = Field::new("input", DataType::Utf8, false);
        schema = Schema::new(fields);
        for c in &mut columns {
            // The same strings with 32-bit offsets: what arrow's cast to utf8 makes.
            let large = c[i].as_any().downcast_ref::<LargeStringArray>().unwrap();
            c[i] = std::sync::Arc::new(large.iter().collect::<StringArray>());
        }
    }
    let schema = std::sync::Arc::new(schema);
    let mut buf = Vec::new();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(&mut buf, schema.clone(), Some(props)).unwrap();
    for c in columns {
        w.write(&arrow_array::RecordBatch::try_new(schema.clone(), c).unwrap())
            .unwrap();
    }
    w.close().unwrap();
    buf
}

/// Review hole 1b: a shard rewritten with the same rows but another codec, key-value metadata
/// or schema passed. verify now remakes every shard's bytes and, when they differ, names what
/// differs in the file.
#[test]
fn a_shard_rewritten_with_the_same_rows_fails() {
    use parquet::basic::Compression;
    use parquet::file::metadata::KeyValue;
    use parquet::file::properties::WriterProperties;
    let t = tmp();
    let made = t.path().join("made");
    generate(
        &made.display().to_string(),
        &["niah", "--len", "1k", "--depths", "2"],
    );
    let rel = "niah_single/test-00000-of-00001.parquet";
    let canary = serde_json::from_str::<serde_json::Value>(
        &std::fs::read_to_string(made.join("manifest.json")).unwrap(),
    )
    .unwrap()["recipe"]["canary"]
        .as_str()
        .unwrap()
        .to_string();
    let kv = |extra: bool| {
        let mut kv = vec![
            KeyValue::new("needlework.canary".into(), canary.clone()),
            KeyValue::new(
                "needlework.notice".into(),
                "This is evaluation data made by needlework. It must never be used to train a model or be included in a training corpus. Filter out any document containing this canary GUID.".to_string(),
            ),
        ];
        if extra {
            kv.push(KeyValue::new("x".into(), "y".to_string()));
        }
        Some(kv)
    };
    let props = |c: Compression, extra: bool| {
        WriterProperties::builder()
            .set_compression(c)
            .set_created_by("needlework 0.1.0".into())
            .set_key_value_metadata(kv(extra))
            .build()
    };
    let zstd = Compression::ZSTD(parquet::basic::ZstdLevel::try_new(3).unwrap());
    for (name, props, utf8, needle) in [
        (
            "codec",
            props(Compression::SNAPPY, false),
            false,
            "compression",
        ),
        ("metadata", props(zstd, true), false, "key-value metadata"),
        ("schema", props(zstd, false), true, "schema"),
    ] {
        let dir = t.path().join(name);
        copy_dataset(&made, &dir);
        let bytes = rewrite_shard(&dir.join(rel), props, utf8);
        replace_consistently(&dir, rel, &bytes);
        let out = dir.display().to_string();
        assert_verify_fails(&out, &format!("file {rel} is not as gen writes it"));
        assert_verify_fails(&out, needle);
    }
}

/// Review hole 1c: manifest fields verify never checked (compression, rows_per_file, command,
/// generator version, not_data) could be edited freely. Every field is now what the recipe
/// makes, and the manifest's bytes are the ones gen writes.
#[test]
fn no_manifest_field_can_be_edited() {
    let t = tmp();
    let made = t.path().join("made");
    generate(
        &made.display().to_string(),
        &["niah", "--len", "1k", "--depths", "2", "--jsonl"],
    );
    let text = std::fs::read_to_string(made.join("manifest.json")).unwrap();
    let writer_note = format!(
        "its writer ('needlework {}', not 'needlework 0.0.1')",
        env!("CARGO_PKG_VERSION")
    );
    let edits: Vec<(&str, String, &str)> = vec![
        (
            "compression",
            text.replace("\"compression\": \"zstd\"", "\"compression\": \"snappy\""),
            "mismatch",
        ),
        (
            "rows_per_file",
            text.replace("\"rows_per_file\": null", "\"rows_per_file\": 1"),
            "mismatch",
        ),
        (
            "command",
            text.replace("\"1k\",", "\"1024\","),
            "command[3] is \"1024\", its recipe makes \"1k\"",
        ),
        (
            "version",
            text.replace(
                &format!("\"version\": \"{}\"", env!("CARGO_PKG_VERSION")),
                "\"version\": \"0.0.1\"",
            ),
            &writer_note,
        ),
        ("not_data", text.replace("\"inspect\",", ""), "not_data"),
        (
            "extra field",
            text.replacen("{", "{\n  \"signed_by\": \"me\",", 1),
            "signed_by is not a field gen writes",
        ),
        (
            "formatting",
            serde_json::to_string(&serde_json::from_str::<serde_json::Value>(&text).unwrap())
                .unwrap(),
            "not as gen writes it",
        ),
    ];
    for (name, edited, needle) in edits {
        assert_ne!(edited, text, "{name}: the edit changed nothing");
        let dir = t.path().join(name.replace(' ', "_"));
        copy_dataset(&made, &dir);
        std::fs::write(dir.join("manifest.json"), edited).unwrap();
        assert_verify_fails(&dir.display().to_string(), needle);
    }
    // Output crates of another build: their bytes cannot be remade here (exit 2, named).
    let dir = t.path().join("crates");
    copy_dataset(&made, &dir);
    std::fs::write(
        dir.join("manifest.json"),
        text.replace("\"parquet\": \"60.1.0\"", "\"parquet\": \"61.0.0\""),
    )
    .unwrap();
    assert_exit_2(
        &["verify", &dir.display().to_string(), "-q"],
        "parquet 61.0.0 (this gen has 60.1.0)",
    );
}

/// Found as an adversary: a dataset cloned from a Hugging Face repository (`.git/`,
/// `.gitattributes`) or downloaded with `--local-dir` (`.cache/`) failed verify untouched.
/// Those are left out like tool folders; a data file inside them is still reported.
#[test]
fn what_hosting_adds_is_not_data() {
    let t = tmp();
    let out = out_arg(t.path(), "d");
    generate(&out, &["niah", "--len", "1k"]);
    let dir = Path::new(&out);
    std::fs::create_dir_all(dir.join(".git/objects/ab")).unwrap();
    std::fs::write(dir.join(".git/objects/ab/cdef"), "blob").unwrap();
    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(dir.join(".gitattributes"), "*.parquet filter=lfs\n").unwrap();
    std::fs::create_dir_all(dir.join(".cache/huggingface/download/niah_single")).unwrap();
    std::fs::write(
        dir.join(".cache/huggingface/download/niah_single/test-00000-of-00001.parquet.metadata"),
        "abc\n",
    )
    .unwrap();
    assert_verifies(&out);
    std::fs::write(dir.join(".cache/x.parquet"), "data?").unwrap();
    assert_verify_fails(&out, "unexpected file .cache/x.parquet");
}

/// Found as an adversary: verify remade the whole recipe whatever the files held, so a
/// manifest edited to ask for ten million samples kept it busy for hours. A recipe making
/// more rows than the listed files hold is reported at once.
#[test]
fn a_manifest_claiming_more_rows_than_its_files_hold_is_not_regenerated() {
    let t = tmp();
    let out = out_arg(t.path(), "d");
    generate(&out, &["niah", "--len", "1k"]);
    edit_manifest(&out, |m| {
        m["recipe"]["samples"] = serde_json::json!(10_000_000u64)
    });
    let start = std::time::Instant::now();
    assert_verify_fails(
        &out,
        "its recipe makes 10000000 rows, the files the manifest lists hold 1",
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
}
