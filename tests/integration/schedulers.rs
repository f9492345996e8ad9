//! Shards on batch schedulers: `--shard-index env` / `--num-shards env` under each
//! scheduler's variables make the part `--shard-index I` makes, the refusals name the
//! variable, and a rerun of a complete shard keeps its part untouched.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};
use std::time::SystemTime;

use crate::common::{gen_ok, tmp, GEN};

/// Every variable `env` may read, cleared before each run so the test's own environment
/// (a CI runner inside Slurm, say) cannot leak in.
const VARIABLES: [&str; 12] = [
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_STEP",
    "SLURM_ARRAY_TASK_COUNT",
    "JOB_COMPLETION_INDEX",
    "AWS_BATCH_JOB_ARRAY_INDEX",
    "AWS_BATCH_JOB_ARRAY_SIZE",
    "BATCH_TASK_INDEX",
    "BATCH_TASK_COUNT",
    "CLOUD_RUN_TASK_INDEX",
    "CLOUD_RUN_TASK_COUNT",
];

/// A small recipe of 6 instances: 3 shards of 2.
const RECIPE: [&str; 7] = ["niah", "--len", "1k", "--depths", "3", "--samples", "2"];

/// Run gen with exactly the scheduler variables `vars` set.
fn gen_env(args: &[&str], vars: &[(&str, String)]) -> Output {
    let mut c = Command::new(GEN);
    c.args(args);
    for v in VARIABLES {
        c.env_remove(v);
    }
    for (k, v) in vars {
        c.env(k, v);
    }
    c.output().expect("the gen binary runs")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every file under `dir`: relative path → bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    crate::common::all_files(dir).into_iter().collect()
}

/// Every file's modification time under `dir`: a kept part has the same.
fn mtimes(dir: &Path) -> BTreeMap<String, SystemTime> {
    tree(dir)
        .keys()
        .map(|k| {
            (
                k.clone(),
                dir.join(k).metadata().unwrap().modified().unwrap(),
            )
        })
        .collect()
}

/// Variables to set: (name, value).
type Vars = Vec<(&'static str, String)>;

/// The variables each scheduler sets for index `i` of 3 workers (Slurm: `--array=1-3`,
/// whose task ids start at 1).
fn scheduler_vars(i: u64) -> Vec<(&'static str, Vars, bool)> {
    let n = "3".to_string();
    vec![
        (
            "slurm",
            vec![
                ("SLURM_ARRAY_TASK_ID", (i + 1).to_string()),
                ("SLURM_ARRAY_TASK_MIN", "1".into()),
                ("SLURM_ARRAY_TASK_MAX", "3".into()),
                ("SLURM_ARRAY_TASK_STEP", "1".into()),
                ("SLURM_ARRAY_TASK_COUNT", n.clone()),
            ],
            true,
        ),
        (
            "kubernetes",
            vec![("JOB_COMPLETION_INDEX", i.to_string())],
            false,
        ),
        (
            "aws",
            vec![
                ("AWS_BATCH_JOB_ARRAY_INDEX", i.to_string()),
                ("AWS_BATCH_JOB_ARRAY_SIZE", n.clone()),
            ],
            true,
        ),
        (
            "gcp-batch",
            vec![
                ("BATCH_TASK_INDEX", i.to_string()),
                ("BATCH_TASK_COUNT", n.clone()),
            ],
            true,
        ),
        (
            "cloud-run",
            vec![
                ("CLOUD_RUN_TASK_INDEX", i.to_string()),
                ("CLOUD_RUN_TASK_COUNT", n),
            ],
            true,
        ),
    ]
}

#[test]
fn each_scheduler_makes_the_part_of_the_index_it_names_and_they_merge_into_one_machines_dataset() {
    let t = tmp();
    let whole = t.path().join("whole");
    let mut a = RECIPE.to_vec();
    a.extend(["--out", s(&whole), "-q"]);
    gen_ok(&a);
    for i in 0..3u64 {
        let by_number = t.path().join(format!("n{i}"));
        let index = i.to_string();
        let mut a = RECIPE.to_vec();
        a.extend(["--num-shards", "3", "--shard-index", &index]);
        a.extend(["--out", s(&by_number), "-q"]);
        gen_ok(&a);
        for (name, vars, has_count) in scheduler_vars(i) {
            let out = t.path().join(format!("{name}{i}"));
            let mut a = RECIPE.to_vec();
            // Kubernetes gives no count: the Job's completions are given as the flag.
            a.extend([
                "--num-shards",
                if has_count { "env" } else { "3" },
                "--shard-index",
                "env",
            ]);
            a.extend(["--out", s(&out), "-q"]);
            let o = gen_env(&a, &vars);
            assert!(
                o.status.success(),
                "{name} {i}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert_eq!(
                tree(&out),
                tree(&by_number),
                "{name}: the part for index {i} differs from --shard-index {i}'s"
            );
        }
    }
    for (name, _, _) in scheduler_vars(0) {
        let merged = t.path().join(format!("merged-{name}"));
        let parts: Vec<String> = (0..3)
            .map(|i| s(&t.path().join(format!("{name}{i}"))).to_string())
            .collect();
        let mut a = vec!["merge"];
        a.extend(parts.iter().map(String::as_str));
        a.extend(["--out", s(&merged), "-q"]);
        gen_ok(&a);
        assert_eq!(
            tree(&merged),
            tree(&whole),
            "{name}: the merged parts differ from one machine's run"
        );
    }
}

#[test]
fn scheduler_refusals_name_the_variable_exit_2_and_write_nothing() {
    let t = tmp();
    let out = t.path().join("refused");
    let cases: Vec<(Vars, [&str; 2], &str)> =
        vec![
        (vec![], ["env", "env"], "no scheduler's index is set"),
        (
            vec![
                ("JOB_COMPLETION_INDEX", "1".into()),
                ("CLOUD_RUN_TASK_INDEX", "1".into()),
                ("CLOUD_RUN_TASK_COUNT", "3".into()),
            ],
            ["env", "env"],
            "several schedulers' indexes are set (JOB_COMPLETION_INDEX=1, CLOUD_RUN_TASK_INDEX=1)",
        ),
        (
            vec![
                ("AWS_BATCH_JOB_ARRAY_INDEX", "3".into()),
                ("AWS_BATCH_JOB_ARRAY_SIZE", "3".into()),
            ],
            ["env", "env"],
            "AWS_BATCH_JOB_ARRAY_INDEX=3 gives index 3, expected 0 to 2",
        ),
        (
            vec![("JOB_COMPLETION_INDEX", "4".into())],
            ["4", "env"],
            "JOB_COMPLETION_INDEX=4 gives index 4, expected 0 to 3",
        ),
        (
            vec![("JOB_COMPLETION_INDEX", "0".into())],
            ["env", "env"],
            "a Kubernetes Indexed Job sets no worker count",
        ),
        (
            vec![
                ("BATCH_TASK_INDEX", "one".into()),
                ("BATCH_TASK_COUNT", "3".into()),
            ],
            ["env", "env"],
            "invalid BATCH_TASK_INDEX='one'",
        ),
        (
            vec![
                ("SLURM_ARRAY_TASK_ID", "4".into()),
                ("SLURM_ARRAY_TASK_MIN", "1".into()),
                ("SLURM_ARRAY_TASK_MAX", "9".into()),
                ("SLURM_ARRAY_TASK_COUNT", "3".into()),
            ],
            ["env", "env"],
            "the Slurm array is not one range",
        ),
        (vec![], ["env3", "0"], "invalid value 'env3' for '--num-shards <N|env>'"),
    ];
    for (vars, [n, i], says) in cases {
        for task in [&RECIPE[..], &["suite", "frontier", "--len", "4k"][..]] {
            let mut a = task.to_vec();
            a.extend(["--num-shards", n, "--shard-index", i, "--out", s(&out)]);
            let o = gen_env(&a, &vars);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{vars:?}: {err}");
            assert!(err.contains(says), "{vars:?}: wanted '{says}' in: {err}");
            if !says.starts_with("invalid value") {
                assert_eq!(err.trim_end().lines().count(), 1, "{err}");
            }
            assert!(!out.exists(), "{vars:?}: nothing is written");
        }
    }
}

#[test]
fn a_rerun_of_a_complete_shard_keeps_its_part_and_any_other_part_is_refused() {
    let t = tmp();
    let part = t.path().join("part");
    let run = |extra: &[&str], index: &str| {
        let mut a = RECIPE.to_vec();
        a.extend(extra);
        a.extend([
            "--num-shards",
            "3",
            "--shard-index",
            "env",
            "--out",
            s(&part),
        ]);
        gen_env(&a, &[("JOB_COMPLETION_INDEX", index.to_string())])
    };
    let first = run(&["-q"], "1");
    assert!(first.status.success());
    let (bytes, times) = (tree(&part), mtimes(&part));
    assert!(bytes.contains_key("part.json"));

    // The same shard again, with or without -q: kept, said, exit 0, nothing rewritten.
    for quiet in [&["-q"][..], &[][..]] {
        let again = run(quiet, "1");
        let err = String::from_utf8_lossy(&again.stderr);
        assert!(again.status.success(), "{err}");
        assert!(
            err.contains("shard 1 of 3 is already complete") && err.contains("nothing to make"),
            "{err}"
        );
        assert_eq!(tree(&part), bytes);
        assert_eq!(mtimes(&part), times, "the kept part was rewritten");
    }

    let refused = |o: Output, says: &str| {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(says), "wanted '{says}' in: {err}");
        assert_eq!(
            tree(&part),
            bytes,
            "a refused rerun left the part as it was"
        );
    };
    // Another shard, another recipe, another --jsonl: not this shard's part.
    refused(run(&["-q"], "2"), "it holds shard 1 of 3");
    refused(
        run(&["-q", "--seed", "9"], "1"),
        "it is a part of another recipe",
    );
    refused(run(&["-q", "--jsonl"], "1"), "another --jsonl");

    // A damaged part is not complete: refused, and --force makes it again, byte for byte.
    let file = bytes
        .keys()
        .find(|k| k.ends_with(".parquet"))
        .unwrap()
        .clone();
    let mut damaged = bytes[&file].clone();
    let last = damaged.len() - 9;
    damaged[last] ^= 1;
    std::fs::write(part.join(&file), &damaged).unwrap();
    let o = run(&["-q"], "1");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("missing or changed since shard 1 wrote it") && err.contains("--force"),
        "{err}"
    );
    std::fs::remove_file(part.join(&file)).unwrap();
    let o = run(&["-q"], "1");
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing or changed"));
    assert!(run(&["-q", "--force"], "1").status.success());
    assert_eq!(tree(&part), bytes, "--force remade the same part");

    // A part.json edited to list one file twice (its hash still matches) or to misstate a
    // file's rows is not a complete part.
    let two = t.path().join("two-files");
    let make_two = |force: bool| {
        let mut a = RECIPE.to_vec();
        a.extend([
            "--rows-per-file",
            "1",
            "--num-shards",
            "3",
            "--shard-index",
            "1",
        ]);
        a.extend(["--out", s(&two), "-q"]);
        if force {
            a.push("--force");
        }
        gen_env(&a, &[])
    };
    assert!(make_two(false).status.success());
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(two.join("part.json")).unwrap()).unwrap();
    assert_eq!(manifest["files"].as_array().unwrap().len(), 2);
    let edit = |change: &dyn Fn(&mut serde_json::Value)| {
        let mut m = manifest.clone();
        change(&mut m);
        std::fs::write(
            two.join("part.json"),
            serde_json::to_vec_pretty(&m).unwrap(),
        )
        .unwrap();
    };
    edit(&|m| {
        let first = m["files"][0].clone();
        m["files"][1] = first;
    });
    let o = make_two(false);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("lists file"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    edit(&|m| {
        let files = m["files"].as_array_mut().unwrap();
        files.pop();
        files[0]["rows"] = serde_json::json!(2);
    });
    let o = make_two(false);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("does not hold the 2 rows"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(make_two(true).status.success());

    // A private shard's rerun with a new --seed-file is refused and writes no seed file.
    let private = t.path().join("private");
    let keys = t.path().join("keys");
    std::fs::create_dir(&keys).unwrap();
    let private_run = |seed_file: &str| {
        let mut a = RECIPE.to_vec();
        let f = keys.join(seed_file);
        a.extend([
            "--private",
            "--seed-file",
            s(&f),
            "--num-shards",
            "3",
            "--shard-index",
            "0",
        ]);
        a.extend(["--out", s(&private), "-q"]);
        gen_env(&a, &[])
    };
    assert!(private_run("a.key").status.success());
    assert!(
        private_run("a.key").status.success(),
        "the same seed file: kept"
    );
    let o = private_run("b.key");
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        !keys.join("b.key").exists(),
        "a refused rerun wrote a new seed file"
    );

    // A suite's shard is kept the same way.
    let suite_part = t.path().join("suite-part");
    let suite = |quiet: bool| {
        let mut a = vec!["suite", "frontier", "--len", "4k", "--samples", "1"];
        a.extend([
            "--num-shards",
            "env",
            "--shard-index",
            "env",
            "--out",
            s(&suite_part),
        ]);
        if quiet {
            a.push("-q");
        }
        gen_env(
            &a,
            &[
                ("BATCH_TASK_INDEX", "0".into()),
                ("BATCH_TASK_COUNT", "2".into()),
            ],
        )
    };
    assert!(suite(true).status.success());
    let (sb, st) = (tree(&suite_part), mtimes(&suite_part));
    let again = suite(false);
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("shard 0 of 2 is already complete"));
    assert_eq!((tree(&suite_part), mtimes(&suite_part)), (sb, st));

    // A folder that is not a part stays refused without --force.
    let other = t.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    let mut a = RECIPE.to_vec();
    a.extend([
        "--num-shards",
        "3",
        "--shard-index",
        "0",
        "--out",
        s(&other),
    ]);
    let o = gen_env(&a, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("exists and is not empty"));
    assert_eq!(std::fs::read(other.join("notes.txt")).unwrap(), b"mine");
}
