//! The generation pipeline: instances made in parallel, written in order, memory bounded.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

use anyhow::{Context, Result};
use needlework_generators::hash::{content_hash, Provenance};
use needlework_generators::identity::no_context_control;
use needlework_generators::{canonical_json, Cell, GenError, Instance, Run, Task};
use xxhash_rust::xxh3::Xxh3;

use crate::dataset::head::Head;
use crate::dataset::manifest::{card, FileEntry, Generator, Manifest, FORMAT, NOT_DATA};
use crate::dataset::schema::Row;
use crate::dataset::writer::{Layout, ShardWriter, Staging, Target};
use crate::run::disjoint::{Exclusion, MAX_DRAWS};
use crate::run::prepare::{Entry, Job};
use crate::run::progress::Progress;
use crate::run::recipe::{Commands, Recipe};
use crate::run::shard::{already_made, PartManifest, PartPlan, Shard};
use crate::usage::usage;

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
        slot: within,
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
    // A redraw's slot lies past every slot of the length, as its sample lies past the cell's.
    let per_length = recipe.depths.as_ref().map_or(1, |d| d.len() as u64) * recipe.samples;
    let mut draw = 0u64;
    let instance = loop {
        let at = Cell {
            sample: cell.sample + draw * recipe.samples,
            slot: cell.slot + draw * per_length,
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
        "--disjoint-from: no instance of {} {} at {} avoids the excluded datasets' instances after {draws} draws{why}: the space of instances these options allow is too small",
        task.name(),
        task.variant(),
        place(cell)
    ))
}

/// Where an instance is, in the command line's words: `length 2048, depth 50%, sample 0`
/// (no depth for tasks without a haystack).
fn place(cell: &Cell) -> String {
    match cell.depth {
        Some(d) => format!("length {}, depth {d}%, sample {}", cell.length, cell.sample),
        None => format!("length {}, sample {}", cell.length, cell.sample),
    }
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
        let at = format!("generating {} at {}", task.name(), place(cell));
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

/// How many rows may be made ahead of the writer: enough to keep every thread busy, few enough
/// that that many of the longest instances stay around 256 MiB.
pub fn window_size(recipe: &Recipe, threads: usize) -> usize {
    let longest = recipe.lengths.iter().copied().max().unwrap_or(1).max(1) as usize;
    let by_memory = (256usize << 20) / (longest * 8);
    by_memory.clamp(threads, 512.max(threads))
}

/// Rows made but not yet written, shared by the workers and the writer.
struct InFlight<T> {
    /// Results by row, waiting for every row before them.
    ready: BTreeMap<u64, Result<T>>,
    /// The next row the writer takes.
    next_write: u64,
    /// Set when the writer stops (an error): workers stop taking rows.
    stopped: bool,
}

/// Run `produce` for rows `0..n` on the pool's threads and hand each result, in row order, to
/// `consume` on another thread as soon as it and every row before it are ready. Workers take
/// rows in order and never run more than `window` rows ahead of the writer, so memory is
/// bounded by `window` results whatever `n`, and no thread waits for a whole batch: the writer
/// works while rows are made. The first error in row order is returned.
pub fn pipeline<T: Send>(
    pool: &rayon::ThreadPool,
    n: u64,
    window: usize,
    produce: impl Fn(u64) -> Result<T> + Sync,
    mut consume: impl FnMut(T) -> Result<()> + Send,
) -> Result<()> {
    let window = window.max(1) as u64;
    let state = Mutex::new(InFlight {
        ready: BTreeMap::new(),
        next_write: 0,
        stopped: false,
    });
    let (made, room) = (Condvar::new(), Condvar::new());
    let next_row = AtomicU64::new(0);
    let lock = || state.lock().unwrap_or_else(|e| e.into_inner());
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| -> Result<()> {
            // However the writer ends (done, an error, a panic), workers waiting for room stop.
            struct Stop<'a, F: Fn()>(&'a F);
            impl<F: Fn()> Drop for Stop<'_, F> {
                fn drop(&mut self) {
                    (self.0)()
                }
            }
            let stop = || {
                lock().stopped = true;
                room.notify_all();
            };
            let _stop = Stop(&stop);
            for k in 0..n {
                let item = {
                    let mut s = lock();
                    loop {
                        if let Some(item) = s.ready.remove(&k) {
                            break item;
                        }
                        s = made.wait(s).unwrap_or_else(|e| e.into_inner());
                    }
                };
                {
                    let mut s = lock();
                    s.next_write = k + 1;
                    room.notify_all();
                }
                item.and_then(&mut consume)?;
            }
            Ok(())
        });
        pool.scope(|workers| {
            for _ in 0..pool.current_num_threads() {
                workers.spawn(|_| loop {
                    let k = next_row.fetch_add(1, Ordering::Relaxed);
                    if k >= n {
                        return;
                    }
                    {
                        let mut s = lock();
                        while !s.stopped && k >= s.next_write + window {
                            s = room.wait(s).unwrap_or_else(|e| e.into_inner());
                        }
                        if s.stopped {
                            return;
                        }
                    }
                    // A panic is a bug, but must not leave the writer waiting for this row.
                    let item =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| produce(k)))
                            .unwrap_or_else(|_| {
                                Err(anyhow::anyhow!("internal error: row {k} panicked"))
                            });
                    let failed = item.is_err();
                    lock().ready.insert(k, item);
                    made.notify_one();
                    if failed {
                        // Rows after a failed one are never written.
                        next_row.store(n, Ordering::Relaxed);
                        return;
                    }
                });
            }
        });
        writer
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the writer thread panicked")))
    })
}

/// What to generate: the recipe, its (split, task) parts, the prepared run, and the config
/// name a suite gives it.
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
    /// The config name a suite entry sets (`niah_single_1`), else the task's own.
    pub config: Option<&'a str>,
}

impl Plan<'_> {
    /// The config a part's rows go to.
    pub fn config_of(&self, task: &dyn Task) -> String {
        self.config
            .map_or_else(|| self.recipe.config_name(task), str::to_string)
    }

    /// Instances over all parts (each makes one row, and a control row with `--controls`):
    /// what shards divide.
    pub fn instances(&self) -> u64 {
        self.recipe.instance_count() * self.parts.len() as u64
    }
}

/// The work `plans` hold within `range` (every row when `None`): rows, and target tokens (a
/// row of native size counts one), so progress and the opening line can say how much is left
/// when lengths differ a thousandfold.
pub fn planned_work(plans: &[Plan], range: Option<std::ops::Range<u64>>) -> (u64, u64) {
    let (mut rows, mut tokens, mut base) = (0u64, 0u64, 0u64);
    let range = range.unwrap_or(0..u64::MAX);
    for plan in plans {
        let per_part = plan.recipe.instance_count();
        let per_cell = plan.recipe.rows_per_instance();
        for _ in plan.parts {
            let (lo, hi) = (range.start.max(base), range.end.min(base + per_part));
            for i in lo..hi.max(lo) {
                rows += per_cell;
                tokens += cell_at(plan.recipe, i - base).length.max(1) * per_cell;
            }
            base += per_part;
        }
    }
    (rows, tokens)
}

/// What a run is about to make, in one line: a long run should say so before it starts.
fn opening_line(plans: &[Plan], rows: u64, tokens: u64) -> String {
    let lengths = plans
        .iter()
        .flat_map(|p| p.recipe.lengths.iter().copied())
        .filter(|&l| l > 0);
    let (lo, hi) = lengths.fold((u64::MAX, 0), |(lo, hi), l| (lo.min(l), hi.max(l)));
    let configs: u64 = plans.iter().map(|p| p.parts.len() as u64).sum();
    let span = match (lo, hi) {
        (u64::MAX, _) => "native sizes".to_string(),
        (lo, hi) if lo == hi => format!("length {lo}"),
        (lo, hi) => format!("lengths {lo}..{hi}"),
    };
    format!(
        "making {rows} rows in {configs} config{}, {span}, about {} target tokens in all",
        if configs == 1 { "" } else { "s" },
        human_tokens(tokens)
    )
}

/// 1234567 as `1.2M`: the opening line gives a size, not an audit.
fn human_tokens(n: u64) -> String {
    match n {
        n if n >= 1_000_000_000 => format!("{:.1}G", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.1}M", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.1}k", n as f64 / 1e3),
        n => n.to_string(),
    }
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

/// Config names of a dataset's plans, in generation order, each once.
pub fn configs_of(plans: &[Plan]) -> Vec<String> {
    let mut configs: Vec<String> = Vec::new();
    for plan in plans {
        for (_, task) in plan.parts {
            let c = plan.config_of(task.as_ref());
            if !configs.contains(&c) {
                configs.push(c);
            }
        }
    }
    configs
}

/// The bytes of a dataset: every plan's parts' rows, generated in parallel and written in
/// order through [`ShardWriter`]s into `target` (files, or only hashes for `verify`). `version`
/// is the `gen` version the files name. Rows are numbered over the whole dataset (plan, part,
/// length, depth, sample); only those in `range` are made (a shard's rows; `None`: all).
/// Generation, shards and `verify` all run this, so verify remakes exactly the bytes
/// generation wrote.
pub fn write_parts(
    plans: &[Plan],
    workers: &Workers,
    target: &Target,
    (jsonl, version): (bool, &str),
    range: Option<std::ops::Range<u64>>,
) -> Result<Written> {
    let Workers {
        pool,
        threads,
        progress,
    } = *workers;
    let total: u64 = plans.iter().map(Plan::instances).sum();
    let range = range.unwrap_or(0..total);
    let mut dataset_hash = Xxh3::new();
    let mut files = Vec::new();
    let mut mirrors = Vec::new();
    let mut rows = 0u64;
    let mut base = 0u64;
    for plan in plans {
        let Plan { recipe, parts, .. } = *plan;
        let n = recipe.instance_count();
        let layout = Layout {
            compression: &recipe.compression,
            rows_per_file: recipe.rows_per_file,
            canary: &recipe.canary,
            jsonl,
            version,
        };
        for (split, task) in parts {
            let (lo, hi) = (range.start.max(base), range.end.min(base + n));
            let first = lo.saturating_sub(base);
            base += n;
            if lo >= hi {
                continue;
            }
            let config = plan.config_of(task.as_ref());
            progress.stage(&config);
            let mut writer =
                ShardWriter::new(target, &config, split, &layout)?.with_threads(threads);
            pipeline(
                pool,
                hi - lo,
                window_size(recipe, threads),
                |k| make_rows(plan, task.as_ref(), &cell_at(recipe, first + k)),
                |rows| {
                    for row in rows {
                        progress.advance(row.instance.length, row.instance.target_length.max(1));
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
    }
    Ok(Written {
        configs: configs_of(plans),
        files,
        mirrors,
        rows,
        dataset_hash: format!("{:032x}", dataset_hash.digest128()),
    })
}

/// The head of a one-command dataset: its command rendered from the recipe.
pub fn single_head(recipe: Recipe, jsonl: bool, commands: &dyn Commands) -> Result<Head> {
    let command = commands
        .command(&recipe, jsonl)
        .map_err(|e| anyhow::anyhow!("no command makes this recipe: {e}"))?;
    Ok(Head {
        command,
        recipe,
        suite: None,
    })
}

/// An entry as [`write_parts`] takes it.
pub fn plan_of(e: &Entry) -> Plan<'_> {
    Plan {
        recipe: &e.recipe,
        parts: &e.parts,
        run: &e.run,
        config: e.config.as_deref(),
        exclusion: e.exclusion.as_deref(),
    }
}

/// The manifest of a written dataset.
pub fn manifest_of(head: Head, written: Written, generator: Generator) -> Manifest {
    Manifest {
        format: FORMAT.into(),
        generator,
        command: head.command,
        recipe: head.recipe,
        suite: head.suite,
        configs: written.configs,
        rows: written.rows,
        files: written.files,
        mirrors: written.mirrors,
        not_data: NOT_DATA.iter().map(|s| s.to_string()).collect(),
        dataset_hash: written.dataset_hash,
    }
}

/// A shard rerun whose part is already complete: said once on stderr (even with -q: it is
/// why nothing happened), exit 0, its files untouched. Any other part there is refused.
fn keep_finished_part(out: &Path, plan: &PartPlan, shard: Shard) -> Result<()> {
    match already_made(out, plan, shard) {
        Ok(part) => {
            eprintln!(
                "shard {} of {} is already complete in {} (rows {}..{} of {}, files unchanged): nothing to make; --force makes it again",
                shard.index,
                shard.count,
                out.display(),
                part.start,
                part.end,
                plan.total_instances
            );
            Ok(())
        }
        Err(why) => Err(usage(format!(
            "--out {} holds a shard part that is not this shard's or not whole ({why}): choose another directory or pass --force to replace it",
            out.display()
        ))),
    }
}

/// Generate a dataset, or one shard's part of it.
pub fn generate(job: Job, commands: &dyn Commands) -> Result<()> {
    let Job {
        suite,
        entries,
        out,
        threads,
        quiet,
        jsonl,
        shard,
        force,
        seed_file,
        ..
    } = job;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start worker threads")?;
    let head = match suite {
        Some((command, suite)) => Head {
            command,
            recipe: entries[0].recipe.clone(),
            suite: Some(suite),
        },
        None => single_head(entries[0].recipe.clone(), jsonl, commands)?,
    };
    let plans: Vec<Plan> = entries.iter().map(plan_of).collect();
    let total: u64 = plans.iter().map(Plan::instances).sum();
    let range = shard.map(|s| s.range(total));
    let generator = Manifest::generator();
    // A shard's part record, known before writing: a rerun compares it with the part there.
    let part = shard.map(|s| {
        let plan = PartPlan {
            generator: generator.clone(),
            head: head.clone(),
            configs: configs_of(&plans),
            jsonl,
            total_instances: total,
            num_shards: s.count,
        };
        (s, plan)
    });
    if let Some((s, plan)) = &part {
        if !force && out.join("part.json").is_file() {
            return keep_finished_part(&out, plan, *s);
        }
    }
    // Every check has passed: a newly drawn seed is kept now, before any row is written.
    if let Some(f) = &seed_file {
        f.keep()?;
    }
    let staging = Staging::create(&out)?;
    let (count, work) = planned_work(&plans, range.clone());
    // At a terminal only, as the bar: logs and scripts keep one line per outcome.
    if !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprintln!("{}", opening_line(&plans, count, work));
    }
    let progress = Progress::new(count, work, quiet, "generating");
    let written = write_parts(
        &plans,
        &Workers {
            pool: &pool,
            threads,
            progress: &progress,
        },
        &Target::Dir(staging.dir.clone()),
        (jsonl && shard.is_none(), &generator.version),
        range.clone(),
    )?;
    progress.finish();
    let summary = match part {
        Some((s, plan)) => {
            let part = PartManifest::new(plan, s, written.files, written.dataset_hash);
            part.write(&staging.dir)?;
            format!(
                "wrote shard {} of {} (rows {}..{} of {}) to {}",
                s.index,
                s.count,
                part.start,
                part.end,
                total,
                out.display()
            )
        }
        None => {
            let manifest = manifest_of(head, written, generator);
            manifest.write(&staging.dir)?;
            let card_path = staging.dir.join("README.md");
            std::fs::write(&card_path, card(&manifest))
                .with_context(|| format!("cannot write {}", card_path.display()))?;
            format!(
                "wrote {} rows of {} to {} (dataset hash {})",
                manifest.rows,
                manifest.configs.join(", "),
                out.display(),
                manifest.dataset_hash
            )
        }
    };
    staging.commit(&out)?;
    if !quiet {
        eprintln!("{summary}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_read_as_a_person_says_them() {
        assert_eq!(human_tokens(0), "0");
        assert_eq!(human_tokens(999), "999");
        assert_eq!(human_tokens(1_000), "1.0k");
        assert_eq!(human_tokens(30_720), "30.7k");
        assert_eq!(human_tokens(1_660_000), "1.7M");
        assert_eq!(human_tokens(2_000_000_000), "2.0G");
    }

    /// Rows reach the writer in row order whatever the threads, window and row times, and the
    /// first failure in row order (a row's error, a panic while making it, or the writer's
    /// error) ends the run with that error after exactly the rows before it: randomized over
    /// all of these, so a lost, repeated or reordered row, or a hang, shows.
    #[test]
    fn rows_arrive_in_order_and_the_first_failure_ends_the_run() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut draw = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n.max(1)
        };
        for case in 0..80 {
            let threads = 1 + draw(4) as usize;
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let n = draw(160);
            let window = 1 + draw(6) as usize;
            let mut failing = || (draw(3) == 0).then(|| draw(n + 5));
            let (made_fails, panics, written_fails) = (failing(), failing(), failing());
            let mut written = Vec::new();
            let result = pipeline(
                &pool,
                n,
                window,
                |k| {
                    // Uneven row times, so rows finish out of order.
                    std::thread::sleep(std::time::Duration::from_micros(k * 7_919 % 400));
                    if Some(k) == panics {
                        panic!("row {k} panics on purpose");
                    }
                    if Some(k) == made_fails {
                        anyhow::bail!("making row {k} failed");
                    }
                    Ok(k)
                },
                |k| {
                    if Some(k) == written_fails {
                        anyhow::bail!("writing row {k} failed");
                    }
                    written.push(k);
                    Ok(())
                },
            );
            let first = [panics, made_fails, written_fails]
                .into_iter()
                .flatten()
                .filter(|&k| k < n)
                .min();
            let context = format!("case {case}: {n} rows, window {window}, {threads} threads");
            match first {
                None => {
                    result.unwrap_or_else(|e| panic!("{context}: {e}"));
                    assert_eq!(written, (0..n).collect::<Vec<_>>(), "{context}");
                }
                Some(k) => {
                    let message = result.expect_err(&context).to_string();
                    let want = if Some(k) == panics {
                        format!("internal error: row {k} panicked")
                    } else if Some(k) == made_fails {
                        format!("making row {k} failed")
                    } else {
                        format!("writing row {k} failed")
                    };
                    assert_eq!(message, want, "{context}");
                    assert_eq!(written, (0..k).collect::<Vec<_>>(), "{context}");
                }
            }
        }
    }
}
