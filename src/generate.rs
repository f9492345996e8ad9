//! The generation pipeline: instances made in parallel, written in order, memory bounded.

use std::path::Path;
use std::sync::mpsc::sync_channel;

use anyhow::{Context, Result};
use needlework_generators::hash::{content_hash, Provenance};
use needlework_generators::{canonical_json, Cell, GenError, Run, Task};
use rayon::prelude::*;
use xxhash_rust::xxh3::Xxh3;

use crate::manifest::{card, Manifest, FORMAT, NOT_DATA};
use crate::prepare::Job;
use crate::progress::Progress;
use crate::recipe::{canonical_command, Recipe};
use crate::schema::Row;
use crate::usage::usage;
use crate::writer::{ShardWriter, Staging};

/// The cell of row `i`: rows are ordered by (length, depth, sample).
pub fn cell_at(recipe: &Recipe, i: u64) -> Cell {
    let depths = recipe.depths.as_deref();
    let per_length = depths.map_or(1, |d| d.len() as u64) * recipe.samples;
    let length = recipe.lengths[(i / per_length) as usize];
    let within = i % per_length;
    Cell {
        length,
        depth: depths.map(|d| d[(within / recipe.samples) as usize]),
        sample: within % recipe.samples,
    }
}

/// Generate the row at `cell`, with its identity.
pub fn make_row(task: &dyn Task, run: &Run, recipe: &Recipe, cell: &Cell) -> Result<Row> {
    let instance = task.generate(run, cell).map_err(|e| {
        let at = format!(
            "generating {} at length {}, depth {:?}, sample {}",
            task.name(),
            cell.length,
            cell.depth,
            cell.sample
        );
        match e {
            // What the user asked for (a corpus, a length, a parameter) cannot make this
            // instance: bad input, exit 2.
            GenError::BadCorpus(_)
            | GenError::BadParams(_)
            | GenError::Param(_)
            | GenError::TooShort { .. } => usage(format!("{at}: {e}")),
            e => anyhow::Error::new(e).context(at),
        }
    })?;
    let params = canonical_json(&task.params());
    let provenance = Provenance {
        task: task.name(),
        variant: &task.variant(),
        params: &params,
        seed: recipe.seed,
        cell,
        template_hash: &recipe.template_hash,
        haystack_id: &recipe.haystack_id,
        tokenizer_id: &recipe.tokenizer_id,
        reserve: recipe.reserve,
        reader_id: &run.reader.id(),
    }
    .hash();
    Ok(Row {
        id: provenance[..16].to_string(),
        content_hash: content_hash(&instance),
        provenance_hash: provenance,
        instance,
    })
}

/// How many rows to generate per parallel batch: enough to keep every thread busy, few enough
/// that a batch of the longest instances stays around 256 MiB.
pub fn batch_size(recipe: &Recipe, threads: usize) -> usize {
    let longest = recipe.lengths.iter().copied().max().unwrap_or(1).max(1) as usize;
    let by_memory = (256usize << 20) / (longest * 8);
    by_memory.clamp(threads, 512.max(threads))
}

/// Run `produce` for rows `0..n` in parallel batches, handing each batch, in order, to
/// `consume` on another thread while the next batch is produced.
pub fn pipeline<T: Send>(
    pool: &rayon::ThreadPool,
    n: u64,
    batch: usize,
    produce: impl Fn(u64) -> Result<T> + Sync,
    mut consume: impl FnMut(Vec<T>) -> Result<()> + Send,
) -> Result<()> {
    let (tx, rx) = sync_channel::<Vec<T>>(1);
    std::thread::scope(|scope| {
        let consumer = scope.spawn(move || -> Result<()> {
            for items in rx {
                consume(items)?;
            }
            Ok(())
        });
        let mut start = 0u64;
        let mut produced: Result<()> = Ok(());
        while start < n {
            let end = (start + batch as u64).min(n);
            let items: Result<Vec<T>> =
                pool.install(|| (start..end).into_par_iter().map(&produce).collect());
            match items {
                Ok(items) => {
                    if tx.send(items).is_err() {
                        break; // the consumer failed; its error is reported below
                    }
                }
                Err(e) => {
                    produced = Err(e);
                    break;
                }
            }
            start = end;
        }
        drop(tx);
        let consumed = consumer
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the writer thread panicked")));
        produced.and(consumed)
    })
}

/// Generate a dataset.
pub fn generate(job: Job, command: Vec<String>) -> Result<()> {
    let Job {
        recipe,
        parts,
        run,
        out,
        threads,
        quiet,
        jsonl,
        ..
    } = job;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start worker threads")?;
    let configs: Vec<String> = parts
        .iter()
        .map(|(_, task)| recipe.config_name(task.as_ref()))
        .fold(Vec::new(), |mut v, c| {
            if !v.contains(&c) {
                v.push(c);
            }
            v
        });
    let staging = Staging::create(&out)?;
    let n = recipe.row_count();
    let progress = Progress::new(n * parts.len() as u64, quiet, "generating");
    let mut dataset_hash = Xxh3::new();
    let mut files = Vec::new();
    let mut mirrors = Vec::new();
    let mut rows = 0u64;
    for (split, task) in &parts {
        let config = recipe.config_name(task.as_ref());
        let mut writer = ShardWriter::new(
            &staging.dir,
            &config,
            split,
            &recipe.compression,
            recipe.rows_per_file,
            &recipe.canary,
            jsonl,
        )?;
        pipeline(
            &pool,
            n,
            batch_size(&recipe, threads),
            |i| make_row(task.as_ref(), &run, &recipe, &cell_at(&recipe, i)),
            |batch| {
                for row in batch {
                    progress.advance(row.instance.length);
                    dataset_hash.update(row.content_hash.as_bytes());
                    writer.push(row)?;
                }
                Ok(())
            },
        )?;
        let written = writer.finish()?;
        files.extend(written.files);
        mirrors.extend(written.mirrors);
        rows += written.rows;
    }
    progress.finish();
    let manifest = Manifest {
        format: FORMAT.into(),
        generator: Manifest::generator(),
        command: canonical_command(&command, &recipe),
        recipe,
        configs,
        rows,
        files,
        mirrors,
        not_data: NOT_DATA.iter().map(|s| s.to_string()).collect(),
        dataset_hash: format!("{:032x}", dataset_hash.digest128()),
    };
    manifest.write(&staging.dir)?;
    let card_path = staging.dir.join("README.md");
    std::fs::write(&card_path, card(&manifest))
        .with_context(|| format!("cannot write {}", card_path.display()))?;
    staging.commit(&out)?;
    if !quiet {
        eprintln!(
            "wrote {} rows of {} to {} (dataset hash {})",
            manifest.rows,
            manifest.configs.join(", "),
            display(&out),
            manifest.dataset_hash
        );
    }
    Ok(())
}

fn display(p: &Path) -> String {
    p.display().to_string()
}
