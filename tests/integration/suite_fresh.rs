//! Fresh splits made by `gen suite`: one private seed for every config (one commitment, no
//! byte of the seed in the dataset), verify and reveal over every entry, private shards merged
//! byte for byte, `--disjoint-from` matched by task kind across configs, and control rows
//! scored apart, through the real binary.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common::{contains, dataset_bytes, gen, gen_ok, rows, seed_forms, tmp};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

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

/// The seed line of a seed file, as hex.
fn seed_hex(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("seed "))
        .unwrap()
        .to_string()
}

/// A suite of four tasks (five configs), every row over a haystack or a story.
const MIXED: &str = r#"lengths = ["1k"]
samples = 3

[[task]]
task = "niah"
variant = "multikey"

[[task]]
task = "babilong"
tasks = "qa1,qa2"

[[task]]
task = "needlechain"

[[task]]
task = "sort"
items = 5
haystack = "generated"
"#;

const MIXED_CONFIGS: &str = "niah_multikey, babilong_qa1, babilong_qa2, needlechain_salary_forward, sort_numbers_values_hidden";

#[test]
fn private_suites_hide_the_seed_verify_with_it_and_reveal_it() {
    let t = tmp();
    let file = t.path().join("mixed.toml");
    std::fs::write(&file, MIXED).unwrap();
    let (key, key2) = (t.path().join("suite.key"), t.path().join("other.key"));
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    let private = |out: &Path, key: &Path| {
        gen_ok(&[
            "suite",
            s(&file),
            "--private",
            "--seed-file",
            s(key),
            "--jsonl",
            "--out",
            s(out),
            "-q",
        ]);
    };
    private(&a, &key);
    private(&b, &key2);
    let seed = seed_hex(&key);
    assert_ne!(
        seed,
        seed_hex(&key2),
        "two private suite runs draw two seeds"
    );

    // No byte of the dataset holds the seed, in any form: shards, mirrors, manifest, card.
    let files = tree(&a);
    assert!(files.len() >= 12, "{:?}", files.keys());
    for form in seed_forms(&seed) {
        for (name, bytes) in &files {
            assert!(!contains(bytes, &form), "{name} holds the seed");
        }
    }
    // One commitment for every config; no public seed; the command says private.
    let m = manifest(&a);
    let private_of = &m["recipe"]["private"];
    assert_eq!(private_of["commitment"].as_str().unwrap().len(), 64);
    assert!(private_of.get("seed").is_none());
    for e in m["suite"]["entries"].as_array().unwrap() {
        assert_eq!(&e["recipe"]["private"], private_of, "one commitment");
        assert_eq!(e["recipe"]["seed"], 0);
    }
    assert!(m["command"]
        .as_array()
        .unwrap()
        .contains(&"--private".into()));
    let card = std::fs::read_to_string(a.join("README.md")).unwrap();
    assert!(card.contains("private split") && card.contains("hold for every config"));

    // Two private runs of one suite differ in every row.
    let (ra, rb) = (rows(&a), rows(&b));
    assert_eq!(ra.len(), 15);
    assert_eq!(ra.len(), rb.len());
    for (x, y) in ra.iter().zip(&rb) {
        assert_ne!(x.id, y.id);
        assert_ne!(x.input, y.input);
    }
    assert_ne!(m["recipe"]["canary"], manifest(&b)["recipe"]["canary"]);

    // Without the seed: every check that needs none, exit 0, and a plain statement.
    let o = gen_ok(&["verify", s(&a), "-q"]);
    let out = stdout(&o);
    assert!(
        out.contains(&format!("ok without the seed: 15 rows of {MIXED_CONFIGS}"))
            && out.contains("needs the seed"),
        "{out}"
    );
    // With the right seed: every row of every config regenerated.
    let regenerated = format!("15 rows of {MIXED_CONFIGS} regenerate identically");
    let o = gen_ok(&["verify", s(&a), "-q", "--seed-file", s(&key)]);
    assert!(stdout(&o).contains(&regenerated), "{}", stdout(&o));
    // With a wrong seed: exit 1, naming the commitment.
    let o = gen(&["verify", s(&a), "-q", "--seed-file", s(&key2)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains(&format!(
        "does not match the dataset's commitment {}",
        private_of["commitment"].as_str().unwrap()
    )));
    let o = gen(&["reveal", s(&a), "--seed-file", s(&key2)]);
    assert_eq!(o.status.code(), Some(1), "a wrong seed is never revealed");

    // The suite keys private and seed_file make the same rows as the flags.
    let keyed = t.path().join("keyed.toml");
    std::fs::write(
        &keyed,
        format!("private = true\nseed_file = {:?}\n{MIXED}", s(&key)),
    )
    .unwrap();
    let c = t.path().join("c");
    gen_ok(&["suite", s(&keyed), "--jsonl", "--out", s(&c), "-q"]);
    assert_eq!(dataset_bytes(&a), dataset_bytes(&c));

    // Reveal: only the seed is added (to every entry), and a plain verify regenerates it all.
    let before = dataset_bytes(&a);
    gen_ok(&["reveal", s(&a), "--seed-file", s(&key)]);
    assert_eq!(dataset_bytes(&a), before);
    let m = manifest(&a);
    assert_eq!(m["recipe"]["private"]["seed"], seed.as_str());
    for e in m["suite"]["entries"].as_array().unwrap() {
        assert_eq!(e["recipe"]["private"]["seed"], seed.as_str());
    }
    let o = gen_ok(&["verify", s(&a), "-q"]);
    assert!(stdout(&o).contains(&regenerated), "{}", stdout(&o));

    // Entries that disagree on their private seed are not a suite gen makes.
    let mut m = manifest(&b);
    m["suite"]["entries"][1]["recipe"]["private"]["commitment"] =
        manifest(&a)["recipe"]["private"]["commitment"].clone();
    std::fs::write(
        b.join("manifest.json"),
        serde_json::to_string_pretty(&m).unwrap() + "\n",
    )
    .unwrap();
    let o = gen(&["verify", s(&b), "-q"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("private seed"));
}

#[test]
fn private_suite_shards_merge_into_the_unsharded_run_byte_for_byte() {
    let t = tmp();
    let file = t.path().join("mixed.toml");
    std::fs::write(&file, MIXED).unwrap();
    let key = t.path().join("shared.key");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = [
            "suite",
            s(&file),
            "--samples",
            "2",
            "--controls",
            "no-context",
            "--private",
            "--seed-file",
            s(&key),
            "-q",
        ]
        .iter()
        .map(|x| x.to_string())
        .collect();
        a.extend(extra.iter().map(|x| x.to_string()));
        a
    };
    let run = |a: Vec<String>| gen_ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
    // The first shard draws the seed into the file; the others, and the one-machine run,
    // reuse it.
    let parts: Vec<PathBuf> = (0..3).map(|i| t.path().join(format!("part{i}"))).collect();
    for (i, part) in parts.iter().enumerate() {
        let i = i.to_string();
        run(args(&[
            "--num-shards",
            "3",
            "--shard-index",
            &i,
            "--out",
            s(part),
        ]));
    }
    let seed = seed_hex(&key);
    let merged = t.path().join("merged");
    let mut m = vec!["merge"];
    m.extend(parts.iter().map(|p| s(p)));
    m.extend(["--out", s(&merged), "-q"]);
    gen_ok(&m);
    let whole = t.path().join("whole");
    run(args(&["--out", s(&whole)]));
    assert_eq!(
        seed_hex(&key),
        seed,
        "the seed file is reused, never replaced"
    );
    assert_eq!(
        tree(&whole),
        tree(&merged),
        "merged differs from the one-machine run"
    );
    // No part holds the seed either.
    for part in &parts {
        for (name, bytes) in tree(part) {
            for form in seed_forms(&seed) {
                assert!(!contains(&bytes, &form), "{name} holds the seed");
            }
        }
    }
    let o = gen_ok(&["verify", s(&merged), "-q", "--seed-file", s(&key)]);
    assert!(
        stdout(&o).contains("20 rows of") && stdout(&o).contains("regenerate identically"),
        "{}",
        stdout(&o)
    );
}

/// The identity keys the issue defines, read from a row's params independently of gen.
fn identities(task: &str, p: &serde_json::Value) -> Vec<String> {
    let tagged = |k: String| format!("{task}:{k}");
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
            .map(tagged)
            .collect(),
        "posgen" => vec![tagged(p["seed_tokens"].to_string())],
        "sort" => vec![tagged(p["items"].to_string())],
        "arith" => vec![tagged(p["operands"].to_string())],
        "needlechain" => vec![tagged(p["chain"].to_string())],
        "babilong" => {
            let mut p = p.clone();
            p.as_object_mut().unwrap().remove("screened_units");
            vec![tagged(p.to_string())]
        }
        _ => unreachable!("{task}"),
    }
}

/// Every identity of the instances of `dir` (control rows have none of their own), each
/// tagged by its task, with the number of instances per task.
fn keys(dir: &Path) -> (BTreeSet<String>, BTreeMap<String, usize>) {
    let mut keys = BTreeSet::new();
    let mut per_task: BTreeMap<String, usize> = BTreeMap::new();
    for r in rows(dir) {
        if r.params.get("control").is_some() {
            continue;
        }
        let task = task_of(&r);
        *per_task.entry(task.clone()).or_default() += 1;
        keys.extend(identities(&task, &r.params));
    }
    (keys, per_task)
}

/// A row's task, told by what its params hold.
fn task_of(r: &crate::common::TestRow) -> String {
    let p = &r.params;
    if p.get("needles").is_some() {
        "niah"
    } else if p.get("seed_tokens").is_some() {
        "posgen"
    } else if p.get("chain").is_some() {
        "needlechain"
    } else if p.get("operands").is_some() {
        "arith"
    } else if p.get("events").is_some() || p.get("relations").is_some() {
        "babilong"
    } else if p.get("items").is_some() {
        "sort"
    } else {
        panic!("a row of no known task: {p}")
    }
    .to_string()
}

/// Small spaces, so that every first draw of the same seed collides and is drawn again.
const SMALL: &str = r#"samples = 300
seed = 5

[[task]]
task = "niah"
value_type = "words"
lengths = ["512"]
NAME

[[task]]
task = "sort"
items = 4
digits = "1"

[[task]]
task = "babilong"
tasks = "qa1"
lengths = ["0"]

[[task]]
task = "needlechain"
chain = 2

[[task]]
task = "posgen"
modulus = 11
"#;

#[test]
fn disjoint_suites_share_no_identity_with_the_excluded_datasets() {
    let t = tmp();
    // The excluded suite names its niah config otherwise: matching is by task kind.
    let excluded_file = t.path().join("excluded.toml");
    std::fs::write(&excluded_file, SMALL.replace("NAME", "name = \"renamed\"")).unwrap();
    let file = t.path().join("small.toml");
    std::fs::write(&file, SMALL.replace("NAME", "")).unwrap();
    let a = t.path().join("a");
    gen_ok(&["suite", s(&excluded_file), "--out", s(&a), "-q"]);
    // A second excluded dataset, made by one command: arith, which the suite adds below.
    let arith = t.path().join("arith");
    gen_ok(&[
        "arith",
        "--digits",
        "1..2",
        "--samples",
        "300",
        "--seed",
        "5",
        "--out",
        s(&arith),
        "-q",
    ]);
    let with_arith = t.path().join("with-arith.toml");
    std::fs::write(
        &with_arith,
        SMALL.replace("NAME", "") + "\n[[task]]\ntask = \"arith\"\ndigits = \"1..2\"\n",
    )
    .unwrap();
    // The same seed: every instance of b is first drawn as a's and must be drawn again.
    let b = t.path().join("b");
    gen_ok(&[
        "suite",
        s(&with_arith),
        "--disjoint-from",
        s(&a),
        s(&arith),
        "--out",
        s(&b),
        "-q",
    ]);
    let (ka, _) = keys(&a);
    let (kr, _) = keys(&arith);
    let (kb, per_task) = keys(&b);
    for task in ["niah", "sort", "babilong", "needlechain", "posgen", "arith"] {
        assert_eq!(per_task.get(task), Some(&300), "{task}: {per_task:?}");
    }
    let shared: Vec<&String> = kb
        .iter()
        .filter(|k| ka.contains(*k) || kr.contains(*k))
        .collect();
    assert!(
        shared.is_empty(),
        "{} shared, like {:?}",
        shared.len(),
        shared.first()
    );
    // The point of the test: without the option, the same suite shares them all.
    let plain = t.path().join("plain");
    gen_ok(&["suite", s(&file), "--out", s(&plain), "-q"]);
    let (kp, _) = keys(&plain);
    assert!(kp.len() >= 5 * 300 && kp.iter().all(|k| ka.contains(k)));
    // Every sample keeps its index; verify finds the excluded datasets and remakes every row.
    let rb = rows(&b);
    assert_eq!(rb.len(), 6 * 300);
    let o = gen_ok(&["verify", s(&b), "-q"]);
    assert!(stdout(&o).contains("1800 rows of"), "{}", stdout(&o));
    let m = manifest(&b);
    for e in m["suite"]["entries"].as_array().unwrap() {
        assert_eq!(e["recipe"]["disjoint_from"], m["recipe"]["disjoint_from"]);
        assert_eq!(e["recipe"]["disjoint_from"].as_array().unwrap().len(), 2);
    }

    // Private and disjoint from a private split of the same seed: every row is drawn again,
    // and verify without the seed checks each redraw's provenance and every row against the
    // excluded datasets; with the seed it regenerates them.
    let key = t.path().join("k");
    let unseeded = t.path().join("unseeded.toml");
    std::fs::write(
        &unseeded,
        SMALL.replace("NAME", "").replace("seed = 5\n", ""),
    )
    .unwrap();
    let private = |out: &Path, disjoint: &[&Path]| {
        let mut args = vec!["suite", s(&unseeded), "--private", "--seed-file", s(&key)];
        if !disjoint.is_empty() {
            args.push("--disjoint-from");
            args.extend(disjoint.iter().map(|d| s(d)));
        }
        args.extend(["--out", s(out), "-q"]);
        gen_ok(&args);
    };
    let (pa, p) = (t.path().join("pa"), t.path().join("p"));
    private(&pa, &[]);
    private(&p, &[&pa, &a]);
    let (kpa, _) = keys(&pa);
    let (kp, _) = keys(&p);
    assert!(kp.iter().all(|k| !ka.contains(k) && !kpa.contains(k)));
    let (rpa, rp) = (rows(&pa), rows(&p));
    assert_eq!(rpa.len(), rp.len());
    assert!(
        rpa.iter().zip(&rp).all(|(x, y)| x.input != y.input),
        "every row of p is a redraw"
    );
    let o = gen_ok(&["verify", s(&p), "-q"]);
    assert!(
        stdout(&o).contains("ok without the seed: 1500 rows")
            && stdout(&o)
                .contains("no row shares an identity with the datasets it is kept disjoint from"),
        "{}",
        stdout(&o)
    );
    let o = gen_ok(&["verify", s(&p), "-q", "--seed-file", s(&key)]);
    assert!(stdout(&o).contains("regenerate identically"));
    // The excluded dataset moved: without the seed the rest is checked and the report says
    // disjointness was not; with the seed, regenerating needs it (exit 2).
    std::fs::rename(&a, t.path().join("moved")).unwrap();
    let o = gen_ok(&["verify", s(&p), "-q"]);
    assert!(
        stdout(&o).contains("disjointness not checked"),
        "{}",
        stdout(&o)
    );
    let o = gen(&["verify", s(&p), "-q", "--seed-file", s(&key)]);
    assert_eq!(o.status.code(), Some(2));

    // One command kept disjoint from a suite dataset: its task's instances in every config.
    let single = t.path().join("single");
    gen_ok(&[
        "sort",
        "--items",
        "4",
        "--digits",
        "1",
        "--samples",
        "300",
        "--seed",
        "5",
        "--disjoint-from",
        s(&b),
        "--out",
        s(&single),
        "-q",
    ]);
    let (ks, _) = keys(&single);
    assert!(ks.iter().all(|k| !kb.contains(k)));
}

#[test]
fn control_rows_in_a_suite_hold_no_answer_and_are_scored_apart() {
    let t = tmp();
    let file = t.path().join("mixed.toml");
    std::fs::write(&file, MIXED.replace("samples = 3", "samples = 10")).unwrap();
    let out = t.path().join("c");
    gen_ok(&[
        "suite",
        s(&file),
        "--controls",
        "no-context",
        "--out",
        s(&out),
        "-q",
    ]);
    let m = manifest(&out);
    assert_eq!(m["rows"], 100);
    for e in m["suite"]["entries"].as_array().unwrap() {
        assert_eq!(e["recipe"]["controls"], "no-context");
    }
    let all = rows(&out);
    assert_eq!(all.len(), 100);
    for pair in all.chunks(2) {
        let (row, control) = (&pair[0], &pair[1]);
        assert_eq!(control.variant, format!("{}+no_context", row.variant));
        assert_eq!(control.params["control"], "no_context");
        assert!(row.params.get("control").is_none());
        assert_eq!(control.sample_index, row.sample_index);
        assert!(control.length < row.length);
        assert_eq!(control.answers, row.answers);
        for answer in &row.answers {
            assert!(
                !control.input.contains(answer.as_str()),
                "{}: control holds answer {answer}",
                row.variant
            );
        }
    }
    let o = gen_ok(&["verify", s(&out), "-q"]);
    assert!(stdout(&o).contains("100 rows"), "{}", stdout(&o));

    // A model that answers every instance and no control: 100 % apart from 0 %, per config.
    let preds = t.path().join("preds.jsonl");
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
    let scores = t.path().join("scores");
    gen_ok(&[
        "score",
        s(&out),
        "--predictions",
        s(&preds),
        "--out",
        s(&scores),
        "-q",
    ]);
    let sc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(scores.join("scores.json")).unwrap()).unwrap();
    assert_eq!(sc["overall"]["rows"], 50);
    assert_eq!(sc["overall"]["accuracy"], 1.0);
    let controls = sc["controls"].as_object().unwrap();
    let configs: Vec<&str> = MIXED_CONFIGS.split(", ").collect();
    assert_eq!(controls.len(), configs.len(), "{controls:?}");
    for c in configs {
        let t = &controls[c];
        assert_eq!(
            (t["rows"].as_u64(), t["correct"].as_u64()),
            (Some(10), Some(0)),
            "{c}"
        );
    }
}

#[test]
fn fresh_suite_options_are_checked() {
    let t = tmp();
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "seed = 4\nprivate = true\n[[task]]\ntask = \"niah\"\n",
            &["--seed-file", "KEY"],
            "bad0.toml:1: seed does not apply to a private suite",
        ),
        (
            "[[task]]\ntask = \"niah\"\ncontrols = \"no-context\"\n",
            &[],
            "bad1.toml:3: controls is one value for the whole dataset",
        ),
        (
            "private = \"yes\"\n[[task]]\ntask = \"niah\"\n",
            &[],
            "bad2.toml:1: private takes true or false",
        ),
        (
            "private = true\n[[task]]\ntask = \"niah\"\n",
            &[],
            "--private needs --seed-file",
        ),
        (
            "[[task]]\ntask = \"niah\"\n",
            &["--seed-file", "KEY"],
            "--seed-file applies only to a private suite",
        ),
        (
            "[[task]]\ntask = \"niah\"\n",
            &["--private", "--seed-file", "OUT/k"],
            "inside --out",
        ),
        (
            "[[task]]\ntask = \"niah\"\n",
            &["--disjoint-from", "OUT"],
            "cannot be kept disjoint from itself",
        ),
        (
            "[[task]]\ntask = \"niah\"\n\n[[task]]\ntask = \"posgen\"\n",
            &["--controls", "no-context"],
            "bad7.toml:4: [[task]] posgen: --controls no-context does not apply",
        ),
        (
            "[[task]]\ntask = \"niah\"\n",
            &["--controls", "none"],
            "invalid --controls 'none'",
        ),
        (
            "disjoint_from = true\n[[task]]\ntask = \"niah\"\n",
            &[],
            "bad9.toml:1: disjoint_from takes a dataset directory",
        ),
    ];
    let key = t.path().join("never.key");
    for (i, (text, flags, says)) in cases.iter().enumerate() {
        let file = t.path().join(format!("bad{i}.toml"));
        std::fs::write(&file, text).unwrap();
        let out = t.path().join(format!("out{i}"));
        let mut a = vec!["suite".to_string(), s(&file).to_string()];
        a.extend(
            flags
                .iter()
                .map(|f| f.replace("KEY", s(&key)).replace("OUT", s(&out))),
        );
        a.extend(["--out".to_string(), s(&out).to_string(), "-q".to_string()]);
        let o = gen(&a.iter().map(String::as_str).collect::<Vec<_>>());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{text}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(says), "{text} {flags:?}: {err}");
        assert!(!out.exists(), "{text}: nothing is written");
        assert!(
            !key.exists(),
            "{text}: no seed is drawn into a file for a refused run"
        );
    }
}
