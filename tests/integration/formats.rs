//! Datasets of earlier formats (formats 1 to 3, checked in under
//! `tests/fixtures/datasets-format<N>/`) are named as such by `verify` (exit 2, the format and
//! the release that makes it), never reported as false mismatches; the commands that made them
//! still run and make datasets of today's format that verify. Datasets of the current format
//! (under `tests/fixtures/datasets-format5/`, one or more for every task) verify byte for byte:
//! any change to what a recipe makes shows here and needs a new format version. (Format 4 was
//! never released under a version of its own, so it has no fixture set.)

use std::path::{Path, PathBuf};
use std::process::Command;

const GEN: &str = env!("CARGO_BIN_EXE_gen");

fn fixtures_root(format: u32) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/datasets-format{format}"))
}

fn fixtures(format: u32) -> Vec<PathBuf> {
    let root = fixtures_root(format);
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

/// Earlier formats and the release that makes each.
const OLD_FORMATS: [(u32, &str); 3] = [(1, "0.1.0"), (2, "0.2.0"), (3, "0.3.0")];

/// Today's format.
const CURRENT: u32 = 5;

#[test]
fn datasets_of_earlier_formats_are_named_not_mismatched() {
    for (format, release) in OLD_FORMATS {
        for dir in fixtures(format) {
            named_not_mismatched(&dir, format, release);
        }
    }
}

fn named_not_mismatched(dir: &Path, format: u32, release: &str) {
    {
        let out = Command::new(GEN)
            .args(["verify", "-q"])
            .arg(dir)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {err}", dir.display());
        assert!(
            err.contains(&format!("made with needlework format {format}"))
                && err.contains(&format!("use needlework {release}")),
            "{}: {err}",
            dir.display()
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(!err.contains("mismatch"), "{err}");
    }
}

#[test]
fn earlier_formats_commands_still_run_and_verify() {
    let tmp = tempfile::tempdir().unwrap();
    for dir in OLD_FORMATS.iter().flat_map(|&(format, _)| fixtures(format)) {
        let old = manifest(&dir);
        // The recorded command, with --out pointed at a fresh directory.
        let command: Vec<String> = old["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let fresh = tmp.path().join(format!(
            "{}-{}",
            dir.parent().unwrap().file_name().unwrap().to_string_lossy(),
            dir.file_name().unwrap().to_string_lossy()
        ));
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
        let out = Command::new(GEN)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(&args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(manifest(&fresh)["generator"]["format_version"], CURRENT);
        let v = Command::new(GEN)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["verify", "-q"])
            .arg(&fresh)
            .output()
            .unwrap();
        assert!(
            v.status.success(),
            "{}: {}",
            fresh.display(),
            String::from_utf8_lossy(&v.stderr)
        );
    }
}

#[test]
fn datasets_of_the_current_format_verify_byte_for_byte() {
    // Every task has a dataset of the current format: `gen list tasks` names them all.
    let listed = Command::new(GEN).args(["list", "tasks"]).output().unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).to_string();
    let tasks: Vec<&str> = listed
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(tasks.len() >= 11, "{listed}");
    let covered: Vec<String> = fixtures(CURRENT)
        .iter()
        .map(|d| manifest(d)["command"][1].as_str().unwrap().to_string())
        .collect();
    for task in &tasks {
        assert!(
            covered.iter().any(|c| c == task),
            "no dataset of format {CURRENT} for {task}: run tests/fixtures/make_datasets.sh"
        );
    }
    for dir in fixtures(CURRENT) {
        assert_eq!(manifest(&dir)["generator"]["format_version"], CURRENT);
        let out = Command::new(GEN)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
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
