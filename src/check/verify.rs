//! `gen verify`: remake the dataset from its manifest's recipe and compare, byte for byte.
//!
//! The recipe is run again through the code that wrote the dataset ([`write_parts`]), into a
//! sink that only hashes, so verify knows the exact bytes of every shard and mirror, and the
//! manifest those make. Then every file a loader could read must be those bytes, the manifest
//! must be that manifest (every field, and its formatting), and the card's front matter must be
//! the one the manifest gives. When a shard differs, its rows are read back and compared with
//! the regenerated ones to name what changed (a row, or the file's schema, metadata or codec).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use needlework_generators::hash::content_hash;
use needlework_generators::Task;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use rayon::prelude::*;

use crate::check::recorded::recorded_recipes;
use crate::check::sealed::Excluded;
use crate::dataset::files::{check_card, check_file, rows_held, shard_names, unlisted_files};
use crate::dataset::lock::OutLock;
use crate::dataset::manifest::{FileEntry, Generator, Manifest, CANARY_NOTICE};
use crate::dataset::schema::{from_batch, schema};
use crate::dataset::writer::{writer_properties, Target};
use crate::run::find_inputs::rebuild_run;
use crate::run::find_inputs::InputPaths;
use crate::run::generate::{cell_at, make_rows, manifest_of, plan_of, write_parts, Plan, Workers};
use crate::run::prepare::Entry;
use crate::run::progress::Progress;
use crate::run::recipe::build_parts;
use crate::run::recipe::Commands;
use crate::usage::usage;

/// Most differences between manifests listed one by one.
const MAX_LISTED: usize = 12;

/// The build that wrote the dataset must be one whose bytes this build makes: the same
/// format and the same output crates. Its version is named in every shard (`created_by`),
/// so it is checked with their bytes.
fn check_generator(dir: &Path, m: &Manifest) -> Result<()> {
    let ours = Manifest::generator();
    let g = &m.generator;
    if g.format_version != ours.format_version {
        // Not a mismatch of this format's rows: another format, named, exit 2.
        return Err(usage(format!(
            "{} was made with needlework format {}, this gen makes format {}: use needlework {}",
            dir.display(),
            g.format_version,
            ours.format_version,
            g.version
        )));
    }
    let version_ok = !g.version.is_empty()
        && g.version.len() <= 64
        && g.version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-+".contains(c));
    if g.name != ours.name || !version_ok {
        return Err(usage(format!(
            "{} does not name the needlework build that made it (generator '{}' version '{}')",
            dir.join("manifest.json").display(),
            g.name.escape_debug(),
            g.version.escape_debug()
        )));
    }
    if g.crates != ours.crates {
        let differs: Vec<String> = ours
            .crates
            .iter()
            .filter(|(k, v)| g.crates.get(*k) != Some(v))
            .map(|(k, v)| {
                let theirs = g.crates.get(k).map_or("none", String::as_str);
                format!("{k} {theirs} (this gen has {v})")
            })
            .chain(
                g.crates
                    .keys()
                    .filter(|k| !ours.crates.contains_key(*k))
                    .map(|k| format!("{k} (this gen has none)")),
            )
            .collect();
        return Err(usage(format!(
            "{} was made with other output crates, whose bytes this gen does not make: {}; use the build that made it (needlework {})",
            dir.display(),
            differs.join(", "),
            g.version
        )));
    }
    Ok(())
}

/// What `gen verify` is asked to do besides the dataset's directory.
pub struct VerifyOptions<'a> {
    /// Worker threads.
    pub threads: usize,
    /// No progress bar.
    pub quiet: bool,
    /// Where moved inputs are now.
    pub inputs: InputPaths,
    /// A private split's seed file.
    pub seed_file: Option<&'a Path>,
    /// The commands recipes are made by.
    pub commands: &'a dyn Commands,
}

/// The refusal while `dir` is being written: what was read may mix two datasets, so no
/// mismatch can be told from the rewrite. Bad input (exit 2), never a mismatch.
fn being_written(dir: &Path, by: &str) -> anyhow::Error {
    usage(format!(
        "{} is being written by {by}: verify it when that run has finished",
        dir.display()
    ))
}

/// Which directory and manifest `dir` names: a rewrite (`--force`) puts a new directory, with
/// a new manifest, in its place.
fn identity(dir: &Path) -> Option<Vec<u64>> {
    let d = std::fs::metadata(dir).ok()?;
    let m = std::fs::metadata(dir.join("manifest.json")).ok()?;
    let time = |t: std::io::Result<std::time::SystemTime>| {
        t.ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as u64)
    };
    #[cfg(unix)]
    let inodes = {
        use std::os::unix::fs::MetadataExt;
        vec![d.dev(), d.ino(), m.ino()]
    };
    #[cfg(not(unix))]
    let inodes = vec![time(d.created())];
    Some([inodes, vec![m.len(), time(m.modified())]].concat())
}

/// Check a dataset; print every problem; return whether it is intact. A dataset whose output
/// lock a live gen holds, before or after the check, or that was replaced during it, is
/// refused as being written (exit 2): what was read may mix two recipes.
pub fn verify(dir: &Path, options: &VerifyOptions<'_>) -> Result<bool> {
    if let Some(by) = OutLock::holder(dir) {
        return Err(being_written(dir, &by));
    }
    if !dir.join("manifest.json").exists() {
        return Err(usage(format!(
            "{} is not a needlework dataset: it has no manifest.json",
            dir.display()
        )));
    }
    let before = identity(dir);
    let outcome = check(dir, options);
    if let Some(by) = OutLock::holder(dir) {
        return Err(being_written(dir, &by));
    }
    if identity(dir) != before {
        return Err(being_written(
            dir,
            "another gen, which replaced it while it was verified",
        ));
    }
    let verdict = outcome?;
    for line in &verdict.lines {
        println!("{line}");
    }
    Ok(verdict.ok)
}

/// What `verify` found: whether the dataset is intact, and the lines saying so.
struct Verdict {
    ok: bool,
    lines: Vec<String>,
}

/// Check a dataset: every problem, and whether it is intact.
fn check(dir: &Path, options: &VerifyOptions<'_>) -> Result<Verdict> {
    let VerifyOptions {
        threads,
        quiet,
        ref inputs,
        seed_file,
        commands,
    } = *options;
    let m = Manifest::read(dir)?;
    check_generator(dir, &m)?;
    let not_made = |e: String| {
        usage(format!(
            "{} holds a recipe gen does not make: {e}",
            dir.join("manifest.json").display()
        ))
    };
    let jsonl = !m.mirrors.is_empty();
    // Every recipe gen makes is made by a command; one that none makes was edited.
    let (recorded, head) = recorded_recipes(&m, jsonl, commands).map_err(not_made)?;
    let mut parted = Vec::with_capacity(recorded.len());
    for (config, recipe) in recorded {
        recipe.check_private().map_err(not_made)?;
        let parts = build_parts(&recipe.options, &recipe.split)?;
        parted.push((config, recipe, parts));
    }
    let r = &m.recipe;
    // Regenerating costs as much as generating: a manifest claiming more rows than its files
    // hold is reported without remaking them, so an edited manifest cannot make verify run
    // for hours.
    let claimed: u64 = parted
        .iter()
        .map(|(_, r, parts)| r.row_count() * parts.len() as u64)
        .sum();
    let (held, mut problems) = rows_held(dir, &m);
    if claimed > held {
        problems.push(format!(
            "its recipe makes {claimed} rows, the files the manifest lists hold {held}: not regenerated"
        ));
        return Ok(report(dir, &problems, None));
    }
    let secret = match crate::check::sealed::seed_given(dir, r, seed_file)? {
        Ok(secret) => secret,
        Err(problem) => return Ok(report(dir, &[problem], None)),
    };
    let Some(seed) = r.run_seed(secret.as_ref()) else {
        // Without the seed no row is regenerated; a disjoint split's rows are still checked
        // against the excluded datasets when they are found.
        let excluded = if r.disjoint_from.is_empty() {
            Excluded::None
        } else {
            match crate::run::disjoint::load_recorded(&r.disjoint_from, dir) {
                Ok(e) => Excluded::Found(e),
                Err(e) => Excluded::Missing(format!("{e:#}")),
            }
        };
        let (mut problems, expected) =
            crate::check::sealed::check_sealed(dir, &m, &parted, head, &excluded)?;
        problems.extend(compare_manifest(dir, &expected));
        if problems.is_empty() {
            crate::check::sealed::print_sealed_ok(dir, &expected, &excluded);
            return Ok(Verdict {
                ok: true,
                lines: Vec::new(),
            });
        }
        return Ok(report(dir, &problems, None));
    };
    // One exclusion for the dataset: a suite's entries record the same excluded datasets.
    let exclusion = if r.disjoint_from.is_empty() {
        None
    } else {
        Some(Arc::new(crate::run::disjoint::load_recorded(
            &r.disjoint_from,
            dir,
        )?))
    };
    let mut entries = Vec::with_capacity(parted.len());
    for (config, recipe, parts) in parted {
        // A suite's entries share the dataset's one seed, public or private.
        let run = rebuild_run(&recipe, parts[0].1.as_ref(), inputs, dir, seed)?;
        entries.push(Entry {
            config,
            recipe,
            parts,
            run,
            exclusion: exclusion.clone(),
            seed_file: None,
        });
    }
    let plans: Vec<Plan> = entries.iter().map(plan_of).collect();

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    let (rows, work) = crate::run::generate::planned_work(&plans, None);
    let progress = Progress::new(rows, work, quiet, "verifying");
    let workers = Workers {
        pool: &pool,
        threads,
        progress: &progress,
    };
    let version = m.generator.version.clone();
    let written = write_parts(&plans, &workers, &Target::Hash, (jsonl, &version), None)?;
    progress.finish();
    let expected = manifest_of(
        head,
        written,
        Generator {
            version: version.clone(),
            ..Manifest::generator()
        },
    );

    let mut problems: Vec<String> = Vec::new();
    problems.extend(shard_names(&m));
    problems.extend(compare_manifest(dir, &expected));
    problems.extend(unlisted_files(dir, &expected));
    problems.extend(check_card(dir, &expected));
    let mut index: std::collections::BTreeMap<(&str, &str), u64> = Default::default();
    for file in &expected.files {
        let start = index
            .entry((file.config.as_str(), file.split.as_str()))
            .or_insert(0);
        let range = *start..*start + file.rows;
        *start += file.rows;
        if !check_file(dir, file, &mut problems)? {
            let (plan, task) = plans
                .iter()
                .flat_map(|p| p.parts.iter().map(move |(s, t)| (p, s, t)))
                .find(|(p, s, t)| **s == file.split && p.config_of(t.as_ref()) == file.config)
                .map(|(p, _, t)| (p, t))
                .ok_or_else(|| anyhow::anyhow!("no part makes {}", file.path))?;
            problems.extend(diagnose(
                dir,
                file,
                range,
                plan,
                &pool,
                task.as_ref(),
                &version,
            ));
        }
    }
    for mirror in &expected.mirrors {
        check_file(dir, mirror, &mut problems)?;
    }
    Ok(report(dir, &problems, Some(&expected)))
}

/// The outcome, in the lines to print.
fn report(dir: &Path, problems: &[String], expected: Option<&Manifest>) -> Verdict {
    match expected {
        Some(e) if problems.is_empty() => Verdict {
            ok: true,
            lines: vec![format!(
                "ok: {} rows of {} regenerate identically, every file byte for byte (dataset hash {})",
                e.rows,
                e.configs.join(", "),
                e.dataset_hash
            )],
        },
        _ => {
            let mut lines: Vec<String> = problems.iter().map(|p| format!("mismatch: {p}")).collect();
            lines.push(format!(
                "FAILED: {} problem(s) in {} ({} rows regenerated)",
                problems.len(),
                dir.display(),
                expected.map_or(0, |e| e.rows)
            ));
            Verdict { ok: false, lines }
        }
    }
}

/// The manifest must be the one the recipe makes: every field (files, hashes, command, crate
/// versions, not_data, …) and, since equal recipes give byte-identical directories, its bytes.
fn compare_manifest(dir: &Path, expected: &Manifest) -> Vec<String> {
    let (Ok(mut found), Ok(want)) = (
        std::fs::read(dir.join("manifest.json"))
            .map_err(anyhow::Error::from)
            .and_then(|b| Ok(serde_json::from_slice::<serde_json::Value>(&b)?)),
        serde_json::to_value(expected),
    ) else {
        return vec!["manifest.json cannot be read back".into()];
    };
    let mut out = Vec::new();
    diff_json("", &mut found, &want, &mut out);
    if out.len() > MAX_LISTED {
        let more = out.len() - MAX_LISTED;
        out.truncate(MAX_LISTED);
        out.push(format!("manifest.json: {more} more differences"));
    }
    if out.is_empty() {
        let text = serde_json::to_string_pretty(expected).unwrap_or_default() + "\n";
        let bytes = std::fs::read(dir.join("manifest.json")).unwrap_or_default();
        if bytes != text.as_bytes() {
            out.push(
                "manifest.json holds what its recipe makes, but not as gen writes it (spacing, key order or escapes differ)"
                    .into(),
            );
        }
    }
    out
}

/// Differences between a manifest as found and as its recipe makes it, one line per leaf.
fn diff_json(
    at: &str,
    found: &mut serde_json::Value,
    want: &serde_json::Value,
    out: &mut Vec<String>,
) {
    use serde_json::Value;
    let short = |v: &Value| {
        let s = v.to_string();
        if s.chars().count() > 80 {
            format!("{}…", s.chars().take(80).collect::<String>())
        } else {
            s
        }
    };
    let key = |k: &str| {
        if at.is_empty() {
            k.to_string()
        } else {
            format!("{at}.{k}")
        }
    };
    match (found, want) {
        (Value::Object(f), Value::Object(w)) => {
            for (k, wv) in w {
                match f.get_mut(k) {
                    Some(fv) => diff_json(&key(k), fv, wv, out),
                    None => out.push(format!("manifest.json: {} is missing", key(k))),
                }
            }
            for k in f.keys().filter(|k| !w.contains_key(*k)) {
                out.push(format!(
                    "manifest.json: {} is not a field gen writes",
                    key(k)
                ));
            }
        }
        (Value::Array(f), Value::Array(w)) if f.len() == w.len() => {
            for (i, (fv, wv)) in f.iter_mut().zip(w).enumerate() {
                diff_json(&format!("{at}[{i}]"), fv, wv, out);
            }
        }
        (f, w) if f != w => out.push(format!(
            "manifest.json: {at} is {}, its recipe makes {}",
            short(f),
            short(w)
        )),
        _ => {}
    }
}

/// A shard whose bytes differ from the ones the recipe makes: what differs. Its encoding
/// (schema, key-value metadata, codec, writer) is compared with the writer's, then its rows
/// (`range` of its part) with regenerated ones, each named by id.
fn diagnose(
    dir: &Path,
    file: &FileEntry,
    range: std::ops::Range<u64>,
    plan: &Plan,
    pool: &rayon::ThreadPool,
    task: &dyn Task,
    version: &str,
) -> Vec<String> {
    let r = plan.recipe;
    let path = dir.join(&file.path);
    let mut problems = Vec::new();
    let builder = match std::fs::File::open(&path)
        .map_err(anyhow::Error::from)
        .and_then(|f| Ok(ParquetRecordBatchReaderBuilder::try_new(f)?))
    {
        Ok(b) => b,
        Err(e) => return vec![format!("cannot read file {}: {e:#}", file.path)],
    };
    // The encoding, against what the writer sets.
    let mut encoding = Vec::new();
    if builder.schema().fields() != schema().fields() {
        encoding.push("its schema (column names, types, nullability or order)".to_string());
    }
    let meta = builder.metadata().file_metadata();
    let kv: Vec<(String, Option<String>)> = meta
        .key_value_metadata()
        .map(|kv| {
            kv.iter()
                .filter(|e| e.key != "ARROW:schema")
                .map(|e| (e.key.clone(), e.value.clone()))
                .collect()
        })
        .unwrap_or_default();
    let want_kv = vec![
        ("needlework.canary".to_string(), Some(r.canary.clone())),
        (
            "needlework.notice".to_string(),
            Some(CANARY_NOTICE.to_string()),
        ),
    ];
    if kv != want_kv {
        encoding.push("its key-value metadata".into());
    }
    if meta.created_by() != Some(format!("needlework {version}").as_str()) {
        encoding.push(format!(
            "its writer ('{}', not 'needlework {version}')",
            meta.created_by().unwrap_or("none")
        ));
    }
    if let Ok(props) = writer_properties(&r.compression, &r.canary, version) {
        let want = props.compression(&parquet::schema::types::ColumnPath::from("input"));
        let codecs: BTreeSet<String> = builder
            .metadata()
            .row_groups()
            .iter()
            .flat_map(|g| g.columns().iter().map(|c| c.compression()))
            .filter(|c| *c != want)
            .map(|c| c.to_string())
            .collect();
        if !codecs.is_empty() {
            encoding.push(format!(
                "its compression ({}, not {})",
                codecs.into_iter().collect::<Vec<_>>().join(", "),
                r.compression
            ));
        }
    }
    if !encoding.is_empty() {
        problems.push(format!(
            "file {} is not as gen writes it: {} differ",
            file.path,
            encoding.join(", ")
        ));
    }
    // The rows, against regenerated ones.
    let reader = match builder.build() {
        Ok(reader) => reader,
        Err(e) => {
            problems.push(format!("cannot read file {}: {e}", file.path));
            return problems;
        }
    };
    let mut index = range.start;
    let mut rows_problems = Vec::new();
    for batch in reader {
        let stored = match batch
            .map_err(anyhow::Error::from)
            .and_then(|b| from_batch(&b))
        {
            Ok(s) => s,
            Err(e) => {
                problems.push(format!("cannot read file {}: {e:#}", file.path));
                return problems;
            }
        };
        let base = index;
        let fresh: Vec<Option<Result<crate::dataset::schema::Row>>> = pool.install(|| {
            (0..stored.len() as u64)
                .into_par_iter()
                .map(|k| {
                    let i = base + k;
                    let per = r.rows_per_instance();
                    (i < range.end).then(|| {
                        make_rows(plan, task, &cell_at(r, i / per))
                            .map(|mut rows| rows.swap_remove((i % per) as usize))
                    })
                })
                .collect()
        });
        for (s, f) in stored.iter().zip(fresh) {
            let at = index - range.start;
            index += 1;
            let Some(Ok(f)) = f else {
                continue;
            };
            let what = if s.row.id != f.id {
                format!("expected row {} here", f.id)
            } else if content_hash(&s.row.instance) != f.content_hash {
                "content differs from what its provenance regenerates".to_string()
            } else if s.canary != r.canary {
                "canary differs".to_string()
            } else if s.row.content_hash != f.content_hash
                || s.row.provenance_hash != f.provenance_hash
            {
                "stored hash differs".to_string()
            } else {
                continue;
            };
            rows_problems.push(format!("row {} ({} row {at}): {what}", s.row.id, file.path));
        }
    }
    let n = index - range.start;
    if n != file.rows {
        problems.push(format!(
            "file {} has {n} rows, its recipe makes {}",
            file.path, file.rows
        ));
    }
    if problems.is_empty() && rows_problems.is_empty() {
        problems.push(format!(
            "file {} holds the recipe's rows, but its bytes differ from the ones gen writes (row groups, pages or encodings)",
            file.path
        ));
    }
    problems.extend(rows_problems);
    problems
}
