//! The files of a dataset directory, as `verify` checks them: which files a loader could read
//! that the manifest does not list, the card's front matter, each listed file's presence,
//! size and hash, shard names, and the rows the listed shards hold.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Result;

use crate::dataset::manifest::{card, FileEntry, Manifest, NOT_DATA};
use crate::dataset::writer::hash_file;

/// Bytes a row surely takes in a shard: its provenance and content hashes are 256 random
/// bits, which no codec packs below 32 bytes (half of that is counted, to be safe).
const MIN_ROW_BYTES: u64 = 16;

/// The rows the shards a manifest lists can hold, from their footers (nothing decoded), and
/// what is wrong with those that cannot be read. Only files inside the dataset count, each
/// once, and none for more rows than its size allows (a footer may claim anything).
pub fn rows_held(dir: &Path, m: &Manifest) -> (u64, Vec<String>) {
    let mut held = 0u64;
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for f in &m.files {
        let inside = Path::new(&f.path)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if !inside || !seen.insert(f.path.as_str()) {
            problems.push(format!(
                "file {} is listed outside the dataset or twice",
                f.path
            ));
            continue;
        }
        let path = dir.join(&f.path);
        if !path.exists() {
            problems.push(format!("missing file {}", f.path));
        } else if !path.metadata().is_ok_and(|m| m.is_file()) {
            problems.push(format!("file {} is not a regular file", f.path));
        } else {
            let bytes = path.metadata().map_or(0, |m| m.len());
            match crate::dataset::parquet_read::ParquetFile::open(&path) {
                Ok(p) => held += (p.num_rows().max(0) as u64).min(bytes / MIN_ROW_BYTES),
                Err(e) => problems.push(format!("cannot read file {}: {e:#}", f.path)),
            }
        }
    }
    (held, problems)
}

/// What hosting a dataset adds beside it: git's folder and attributes (a clone of a Hugging
/// Face dataset repository), and the download cache `huggingface-cli download --local-dir`
/// keeps. Not data: left out like tool folders, except data files a glob would read.
const HOSTING: &[&str] = &[".git", ".gitattributes", ".cache"];

/// Files a loader could read that the manifest does not list: anything but the manifest, the
/// card, listed files and mirrors (hidden files included), and, in the folders tools write
/// later ([`NOT_DATA`]) and hosting adds ([`HOSTING`]), any data file a glob would still pick
/// up. An extra `other/x.parquet` would be read by `*/*.parquet`. A folder that cannot be
/// read is reported too: what it holds could not be checked.
pub fn unlisted_files(dir: &Path, m: &Manifest) -> Vec<String> {
    /// Files a glob loader reads wherever they are, tool folders included.
    fn is_data(name: &str) -> bool {
        [".parquet", ".jsonl", ".arrow", ".csv"]
            .iter()
            .any(|ext| name.to_ascii_lowercase().ends_with(ext))
    }
    fn walk(dir: &Path, rel: &str, tool: bool, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            out.push(format!("{rel}/ (a folder that cannot be read)"));
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let tool = tool
                || (rel.is_empty()
                    && (NOT_DATA.contains(&name.as_str()) || HOSTING.contains(&name.as_str())));
            // `file_type` does not follow links: a linked folder is reported, never walked.
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                walk(&e.path(), &path, tool, out);
            } else if !tool || (is_data(&name) && !is_ruler_export(&path)) {
                out.push(path);
            }
        }
    }
    /// `gen export ruler` writes `ruler/<task>/validation.jsonl`, the name RULER requires; a
    /// `*/*.jsonl` glob does not reach that deep, and the export is not data.
    fn is_ruler_export(path: &str) -> bool {
        let parts: Vec<&str> = path.split('/').collect();
        matches!(parts.as_slice(), ["ruler", task, "validation.jsonl"] if !task.starts_with('.'))
    }
    let mut found = Vec::new();
    walk(dir, "", false, &mut found);
    found.sort();
    let listed: BTreeSet<&str> = m
        .files
        .iter()
        .chain(&m.mirrors)
        .map(|f| f.path.as_str())
        .chain(["manifest.json", "README.md"])
        .collect();
    found
        .into_iter()
        .filter(|p| !listed.contains(p.as_str()))
        .map(|p| format!("unexpected file {p} (not in the manifest; a loader could read it)"))
        .collect()
}

/// The card's YAML front matter tells loaders which files make which config: it must be the
/// one the manifest gives. (The prose below it is free to edit.)
pub fn check_card(dir: &Path, m: &Manifest) -> Vec<String> {
    fn front_matter(text: &str) -> Option<&str> {
        let rest = text.strip_prefix("---\n")?;
        let end = rest.find("\n---\n")?;
        Some(&rest[..end])
    }
    let expected = card(m);
    let text = crate::run::paths::read_input(&dir.join("README.md"), 64 << 20, "dataset card")
        .ok()
        .and_then(|b| String::from_utf8(b).ok());
    match text.ok_or(()) {
        Err(_) => vec!["missing or unreadable file README.md (the dataset card)".to_string()],
        Ok(text) if front_matter(&text) != front_matter(&expected) => vec![
            "README.md front matter differs from the configs the manifest makes (loaders read it)"
                .to_string(),
        ],
        Ok(_) => Vec::new(),
    }
}

/// A file's presence, size and hash against the ones its recipe makes; false when it is
/// missing, not a regular file, or differs.
pub fn check_file(dir: &Path, entry: &FileEntry, problems: &mut Vec<String>) -> Result<bool> {
    let path = dir.join(&entry.path);
    if !path.exists() {
        problems.push(format!("missing file {}", entry.path));
        return Ok(false);
    }
    // Links are followed (the Hugging Face cache links every file to a blob).
    if !path.metadata().is_ok_and(|m| m.is_file()) {
        problems.push(format!("file {} is not a regular file", entry.path));
        return Ok(false);
    }
    let (bytes, xxh3) = hash_file(&path)?;
    if bytes != entry.bytes || xxh3 != entry.xxh3 {
        problems.push(format!(
            "file {} changed: {bytes} bytes, xxh3 {xxh3} (its recipe makes {} bytes, {})",
            entry.path, entry.bytes, entry.xxh3
        ));
        return Ok(false);
    }
    Ok(true)
}

/// Shards must be listed in order under the names their position gives them
/// (`config/split-0000k-of-0000n.parquet`): loaders read them in name order, and rows are in
/// (length, depth, sample) order only if the names follow the manifest.
pub fn shard_names(m: &Manifest) -> Vec<String> {
    let mut groups: Vec<((&str, &str), Vec<&FileEntry>)> = Vec::new();
    for f in &m.files {
        let key = (f.config.as_str(), f.split.as_str());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(f),
            None => groups.push((key, vec![f])),
        }
    }
    let mut problems = Vec::new();
    for ((config, split), files) in groups {
        let n = files.len();
        for (k, f) in files.iter().enumerate() {
            let expected = format!("{config}/{split}-{k:05}-of-{n:05}.parquet");
            if f.path != expected {
                problems.push(format!(
                    "file {} is listed where {expected} belongs (shards out of order or renamed)",
                    f.path
                ));
            }
        }
    }
    problems
}
