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
