//! Input paths as a recipe records them, and how `verify` finds them again.
//!
//! A recipe must not depend on the machine (no absolute paths, no `--out`), yet `verify` must
//! find the inputs from any working directory. So a path is recorded relative to the working
//! directory (through `..` when above it), never absolute; content hashes in the recipe
//! say which bytes were used. `verify` looks for a recorded path where it was given, then below
//! the dataset directory and each of its ancestors, takes the first with the recorded hash,
//! and accepts an explicit override.

use std::path::{Component, Path, PathBuf};

use crate::usage::usage;

/// `file.jsonl:field` → (`file.jsonl`, Some(`field`)); anything else unchanged. The one place
/// the `:field` / `:column` suffix of a corpus path is recognised.
pub fn split_field(spec: &str) -> (&str, Option<&str>) {
    if let Some((path, field)) = spec.rsplit_once(':') {
        let lower = path.to_ascii_lowercase();
        if (lower.ends_with(".jsonl") || lower.ends_with(".ndjson") || lower.ends_with(".parquet"))
            && !field.is_empty()
        {
            return (path, Some(field));
        }
    }
    (spec, None)
}

/// The suffix to append back: `:field`, or nothing.
fn suffix(field: Option<&str>) -> String {
    field.map(|f| format!(":{f}")).unwrap_or_default()
}

/// `a/b` with `/` separators, whatever the platform.
fn portable(path: &Path) -> String {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// How a recipe records an input path: relative to the working directory (`data/x.txt`, or
/// `../shared/x.txt` above it), never absolute, so no machine directory is recorded; any
/// `:field` suffix kept.
pub fn record(given: &str) -> String {
    let (path, field) = split_field(given);
    let suffix = suffix(field);
    let p = Path::new(path);
    let canonical = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let cwd = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .unwrap_or_default();
    let recorded = match relative(&cwd, &canonical) {
        Some(rel) if !rel.is_empty() => rel,
        _ => canonical
            .file_name()
            .map_or_else(|| portable(p), |n| n.to_string_lossy().into_owned()),
    };
    format!("{recorded}{suffix}")
}

/// `to` seen from `from` (`../data/x.txt`), both absolute; `None` when they share no root.
fn relative(from: &Path, to: &Path) -> Option<String> {
    let (a, b): (Vec<_>, Vec<_>) = (from.components().collect(), to.components().collect());
    if a.first() != b.first() {
        return None;
    }
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".to_string(); a.len() - common];
    parts.extend(b[common..].iter().filter_map(|c| match c {
        Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
        _ => None,
    }));
    Some(parts.join("/"))
}

/// The places a recorded input may be now, in the order `verify` tries them: the recorded
/// path itself (from the working directory, or absolute in datasets made before paths were
/// recorded portably), then the same relative path below the dataset directory and each of its
/// ancestors. Only existing ones, each file once (by its resolved path); empty when it is
/// nowhere. `verify` takes the first whose content has the recorded hash, so a same-named file
/// in the working directory does not shadow the right one.
pub fn candidates(recorded: &str, dataset: &Path) -> Vec<String> {
    let (path, field) = split_field(recorded);
    let suffix = suffix(field);
    let mut found: Vec<(PathBuf, String)> = Vec::new();
    let mut add = |p: &Path, spelled: String| {
        if let Ok(real) = p.canonicalize() {
            if !found.iter().any(|(r, _)| *r == real) {
                found.push((real, spelled));
            }
        }
    };
    add(Path::new(path), recorded.to_string());
    if !Path::new(path).is_absolute() {
        let start = dataset
            .canonicalize()
            .unwrap_or_else(|_| dataset.to_path_buf());
        for d in start.ancestors() {
            let candidate = d.join(path);
            add(&candidate, format!("{}{suffix}", candidate.display()));
        }
    }
    found.into_iter().map(|(_, spelled)| spelled).collect()
}

/// Largest tokenizer.json read (the largest public ones are a few tens of MiB).
pub const MAX_TOKENIZER_BYTES: u64 = 512 << 20;
/// Largest template file read.
pub const MAX_TEMPLATE_BYTES: u64 = 1 << 20;
/// Largest single corpus file read.
pub const MAX_CORPUS_FILE_BYTES: u64 = 4 << 30;
/// Largest QA data file read (HotpotQA's training set is about 0.6 GiB).
pub const MAX_QA_FILE_BYTES: u64 = 2 << 30;

/// The first `n` bytes of a regular file (enough to tell a file's format without reading it).
pub fn read_head(path: &Path, n: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    if !std::fs::metadata(path)?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(n).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Read a user's input file, refusing (exit 2, one line) anything that is not a regular file
/// (`/dev/zero`, a pipe, a directory) or is larger than `limit`, so no input can exhaust memory.
pub fn read_input(path: &Path, limit: u64, what: &str) -> anyhow::Result<Vec<u8>> {
    use std::io::Read;
    let meta = std::fs::metadata(path)
        .map_err(|e| usage(format!("cannot read {what} '{}': {e}", path.display())))?;
    if !meta.is_file() {
        return Err(usage(format!(
            "cannot read {what} '{}': not a regular file",
            path.display()
        )));
    }
    if meta.len() > limit {
        return Err(usage(format!(
            "{what} '{}' is {} MiB, more than the {} MiB accepted",
            path.display(),
            meta.len() >> 20,
            limit >> 20
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .and_then(|f| f.take(limit + 1).read_to_end(&mut bytes))
        .map_err(|e| usage(format!("cannot read {what} '{}': {e}", path.display())))?;
    if bytes.len() as u64 > limit {
        return Err(usage(format!(
            "{what} '{}' grew past the {} MiB accepted while it was read",
            path.display(),
            limit >> 20
        )));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_that_are_not_regular_files_or_too_large_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let e = read_input(tmp.path(), 10, "corpus file").unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        if Path::new("/dev/zero").exists() {
            let e = read_input(Path::new("/dev/zero"), 10, "tokenizer file").unwrap_err();
            assert!(e.to_string().contains("not a regular file"), "{e}");
        }
        let big = tmp.path().join("big.json");
        std::fs::write(&big, vec![b' '; 2 << 20]).unwrap();
        let e = read_input(&big, 1 << 20, "tokenizer file").unwrap_err();
        assert!(e.to_string().contains("more than the 1 MiB"), "{e}");
        assert_eq!(read_input(&big, 4 << 20, "x").unwrap().len(), 2 << 20);
    }

    #[test]
    fn field_suffixes() {
        assert_eq!(split_field("a.jsonl:body"), ("a.jsonl", Some("body")));
        assert_eq!(split_field("a.parquet:text"), ("a.parquet", Some("text")));
        assert_eq!(split_field("C:/x.txt"), ("C:/x.txt", None));
        assert_eq!(split_field("a.jsonl"), ("a.jsonl", None));
        assert_eq!(split_field("C:dir"), ("C:dir", None));
    }

    #[test]
    fn recorded_paths_hold_no_machine_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("corpus.jsonl");
        std::fs::write(&file, "{}").unwrap();
        // Outside the working directory: relative, through `..`, never absolute.
        let given = format!("{}:body", file.display());
        let recorded = record(&given);
        assert!(
            recorded.starts_with("../") && recorded.ends_with("/corpus.jsonl:body"),
            "{recorded}"
        );
        assert_eq!(
            relative(Path::new("/a/b/c"), Path::new("/a/d/e.txt")).unwrap(),
            "../../d/e.txt"
        );
        // Inside it: relative, with / separators.
        let here = std::env::current_dir().unwrap();
        let inside = here.join("Cargo.toml");
        assert_eq!(record(&inside.display().to_string()), "Cargo.toml");
        assert_eq!(record("Cargo.toml"), "Cargo.toml");
    }

    #[test]
    fn recorded_paths_are_found_from_the_dataset_upwards() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("project");
        std::fs::create_dir_all(project.join("data")).unwrap();
        std::fs::create_dir_all(project.join("runs/one")).unwrap();
        std::fs::write(project.join("data/corpus.jsonl"), "{}").unwrap();
        let found = candidates("data/corpus.jsonl:body", &project.join("runs/one"));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].ends_with("project/data/corpus.jsonl:body"),
            "{found:?}"
        );
        // A same-named file nearer the dataset comes after the working directory's, then
        // the farther one; each file once.
        std::fs::create_dir_all(project.join("runs/data")).unwrap();
        std::fs::write(project.join("runs/data/corpus.jsonl"), "{}").unwrap();
        let found = candidates("data/corpus.jsonl", &project.join("runs/one"));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].ends_with("runs/data/corpus.jsonl"), "{found:?}");
        assert!(candidates("data/missing.txt", &project.join("runs/one")).is_empty());
        assert!(candidates("/no/such/file.txt", &project).is_empty());
    }
}
