//! Sharding a dataset over machines: `--num-shards N --shard-index I` makes the contiguous
//! instances `[I·n/N, (I+1)·n/N)` of the whole dataset (numbered by entry, part, length, depth,
//! sample) into a part directory: Parquet files and `part.json`, which records the dataset's
//! head (command, recipe, suite), the shard and its row range, and each file's hash. A shard is
//! a pure function of the recipe and (N, I), so rerunning one rewrites the same part.
//! `gen merge` (the `merge` module) joins the parts.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::dataset::head::Head;
use crate::dataset::manifest::{FileEntry, Generator, MAX_MANIFEST_BYTES};
use crate::dataset::parquet_read::ParquetFile;
use crate::dataset::writer::hash_file;
use crate::usage::usage;

/// The most shards a dataset is split into.
pub const MAX_SHARDS: u64 = 1_000_000;

/// What `part.json` says its format is.
pub const PART_FORMAT: &str = "needlework-part";

/// One shard of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard's index, 0 to `count - 1`.
    pub index: u64,
    /// How many shards the dataset is split into.
    pub count: u64,
}

impl Shard {
    /// The shard `--num-shards`/`--shard-index` ask for; `None` without them.
    pub fn asked(num_shards: Option<u64>, shard_index: Option<u64>) -> Result<Option<Shard>> {
        match (num_shards, shard_index) {
            (None, None) => Ok(None),
            (Some(n), Some(i)) => {
                if n == 0 || n > MAX_SHARDS {
                    return Err(usage(format!(
                        "invalid --num-shards {n}: expected 1 to {MAX_SHARDS}"
                    )));
                }
                if i >= n {
                    return Err(usage(format!(
                        "invalid --shard-index {i}: expected 0 to {} (--num-shards {n})",
                        n - 1
                    )));
                }
                Ok(Some(Shard { index: i, count: n }))
            }
            _ => Err(usage(
                "--num-shards and --shard-index go together: give both or neither",
            )),
        }
    }

    /// Instances `[I·n/N, (I+1)·n/N)` of `total`: contiguous, in order, covering each once.
    pub fn range(&self, total: u64) -> std::ops::Range<u64> {
        let at = |i: u64| (u128::from(total) * u128::from(i) / u128::from(self.count)) as u64;
        at(self.index)..at(self.index + 1)
    }

    /// The directory a shard writes to by default: `<name>.shard-I-of-N`.
    pub fn default_dir(&self, name: &str) -> String {
        format!("{name}.shard-{}-of-{}", self.index, self.count)
    }
}

/// What every part of one dataset shares: checked equal across the parts by `gen merge`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PartPlan {
    /// The build that made the part (merge re-encodes with the same crates).
    pub generator: Generator,
    /// The command, recipe and suite the merged manifest records.
    pub head: Head,
    /// The dataset's config names, in generation order.
    pub configs: Vec<String>,
    /// Whether the merged dataset gets JSON Lines mirrors.
    pub jsonl: bool,
    /// Instances of the whole dataset: what shards divide (each makes one row, two with
    /// `--controls`, whose control row stays in its instance's shard).
    pub total_instances: u64,
    /// How many shards the dataset is split into.
    pub num_shards: u64,
}

/// `part.json`: one shard's part of a dataset.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PartManifest {
    /// Always [`PART_FORMAT`].
    pub format: String,
    /// What every part of the dataset shares.
    pub plan: PartPlan,
    /// This shard's index.
    pub shard_index: u64,
    /// The first instance (of the whole dataset) this part holds.
    pub start: u64,
    /// One past its last instance.
    pub end: u64,
    /// The part's Parquet files, in row order.
    pub files: Vec<FileEntry>,
    /// xxh3-128 over the ordered content hashes of the part's rows.
    pub content_hash: String,
}

impl PartManifest {
    /// The record of a written shard: what every part shares, and this part's rows, files
    /// and the hash over their content hashes.
    pub fn new(
        plan: PartPlan,
        shard: Shard,
        files: Vec<FileEntry>,
        content_hash: String,
    ) -> PartManifest {
        let range = shard.range(plan.total_instances);
        PartManifest {
            format: PART_FORMAT.into(),
            plan,
            shard_index: shard.index,
            start: range.start,
            end: range.end,
            files,
            content_hash,
        }
    }

    /// Write `dir/part.json`.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)? + "\n";
        let path = dir.join("part.json");
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
    }

    /// Whether the files the part lists are all there as it wrote them (inside the part, of
    /// their size and hash) and hold its rows; why not, when not.
    pub fn check_files(&self, dir: &Path) -> std::result::Result<(), String> {
        let mut seen = std::collections::BTreeSet::new();
        for file in &self.files {
            let inside = Path::new(&file.path)
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
            let path = dir.join(&file.path);
            let ok = inside
                && path.is_file()
                && hash_file(&path).is_ok_and(|(b, h)| b == file.bytes && h == file.xxh3);
            if !ok {
                return Err(format!(
                    "file {} is missing or changed since shard {} wrote it",
                    file.path, self.shard_index
                ));
            }
            // An edited part.json may list a file twice or misstate its rows: its hash
            // still matches, so the file itself is asked.
            if !seen.insert(file.path.as_str()) {
                return Err(format!("part.json lists file {} twice", file.path));
            }
            let rows = ParquetFile::open(&path).map(|f| f.num_rows());
            if rows.as_ref().ok() != Some(&(file.rows as i64)) {
                return Err(format!(
                    "file {} does not hold the {} rows part.json says",
                    file.path, file.rows
                ));
            }
        }
        // A control row (`--controls`) stays in its instance's shard; a suite's entries all
        // have controls or none, so the first recipe tells.
        let per_instance = self.plan.head.recipe.rows_per_instance();
        let rows: u64 = self.files.iter().map(|f| f.rows).sum();
        if rows != (self.end - self.start) * per_instance {
            return Err(format!(
                "its files hold {rows} rows, shard {} has {}",
                self.shard_index,
                self.end - self.start
            ));
        }
        Ok(())
    }

    /// Read `dir/part.json`; a usage error when it is missing or not a part.
    pub fn read(dir: &Path) -> Result<PartManifest> {
        let path = dir.join("part.json");
        if !path.is_file() {
            return Err(usage(format!(
                "{} is not a shard part: it has no part.json (write parts with --num-shards N --shard-index I)",
                dir.display()
            )));
        }
        let bytes = crate::run::paths::read_input(&path, MAX_MANIFEST_BYTES, "part manifest")?;
        let p: PartManifest = serde_json::from_slice(&bytes)
            .map_err(|e| usage(format!("{} is not a shard part: {e}", path.display())))?;
        if p.format != PART_FORMAT {
            return Err(usage(format!(
                "{} is not a shard part: format '{}', expected '{PART_FORMAT}'",
                path.display(),
                p.format
            )));
        }
        Ok(p)
    }
}

/// Whether a non-empty `--out` may be a rerun's: only a shard's part is looked at again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rerun {
    /// A whole dataset, or a merge: a non-empty `--out` needs --force.
    Refused,
    /// A shard: its earlier part, if complete and this shard's, means nothing to make.
    Shard,
}

impl Rerun {
    /// A shard's job may find its own part; any other job may not.
    pub fn of(shard: Option<Shard>) -> Rerun {
        if shard.is_some() {
            Rerun::Shard
        } else {
            Rerun::Refused
        }
    }
}

/// A rerun of a shard into the part directory an earlier run completed: the part it finds
/// when that is this very shard of this very dataset (the same build, command, recipe,
/// configs and shard count, the same rows) with every file intact, so that nothing needs
/// making; otherwise why it is not, for the refusal.
pub fn already_made(
    dir: &Path,
    plan: &PartPlan,
    shard: Shard,
) -> std::result::Result<PartManifest, String> {
    let part = PartManifest::read(dir).map_err(|e| e.to_string())?;
    if part.plan.generator != plan.generator {
        return Err(format!(
            "it was made by needlework {} (format {})",
            part.plan.generator.version, part.plan.generator.format_version
        ));
    }
    if part.plan.jsonl != plan.jsonl {
        return Err("it was made with another --jsonl".into());
    }
    if part.plan.head != plan.head || part.plan.configs != plan.configs {
        return Err("it is a part of another recipe".into());
    }
    if (part.plan.num_shards, part.shard_index) != (shard.count, shard.index) {
        return Err(format!(
            "it holds shard {} of {}",
            part.shard_index, part.plan.num_shards
        ));
    }
    let range = shard.range(plan.total_instances);
    if part.plan.total_instances != plan.total_instances || (part.start..part.end) != range {
        return Err("its row range is not this shard's: its part.json was edited".into());
    }
    part.check_files(dir)?;
    Ok(part)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_ranges_tile_every_total() {
        for total in [0u64, 1, 2, 7, 100, 1001, u64::MAX / 3] {
            for count in [1u64, 2, 3, 7, 64] {
                let mut next = 0;
                for index in 0..count {
                    let r = Shard { index, count }.range(total);
                    assert_eq!(r.start, next, "{total} {count} {index}");
                    assert!(r.end >= r.start);
                    assert!(r.end - r.start <= total / count + 1);
                    next = r.end;
                }
                assert_eq!(next, total);
            }
        }
    }
}
