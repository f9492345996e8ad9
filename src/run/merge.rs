//! `gen merge`: join the parts that `--num-shards N --shard-index I` wrote into the dataset one
//! machine makes. The parts' rows are read back in order and streamed through the same
//! [`ShardWriter`] generation uses, so file boundaries, row groups and bytes are the
//! single-machine ones; merge only re-encodes (nothing is generated or tokenized). A set that
//! is incomplete, has a shard twice, mixes datasets or holds a changed file is refused (exit 2)
//! before anything is written.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result};
use needlework_generators::hash::content_hash;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use xxhash_rust::xxh3::Xxh3;

use crate::dataset::manifest::{card, Manifest};
use crate::dataset::schema::from_batch;
use crate::dataset::writer::{Layout, ShardWriter, Staging, Target};
use crate::run::generate::{manifest_of, Written};
use crate::run::prepare::check_out;
use crate::run::shard::Rerun;
use crate::run::shard::{PartManifest, Shard};
use crate::usage::usage;

/// Rows decoded at a time from a part's file (long rows are large).
const READ_BATCH: usize = 64;

/// Read and check the parts: one dataset, every shard exactly once, each with its rows.
fn check_parts(dirs: &[PathBuf]) -> Result<Vec<(PathBuf, PartManifest)>> {
    let mut parts: BTreeMap<u64, (PathBuf, PartManifest)> = BTreeMap::new();
    let mut first: Option<(PathBuf, PartManifest)> = None;
    for dir in dirs {
        let part = PartManifest::read(dir)?;
        if let Some((fdir, f)) = &first {
            if part.plan != f.plan {
                let what = if part.plan.num_shards != f.plan.num_shards {
                    format!(
                        "{} is shard {} of {}, {} of {}",
                        dir.display(),
                        part.shard_index,
                        part.plan.num_shards,
                        fdir.display(),
                        f.plan.num_shards
                    )
                } else if part.plan.generator != f.plan.generator {
                    "they were made by different builds of gen".to_string()
                } else {
                    "their recipes differ".to_string()
                };
                return Err(usage(format!(
                    "{} and {} are parts of different datasets: {what}",
                    fdir.display(),
                    dir.display()
                )));
            }
        } else {
            first = Some((dir.clone(), part.clone()));
        }
        let shard = Shard {
            index: part.shard_index,
            count: part.plan.num_shards,
        };
        if part.shard_index >= part.plan.num_shards
            || shard.range(part.plan.total_instances) != (part.start..part.end)
        {
            return Err(usage(format!(
                "{} does not hold the rows of shard {} of {}: its part.json was edited",
                dir.display(),
                part.shard_index,
                part.plan.num_shards
            )));
        }
        if let Some((other, _)) = parts.get(&part.shard_index) {
            return Err(usage(format!(
                "shard {} is given twice: {} and {}",
                part.shard_index,
                other.display(),
                dir.display()
            )));
        }
        parts.insert(part.shard_index, (dir.clone(), part));
    }
    let Some((_, f)) = first else {
        return Err(usage("gen merge needs the part directories"));
    };
    let missing: Vec<String> = (0..f.plan.num_shards)
        .filter(|i| !parts.contains_key(i))
        .take(20)
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        let n = f.plan.num_shards - parts.len() as u64;
        return Err(usage(format!(
            "incomplete: {n} of {} shards missing (shard-index {}{}); make them with the same command and --shard-index, then merge all {}",
            f.plan.num_shards,
            missing.join(", "),
            if n > 20 { ", …" } else { "" },
            f.plan.num_shards
        )));
    }
    let ours = Manifest::generator();
    if f.plan.generator.format_version != ours.format_version
        || f.plan.generator.crates != ours.crates
    {
        return Err(usage(format!(
            "the parts were made by needlework {} (format {}), whose bytes this gen does not make: merge with that build",
            f.plan.generator.version, f.plan.generator.format_version
        )));
    }
    for (dir, part) in parts.values() {
        part.check_files(dir)
            .map_err(|why| usage(format!("{}: {why}: make that shard again", dir.display())))?;
    }
    Ok(parts.into_values().collect())
}

/// What `gen merge` is asked to do.
pub struct MergeOptions {
    /// The part directories, one per shard index.
    pub parts: Vec<PathBuf>,
    /// The dataset directory to write.
    pub out: PathBuf,
    /// Replace a non-empty `out`.
    pub force: bool,
    /// No summary line.
    pub quiet: bool,
}

/// `gen merge PART... --out DIR`.
pub fn merge(args: &MergeOptions) -> Result<()> {
    let parts = check_parts(&args.parts)?;
    let plan = parts[0].1.plan.clone();
    let inputs: Vec<(&'static str, String)> = parts
        .iter()
        .map(|(d, _)| ("part", d.display().to_string()))
        .collect();
    let _lock = check_out(&args.out, args.force, Rerun::Refused, &inputs)?;
    let staging = Staging::create(&args.out)?;
    let recipe = &plan.head.recipe;
    let per_instance = recipe.rows_per_instance();
    let version = plan.generator.version.clone();
    let layout = Layout {
        compression: &recipe.compression,
        rows_per_file: recipe.rows_per_file,
        canary: &recipe.canary,
        jsonl: plan.jsonl,
        version: &version,
    };
    let target = Target::Dir(staging.dir.clone());
    let mut hash = Xxh3::new();
    let (mut files, mut mirrors, mut rows) = (Vec::new(), Vec::new(), 0u64);
    let mut current: Option<((String, String), ShardWriter)> = None;
    let mut finish = |w: ShardWriter| -> Result<()> {
        let written = w.finish()?;
        files.extend(written.files);
        mirrors.extend(written.mirrors);
        rows += written.rows;
        Ok(())
    };
    for (dir, part) in &parts {
        for file in &part.files {
            let key = (file.config.clone(), file.split.clone());
            if current.as_ref().is_none_or(|(k, _)| *k != key) {
                if let Some((_, w)) = current.take() {
                    finish(w)?;
                }
                let w = ShardWriter::new(&target, &key.0, &key.1, &layout)?;
                current = Some((key, w));
            }
            let Some((_, writer)) = current.as_mut() else {
                unreachable!("a writer was just opened")
            };
            let path = dir.join(&file.path);
            let reader = std::fs::File::open(&path)
                .map_err(anyhow::Error::from)
                .and_then(|f| {
                    Ok(ParquetRecordBatchReaderBuilder::try_new(f)?
                        .with_batch_size(READ_BATCH)
                        .build()?)
                })
                .with_context(|| format!("cannot read {}", path.display()))?;
            for batch in reader {
                let batch = batch.with_context(|| format!("cannot read {}", path.display()))?;
                for stored in from_batch(&batch)? {
                    let row = stored.row;
                    if stored.canary != recipe.canary
                        || content_hash(&row.instance) != row.content_hash
                    {
                        return Err(usage(format!(
                            "{}: row {} of {} does not hold what its hashes say: make shard {} again",
                            dir.display(),
                            row.id,
                            file.path,
                            part.shard_index
                        )));
                    }
                    hash.update(row.content_hash.as_bytes());
                    writer.push(row)?;
                }
            }
        }
    }
    if let Some((_, w)) = current.take() {
        finish(w)?;
    }
    if rows != plan.total_instances * per_instance {
        return Err(anyhow::anyhow!(
            "merged {rows} rows, the dataset has {}",
            plan.total_instances * per_instance
        ));
    }
    let written = Written {
        configs: plan.configs.clone(),
        files,
        mirrors,
        rows,
        dataset_hash: format!("{:032x}", hash.digest128()),
    };
    let manifest = manifest_of(plan.head.clone(), written, plan.generator.clone());
    manifest.write(&staging.dir)?;
    let card_path = staging.dir.join("README.md");
    std::fs::write(&card_path, card(&manifest))
        .with_context(|| format!("cannot write {}", card_path.display()))?;
    staging.commit(&args.out)?;
    if !args.quiet {
        eprintln!(
            "merged {} parts: {} rows of {} to {} (dataset hash {})",
            parts.len(),
            manifest.rows,
            manifest.configs.join(", "),
            args.out.display(),
            manifest.dataset_hash
        );
    }
    Ok(())
}
