//! The shell's promises under adversarial input: no export or score replaces data, configs
//! never share a folder, `gen score --out` never overwrites what it did not write, `verify`
//! never reports a dataset being rewritten as a mismatch, datasets of other formats are named,
//! refusals name the right flag in plain words with exit 2, and RULER's prediction files are
//! matched by their numeric `index`.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::*;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `o` is a refusal: exit 2, one line on stderr holding every one of `needles`.
fn assert_exit2(o: &Output, needles: &[&str], what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
    for n in needles {
        assert!(err.contains(n), "{what}: {n:?} not in {err}");
    }
}

/// Write `text` as a suite file `name` in `dir`.
fn suite_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Run a suite file into `out` at 1k tokens, one sample.
fn run_suite(file: &Path, out: &Path) -> Output {
    gen(&[
        "suite",
        file.to_str().unwrap(),
        "--len",
        "1k",
        "--samples",
        "1",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ])
}

/// A small two-config suite dataset (configs `alpha` and `beta`) in `dir/name`.
fn two_configs(dir: &Path, name: &str) -> PathBuf {
    let file = suite_file(
        dir,
        &format!("{name}.toml"),
        "[[task]]\ntask = \"niah\"\nname = \"alpha\"\n\n[[task]]\ntask = \"vt\"\nname = \"beta\"\n",
    );
    let out = dir.join(name);
    let o = run_suite(&file, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

/// Rename config `from` of the dataset in `dir` to `to`, folder and manifest alike: a dataset
/// as an older gen (which did not refuse the name) could have made it.
fn rename_config(dir: &Path, from: &str, to: &str) {
    std::fs::rename(dir.join(from), dir.join(to)).unwrap();
    let path = dir.join("manifest.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text
        .replace(&format!("\"{from}\""), &format!("\"{to}\""))
        .replace(&format!("\"{from}/"), &format!("\"{to}/"));
    std::fs::write(&path, text).unwrap();
}

#[test]
fn configs_named_like_the_folders_tools_write_are_refused() {
    let t = tmp();
    // Every folder export and score write, and the same names in another case.
    for name in [
        "lm_eval",
        "inspect",
        "opencompass",
        "ruler",
        "scores",
        "Scores",
        "LM_EVAL",
        "Ruler",
    ] {
        let file = suite_file(
            t.path(),
            "s.toml",
            &format!("seed = 3\n\n[[task]]\ntask = \"niah\"\nname = \"{name}\"\n"),
        );
        let out = t.path().join("out");
        let o = run_suite(&file, &out);
        assert_exit2(&o, &["s.toml:3:", "reserved", name], name);
        assert!(!out.exists(), "{name}: output left behind");
    }
}

#[test]
fn export_and_score_never_replace_a_data_file() {
    let t = tmp();
    // Datasets an older gen could make: a config in each folder a tool writes, in any case.
    for (config, harness) in [
        ("lm_eval", "lm-eval"),
        ("ruler", "ruler"),
        ("Inspect", "inspect"),
        ("OPENCOMPASS", "opencompass"),
    ] {
        let dir = two_configs(t.path(), &format!("d_{harness}"));
        rename_config(&dir, "alpha", config);
        let shards = parquet_files(&dir);
        let before = dataset_bytes(&dir);
        let o = gen(&["export", harness, dir.to_str().unwrap()]);
        assert_exit2(&o, &["cannot export", config], harness);
        assert_eq!(parquet_files(&dir), shards, "{harness}");
        assert_eq!(dataset_bytes(&dir), before, "{harness}");
        // The other exports still work and leave the data alone.
        let other = if harness == "ruler" {
            "inspect"
        } else {
            "ruler"
        };
        gen_ok(&["export", other, dir.to_str().unwrap()]);
        assert_eq!(dataset_bytes(&dir), before, "{harness}");
    }
    // gen score's default scores/ is refused when a config lives there.
    for config in ["scores", "SCORES"] {
        let dir = two_configs(t.path(), &format!("s_{config}"));
        rename_config(&dir, "alpha", config);
        let id = &rows(&dir)[0].id;
        let preds = t.path().join(format!("{config}.jsonl"));
        std::fs::write(
            &preds,
            format!("{{\"id\": \"{id}\", \"prediction\": \"x\"}}\n"),
        )
        .unwrap();
        let before = dataset_bytes(&dir);
        let o = gen(&[
            "score",
            dir.to_str().unwrap(),
            "--predictions",
            preds.to_str().unwrap(),
        ]);
        assert_exit2(&o, &["scores/ holds", config], config);
        assert_eq!(dataset_bytes(&dir), before, "{config}");
        assert!(!dir.join(config).join("scores.json").exists(), "{config}");
    }
}

#[test]
fn configs_differing_only_in_case_are_refused() {
    let t = tmp();
    let cases = [
        // Two given names.
        (
            "[[task]]\ntask = \"niah\"\nname = \"Abc\"\n\n[[task]]\ntask = \"vt\"\nname = \"abc\"\n",
            "c.toml:5:",
        ),
        // A given name against a task's own config name.
        (
            "[[task]]\ntask = \"niah\"\n\n[[task]]\ntask = \"vt\"\nname = \"NIAH_Single\"\n",
            "c.toml:4:",
        ),
    ];
    for (text, at) in cases {
        let file = suite_file(t.path(), "c.toml", text);
        let out = t.path().join("out");
        let o = run_suite(&file, &out);
        assert_exit2(&o, &[at, "only in case", "line 1"], text);
        assert!(!out.exists());
    }
    // Names that differ otherwise stay accepted.
    let file = suite_file(
        t.path(),
        "ok.toml",
        "[[task]]\ntask = \"niah\"\nname = \"abc\"\n\n[[task]]\ntask = \"vt\"\nname = \"abd\"\n",
    );
    let o = run_suite(&file, &t.path().join("ok"));
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Run `gen score DIR --predictions P --out OUT`.
fn score_into(dir: &Path, preds: &Path, out: &Path) -> Output {
    gen(&[
        "score",
        dir.to_str().unwrap(),
        "--predictions",
        preds.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ])
}

/// A predictions file for the rows of `dir`, every one predicted "x".
fn predictions(dir: &Path, path: &Path) {
    let text: String = rows(dir)
        .iter()
        .map(|r| format!("{{\"id\": \"{}\", \"prediction\": \"x\"}}\n", r.id))
        .collect();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn score_out_never_overwrites_what_score_did_not_write() {
    let t = tmp();
    let dir = two_configs(t.path(), "d");
    // A predictions file named like an output, inside --out.
    let out = t.path().join("res");
    let preds = out.join("scores.json");
    predictions(&dir, &preds);
    let kept = std::fs::read(&preds).unwrap();
    assert_exit2(
        &score_into(&dir, &preds, &out),
        &["holds the predictions file"],
        "scores.json",
    );
    assert_eq!(std::fs::read(&preds).unwrap(), kept);
    // A predictions folder given as --out, spelled another way.
    let folder = t.path().join("preds");
    predictions(&dir, &folder.join("niah.jsonl"));
    let spelled = t.path().join("preds/../preds/");
    assert_exit2(
        &score_into(&dir, &folder, &spelled),
        &["holds the predictions file"],
        "folder",
    );
    let preds = t.path().join("p.jsonl");
    predictions(&dir, &preds);
    // The dataset itself, a config folder or another folder inside it, and a folder inside
    // its scores/.
    let before = dataset_bytes(&dir);
    for (out, needle) in [
        (dir.clone(), "is a dataset"),
        (dir.join("alpha"), "lies inside the dataset"),
        (dir.join("notes"), "lies inside the dataset"),
        (dir.join("scores/run2"), "lies inside the dataset"),
    ] {
        assert_exit2(&score_into(&dir, &preds, &out), &[needle], needle);
        assert!(!out.join("scores.json").exists(), "{}", out.display());
    }
    assert_eq!(dataset_bytes(&dir), before);
    let o = gen(&["verify", "-q", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    // A user's folder: a rows.json of its own, or other files.
    let user = t.path().join("mine");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(user.join("rows.json"), "mine\n").unwrap();
    assert_exit2(
        &score_into(&dir, &preds, &user),
        &["not written by gen score"],
        "rows.json",
    );
    assert_eq!(
        std::fs::read_to_string(user.join("rows.json")).unwrap(),
        "mine\n"
    );
    std::fs::write(user.join("notes.txt"), "n\n").unwrap();
    std::fs::write(
        user.join("scores.json"),
        "{\"dataset_hash\": 1, \"overall\": 2}",
    )
    .unwrap();
    assert_exit2(
        &score_into(&dir, &preds, &user),
        &["not written by gen score", "notes.txt"],
        "notes",
    );
    // What gen score wrote it may write again; the default scores/ is accepted.
    let fresh = t.path().join("fresh");
    for _ in 0..2 {
        let o = score_into(&dir, &preds, &fresh);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = score_into(&dir, &preds, &dir.join("scores"));
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn refusals_name_the_flag_that_gives_the_input() {
    let t = tmp();
    let out = t.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::copy(fixture("qa/squad.json"), out.join("x.json")).unwrap();
    std::fs::copy(fixture("corpus/rivers.txt"), out.join("c.txt")).unwrap();
    std::fs::copy(fixture("tokenizer-bytelevel.json"), out.join("tok.json")).unwrap();
    let inside = |f: &str| out.join(f).display().to_string();
    for (text, flag) in [
        (
            format!("[[task]]\ntask = \"qa\"\ndata = \"{}\"\n", inside("x.json")),
            "--data",
        ),
        (
            format!(
                "[[task]]\ntask = \"niah\"\nhaystack = \"{}\"\n",
                inside("c.txt")
            ),
            "--haystack",
        ),
        (
            format!(
                "tokenizer = \"{}\"\n[[task]]\ntask = \"niah\"\n",
                inside("tok.json")
            ),
            "--tokenizer",
        ),
    ] {
        let file = suite_file(t.path(), "in.toml", &text);
        let o = gen(&[
            "suite",
            file.to_str().unwrap(),
            "--len",
            "1k",
            "--samples",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--force",
            "-q",
        ]);
        assert_exit2(&o, &[&format!("{flag} "), "is inside --out"], flag);
        assert!(!stderr(&o).contains("error: haystack"), "{}", stderr(&o));
        assert!(out.join("x.json").exists());
    }
    // The command itself names its own flag.
    let o = gen(&[
        "qa",
        "--data",
        &inside("x.json"),
        "--len",
        "1k",
        "--out",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert_exit2(&o, &["--data ", "is inside --out"], "gen qa");
    assert!(!stderr(&o).contains("haystack"), "{}", stderr(&o));
}

#[test]
fn runtime_refusals_speak_plain_words() {
    let t = tmp();
    // A SQuAD file too small to fill the length: refused at generation, at one depth or another.
    let data = t.path().join("tiny.json");
    std::fs::write(
        &data,
        r#"{"data": [{"title": "a", "paragraphs": [{"context": "The cat sat on the mat.", "qas": [{"id": "1", "question": "Who sat?", "answers": [{"text": "cat", "answer_start": 4}]}]}]}]}"#,
    )
    .unwrap();
    for (depths, shown) in [
        (None, &["depth 50%"][..]),
        (Some("0%"), &["depth 0%"][..]),
        (Some("100%"), &["depth 100%"][..]),
    ] {
        let mut args = vec!["qa", "--data", data.to_str().unwrap(), "--len", "2k", "-q"];
        args.extend(depths.iter().flat_map(|d| ["--depths", d]));
        let out = t.path().join("o");
        args.extend(["--out", out.to_str().unwrap()]);
        let o = gen(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(shown.iter().any(|d| err.contains(d)), "{depths:?}: {err}");
        for debug in ["Some(", "None", "\\\""] {
            assert!(
                !err.contains(debug),
                "{depths:?}: Rust's debug text in {err}"
            );
        }
    }
}

#[test]
fn toml_seeds_take_the_whole_u64_range_as_integers() {
    let t = tmp();
    let by_flag = t.path().join("flag");
    generate(
        by_flag.to_str().unwrap(),
        &[
            "niah",
            "--len",
            "1k",
            "--samples",
            "1",
            "--seed",
            "18446744073709551615",
        ],
    );
    let want: Vec<String> = rows(&by_flag).iter().map(|r| r.id.clone()).collect();
    assert!(!want.is_empty());
    // The largest seed as a TOML integer (plain and with separators) and as a string: the
    // rows the command line makes with it.
    for seed in [
        "18446744073709551615",
        "18_446_744_073_709_551_615",
        "\"18446744073709551615\"",
    ] {
        let file = suite_file(
            t.path(),
            "big.toml",
            &format!("seed = {seed}\n\n[[task]]\ntask = \"niah\"\n"),
        );
        let out = t.path().join("toml");
        std::fs::remove_dir_all(&out).ok();
        let o = run_suite(&file, &out);
        assert!(o.status.success(), "{seed}: {}", stderr(&o));
        let got: Vec<String> = rows(&out).iter().map(|r| r.id.clone()).collect();
        assert_eq!(got, want, "{seed}");
    }
    // Past u64: refused as the command line refuses it, with the line, never "overflowed".
    for seed in [
        "18446744073709551616",
        "99999999999999999999999",
        "-99999999999999999999",
    ] {
        let file = suite_file(
            t.path(),
            "big.toml",
            &format!("samples = 1\nseed = {seed}\n\n[[task]]\ntask = \"niah\"\n"),
        );
        let out = t.path().join("never");
        let o = run_suite(&file, &out);
        assert_exit2(&o, &["big.toml:", seed], seed);
        assert!(!stderr(&o).contains("overflow"), "{}", stderr(&o));
        assert!(!out.exists());
    }
}

/// A command run as an unprivileged user when the tests run as root (root writes anywhere),
/// so that a folder without write permission is one to this command.
#[cfg(unix)]
fn unprivileged(args: &[&str]) -> Output {
    use std::os::unix::process::CommandExt;
    let mut c = std::process::Command::new(GEN);
    c.args(args);
    if unsafe { libc::geteuid() } == 0 {
        c.uid(65534).gid(65534);
    }
    c.output().expect("gen runs")
}

#[cfg(unix)]
#[test]
fn unwritable_datasets_and_outs_are_bad_input() {
    use std::os::unix::fs::PermissionsExt;
    let t = tmp();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = two_configs(t.path(), "d");
    let preds = t.path().join("p.jsonl");
    predictions(&dir, &preds);
    let mode =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    for entry in walk(t.path()) {
        mode(&entry, if entry.is_dir() { 0o755 } else { 0o644 });
    }
    mode(&dir, 0o555);
    for harness in ["lm-eval", "ruler", "inspect", "opencompass"] {
        let o = unprivileged(&["export", harness, dir.to_str().unwrap()]);
        assert_exit2(&o, &["cannot export into"], harness);
    }
    // gen score's default scores/ inside it, and an existing --out folder of its own.
    let o = unprivileged(&[
        "score",
        dir.to_str().unwrap(),
        "--predictions",
        preds.to_str().unwrap(),
    ]);
    assert_exit2(&o, &["--out"], "default scores/");
    let ro = t.path().join("ro");
    std::fs::create_dir_all(&ro).unwrap();
    mode(&ro, 0o555);
    let o = unprivileged(&[
        "score",
        dir.to_str().unwrap(),
        "--predictions",
        preds.to_str().unwrap(),
        "--out",
        ro.to_str().unwrap(),
    ]);
    assert_exit2(&o, &["cannot write into --out"], "read-only --out");
    mode(&dir, 0o755);
}

/// Every file and folder under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

#[test]
fn datasets_of_other_formats_are_named_for_disjoint_splits_and_exports() {
    let t = tmp();
    for format in [1, 2, 3] {
        for name in ["niah", "posgen", "babilong"] {
            let old = t.path().join(format!("f{format}_{name}"));
            let src = PathBuf::from(fixture(&format!("datasets-format{format}/{name}")));
            copy_dir(&src, &old);
            let what = format!("format {format} {name}");
            let wanted = format!("made with needlework format {format}");
            let out = t.path().join("fresh");
            let o = gen(&[
                "niah",
                "--len",
                "1k",
                "--samples",
                "1",
                "--disjoint-from",
                old.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ]);
            assert_exit2(&o, &["--disjoint-from", &wanted], &what);
            assert!(!out.exists(), "{what}");
            // A suite's disjoint_from as well.
            let file = suite_file(
                t.path(),
                "dj.toml",
                &format!(
                    "disjoint_from = [\"{}\"]\n\n[[task]]\ntask = \"niah\"\n",
                    old.display()
                ),
            );
            assert_exit2(
                &run_suite(&file, &out),
                &["--disjoint-from", &wanted],
                &what,
            );
            for harness in ["lm-eval", "ruler"] {
                let o = gen(&["export", harness, old.to_str().unwrap()]);
                assert_exit2(&o, &["cannot export", &wanted], &what);
            }
            for folder in ["lm_eval", "ruler"] {
                assert!(!old.join(folder).exists(), "{what}: {folder}/ written");
            }
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// Run `gen verify -q DIR`.
fn verify(dir: &Path) -> Output {
    gen(&["verify", "-q", dir.to_str().unwrap()])
}

#[test]
fn verify_refuses_a_dataset_whose_lock_a_live_gen_holds() {
    let t = tmp();
    let dir = t.path().join("d");
    generate(
        dir.to_str().unwrap(),
        &["niah", "--len", "1k", "--samples", "1"],
    );
    let lock = t.path().join(".d.lock");
    // A writer holds the lock file's advisory lock (here: this test process) and names its
    // PID (ours, a child's) or has not written it yet.
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let hold = |text: &str| {
        std::fs::write(&lock, text).unwrap();
        let f = std::fs::File::open(&lock).unwrap();
        f.try_lock().unwrap();
        f
    };
    for (pid, shown) in [
        (
            std::process::id().to_string(),
            format!("PID {}", std::process::id()),
        ),
        (child.id().to_string(), format!("PID {}", child.id())),
        (String::new(), "holds no PID".to_string()),
    ] {
        let held = hold(&format!("{pid}\n"));
        for spelled in [dir.clone(), t.path().join("d/"), t.path().join("d/../d")] {
            let o = verify(&spelled);
            assert_exit2(&o, &["is being written", &shown], &shown);
            assert!(
                o.stdout.is_empty(),
                "{}",
                String::from_utf8_lossy(&o.stdout)
            );
        }
        drop(held);
    }
    // The same while the dataset is gone (between the two renames of a rewrite).
    let held = hold(&format!("{}\n", child.id()));
    std::fs::rename(&dir, t.path().join(".d.old-1")).unwrap();
    assert_exit2(&verify(&dir), &["is being written"], "moved aside");
    std::fs::rename(t.path().join(".d.old-1"), &dir).unwrap();
    // A lock nobody holds is stale, even when the PID it names is alive (a retried
    // container's PID 1, a PID reused on another node): verify goes on.
    drop(held);
    let o = verify(&dir);
    assert!(o.status.success(), "{}", stderr(&o));
    child.kill().unwrap();
    child.wait().unwrap();
    let o = verify(&dir);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn verify_during_a_forced_rewrite_never_reports_a_mismatch() {
    let rounds: u64 = std::env::var("NEEDLEWORK_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(3, |n: u64| n.clamp(3, 12));
    let t = tmp();
    let dir = t.path().join("d");
    let write = |seed: u64| {
        std::process::Command::new(GEN)
            .args(["niah", "--len", "8k,16k", "--samples", "6", "--seed"])
            .arg(seed.to_string())
            .args([
                "--out",
                dir.to_str().unwrap(),
                "--force",
                "-q",
                "--threads",
                "1",
            ])
            .spawn()
            .unwrap()
    };
    assert!(write(0).wait().unwrap().success());
    let (mut during, mut ok) = (0, 0);
    for seed in 1..=rounds {
        // Each rewrite a different recipe: a verify that read both would see mismatches.
        let mut writer = write(seed);
        loop {
            let o = verify(&dir);
            let out = String::from_utf8_lossy(&o.stdout).into_owned();
            match o.status.code() {
                Some(0) => ok += 1,
                Some(2) => {
                    assert!(stderr(&o).contains("is being written"), "{}", stderr(&o));
                    during += 1;
                }
                code => panic!(
                    "verify during a rewrite exited {code:?}: {out}{}",
                    stderr(&o)
                ),
            }
            assert!(!out.contains("mismatch"), "{out}");
            if writer.try_wait().unwrap().is_some() {
                break;
            }
        }
        assert!(writer.wait().unwrap().success());
    }
    assert!(
        during > 0,
        "no verify ran during a rewrite ({ok} ran outside)"
    );
    // Once the writing is done the dataset verifies.
    assert!(verify(&dir).status.success());
}

#[test]
fn ruler_prediction_files_are_matched_by_their_numeric_index() {
    let t = tmp();
    let dir = two_configs(t.path(), "d");
    gen_ok(&["export", "ruler", dir.to_str().unwrap()]);
    let ruler = dir.join("ruler");
    let mut tasks: Vec<String> = std::fs::read_dir(&ruler)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    tasks.sort();
    assert_eq!(tasks.len(), 2, "{tasks:?}");
    // RULER's own prediction files: `index` and `pred` only (no `others`), one file per task,
    // the first task all right, the second all wrong, and one of them split in chunks.
    let preds = t.path().join("pred");
    std::fs::create_dir_all(&preds).unwrap();
    let mut rows_of = Vec::new();
    for (k, task) in tasks.iter().enumerate() {
        let text = std::fs::read_to_string(ruler.join(task).join("validation.jsonl")).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let pred = |v: &serde_json::Value| {
            let outputs: Vec<&str> = v["outputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o.as_str().unwrap())
                .collect();
            if k == 0 {
                outputs.join(" ")
            } else {
                "nothing".to_string()
            }
        };
        let line = |v: &serde_json::Value| {
            format!(
                "{}\n",
                serde_json::json!({"index": v["index"], "pred": pred(v)})
            )
        };
        if k == 0 {
            let text: String = lines.iter().map(line).collect();
            std::fs::write(preds.join(format!("{task}.jsonl")), text).unwrap();
        } else {
            let (a, b) = lines.split_at(lines.len() / 2);
            for (n, part) in [a, b].iter().enumerate() {
                let text: String = part.iter().map(line).collect();
                std::fs::write(preds.join(format!("{task}-{n}.jsonl")), text).unwrap();
            }
        }
        rows_of.push(lines.len() as u64);
    }
    let out = t.path().join("s");
    let o = score_into(&dir, &preds, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("scores.json")).unwrap()).unwrap();
    let total: u64 = rows_of.iter().sum();
    assert_eq!(s["coverage"]["predicted"], total, "{s}");
    assert_eq!(s["unknown"].as_array().unwrap().len(), 0, "{s}");
    let accuracies: Vec<f64> = ["alpha", "beta"]
        .iter()
        .map(|c| s["configs"][c]["overall"]["accuracy"].as_f64().unwrap())
        .collect();
    // Which config is which task's folder: the right answers went to the first folder.
    let right = if tasks[0].contains("vt") || tasks[0] == "beta" {
        [0.0, 1.0]
    } else {
        [1.0, 0.0]
    };
    assert_eq!(accuracies, right, "{tasks:?} {s}");
    // An index past a task's rows names no row; a file named after no task is refused when
    // the dataset has several.
    let extra = t.path().join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    std::fs::write(
        extra.join(format!("{}.jsonl", tasks[0])),
        "{\"index\": 0, \"pred\": \"x\"}\n{\"index\": 999, \"pred\": \"x\"}\n",
    )
    .unwrap();
    let o = score_into(&dir, &extra, &t.path().join("s2"));
    assert!(o.status.success(), "{}", stderr(&o));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.path().join("s2/scores.json")).unwrap())
            .unwrap();
    assert_eq!(s["coverage"]["predicted"], 1, "{s}");
    assert_eq!(s["unknown"].as_array().unwrap().len(), 1, "{s}");
    let stray = t.path().join("stray.jsonl");
    std::fs::write(&stray, "{\"index\": 0, \"pred\": \"x\"}\n").unwrap();
    assert_exit2(
        &score_into(&dir, &stray, &t.path().join("s3")),
        &["numeric index", &format!("{}.jsonl", tasks[0])],
        "stray",
    );
    // A dataset of one config takes a file of any name.
    let one = t.path().join("one");
    generate(
        one.to_str().unwrap(),
        &["vt", "--len", "1k", "--samples", "2"],
    );
    let o = score_into(&one, &stray, &t.path().join("s4"));
    assert!(o.status.success(), "{}", stderr(&o));
}
