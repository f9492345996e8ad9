//! The dataset's promises under adversarial use: every recipe regenerates exactly, every file a
//! loader could read is checked, verify finds moved inputs from anywhere, and a recipe makes the
//! same directory wherever and however it runs. Each test failed before its fix.

mod chain_sort;
mod inputs;
mod regeneration;
mod tampering;
mod tasks;

use crate::common::*;
use std::path::Path;

/// `gen verify DIR` passes (exit 0, "ok:").
pub(super) fn assert_verifies(dir: &str) {
    let out = gen(&["verify", dir, "-q"]);
    assert!(
        out.status.success(),
        "{dir}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `gen verify DIR` fails (exit 1) and says `needle`.
pub(super) fn assert_verify_fails(dir: &str, needle: &str) {
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
pub(super) fn assert_exit_2(args: &[&str], needle: &str) {
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
pub(super) fn edit_manifest(dir: &str, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = Path::new(dir).join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut m);
    std::fs::write(&path, serde_json::to_string(&m).unwrap()).unwrap();
}

/// A copy of the dataset `from` at `to`.
pub(super) fn copy_dataset(from: &Path, to: &Path) {
    for (rel, bytes) in all_files(from) {
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::write(dest, bytes).unwrap();
    }
}

/// The size and xxh3-128 of a file as the manifest spells them.
pub(super) fn size_and_hash(path: &Path) -> (u64, String) {
    let bytes = std::fs::read(path).unwrap();
    (
        bytes.len() as u64,
        format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&bytes)),
    )
}

/// Replace `file`'s bytes with `bytes` and write its new size and hash into manifest.json,
/// keeping the manifest's formatting: the consistent tampering a hash check alone passes.
pub(super) fn replace_consistently(dir: &Path, rel: &str, bytes: &[u8]) {
    let path = dir.join(rel);
    let (old_size, old_hash) = size_and_hash(&path);
    std::fs::write(&path, bytes).unwrap();
    let (size, hash) = size_and_hash(&path);
    let manifest = dir.join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains(&old_hash));
    let text = text.replace(&old_hash, &hash).replace(
        &format!("\"bytes\": {old_size},"),
        &format!("\"bytes\": {size},"),
    );
    std::fs::write(&manifest, text).unwrap();
}
