//! Input paths as a recipe records them, and how `verify` finds them again.
//!
//! A recipe must not depend on the machine (no absolute paths, no `--out`), yet `verify` must
//! find the inputs from any working directory. So a path is recorded relative to the working
//! directory when the input lies below it, else by its file name; content hashes in the recipe
//! say which bytes were used. `verify` looks for a recorded path where it was given, then below
//! the dataset directory and each of its ancestors, and accepts an explicit override.

use std::path::{Component, Path, PathBuf};

/// Split a `file.jsonl:field` / `file.parquet:column` suffix off an input path.
fn split_suffix(given: &str) -> (&str, &str) {
    if let Some(i) = given.rfind(':') {
        let (path, suffix) = given.split_at(i);
        let lower = path.to_ascii_lowercase();
        if suffix.len() > 1
            && (lower.ends_with(".jsonl")
                || lower.ends_with(".ndjson")
                || lower.ends_with(".parquet"))
        {
            return (path, suffix);
        }
    }
    (given, "")
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

/// How a recipe records an input path: relative to the working directory when the input lies
/// below it, else its file name (no absolute path of this machine); any `:field` suffix kept.
pub fn record(given: &str) -> String {
    let (path, suffix) = split_suffix(given);
    let p = Path::new(path);
    let canonical = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let cwd = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .unwrap_or_default();
    let recorded = match canonical.strip_prefix(&cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => portable(rel),
        _ => canonical
            .file_name()
            .map_or_else(|| portable(p), |n| n.to_string_lossy().into_owned()),
    };
    format!("{recorded}{suffix}")
}

/// Where a recorded input is now: the recorded path itself (from the working directory, or
/// absolute in datasets made before paths were recorded portably), else the same relative path
/// below the dataset directory or any of its ancestors. `None` when it is nowhere.
pub fn locate(recorded: &str, dataset: &Path) -> Option<String> {
    let (path, suffix) = split_suffix(recorded);
    if Path::new(path).exists() {
        return Some(recorded.to_string());
    }
    if Path::new(path).is_absolute() {
        return None;
    }
    let start = dataset
        .canonicalize()
        .unwrap_or_else(|_| dataset.to_path_buf());
    let mut dir: Option<&Path> = Some(&start);
    while let Some(d) = dir {
        let candidate: PathBuf = d.join(path);
        if candidate.exists() {
            return Some(format!("{}{suffix}", candidate.display()));
        }
        dir = d.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_are_kept_apart_from_paths() {
        assert_eq!(split_suffix("a/b.jsonl:body"), ("a/b.jsonl", ":body"));
        assert_eq!(split_suffix("x.parquet:text"), ("x.parquet", ":text"));
        assert_eq!(split_suffix("notes.txt"), ("notes.txt", ""));
        assert_eq!(split_suffix("C:dir"), ("C:dir", ""));
    }

    #[test]
    fn recorded_paths_hold_no_machine_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("corpus.jsonl");
        std::fs::write(&file, "{}").unwrap();
        // Outside the working directory: the file name alone.
        let given = format!("{}:body", file.display());
        assert_eq!(record(&given), "corpus.jsonl:body");
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
        let found = locate("data/corpus.jsonl:body", &project.join("runs/one")).unwrap();
        assert!(found.ends_with("project/data/corpus.jsonl:body"), "{found}");
        assert!(locate("data/missing.txt", &project.join("runs/one")).is_none());
        assert!(locate("/no/such/file.txt", &project).is_none());
    }
}
