//! The generation pipeline: instances made in parallel, written in order, memory bounded.

use std::sync::mpsc::sync_channel;

use anyhow::{Context, Result};
use needlework_generators::fresh::no_context_control;
use needlework_generators::hash::{content_hash, Provenance};
use needlework_generators::{canonical_json, Cell, GenError, Instance, Run, Task};
use rayon::prelude::*;
use xxhash_rust::xxh3::Xxh3;

use crate::command::canonical_command;
use crate::disjoint::{Exclusion, MAX_DRAWS};
use crate::manifest::{card, FileEntry, Generator, Manifest, FORMAT, NOT_DATA};
use crate::prepare::Job;
use crate::progress::Progress;
use crate::recipe::Recipe;
use crate::schema::Row;
use crate::usage::usage;
use crate::writer::{Layout, ShardWriter, Staging, Target};

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

/// The rows of the instance at `cell`: its own row, and its control row with `--controls`.
/// With `--disjoint-from`, an instance that shares an identity with the excluded datasets is
/// drawn again at the next free sample of its cell's draw sequence (sample + k × samples,
/// k = 1, 2, …: never another row's sample, so a task's distinct samples stay distinct) and
/// keeps its own `sample_index`; when [`MAX_DRAWS`] draws all collide, or the task runs out
/// of samples, the space is too small: exit 2.
pub fn make_rows(plan: &Plan, task: &dyn Task, cell: &Cell) -> Result<Vec<Row>> {
    let Plan {
        recipe,
        run,
        exclusion,
        ..
    } = *plan;
    let mut extra = recipe.provenance_extra(exclusion.map(|e| e.hash.as_str()));
    let mut draw = 0u64;
    let instance = loop {
        let at = Cell {
            sample: cell.sample + draw * recipe.samples,
            ..*cell
        };
        let generated = generate_one(task, run, &at);
        let Some(exclusion) = exclusion else {
            break generated?;
        };
        let mut instance = match generated {
            Ok(i) => i,
            Err(e) if draw > 0 => return Err(exhausted(task, cell, draw, &format!(" ({e:#})"))),
            Err(e) => return Err(e),
        };
        if !exclusion.shares(task, &instance) {
            instance.sample_index = cell.sample;
            break instance;
        }
        draw += 1;
        if draw >= MAX_DRAWS {
            return Err(exhausted(task, cell, draw, ""));
        }
    };
    if draw > 0 {
        extra.push(("redraw", draw.to_string()));
    }
    let mut rows = vec![row(task, run, recipe, cell, instance, &extra)];
    if let Some(kind) = &recipe.controls {
        let control = no_context_control(run, &rows[0].instance).map_err(|e| {
            anyhow::Error::new(e).context(format!("making the control row of {}", rows[0].id))
        })?;
        extra.push(("control", kind.clone()));
        rows.push(row(task, run, recipe, cell, control, &extra));
    }
    Ok(rows)
}

/// The refusal when no draw of an instance avoids the excluded datasets.
fn exhausted(task: &dyn Task, cell: &Cell, draws: u64, why: &str) -> anyhow::Error {
    usage(format!(
        "--disjoint-from: no instance of {} {} at length {}, depth {:?}, sample {} avoids the excluded datasets' instances after {draws} draws{why}: the space of instances these options allow is too small",
        task.name(),
        task.variant(),
        cell.length,
        cell.depth,
        cell.sample
    ))
}

/// A row of `instance`, with its identity.
fn row(
    task: &dyn Task,
    run: &Run,
    recipe: &Recipe,
    cell: &Cell,
    instance: Instance,
    extra: &[(&str, String)],
) -> Row {
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
        extra,
    }
    .hash();
    Row {
        id: provenance[..16].to_string(),
        content_hash: content_hash(&instance),
        provenance_hash: provenance,
        instance,
    }
}

/// Generate the instance at `cell`; a refusal of what the user asked for is bad input.
fn generate_one(task: &dyn Task, run: &Run, cell: &Cell) -> Result<Instance> {
    task.generate(run, cell).map_err(|e| {
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

/// What to generate: the recipe, its (split, task) parts, and the prepared run.
#[derive(Clone, Copy)]
pub struct Plan<'a> {
    /// The recipe.
    pub recipe: &'a Recipe,
    /// (split, task) in generation order.
    pub parts: &'a [(String, Box<dyn Task>)],
    /// Inputs shared by every instance.
    pub run: &'a Run,
    /// The identities rows must not share (`--disjoint-from`).
    pub exclusion: Option<&'a Exclusion>,
}

/// Who generates: the worker pool, its size (for batch sizes) and the progress bar.
#[derive(Clone, Copy)]
pub struct Workers<'a> {
    /// The worker threads.
    pub pool: &'a rayon::ThreadPool,
    /// Their number.
    pub threads: usize,
    /// Rows done, shown on stderr.
    pub progress: &'a Progress,
}

/// What writing a recipe's rows gave: the configs, files, mirrors, rows and dataset hash a
/// manifest records.
pub struct Written {
    /// Config names, in generation order.
    pub configs: Vec<String>,
    /// The Parquet shards.
    pub files: Vec<FileEntry>,
    /// Their JSON Lines mirrors.
    pub mirrors: Vec<FileEntry>,
    /// Rows over all files.
    pub rows: u64,
    /// xxh3-128 over the ordered content hashes.
    pub dataset_hash: String,
}

/// The bytes of a dataset: every part's rows, generated in parallel and written in order
/// through [`ShardWriter`]s into `target` (files, or only hashes for `verify`). `version` is
/// the `gen` version the files name. Generation and `verify` both run this, so verify remakes
/// exactly the bytes generation wrote.
pub fn write_parts(
    plan: &Plan,
    workers: &Workers,
    target: &Target,
    jsonl: bool,
    version: &str,
) -> Result<Written> {
    let Plan { recipe, parts, .. } = *plan;
    let Workers {
        pool,
        threads,
        progress,
    } = *workers;
    let mut configs: Vec<String> = Vec::new();
    for (_, task) in parts {
        let c = recipe.config_name(task.as_ref());
        if !configs.contains(&c) {
            configs.push(c);
        }
    }
    let n = recipe.instance_count();
    let mut dataset_hash = Xxh3::new();
    let mut files = Vec::new();
    let mut mirrors = Vec::new();
    let mut rows = 0u64;
    let layout = Layout {
        compression: &recipe.compression,
        rows_per_file: recipe.rows_per_file,
        canary: &recipe.canary,
        jsonl,
        version,
    };
    for (split, task) in parts {
        let config = recipe.config_name(task.as_ref());
        let mut writer = ShardWriter::new(target, &config, split, &layout)?;
        pipeline(
            pool,
            n,
            batch_size(recipe, threads),
            |i| make_rows(plan, task.as_ref(), &cell_at(recipe, i)),
            |batch| {
                for row in batch.into_iter().flatten() {
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
    Ok(Written {
        configs,
        files,
        mirrors,
        rows,
        dataset_hash: format!("{:032x}", dataset_hash.digest128()),
    })
}

/// The manifest of a written dataset.
pub fn manifest_of(recipe: Recipe, written: Written, generator: Generator) -> Result<Manifest> {
    let command = canonical_command(&recipe, !written.mirrors.is_empty())
        .map_err(|e| anyhow::anyhow!("no command makes this recipe: {e}"))?;
    Ok(Manifest {
        format: FORMAT.into(),
        generator,
        command,
        recipe,
        configs: written.configs,
        rows: written.rows,
        files: written.files,
        mirrors: written.mirrors,
        not_data: NOT_DATA.iter().map(|s| s.to_string()).collect(),
        dataset_hash: written.dataset_hash,
    })
}

/// Generate a dataset.
pub fn generate(job: Job) -> Result<()> {
    let Job {
        recipe,
        parts,
        run,
        out,
        threads,
        quiet,
        jsonl,
        exclusion,
        ..
    } = job;
    // The command the manifest will record, before any work: a recipe no command makes is a bug.
    canonical_command(&recipe, jsonl)
        .map_err(|e| anyhow::anyhow!("no command makes this recipe: {e}"))?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start worker threads")?;
    let staging = Staging::create(&out)?;
    let progress = Progress::new(recipe.row_count() * parts.len() as u64, quiet, "generating");
    let generator = Manifest::generator();
    let written = write_parts(
        &Plan {
            recipe: &recipe,
            parts: &parts,
            run: &run,
            exclusion: exclusion.as_ref(),
        },
        &Workers {
            pool: &pool,
            threads,
            progress: &progress,
        },
        &Target::Dir(staging.dir.clone()),
        jsonl,
        &generator.version,
    )?;
    progress.finish();
    let manifest = manifest_of(recipe, written, generator)?;
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
            out.display(),
            manifest.dataset_hash
        );
    }
    Ok(())
}
