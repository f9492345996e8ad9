//! `gen suite` (TOML files and built-in suites, many tasks in one dataset) and sharding
//! (`--num-shards/--shard-index` and `gen merge`), through the real binary.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{gen, gen_ok};

/// Every file under `dir` (relative path → bytes): equal maps are byte-identical directories.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(dir: &Path, rel: &str, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let name = format!("{rel}{}", e.file_name().to_string_lossy());
            if e.path().is_dir() {
                walk(&e.path(), &format!("{name}/"), out);
            } else {
                out.insert(name, std::fs::read(e.path()).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, "", &mut out);
    out
}

fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const ISSUE_EXAMPLE: &str = r#"seed = 11
tokenizer = "cl100k"
lengths = ["2k", "4k"]
samples = 2

[[task]]
task = "niah"
variant = "multikey"

[[task]]
task = "niah"
variant = "multivalue"
key_type = "uuids"
"#;

#[test]
fn a_suite_file_makes_one_dataset_of_many_tasks_that_verifies() {
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("mine.toml");
    std::fs::write(&file, ISSUE_EXAMPLE).unwrap();
    let out = t.path().join("ds");
    gen_ok(&["suite", s(&file), "--out", s(&out), "-q"]);
    let m = manifest(&out);
    assert_eq!(
        m["configs"],
        serde_json::json!(["niah_multikey", "niah_multivalue"])
    );
    // Two lengths × one default depth × 2 samples, per config.
    assert_eq!(m["rows"], 8);
    let entries = m["suite"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(m["recipe"], entries[0]["recipe"]);
    for e in entries {
        assert_eq!(e["recipe"]["seed"], 11);
        assert_eq!(e["recipe"]["tokenizer"], "cl100k");
        assert_eq!(e["recipe"]["canary"], m["recipe"]["canary"]);
    }
    assert_eq!(entries[1]["recipe"]["options"]["key_type"], "uuids");
    assert_eq!(m["command"][1], "suite");
    // One card for both configs; verify remakes everything.
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(
        card.contains("- config_name: niah_multikey\n")
            && card.contains("- config_name: niah_multivalue\n")
    );
    let v = gen(&["verify", s(&out)]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    // Rerun: byte-identical; a changed row is caught.
    let again = t.path().join("again");
    gen_ok(&[
        "suite",
        s(&file),
        "--out",
        s(&again),
        "-q",
        "--threads",
        "1",
    ]);
    assert_eq!(tree(&out), tree(&again));
    // Common options on the command line override the file.
    let over = t.path().join("over");
    gen_ok(&[
        "suite",
        s(&file),
        "--samples",
        "1",
        "--seed",
        "3",
        "--len",
        "1k",
        "--out",
        s(&over),
        "-q",
    ]);
    let m = manifest(&over);
    assert_eq!(m["rows"], 2);
    assert_eq!(m["recipe"]["seed"], 3);
    assert_eq!(m["recipe"]["lengths"], serde_json::json!([1024]));
    assert_eq!(m["recipe"]["tokenizer"], "cl100k");
    assert!(gen(&["verify", s(&over), "-q"]).status.success());
}

#[test]
fn suite_files_are_refused_with_file_and_line() {
    let t = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        ("samples = 2\n\n[[task]]\ntask = \"niah\"\nkey_typ = \"uuids\"\n", ":5:", "unknown key 'key_typ'"),
        ("sampels = 2\n[[task]]\ntask = \"niah\"\n", ":1:", "unknown key 'sampels'"),
        ("[[task]]\ntask = \"niah\"\n[[task]]\ntask = \"nope\"\n", ":3:", "unknown task 'nope'"),
        ("[[task]]\ntask = \"niah\"\nseed = 4\n", ":3:", "whole dataset"),
        ("[[task]]\ntask = \"niah\"\nvariant = \"triple\"\n", ":1:", "triple"),
        ("[[task]]\ntask = \"niah\"\n\n[[task]]\ntask = \"niah\"\n", ":4:", "config 'niah_single' is made twice"),
        ("[[task]]\nname = \"a\"\ntask = \"niah\"\n[[task]]\nname = \"a\"\ntask = \"needlechain\"\n", ":4:", "config 'a' is made twice"),
        ("[[task]]\ntask = \"niah\"\nkeys = 0\n", ":1:", "--keys"),
        ("lengths = [\"2k\"\n", ":1:", ""),
        ("seed = 1\n", ":1:", "no [[task]]"),
        ("[[task]]\ntask = \"babilong\"\ntasks = [\"qa1\", \"qa2\"]\nname = \"x\"\n", ":1:", "names one config"),
    ];
    for (i, (text, line, says)) in cases.iter().enumerate() {
        let file = t.path().join(format!("bad{i}.toml"));
        std::fs::write(&file, text).unwrap();
        let out = t.path().join(format!("out{i}"));
        let o = gen(&["suite", s(&file), "--out", s(&out), "-q"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{text}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&format!("bad{i}.toml{line}")), "{text}: {err}");
        assert!(err.contains(says), "{text}: {err}");
        assert!(!out.exists(), "{text}: nothing is written");
    }
    let o = gen(&["suite", "nosuch", "-q"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("ruler, ruler2, babilong, reasoning"));
}

#[test]
fn the_ruler_suite_names_configs_as_ruler_and_skips_what_it_cannot_make() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("ruler");
    let o = gen_ok(&[
        "suite",
        "ruler",
        "--len",
        "4k",
        "--samples",
        "2",
        "--out",
        s(&out),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    // Without QA data (or without the qa task in this build) the QA configs are skipped, and
    // named; so are tasks this build lacks.
    let listed = String::from_utf8_lossy(&gen_ok(&["list", "tasks"]).stdout).to_string();
    let has = |t: &str| {
        listed
            .lines()
            .any(|l| l.split_whitespace().next() == Some(t))
    };
    for (config, task, why) in [
        ("qa_1", "qa", "no --qa-data given"),
        ("qa_2", "qa", "no --qa2-data given"),
        ("vt", "vt", ""),
        ("cwe", "cwe", ""),
        ("fwe", "fwe", ""),
    ] {
        if has(task) {
            assert!(
                why.is_empty() || err.contains(&format!("skipped {config}: {why}")),
                "{err}"
            );
        } else {
            assert!(
                err.contains(&format!(
                    "skipped {config}: task '{task}' is not in this build"
                )),
                "{err}"
            );
        }
    }
    let m = manifest(&out);
    let configs: Vec<&str> = m["configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    for c in [
        "niah_single_1",
        "niah_single_2",
        "niah_single_3",
        "niah_multikey_1",
        "niah_multikey_2",
        "niah_multikey_3",
        "niah_multivalue",
        "niah_multiquery",
    ] {
        assert!(configs.contains(&c), "{c} in {configs:?}");
    }
    let skipped: Vec<&str> = m["suite"]["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["config"].as_str().unwrap())
        .collect();
    assert_eq!(configs.len() + skipped.len(), 13, "{configs:?} {skipped:?}");
    // One depth per sample: samples × lengths rows per config, each at its own depth (the
    // configs without a haystack, cwe and fwe, have no depths: their samples stay).
    for e in m["suite"]["entries"].as_array().unwrap() {
        let r = &e["recipe"];
        match r["depths"].as_array() {
            Some(depths) => {
                assert_eq!(r["samples"], 1, "{}", e["config"]);
                assert_eq!(depths.len(), 2, "{}", e["config"]);
            }
            None => assert_eq!(r["samples"], 2, "{}", e["config"]),
        }
    }
    assert_eq!(m["rows"].as_u64().unwrap(), 2 * configs.len() as u64);
    let by_name: BTreeMap<&str, &serde_json::Value> = m["suite"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["config"].as_str().unwrap(), &e["recipe"]))
        .collect();
    assert_eq!(by_name["niah_single_1"]["haystack"], "noise");
    assert_eq!(by_name["niah_multikey_2"]["haystack"], "needles");
    assert_eq!(by_name["niah_multikey_3"]["options"]["key_type"], "uuids");
    assert_eq!(by_name["niah_multiquery"]["options"]["queries"], 4);
    if has("vt") {
        // RULER's vt hides its chains in noise.
        assert_eq!(by_name["vt"]["haystack"], "noise");
    }
    assert!(gen(&["verify", s(&out), "-q"]).status.success());
}

fn qa_fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/qa")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn with_qa_data_the_ruler_suite_writes_all_13_configs_that_verify() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("ruler");
    let (squad, hotpot) = (qa_fixture("squad.json"), qa_fixture("hotpotqa.json"));
    let o = gen_ok(&[
        "suite",
        "ruler",
        "--len",
        "4k",
        "--samples",
        "2",
        "--qa-data",
        &squad,
        "--qa2-data",
        &hotpot,
        "--out",
        s(&out),
    ]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("skipped"));
    let m = manifest(&out);
    let configs: Vec<&str> = m["configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(configs.len(), 13, "{configs:?}");
    assert!(m["suite"]["skipped"]
        .as_array()
        .is_none_or(|a| a.is_empty()));
    let by_name: BTreeMap<&str, &serde_json::Value> = m["suite"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["config"].as_str().unwrap(), &e["recipe"]))
        .collect();
    assert_eq!(by_name["qa_1"]["options"]["format"], "squad");
    assert_eq!(by_name["qa_2"]["options"]["format"], "hotpotqa");
    assert!(by_name["qa_1"]["haystack_id"]
        .as_str()
        .unwrap()
        .starts_with("documents:"));
    // One depth per sample, as for RULER's other haystack configs; still a question per row.
    assert_eq!(by_name["qa_2"]["samples"], 1);
    for config in ["qa_1", "qa_2"] {
        let asked: Vec<String> = crate::common::rows(&out.join(config))
            .iter()
            .map(|r| r.params["question_id"].as_str().unwrap().to_string())
            .collect();
        let distinct: std::collections::BTreeSet<&String> = asked.iter().collect();
        assert_eq!(distinct.len(), asked.len(), "{config}: {asked:?}");
    }
    assert_eq!(m["rows"].as_u64().unwrap(), 26);
    assert!(gen(&["verify", s(&out), "-q"]).status.success());
}

/// Run a generating command as `n` shards and merge them into `merged`.
pub(crate) fn sharded(args: &[&str], n: u64, dir: &Path, merged: &Path) {
    let mut parts = Vec::new();
    // Shards made out of order, one of them twice (a retried shard rewrites the same part).
    for i in (0..n).rev().chain([0]) {
        let part = dir.join(format!("part{i}"));
        let (i, n) = (i.to_string(), n.to_string());
        let mut a: Vec<&str> = args.to_vec();
        a.extend([
            "--num-shards",
            &n,
            "--shard-index",
            &i,
            "--out",
            s(&part),
            "-q",
            "--force",
        ]);
        gen_ok(&a);
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    let mut a = vec!["merge"];
    a.extend(parts.iter().map(|p| s(p)));
    a.extend(["--out", s(merged), "-q"]);
    gen_ok(&a);
}

#[test]
fn three_shards_merge_into_the_one_machine_dataset_byte_for_byte() {
    let t = tempfile::tempdir().unwrap();
    let (squad, hotpot) = (qa_fixture("squad.json"), qa_fixture("hotpotqa.json"));
    let args = [
        "suite",
        "ruler",
        "--len",
        "2k,4k",
        "--samples",
        "3",
        "--qa-data",
        &squad,
        "--qa2-data",
        &hotpot,
    ];
    let whole = t.path().join("whole");
    let mut a = args.to_vec();
    a.extend(["--out", s(&whole), "-q"]);
    gen_ok(&a);
    let merged = t.path().join("merged");
    sharded(&args, 3, t.path(), &merged);
    assert_eq!(
        tree(&whole),
        tree(&merged),
        "merged differs from the one-machine run"
    );
    assert!(gen(&["verify", s(&merged), "-q"]).status.success());

    let parts: Vec<String> = (0..3)
        .map(|i| s(&t.path().join(format!("part{i}"))).to_string())
        .collect();
    let refused = |args: &[&str], says: &str| {
        let out = t.path().join("refused");
        let mut a = vec!["merge"];
        a.extend(args);
        a.extend(["--out", s(&out)]);
        let o = gen(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?}: nothing is written");
    };
    // Incomplete, duplicated, mismatched.
    refused(
        &[&parts[0], &parts[2]],
        "incomplete: 1 of 3 shards missing (shard-index 1)",
    );
    refused(
        &[&parts[0], &parts[1], &parts[1], &parts[2]],
        "shard 1 is given twice",
    );
    let other = t.path().join("other");
    gen_ok(&[
        "suite",
        "ruler",
        "--len",
        "2k,4k",
        "--samples",
        "3",
        "--seed",
        "1",
        "--num-shards",
        "3",
        "--shard-index",
        "1",
        "--out",
        s(&other),
        "-q",
    ]);
    refused(
        &[&parts[0], s(&other), &parts[2]],
        "parts of different datasets",
    );
    let two = t.path().join("two");
    gen_ok(&[
        "suite",
        "ruler",
        "--len",
        "2k,4k",
        "--samples",
        "3",
        "--num-shards",
        "2",
        "--shard-index",
        "1",
        "--out",
        s(&two),
        "-q",
    ]);
    refused(
        &[&parts[0], s(&two), &parts[2]],
        "parts of different datasets",
    );
    refused(&[s(&whole)], "not a shard part");
    // A changed part file.
    let f = crate::common::parquet_files(Path::new(&parts[1]))[0].clone();
    let mut bytes = std::fs::read(&f).unwrap();
    let k = bytes.len() / 2;
    bytes[k] ^= 1;
    std::fs::write(&f, bytes).unwrap();
    refused(
        &[&parts[0], &parts[1], &parts[2]],
        "changed since shard 1 wrote it",
    );
}

#[test]
fn any_shard_count_of_any_command_merges_byte_identically() {
    let t = tempfile::tempdir().unwrap();
    let seed_file = t.path().join("private.seed");
    let file = t.path().join("mixed.toml");
    std::fs::write(
        &file,
        "lengths = [\"1k\", \"2k\"]\nsamples = 2\n\n[[task]]\ntask = \"babilong\"\ntasks = \"qa1,qa2\"\n\n[[task]]\ntask = \"sort\"\n\n[[task]]\ntask = \"posgen\"\nsplit = \"both\"\n",
    )
    .unwrap();
    let cases: Vec<Vec<String>> = vec![
        vec![
            "niah",
            "--len",
            "1k",
            "--depths",
            "3",
            "--samples",
            "3",
            "--jsonl",
        ],
        vec![
            "babilong",
            "--task",
            "qa1,qa3",
            "--len",
            "0,2k",
            "--samples",
            "2",
            "--rows-per-file",
            "3",
        ],
        vec!["suite", s(&file), "--rows-per-file", "2", "--jsonl"],
        // Control rows stay with their instance's shard; a private split's shards share the
        // seed file.
        vec![
            "niah",
            "--variant",
            "multikey",
            "--len",
            "1k",
            "--depths",
            "4",
            "--controls",
            "no-context",
            "--rows-per-file",
            "3",
        ],
        vec![
            "needlechain",
            "--len",
            "1k",
            "--samples",
            "5",
            "--private",
            "--seed-file",
            s(&seed_file),
        ],
    ]
    .into_iter()
    .map(|v| v.into_iter().map(String::from).collect())
    .collect();
    for (c, args) in cases.iter().enumerate() {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let whole = t.path().join(format!("whole{c}"));
        let mut a = args.clone();
        a.extend(["--out", s(&whole), "-q"]);
        gen_ok(&a);
        let rows = manifest(&whole)["rows"].as_u64().unwrap();
        // More shards than rows too: some shards are empty.
        for n in [1, 2, 5, rows + 2] {
            let dir = t.path().join(format!("c{c}-n{n}"));
            std::fs::create_dir(&dir).unwrap();
            let merged = dir.join("merged");
            sharded(&args, n, &dir, &merged);
            assert_eq!(tree(&whole), tree(&merged), "{args:?} as {n} shards");
        }
    }
}

#[test]
fn shard_options_are_checked() {
    for (args, says) in [
        (vec!["niah", "--num-shards", "3"], "--shard-index"),
        (
            vec!["niah", "--num-shards", "3", "--shard-index", "3"],
            "invalid --shard-index 3: expected 0 to 2",
        ),
        (
            vec!["niah", "--num-shards", "0", "--shard-index", "0"],
            "invalid --num-shards 0",
        ),
    ] {
        let o = gen(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(says),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
