//! Inputs: `verify` finds moved inputs from anywhere, and unusable inputs, options that do
//! not apply and impossible values are refused with one message.

use crate::common::*;
use std::path::Path;
use std::process::Command;

use super::*;

/// Verify worked only from the directory the dataset was made in (relative corpus and
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

/// `--tokenizer /dev/zero` was killed by the OOM killer, an empty vocabulary made the
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

/// Score side: `gen score --predictions /dev/zero` aborted; it is refused at once.
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

/// Options that were silently ignored or mislabelled are refused
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
