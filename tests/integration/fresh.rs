//! Fresh splits: private seeds with commitments, `reveal`, `--disjoint-from` and
//! `--controls no-context`, through the real binary.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::common::{contains, gen, gen_ok, generate, out_arg, rows, seed_forms, tmp};

/// Every file under `dir`, recursively.
fn all_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(all_files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The seed and salt lines of a seed file.
fn seed_of(path: &Path) -> (String, String) {
    let text = std::fs::read_to_string(path).unwrap();
    let get = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{k} ")))
            .unwrap()
            .to_string()
    };
    (get("seed"), get("salt"))
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn private_splits_hide_the_seed_verify_with_it_and_reveal_it() {
    let dir = tmp();
    let key = dir.path().join("split.key");
    let key2 = dir.path().join("other.key");
    let a = out_arg(dir.path(), "a");
    let b = out_arg(dir.path(), "b");
    let args = [
        "niah",
        "--len",
        "1k",
        "--depths",
        "3",
        "--samples",
        "4",
        "--jsonl",
    ];
    let private = |out: &str, key: &Path| {
        let mut all = args.to_vec();
        all.extend(["--private", "--seed-file", key.to_str().unwrap()]);
        generate(out, &all);
    };
    private(&a, &key);
    private(&b, &key2);
    let (seed, salt) = seed_of(&key);
    assert_eq!(seed.len(), 64);
    assert_ne!(seed_of(&key2).0, seed, "two private runs draw two seeds");

    // No byte of the dataset holds the seed, in any form.
    let forms = seed_forms(&seed);
    let files = all_files(Path::new(&a));
    assert!(files.len() >= 4, "{files:?}");
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        for form in &forms {
            assert!(!contains(&bytes, form), "{} holds the seed", f.display());
        }
    }
    let manifest = std::fs::read_to_string(Path::new(&a).join("manifest.json")).unwrap();
    assert!(manifest.contains(&salt) && manifest.contains("\"commitment\""));
    let card = std::fs::read_to_string(Path::new(&a).join("README.md")).unwrap();
    assert!(card.contains("private split") && card.contains("Canary GUID"));

    // Two private runs of one recipe differ in every row.
    let (ra, rb) = (rows(Path::new(&a)), rows(Path::new(&b)));
    assert_eq!(ra.len(), 12);
    for (x, y) in ra.iter().zip(&rb) {
        assert_ne!(x.input, y.input);
        assert_ne!(x.id, y.id);
    }

    // Without the seed: every check that needs none, and a plain statement.
    let o = gen_ok(&["verify", &a, "-q"]);
    assert!(stdout(&o).contains("needs the seed"), "{}", stdout(&o));
    // With the right seed: every row regenerated.
    let o = gen_ok(&["verify", &a, "-q", "--seed-file", key.to_str().unwrap()]);
    assert!(stdout(&o).contains("12 rows of niah_single regenerate identically"));
    // With a wrong seed: exit 1, naming the commitment.
    let o = gen(&["verify", &a, "-q", "--seed-file", key2.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("does not match the dataset's commitment"));
    let o = gen(&["reveal", &a, "--seed-file", key2.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "a wrong seed is never revealed");

    // Reusing the seed file remakes the same split, byte for byte (shards on other machines).
    let c = out_arg(dir.path(), "c");
    private(&c, &key);
    assert_eq!(
        crate::common::dataset_bytes(Path::new(&a)),
        crate::common::dataset_bytes(Path::new(&c))
    );
    assert_eq!(seed_of(&key), (seed.clone(), salt));

    // Reveal: only the seed is added, and a plain verify regenerates everything.
    let before: Vec<Vec<u8>> = crate::common::dataset_bytes(Path::new(&a));
    gen_ok(&["reveal", &a, "--seed-file", key.to_str().unwrap()]);
    assert_eq!(crate::common::dataset_bytes(Path::new(&a)), before);
    let manifest = std::fs::read_to_string(Path::new(&a).join("manifest.json")).unwrap();
    assert!(manifest.contains(&seed));
    let o = gen_ok(&["verify", &a, "-q"]);
    assert!(stdout(&o).contains("12 rows of niah_single regenerate identically"));

    // A tampered revealed seed is a mismatch.
    let forged = manifest.replace(&seed, &seed_of(&key2).0);
    std::fs::write(Path::new(&a).join("manifest.json"), forged).unwrap();
    assert_eq!(gen(&["verify", &a, "-q"]).status.code(), Some(1));
}

#[test]
fn private_verify_without_the_seed_still_catches_edits() {
    let dir = tmp();
    let key = dir.path().join("k");
    let a = out_arg(dir.path(), "a");
    generate(
        &a,
        &[
            "sort",
            "--len",
            "1k",
            "--samples",
            "3",
            "--private",
            "--seed-file",
            key.to_str().unwrap(),
        ],
    );
    let shard = crate::common::parquet_files(Path::new(&a)).remove(0);
    let mut bytes = std::fs::read(&shard).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 1;
    std::fs::write(&shard, bytes).unwrap();
    let o = gen(&["verify", &a, "-q"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
}

#[test]
fn seed_files_inside_the_dataset_and_misuse_are_refused() {
    let dir = tmp();
    let out = out_arg(dir.path(), "d");
    let inside = format!("{out}/seed.key");
    crate::common::assert_refused(
        &["niah", "--len", "1k", "--private", "--seed-file", &inside],
        &out,
        "inside --out",
    );
    crate::common::assert_refused(&["niah", "--len", "1k", "--private"], &out, "--seed-file");
    // A seed file in a folder that does not exist names the folder to make.
    let missing = dir.path().join("secrets").join("x.key");
    let missing_folder = dir.path().join("secrets");
    crate::common::assert_refused(
        &[
            "niah",
            "--len",
            "1k",
            "--private",
            "--seed-file",
            missing.to_str().unwrap(),
        ],
        &out,
        &format!("its folder {} does not exist", missing_folder.display()),
    );
    let o = gen(&[
        "niah",
        "--private",
        "--seed",
        "3",
        "--seed-file",
        "x",
        "--out",
        &out,
    ]);
    assert_eq!(o.status.code(), Some(2));
    let public = out_arg(dir.path(), "p");
    generate(&public, &["niah", "--len", "1k"]);
    let key = dir.path().join("k");
    std::fs::write(&key, "seed 00\n").unwrap();
    let o = gen(&["verify", &public, "--seed-file", key.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let o = gen(&["reveal", &public, "--seed-file", key.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}

/// The identity keys the issue defines, read from a row's params independently of gen.
fn identities(task: &str, p: &serde_json::Value) -> Vec<String> {
    match task {
        "niah" => p["needles"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|n| {
                [
                    format!("pair {}={}", n["key"], n["value"]),
                    format!("value {}", n["value"]),
                ]
            })
            .collect(),
        "posgen" => vec![p["seed_tokens"].to_string()],
        "sort" => vec![p["items"].to_string()],
        "arith" => vec![p["operands"].to_string()],
        "needlechain" => vec![p["chain"].to_string()],
        "babilong" => {
            let mut p = p.clone();
            p.as_object_mut().unwrap().remove("screened_units");
            vec![p.to_string()]
        }
        _ => unreachable!(),
    }
}

fn keys(task: &str, dir: &str) -> Vec<String> {
    rows(Path::new(dir))
        .iter()
        .flat_map(|r| identities(task, &r.params))
        .collect()
}

#[test]
fn disjoint_splits_share_no_instance_per_task() {
    let dir = tmp();
    for (task, args) in [
        (
            "niah",
            vec![
                "niah",
                "--len",
                "512",
                "--samples",
                "300",
                "--value-type",
                "words",
            ],
        ),
        (
            "posgen",
            vec!["posgen", "--modulus", "7", "--samples", "300"],
        ),
        (
            "sort",
            vec!["sort", "--items", "4", "--digits", "1", "--samples", "300"],
        ),
        (
            "arith",
            vec!["arith", "--digits", "1..2", "--samples", "300"],
        ),
        (
            "needlechain",
            vec!["needlechain", "--chain", "2", "--samples", "300"],
        ),
        (
            "babilong",
            vec![
                "babilong",
                "--task",
                "qa1",
                "--len",
                "0",
                "--samples",
                "300",
            ],
        ),
    ] {
        let a = out_arg(dir.path(), &format!("{task}-a"));
        let b = out_arg(dir.path(), &format!("{task}-b"));
        generate(&a, &args);
        // The same seed: every instance of b is first drawn as a's and must be drawn again.
        let mut with = args.clone();
        with.extend(["--disjoint-from", &a]);
        generate(&b, &with);
        let (ka, kb) = (keys(task, &a), keys(task, &b));
        let ka: BTreeSet<&String> = ka.iter().collect();
        let shared: Vec<&String> = kb.iter().filter(|k| ka.contains(k)).collect();
        assert!(
            shared.is_empty(),
            "{task}: {} shared, like {:?}",
            shared.len(),
            shared.first()
        );
        let rb = rows(Path::new(&b));
        assert_eq!(rb.len(), 300, "{task}");
        // Every sample keeps its index; posgen's seed tuples stay distinct within the split.
        let samples: BTreeSet<i64> = rb.iter().map(|r| r.sample_index).collect();
        assert_eq!(samples.len(), 300, "{task}");
        if task == "posgen" {
            assert_eq!(kb.iter().collect::<BTreeSet<_>>().len(), 300);
        }
        // verify finds the excluded dataset again and regenerates the same rows.
        let o = gen_ok(&["verify", &b, "-q"]);
        assert!(stdout(&o).contains("regenerate identically"), "{task}");
        let manifest = std::fs::read_to_string(Path::new(&b).join("manifest.json")).unwrap();
        assert!(manifest.contains("\"disjoint_from\""), "{task}");
    }
}

#[test]
fn an_exhausted_space_is_refused() {
    let dir = tmp();
    // modulus 2 with 3 + 1 seed tokens: 16 tuples, 8 per split; a takes all of test's.
    let args = ["posgen", "--modulus", "2", "--samples", "8"];
    let a = out_arg(dir.path(), "a");
    generate(&a, &args);
    let b = out_arg(dir.path(), "b");
    let mut with = args.to_vec();
    with.extend(["--disjoint-from", &a]);
    crate::common::assert_refused(&with, &b, "too small");
    // Not even one sample fits: all eight of the split's tuples are taken.
    let one = [
        "posgen",
        "--modulus",
        "2",
        "--samples",
        "1",
        "--disjoint-from",
        &a,
    ];
    crate::common::assert_refused(&one, &b, "too small");
}

#[test]
fn a_moved_excluded_dataset_is_named_by_verify() {
    let dir = tmp();
    let a = out_arg(dir.path(), "a");
    let b = out_arg(dir.path(), "b");
    generate(&a, &["sort", "--len", "1k", "--samples", "20"]);
    generate(
        &b,
        &[
            "sort",
            "--len",
            "1k",
            "--samples",
            "20",
            "--disjoint-from",
            &a,
        ],
    );
    std::fs::rename(&a, dir.path().join("gone")).unwrap();
    let o = gen(&["verify", &b, "-q"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("disjoint"));
}

#[test]
fn control_rows_hold_no_answer_and_are_scored_apart() {
    let dir = tmp();
    for args in [
        vec![
            "niah",
            "--len",
            "1k",
            "--samples",
            "20",
            "--variant",
            "multikey",
        ],
        vec![
            "babilong",
            "--task",
            "qa2",
            "--len",
            "1k",
            "--samples",
            "20",
        ],
        vec!["needlechain", "--len", "1k", "--samples", "20"],
        vec![
            "sort",
            "--samples",
            "20",
            "--haystack",
            "generated",
            "--len",
            "1k",
        ],
    ] {
        let out = out_arg(dir.path(), args[0]);
        let mut with = args.clone();
        with.extend(["--controls", "no-context", "--jsonl"]);
        generate(&out, &with);
        let all = rows(Path::new(&out));
        assert_eq!(all.len(), 40, "{args:?}");
        for pair in all.chunks(2) {
            let (row, control) = (&pair[0], &pair[1]);
            assert_eq!(control.variant, format!("{}+no_context", row.variant));
            assert_eq!(control.params["control"], "no_context");
            assert!(row.params.get("control").is_none());
            assert_eq!(control.target_length, row.target_length);
            assert_eq!(control.sample_index, row.sample_index);
            assert!(control.length < row.length, "{args:?}: a control is short");
            assert_eq!(control.answers, row.answers);
            for answer in &row.answers {
                assert!(
                    !control.input.contains(answer.as_str()),
                    "{args:?}: control holds answer {answer}: {}",
                    control.input
                );
            }
        }
        let o = gen_ok(&["verify", &out, "-q"]);
        assert!(stdout(&o).contains("40 rows"), "{}", stdout(&o));

        // A model that answers the instances and not the controls: 100 % apart from 0 %.
        let preds = dir.path().join(format!("{}.jsonl", args[0]));
        let lines: Vec<String> = all
            .iter()
            .map(|r| {
                let p = if r.variant.ends_with("+no_context") {
                    "no idea"
                } else {
                    &r.target
                };
                serde_json::json!({"id": r.id, "prediction": p}).to_string()
            })
            .collect();
        std::fs::write(&preds, lines.join("\n") + "\n").unwrap();
        let scores = dir.path().join(format!("{}-scores", args[0]));
        gen_ok(&[
            "score",
            &out,
            "--predictions",
            preds.to_str().unwrap(),
            "--out",
            scores.to_str().unwrap(),
            "-q",
        ]);
        let s: serde_json::Value =
            serde_json::from_slice(&std::fs::read(scores.join("scores.json")).unwrap()).unwrap();
        assert_eq!(s["overall"]["rows"], 20, "{args:?}");
        assert_eq!(s["overall"]["accuracy"], 1.0, "{args:?}");
        let controls = s["controls"].as_object().unwrap();
        let (_, c) = controls.iter().next().unwrap();
        assert_eq!(
            (c["rows"].as_u64(), c["correct"].as_u64()),
            (Some(20), Some(0))
        );
        // Exports read control rows like any other.
        gen_ok(&["export", "lm-eval", &out]);
        gen_ok(&["export", "inspect", &out]);
    }
}

#[test]
fn controls_that_mean_nothing_are_refused() {
    let dir = tmp();
    let out = out_arg(dir.path(), "x");
    crate::common::assert_refused(&["arith", "--controls", "no-context"], &out, "no context");
    crate::common::assert_refused(&["posgen", "--controls", "no-context"], &out, "no context");
    crate::common::assert_refused(&["niah", "--controls", "none"], &out, "--controls");
}
