//! Property-based fuzzing of the files the shell reads, through the real binary: manifest.json
//! (`gen verify`), prediction files (`gen score`) and JSON Lines corpora (`gen niah
//! --haystack`). Whatever the bytes, `gen` exits 0, 1 or 2 with a message: never a panic
//! (101), never a hang (each run is given 60 s). `NEEDLEWORK_FUZZ_CASES` bounds the run.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::common::*;
use proptest::prelude::*;

/// Run `gen`, killing it if it outlives `limit`; (exit code, stderr).
fn run_bounded(args: &[&str], limit: Duration) -> (Option<i32>, String) {
    let mut child = Command::new(GEN)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            return (status.code(), err);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("gen {args:?} hung for {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn assert_handled(args: &[&str]) {
    let (code, err) = run_bounded(args, Duration::from_secs(60));
    assert!(
        matches!(code, Some(0..=2)) && !err.contains("panicked"),
        "gen {args:?} exited {code:?}: {err}"
    );
    if code == Some(2) {
        assert_eq!(err.trim_end().lines().count(), 1, "gen {args:?}: {err}");
    }
}

/// `NEEDLEWORK_FUZZ_CASES` when set, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("NEEDLEWORK_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One small dataset shared by the cases (made once).
fn dataset() -> &'static str {
    static DIR: OnceLock<(tempfile::TempDir, String)> = OnceLock::new();
    &DIR.get_or_init(|| {
        let t = tmp();
        let out = out_arg(t.path(), "d");
        generate(&out, &["niah", "--len", "1k", "--depths", "3"]);
        (t, out)
    })
    .1
}

/// Byte edits: (position, byte, 0 = replace / 1 = delete / 2 = insert).
fn edits() -> impl Strategy<Value = Vec<(prop::sample::Index, u8, u8)>> {
    prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 1..8)
}

fn apply(mut bytes: Vec<u8>, edits: &[(prop::sample::Index, u8, u8)]) -> Vec<u8> {
    for (at, byte, kind) in edits {
        if bytes.is_empty() {
            bytes.push(*byte);
            continue;
        }
        let i = at.index(bytes.len());
        match kind {
            0 => bytes[i] = *byte,
            1 => {
                bytes.remove(i);
            }
            _ => bytes.insert(i, *byte),
        }
    }
    bytes
}

/// JSON values a manifest field could be corrupted into.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<u64>().prop_map(serde_json::Value::from),
        any::<f64>().prop_map(|f| serde_json::json!(f)),
        "\\PC{0,12}".prop_map(serde_json::Value::from),
        Just(serde_json::json!([])),
        Just(serde_json::json!({})),
        Just(serde_json::json!(1e308)),
        Just(serde_json::json!(-1)),
        Just(serde_json::json!(u64::MAX)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(32), ..ProptestConfig::default() })]

    /// A manifest with corrupted bytes, or one field replaced by any JSON value.
    #[test]
    fn corrupted_manifests_are_handled(
        edits in edits(),
        field in 0..40usize,
        value in json_value(),
        bytewise in any::<bool>(),
    ) {
        let src = Path::new(dataset());
        let t = tmp();
        let dir = t.path().join("d");
        std::fs::create_dir_all(dir.join("niah_single")).unwrap();
        for f in ["README.md", "niah_single/test-00000-of-00001.parquet"] {
            std::fs::copy(src.join(f), dir.join(f)).unwrap();
        }
        let manifest = std::fs::read(src.join("manifest.json")).unwrap();
        let corrupted = if bytewise {
            apply(manifest, &edits)
        } else {
            // Replace the field-th leaf of the manifest by `value`.
            let mut v: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
            fn count(v: &serde_json::Value) -> usize {
                match v {
                    serde_json::Value::Object(m) => m.values().map(count).sum(),
                    serde_json::Value::Array(a) => a.iter().map(count).sum(),
                    _ => 1,
                }
            }
            fn replace(v: &mut serde_json::Value, n: &mut usize, value: &serde_json::Value) {
                match v {
                    serde_json::Value::Object(m) => m.values_mut().for_each(|x| replace(x, n, value)),
                    serde_json::Value::Array(a) => a.iter_mut().for_each(|x| replace(x, n, value)),
                    leaf => {
                        if *n == 0 {
                            *leaf = value.clone();
                        }
                        *n = n.wrapping_sub(1);
                    }
                }
            }
            let mut n = field % count(&v);
            replace(&mut v, &mut n, &value);
            serde_json::to_vec(&v).unwrap()
        };
        std::fs::write(dir.join("manifest.json"), corrupted).unwrap();
        assert_handled(&["verify", dir.to_str().unwrap(), "-q"]);
    }

    /// Prediction files of any shape: JSON lines with odd fields, or any bytes.
    #[test]
    fn any_prediction_file_is_handled(lines in prop::collection::vec(prop_oneof![
        Just(r#"{"id": "x", "prediction": "1"}"#.to_string()),
        Just(r#"{"index": 0, "pred": "none"}"#.to_string()),
        Just(r#"{"doc": {"id": 3}, "filtered_resps": [["a"]]}"#.to_string()),
        Just(r#"{"id": null}"#.to_string()),
        Just("[1,2]".to_string()),
        Just("{".to_string()),
        "\\PC{0,40}",
    ], 0..12)) {
        let t = tmp();
        let file = t.path().join("p.jsonl");
        std::fs::write(&file, lines.join("\n")).unwrap();
        let scores = t.path().join("scores");
        assert_handled(&[
            "score", dataset(), "--predictions", file.to_str().unwrap(),
            "--out", scores.to_str().unwrap(), "-q",
        ]);
    }

    /// A JSON Lines corpus with corrupted bytes.
    #[test]
    fn corrupted_corpora_are_handled(edits in edits()) {
        let corpus = std::fs::read(fixture("corpus.jsonl")).unwrap();
        let t = tmp();
        let file = t.path().join("c.jsonl");
        std::fs::write(&file, apply(corpus, &edits)).unwrap();
        let haystack = format!("{}:body", file.display());
        let out = out_arg(t.path(), "o");
        assert_handled(&["niah", "--len", "2k", "--haystack", &haystack, "--out", &out, "-q"]);
    }
}
