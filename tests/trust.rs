//! The dataset's promises under adversarial use: every recipe regenerates exactly, every file a
//! loader could read is checked, verify finds moved inputs from anywhere, and a recipe makes the
//! same directory wherever and however it runs. Each test failed before its fix.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

/// `gen verify DIR` passes (exit 0, "ok:").
fn assert_verifies(dir: &str) {
    let out = gen(&["verify", dir, "-q"]);
    assert!(
        out.status.success(),
        "{dir}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `gen verify DIR` fails (exit 1) and says `needle`.
fn assert_verify_fails(dir: &str, needle: &str) {
    let out = gen(&["verify", dir, "-q"]);
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{dir}: {text}");
    assert!(
        text.contains(needle),
        "{dir}: expected '{needle}' in {text}"
    );
}

/// `gen ARGS` is refused as bad input: exit 2, and the one line says `needle`.
fn assert_exit_2(args: &[&str], needle: &str) {
    let out = gen(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected '{needle}' in {err}"
    );
}

/// Rewrite a dataset's manifest.json through `edit`.
fn edit_manifest(dir: &str, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = Path::new(dir).join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut m);
    std::fs::write(&path, serde_json::to_string(&m).unwrap()).unwrap();
}

/// Item 1: floats read back from manifest.json were one ulp off, so `--depths 20` (and many
/// other grids, decimal depths and fact windows) failed verify on untouched data.
#[test]
fn every_depth_grid_regenerates_exactly() {
    let t = tmp();
    for n in 2..=60 {
        let out = out_arg(t.path(), &format!("niah-{n}"));
        let depths = n.to_string();
        generate(
            &out,
            &[
                "niah",
                "--len",
                "400",
                "--haystack",
                "noise",
                "--depths",
                &depths,
                "--tokenizer",
                "words",
            ],
        );
        assert_verifies(&out);
    }
    let cases: Vec<Vec<&str>> = vec![
        vec!["niah", "--len", "1k", "--depths", "12.5,33.3,66.7,99.9,0.1"],
        vec![
            "niah",
            "--len",
            "1k",
            "--depths",
            "0.30000000000000004,17.77",
        ],
        vec![
            "babilong", "--task", "qa1,qa2", "--len", "2k", "--depths", "20",
        ],
        vec![
            "babilong",
            "--task",
            "qa1",
            "--len",
            "2k",
            "--fact-window",
            "12.3..87.6",
        ],
        vec![
            "babilong",
            "--task",
            "qa1",
            "--len",
            "2k",
            "--fact-window",
            "33.3..66.7",
            "--depths",
            "40.1,50,66.6",
        ],
        vec![
            "sort",
            "--haystack",
            "generated",
            "--items",
            "5",
            "--len",
            "1k",
            "--depths",
            "13",
        ],
        vec![
            "arith", "--op", "sum", "--count", "4", "--len", "1k", "--depths", "11",
        ],
        vec![
            "needlechain",
            "--chain",
            "4",
            "--haystack",
            "noise",
            "--len",
            "1k",
            "--depths",
            "9",
        ],
    ];
    for (i, args) in cases.iter().enumerate() {
        let out = out_arg(t.path(), &format!("case-{i}"));
        generate(&out, args);
        assert_verifies(&out);
    }
}

/// Item 2: JSON Lines mirrors, stray config folders and the card's front matter are data a
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
    let mirror = dir.join("niah_single/test-00000-of-00001.jsonl");
    let original = std::fs::read_to_string(&mirror).unwrap();
    std::fs::write(&mirror, original.replacen("access", "excess", 1)).unwrap();
    assert_verify_fails(&out, "niah_single/test-00000-of-00001.jsonl changed");
    std::fs::remove_file(&mirror).unwrap();
    assert_verify_fails(&out, "missing file niah_single/test-00000-of-00001.jsonl");
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

/// Item 12: verify worked only from the directory the dataset was made in (relative corpus and
/// template paths). Now it finds inputs from anywhere, says when one moved, and takes overrides
/// checked against the recorded hashes.
#[test]
fn verify_finds_inputs_from_anywhere() {
    let t = tmp();
    let project = t.path().join("project");
    std::fs::create_dir_all(project.join("data")).unwrap();
    std::fs::copy(
        fixture("corpus/rivers.txt"),
        project.join("data/rivers.txt"),
    )
    .unwrap();
    std::fs::write(
        project.join("data/mine.j2"),
        "Read this.\n{{ context }}\n\nQuestion: {{ question }}\n",
    )
    .unwrap();
    // Made from inside the project, with relative paths.
    let made = Command::new(GEN)
        .current_dir(&project)
        .args([
            "niah",
            "--len",
            "1k",
            "--haystack",
            "data/rivers.txt",
            "--template",
            "data/mine.j2",
        ])
        .args(["--out", "runs/one", "-q"])
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let dataset = project.join("runs/one");
    let manifest = std::fs::read_to_string(dataset.join("manifest.json")).unwrap();
    assert!(
        manifest.contains("\"haystack\": \"data/rivers.txt\""),
        "{manifest}"
    );
    assert!(
        !manifest.contains(&t.path().display().to_string()),
        "machine path in {manifest}"
    );
    // From another working directory.
    let ds = dataset.display().to_string();
    assert_verifies(&ds);
    // The corpus moved: named, and an override is accepted (and checked).
    std::fs::rename(project.join("data/rivers.txt"), t.path().join("moved.txt")).unwrap();
    assert_exit_2(&["verify", &ds, "-q"], "'data/rivers.txt'");
    assert_exit_2(&["verify", &ds, "-q"], "pass --haystack PATH");
    let moved = t.path().join("moved.txt").display().to_string();
    assert!(gen(&["verify", &ds, "-q", "--haystack", &moved])
        .status
        .success());
    let other = fixture("corpus/clocks.txt");
    let out = gen(&["verify", &ds, "-q", "--haystack", &other]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is not the one the dataset was made with")
    );
}

/// Item 13: the manifest and card recorded the invocation (`--out`, `--threads`, absolute
/// paths), so the same recipe gave different directories. Now every file is identical.
#[test]
fn the_same_recipe_makes_the_same_directory() {
    let t = tmp();
    let corpus = fixture("corpus.jsonl");
    let haystack = format!("{corpus}:body");
    let a = out_arg(t.path(), "a");
    let b = t.path().join("elsewhere/b").display().to_string();
    let common = [
        "niah",
        "--len",
        "1k,2k",
        "--depths",
        "3",
        "--haystack",
        &haystack,
        "--jsonl",
    ];
    let mut first = common.to_vec();
    first.extend(["--threads", "1", "--out", &a, "-q"]);
    gen_ok(&first);
    let mut second = common.to_vec();
    second.extend(["--threads=2", "--out", &b]);
    gen_ok(&second);
    let files = |dir: &str| -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![Path::new(dir).to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let rel = p.strip_prefix(dir).unwrap().display().to_string();
                    out.push((rel, std::fs::read(&p).unwrap()));
                }
            }
        }
        out.sort();
        out
    };
    let (fa, fb) = (files(&a), files(&b));
    assert_eq!(
        fa.len(),
        4,
        "{:?}",
        fa.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for ((na, ba), (nb, bb)) in fa.iter().zip(&fb) {
        assert_eq!(na, nb);
        assert!(ba == bb, "{na} differs between the two runs");
    }
    let manifest =
        String::from_utf8_lossy(&fa.iter().find(|f| f.0 == "manifest.json").unwrap().1).to_string();
    for leak in ["--out", "--threads", "-q", t.path().to_str().unwrap()] {
        assert!(
            !manifest.contains(leak),
            "manifest holds {leak}: {manifest}"
        );
    }
}

/// A character-level BPE over the letters of `chars`, with no unknown token: it counts nothing
/// for any other character.
fn char_tokenizer(chars: &str, dropout: Option<f64>) -> String {
    let mut vocab = serde_json::Map::new();
    for (i, c) in chars
        .chars()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .enumerate()
    {
        vocab.insert(c.to_string(), serde_json::json!(i));
    }
    serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": null, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": null,
        "decoder": null,
        "model": {"type": "BPE", "dropout": dropout, "unk_token": null,
                  "continuing_subword_prefix": null, "end_of_word_suffix": null,
                  "fuse_unk": false, "byte_fallback": false, "vocab": vocab, "merges": []}
    })
    .to_string()
}

/// Item 7: `--tokenizer /dev/zero` was killed by the OOM killer, an empty vocabulary made the
/// fitter loop until allocation failed, and a BPE with dropout made output nondeterministic.
/// All are refused at once, with exit 2 and one line.
#[test]
fn unusable_inputs_are_refused_fast() {
    let t = tmp();
    let out = out_arg(t.path(), "never");
    if Path::new("/dev/zero").exists() {
        assert_refused(
            &["niah", "--tokenizer", "/dev/zero"],
            &out,
            "not a regular file",
        );
        assert_refused(
            &["niah", "--haystack", "/dev/zero"],
            &out,
            "not a regular file",
        );
        assert_refused(
            &["niah", "--template", "/dev/zero"],
            &out,
            "not a regular file",
        );
    }
    let letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,:?'-";
    let write = |name: &str, text: String| -> String {
        let p = t.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let empty = write("empty.json", char_tokenizer("", None));
    assert_refused(&["niah", "--tokenizer", &empty], &out, "counts no tokens");
    let dropout = write("dropout.json", char_tokenizer(letters, Some(0.1)));
    assert_refused(&["niah", "--tokenizer", &dropout], &out, "dropout");
    // A tokenizer that measures the prompt but not the corpus: refused, not an endless loop.
    let latin = write("latin.json", char_tokenizer(letters, None));
    let corpus = write("kana.txt", "かなの文です。ひらがなだけ。".repeat(20));
    assert_refused(
        &[
            "niah",
            "--tokenizer",
            &latin,
            "--haystack",
            &corpus,
            "--len",
            "2k",
        ],
        &out,
        "counts no tokens",
    );
    // The same tokenizer on text it can count works.
    let ok = out_arg(t.path(), "ok");
    generate(
        &ok,
        &[
            "niah",
            "--tokenizer",
            &latin,
            "--haystack",
            "noise",
            "--len",
            "2k",
        ],
    );
    assert_verifies(&ok);
}

/// Item 7, score side: `gen score --predictions /dev/zero` aborted; it is refused at once.
#[test]
fn prediction_files_are_bounded() {
    if !Path::new("/dev/zero").exists() {
        return;
    }
    let t = tmp();
    let out = out_arg(t.path(), "d");
    generate(&out, &["niah", "--len", "1k"]);
    assert_exit_2(
        &["score", &out, "--predictions", "/dev/zero", "-q"],
        "regular",
    );
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

/// Item 9 (the refusal half): options that were silently ignored or mislabelled are refused
/// with exit 2 and one line instead.
#[test]
fn options_not_honoured_are_refused() {
    let t = tmp();
    let out = out_arg(t.path(), "never");
    for (args, needle) in [
        (vec!["niah", "--canary", "the"], "--canary"),
        (vec!["niah", "--canary", "8c1f6a2e-3b4d-4e5f-9a0b"], "GUID"),
        (
            vec!["posgen", "--haystack", "generated"],
            "--haystack does not apply",
        ),
        (
            vec!["arith", "--op", "add", "--haystack", "noise"],
            "--haystack does not apply",
        ),
        (
            vec!["arith", "--op", "mul", "--count", "5"],
            "--count does not apply",
        ),
        (
            vec!["sort", "--items", "5", "--len", "64k"],
            "--len does not apply",
        ),
        (
            vec!["needlechain", "--order", "shuffled", "--chain", "2"],
            "--chain 2",
        ),
        (
            vec!["arith", "--op", "sub", "--carries", "max", "--digits", "1"],
            "--digits",
        ),
    ] {
        assert_refused(&args, &out, needle);
    }
    // What is still accepted: a real GUID, hidden sort items under --len, sum with --count.
    let ok = out_arg(t.path(), "ok");
    generate(
        &ok,
        &[
            "niah",
            "--len",
            "1k",
            "--canary",
            "8C1F6A2E-3B4D-4E5F-9A0B-1C2D3E4F5A6B",
        ],
    );
    let ok2 = out_arg(t.path(), "ok2");
    generate(
        &ok2,
        &["sort", "--items", "5", "--haystack", "noise", "--len", "1k"],
    );
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

/// Found by the adversarial review: the canary came from the recorded path strings, so the same
/// inputs reached from another working directory gave different files.
#[test]
fn the_canary_does_not_depend_on_how_paths_are_spelled() {
    let t = tmp();
    let project = t.path().join("p");
    std::fs::create_dir_all(project.join("w")).unwrap();
    std::fs::copy(fixture("corpus/rivers.txt"), project.join("w/rivers.txt")).unwrap();
    let run = |cwd: &Path, haystack: &str, out: &str| {
        let res = Command::new(GEN)
            .current_dir(cwd)
            .args([
                "niah",
                "--len",
                "1k",
                "--haystack",
                haystack,
                "--out",
                out,
                "-q",
            ])
            .output()
            .unwrap();
        assert!(
            res.status.success(),
            "{}",
            String::from_utf8_lossy(&res.stderr)
        );
    };
    let (x1, x2) = (out_arg(t.path(), "x1"), out_arg(t.path(), "x2"));
    run(&project.join("w"), "rivers.txt", &x1);
    run(&project, "w/rivers.txt", &x2);
    let parquet = "niah_single/test-00000-of-00001.parquet";
    assert_eq!(
        std::fs::read(Path::new(&x1).join(parquet)).unwrap(),
        std::fs::read(Path::new(&x2).join(parquet)).unwrap()
    );
    // Recorded relative to where each run started, so verify is told where the corpus is.
    let corpus = project.join("w/rivers.txt").display().to_string();
    for x in [&x1, &x2] {
        assert!(gen(&["verify", x, "-q", "--haystack", &corpus])
            .status
            .success());
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

/// Every file under `dir` with its bytes, by relative path.
fn all_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// A copy of the dataset `from` at `to`.
fn copy_dataset(from: &Path, to: &Path) {
    for (rel, bytes) in all_files(from) {
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::write(dest, bytes).unwrap();
    }
}

/// The size and xxh3-128 of a file as the manifest spells them.
fn size_and_hash(path: &Path) -> (u64, String) {
    let bytes = std::fs::read(path).unwrap();
    (
        bytes.len() as u64,
        format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&bytes)),
    )
}

/// Replace `file`'s bytes with `bytes` and write its new size and hash into manifest.json,
/// keeping the manifest's formatting: the consistent tampering a hash check alone passes.
fn replace_consistently(dir: &Path, rel: &str, bytes: &[u8]) {
    let path = dir.join(rel);
    let (old_size, old_hash) = size_and_hash(&path);
    std::fs::write(&path, bytes).unwrap();
    let (size, hash) = size_and_hash(&path);
    let manifest = dir.join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains(&old_hash));
    let text = text.replace(&old_hash, &hash).replace(
        &format!("\"bytes\": {old_size},"),
        &format!("\"bytes\": {size},"),
    );
    std::fs::write(&manifest, text).unwrap();
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
    let rel = "niah_single/test-00000-of-00001.jsonl";
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
    use arrow::datatypes::{DataType, Field, Schema};
    let batches = read_batches(path);
    let mut schema = (*batches[0].schema()).clone();
    let mut columns: Vec<Vec<arrow::array::ArrayRef>> =
        batches.iter().map(|b| b.columns().to_vec()).collect();
    if input_as_utf8 {
        let i = schema.index_of("input").unwrap();
        let mut fields: Vec<Field> = schema.fields().iter().map(|f| (**f).clone()).collect();
        fields[i] = Field::new("input", DataType::Utf8, false);
        schema = Schema::new(fields);
        for c in &mut columns {
            c[i] = arrow::compute::cast(&c[i], &DataType::Utf8).unwrap();
        }
    }
    let schema = std::sync::Arc::new(schema);
    let mut buf = Vec::new();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(&mut buf, schema.clone(), Some(props)).unwrap();
    for c in columns {
        w.write(&arrow::record_batch::RecordBatch::try_new(schema.clone(), c).unwrap())
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
    const VERSION: &str = env!("CARGO_PKG_VERSION");
    let writer_note = format!("its writer ('needlework {VERSION}', not 'needlework 0.0.1')");
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
                &format!("\"version\": \"{VERSION}\""),
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

/// Review hole 2: a same-named corpus in the working directory shadowed the one beside the
/// dataset, and verify reported a mismatch. Candidates are now tried in turn, and a mismatch
/// names each one tried.
#[test]
fn a_same_named_input_in_the_working_directory_does_not_shadow_the_right_one() {
    let t = tmp();
    let project = t.path().join("project");
    std::fs::create_dir_all(project.join("data")).unwrap();
    std::fs::copy(
        fixture("corpus/rivers.txt"),
        project.join("data/rivers.txt"),
    )
    .unwrap();
    let made = Command::new(GEN)
        .current_dir(&project)
        .args(["niah", "--len", "1k", "--haystack", "data/rivers.txt"])
        .args(["--out", "runs/one", "-q"])
        .output()
        .unwrap();
    assert!(made.status.success());
    // Another file under the same relative path, in the working directory of verify.
    let elsewhere = t.path().join("elsewhere");
    std::fs::create_dir_all(elsewhere.join("data")).unwrap();
    std::fs::copy(
        fixture("corpus/clocks.txt"),
        elsewhere.join("data/rivers.txt"),
    )
    .unwrap();
    let dataset = project.join("runs/one");
    let verify = || {
        Command::new(GEN)
            .current_dir(&elsewhere)
            .arg("verify")
            .arg(&dataset)
            .arg("-q")
            .output()
            .unwrap()
    };
    let res = verify();
    assert!(
        res.status.success(),
        "{}{}",
        String::from_utf8_lossy(&res.stdout),
        String::from_utf8_lossy(&res.stderr)
    );
    // When no candidate holds the recorded corpus, each one tried is named.
    std::fs::copy(
        fixture("corpus/clocks.txt"),
        project.join("data/rivers.txt"),
    )
    .unwrap();
    let res = verify();
    let err = String::from_utf8_lossy(&res.stderr);
    assert_eq!(res.status.code(), Some(1), "{err}");
    assert!(err.contains("tried data/rivers.txt holds corpus:"), "{err}");
    assert!(
        err.contains(&format!(
            "{} holds corpus:",
            project
                .join("data/rivers.txt")
                .canonicalize()
                .unwrap()
                .display()
        )),
        "{err}"
    );
}

/// Review hole 4: `verify --haystack X` (or --template, --tokenizer) on a dataset made with a
/// built-in was silently ignored. It is refused, naming the built-in; a built-in name given for
/// a dataset made from a file is refused too.
#[test]
fn overrides_that_do_not_apply_are_refused() {
    let t = tmp();
    let out = out_arg(t.path(), "d");
    generate(&out, &["niah", "--len", "1k"]);
    let corpus = fixture("corpus/rivers.txt");
    let template = root()
        .join("generators/templates/niah/default.j2")
        .display()
        .to_string();
    let tokenizer = fixture("tokenizer-bytelevel.json");
    for (flag, value, needle) in [
        ("--haystack", &corpus, "the built-in haystack 'generated'"),
        ("--template", &template, "the built-in template 'default'"),
        ("--tokenizer", &tokenizer, "the built-in tokenizer 'o200k'"),
    ] {
        assert_exit_2(&["verify", &out, "-q", flag, value], needle);
    }
    let chain = out_arg(t.path(), "chain");
    generate(&chain, &["needlechain", "--len", "1k"]);
    assert_exit_2(
        &["verify", &chain, "-q", "--haystack", &corpus],
        "made with no haystack",
    );
    let from_file = out_arg(t.path(), "file");
    generate(&from_file, &["niah", "--len", "1k", "--haystack", &corpus]);
    assert_exit_2(
        &["verify", &from_file, "-q", "--haystack", "generated"],
        "names a built-in haystack",
    );
    assert!(gen(&["verify", &from_file, "-q", "--haystack", &corpus])
        .status
        .success());
}

/// Review hole 6: `--len 1k` and `--len 1024` gave different manifests and cards. The manifest
/// records the command rendered from the recipe, so every spelling of one recipe makes the
/// same directory, every file byte for byte.
#[test]
fn every_spelling_of_a_recipe_makes_the_same_directory() {
    let t = tmp();
    let pairs: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["niah", "--len", "1k", "--depths", "3", "--jsonl"],
            vec![
                "niah",
                "--jsonl",
                "--depths",
                "0, 50,100",
                "--len=1024",
                "--samples",
                "1",
                "--seed",
                "0",
                "--tokenizer",
                "o200k_base",
                "--variant",
                "single",
                "--template",
                "default",
                "--haystack",
                "generated",
                "--reserve",
                "128",
                "--compression",
                "zstd",
                "--split",
                "test",
            ],
        ),
        (
            vec![
                "niah",
                "--variant",
                "multikey",
                "--len",
                "1k..2k",
                "--depths",
                "50%",
            ],
            vec!["niah", "--keys", "4", "--len", "2048,1k", "--depths", "1"],
        ),
        (
            vec!["posgen", "--variant", "semi_recursive", "--samples", "2"],
            vec![
                "posgen",
                "--samples",
                "2",
                "--variant",
                "semi-recursive",
                "--near",
                "3",
            ],
        ),
        (
            vec![
                "babilong",
                "--task",
                "qa2,qa1,qa2",
                "--facts",
                "20",
                "--len",
                "0,1k",
            ],
            vec![
                "babilong",
                "--len",
                "1024,0",
                "--task",
                "qa2,qa1",
                "--facts",
                "20..20",
                "--fact-window",
                "0.0..100",
            ],
        ),
        (
            vec![
                "niah",
                "--len",
                "1k",
                "--canary",
                "8C1F6A2E-3B4D-4E5F-9A0B-1C2D3E4F5A6B",
            ],
            vec![
                "niah",
                "--len",
                "1k",
                "--canary",
                "8c1f6a2e-3b4d-4e5f-9a0b-1c2d3e4f5a6b",
            ],
        ),
        (
            vec!["sort", "--items", "5", "--digits", "3"],
            vec![
                "sort", "--digits", "3..3", "--items", "5", "--output", "values",
            ],
        ),
    ];
    for (k, (a, b)) in pairs.iter().enumerate() {
        let (da, db) = (
            out_arg(t.path(), &format!("{k}a")),
            out_arg(t.path(), &format!("{k}b")),
        );
        generate(&da, a);
        generate(&db, b);
        let (fa, fb) = (all_files(Path::new(&da)), all_files(Path::new(&db)));
        assert_eq!(
            fa.iter().map(|f| &f.0).collect::<Vec<_>>(),
            fb.iter().map(|f| &f.0).collect::<Vec<_>>()
        );
        for ((name, x), (_, y)) in fa.iter().zip(&fb) {
            assert!(
                x == y,
                "{a:?} and {b:?}: {name} differs:\n{}\n{}",
                String::from_utf8_lossy(x),
                String::from_utf8_lossy(y)
            );
        }
        assert_verifies(&da);
    }
}

/// Review hole 7: the command line and a manifest's recipe were checked in two places with two
/// wordings. One check, one message each, whichever way the value arrives.
#[test]
fn a_recipe_value_is_refused_with_one_message_from_the_command_line_or_a_manifest() {
    let t = tmp();
    let made = out_arg(t.path(), "d");
    generate(&made, &["niah", "--len", "1k"]);
    let never = out_arg(t.path(), "never");
    for (flag, value, field, json, message) in [
        (
            "--samples",
            "0",
            "samples",
            serde_json::json!(0),
            "invalid --samples 0: expected 1 to 10000000",
        ),
        (
            "--split",
            "a-b",
            "split",
            serde_json::json!("a-b"),
            "invalid --split 'a-b': split names are letters",
        ),
        (
            "--compression",
            "lz4",
            "compression",
            serde_json::json!("lz4"),
            "invalid --compression 'lz4': expected zstd, snappy or none",
        ),
        (
            "--rows-per-file",
            "0",
            "rows_per_file",
            serde_json::json!(0),
            "invalid --rows-per-file 0: expected a positive number",
        ),
    ] {
        assert_refused(&["niah", "--len", "1k", flag, value], &never, message);
        let path = Path::new(&made).join("manifest.json");
        let original = std::fs::read_to_string(&path).unwrap();
        edit_manifest(&made, |m| m["recipe"][field] = json);
        assert_exit_2(&["verify", &made, "-q"], message);
        std::fs::write(&path, original).unwrap();
    }
    assert_verifies(&made);
}

/// Found as an adversary: a corpus file named like a built-in (`./generated`) was recorded
/// as `generated` and read back as the built-in haystack, so its untouched dataset failed
/// verify. Such a path is recorded as `./generated`.
#[test]
fn an_input_file_named_like_a_built_in_is_recorded_as_a_path() {
    let t = tmp();
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::copy(fixture("corpus/rivers.txt"), work.join("generated")).unwrap();
    std::fs::copy(
        root().join("generators/templates/niah/plain.j2"),
        work.join("default"),
    )
    .unwrap();
    let made = Command::new(GEN)
        .current_dir(&work)
        .args(["niah", "--len", "1k", "--haystack", "./generated"])
        .args(["--template", "./default", "--out", "d", "-q"])
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let manifest = std::fs::read_to_string(work.join("d/manifest.json")).unwrap();
    assert!(
        manifest.contains("\"haystack\": \"./generated\""),
        "{manifest}"
    );
    assert!(
        manifest.contains("\"template\": \"./default\""),
        "{manifest}"
    );
    assert_verifies(&work.join("d").display().to_string());
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

/// Found as an adversary: a folder of the dataset that cannot be read was skipped silently,
/// though another user's loader may read it. It is reported.
#[cfg(unix)]
#[test]
fn a_folder_that_cannot_be_read_is_reported() {
    use std::os::unix::fs::PermissionsExt;
    let t = tmp();
    let out = out_arg(t.path(), "d");
    generate(&out, &["niah", "--len", "1k"]);
    let hidden = Path::new(&out).join("other");
    std::fs::create_dir(&hidden).unwrap();
    std::fs::write(hidden.join("x.parquet"), "data?").unwrap();
    std::fs::set_permissions(&hidden, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads anything: the case exists only for other users.
    if std::fs::read_dir(&hidden).is_err() {
        assert_verify_fails(&out, "other/ (a folder that cannot be read)");
    }
    std::fs::set_permissions(&hidden, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Key and value spaces that run out end in a clear refusal or in repeated distractors, never
/// in an endless search (words give 3,599 key pairs; these hung before).
#[test]
fn used_up_key_spaces_never_hang() {
    let t = tmp();
    let out = out_arg(t.path(), "many");
    assert_exit_2(
        &[
            "niah",
            "--keys",
            "1000",
            "--values",
            "4",
            "--value-type",
            "words",
            "--len",
            "128k",
            "--out",
            &out,
        ],
        "3,599 pairs",
    );
    assert!(!Path::new(&out).exists());
    let out = out_arg(t.path(), "distractors");
    generate(
        &out,
        &[
            "niah",
            "--haystack",
            "needles",
            "--key-type",
            "words",
            "--value-type",
            "words",
            "--len",
            "32k",
        ],
    );
    assert_verifies(&out);
    for r in rows(Path::new(&out)) {
        let key = r.params["needles"][0]["key"].as_str().unwrap().to_string();
        let value = r.params["needles"][0]["value"]
            .as_str()
            .unwrap()
            .to_string();
        // The asked key is in its own needle and in the question, nowhere else.
        assert_eq!(r.input.matches(&key).count(), 2, "{}", r.id);
        assert_eq!(r.input.matches(&format!("{key} is {value}")).count(), 1);
    }
}
