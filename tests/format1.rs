//! Datasets written before the typed-parameter refactor (format 1, checked in under
//! `tests/fixtures/datasets-format1/`) still verify, and the commands that made them still
//! make byte-identical Parquet files and the same recipe: the refactor changed no output.

use std::path::{Path, PathBuf};
use std::process::Command;

const GEN: &str = env!("CARGO_BIN_EXE_gen");

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/datasets-format1");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("manifest.json").exists())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 10, "fixture datasets are missing: {dirs:?}");
    dirs
}

fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

#[test]
fn datasets_of_the_previous_version_verify() {
    for dir in fixtures() {
        let out = Command::new(GEN)
            .args(["verify", "-q"])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}{}",
            dir.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn the_same_commands_make_the_same_files() {
    let tmp = tempfile::tempdir().unwrap();
    for dir in fixtures() {
        let old = manifest(&dir);
        // The recorded command, with --out pointed at a fresh directory.
        let command: Vec<String> = old["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let fresh = tmp.path().join(dir.file_name().unwrap());
        let mut args: Vec<String> = Vec::new();
        let mut rest = command[1..].iter();
        while let Some(a) = rest.next() {
            if a == "--out" {
                rest.next();
                continue;
            }
            args.push(a.clone());
        }
        args.push("--out".into());
        args.push(fresh.display().to_string());
        let out = Command::new(GEN).args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let new = manifest(&fresh);
        assert_eq!(new["recipe"], old["recipe"], "{}", dir.display());
        assert_eq!(
            new["dataset_hash"],
            old["dataset_hash"],
            "{}",
            dir.display()
        );
        let files = old["files"].as_array().unwrap();
        assert!(!files.is_empty());
        for f in files {
            let rel = f["path"].as_str().unwrap();
            assert_eq!(
                std::fs::read(dir.join(rel)).unwrap(),
                std::fs::read(fresh.join(rel)).unwrap(),
                "{} {rel} differs",
                dir.display()
            );
        }
    }
}
