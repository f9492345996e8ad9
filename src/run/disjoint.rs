//! `--disjoint-from`: the identity keys of the instances of other datasets, read from their
//! rows, which a new split must not share.
//!
//! Which keys an instance has is the core's [`Task::identity`]; this module only reads the
//! datasets. The recipe records each excluded dataset's path (portably, like every input) and
//! the hash of the keys it contributed, so `verify` finds the same datasets again (from the
//! working directory, then the dataset and its ancestors) and checks they still exclude the
//! same instances before it regenerates a single row.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result};
use needlework_generators::identity::is_control;
use needlework_generators::{Instance, Task};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use xxhash_rust::xxh3::Xxh3;

use crate::dataset::manifest::Manifest;
use crate::dataset::schema::from_batch;
use crate::run::recipe::{build_parts, Excluded};
use crate::usage::usage;

/// Most draws of one instance before its space is taken to be exhausted.
pub const MAX_DRAWS: u64 = 1000;

/// The identity keys a new split must avoid.
#[derive(Debug, Default)]
pub struct Exclusion {
    /// Every key, tagged with its task (`niah:value:"123"`).
    pub keys: BTreeSet<String>,
    /// xxh3-128 over the excluded datasets' identity hashes, in order: part of every row's
    /// provenance.
    pub hash: String,
}

impl Exclusion {
    /// Whether an instance of `task` shares a key with the excluded datasets.
    pub fn shares(&self, task: &dyn Task, instance: &Instance) -> bool {
        keys_of(task, instance)
            .iter()
            .any(|k| self.keys.contains(k))
    }
}

/// An instance's identity keys, tagged with its task so tasks never collide.
pub fn keys_of(task: &dyn Task, instance: &Instance) -> Vec<String> {
    task.identity(instance)
        .into_iter()
        .map(|k| format!("{}:{k}", task.name()))
        .collect()
}

/// The identity keys of every instance of the dataset in `dir` (control rows have none of
/// their own), read from its Parquet files: every config of a suite, each by its own task.
/// Keys are tagged with their task, so a new split's config meets only the instances of its
/// own task kind, whichever configs of the excluded dataset hold them.
pub fn dataset_keys(dir: &Path) -> Result<BTreeSet<String>> {
    let m = Manifest::read(dir)
        .map_err(|e| usage(format!("--disjoint-from {}: {e:#}", dir.display())))?;
    // Identity keys are read from rows as this format makes them.
    m.check_format(dir, "--disjoint-from")?;
    let recipes: Vec<(Option<String>, &crate::run::recipe::Recipe)> = match &m.suite {
        Some(s) => s
            .entries
            .iter()
            .map(|e| (e.config.clone(), &e.recipe))
            .collect(),
        None => vec![(None, &m.recipe)],
    };
    let mut parts = Vec::new();
    for (config, r) in recipes {
        for (split, task) in build_parts(&r.options, &r.split)? {
            let name = config
                .clone()
                .unwrap_or_else(|| r.config_name(task.as_ref()));
            parts.push(((name, split), task));
        }
    }
    let tasks: BTreeMap<(String, String), &dyn Task> =
        parts.iter().map(|(k, t)| (k.clone(), t.as_ref())).collect();
    let mut keys = BTreeSet::new();
    for f in &m.files {
        let path = dir.join(&f.path);
        let task = tasks
            .get(&(f.config.clone(), f.split.clone()))
            .ok_or_else(|| {
                usage(format!(
                "--disjoint-from {}: its manifest lists {} under a config its recipe does not make",
                dir.display(),
                f.path
            ))
            })?;
        let file = std::fs::File::open(&path).map_err(|e| {
            usage(format!(
                "--disjoint-from {}: cannot read {}: {e}",
                dir.display(),
                f.path
            ))
        })?;
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(|b| b.build())
            .map_err(|e| {
                usage(format!(
                    "--disjoint-from {}: cannot read {}: {e}",
                    dir.display(),
                    f.path
                ))
            })?;
        for batch in reader {
            let batch = batch.with_context(|| format!("reading {}", path.display()))?;
            for stored in
                from_batch(&batch).with_context(|| format!("reading {}", path.display()))?
            {
                if !is_control(&stored.row.instance.params) {
                    keys.extend(keys_of(*task, &stored.row.instance));
                }
            }
        }
    }
    Ok(keys)
}

/// xxh3-128 over sorted keys, hex.
fn hash_keys(keys: &BTreeSet<String>) -> String {
    let mut h = Xxh3::new();
    for k in keys {
        h.update(&(k.len() as u64).to_le_bytes());
        h.update(k.as_bytes());
    }
    format!("{:032x}", h.digest128())
}

/// The exclusion of a new run: the datasets at `paths` (as given), read, with what the
/// recipe records of each.
pub fn load_given(paths: &[(String, String)]) -> Result<(Exclusion, Vec<Excluded>)> {
    let mut exclusion = Exclusion::default();
    let mut records = Vec::new();
    for (given, recorded) in paths {
        let keys = dataset_keys(Path::new(given))?;
        records.push(Excluded {
            path: recorded.clone(),
            identity: hash_keys(&keys),
        });
        exclusion.keys.extend(keys);
    }
    exclusion.hash = combined(&records);
    Ok((exclusion, records))
}

/// The exclusion a recipe records, found again for `verify`: each dataset where it was given
/// or below `dataset` and its ancestors, the first whose keys have the recorded hash.
pub fn load_recorded(records: &[Excluded], dataset: &Path) -> Result<Exclusion> {
    let mut exclusion = Exclusion::default();
    for r in records {
        let mut tried = Vec::new();
        let mut found = None;
        for c in crate::run::paths::candidates(&r.path, dataset) {
            match dataset_keys(Path::new(&c)) {
                Ok(keys) if hash_keys(&keys) == r.identity => {
                    found = Some(keys);
                    break;
                }
                Ok(keys) => tried.push(format!("{c} holds identities {}", hash_keys(&keys))),
                Err(e) => tried.push(format!("{c} cannot be read ({e:#})")),
            }
        }
        let Some(keys) = found else {
            return Err(usage(format!(
                "the dataset '{}' this split was kept disjoint from is not found with identities {} (tried: {}): regenerating needs it",
                r.path,
                r.identity,
                if tried.is_empty() { "nothing exists there".to_string() } else { tried.join("; ") }
            )));
        };
        exclusion.keys.extend(keys);
    }
    exclusion.hash = combined(records);
    Ok(exclusion)
}

/// The provenance fact of a disjoint split: one hash over the excluded datasets' identities.
pub fn combined(records: &[Excluded]) -> String {
    let mut h = Xxh3::new();
    for r in records {
        h.update(r.identity.as_bytes());
    }
    format!("{:032x}", h.digest128())
}
