//! `gen verify`: regenerate every row from the manifest and compare content hashes.

use std::collections::BTreeSet;
use std::fs::File;
use std::path::Path;

use anyhow::{Context, Result};
use needlework_generators::hash::content_hash;
use needlework_generators::{templates, Tokenizer};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use rayon::prelude::*;
use xxhash_rust::xxh3::Xxh3;

use crate::cli::InputOverrides;
use crate::generate::{batch_size, cell_at, make_row};
use crate::manifest::{card, FileEntry, Manifest, NOT_DATA};
use crate::paths;
use crate::prepare::prepare_run;
use crate::progress::Progress;
use crate::recipe::{build_parts, BUILTIN_HAYSTACKS};
use crate::schema::from_batch;
use crate::usage::usage;
use crate::writer::hash_file;

/// Where a recorded input is now: a built-in name as it is; a path from `--<what>` if given,
/// else found from the working directory or the dataset upwards ([`paths::locate`]).
fn resolve_input(
    what: &str,
    recorded: &str,
    builtin: bool,
    given: Option<&String>,
    dir: &Path,
) -> Result<String> {
    if builtin {
        return Ok(recorded.to_string());
    }
    if let Some(path) = given {
        // `--haystack moved.jsonl` for a recorded `corpus.jsonl:body` keeps the field.
        return Ok(
            match (paths::split_field(path), paths::split_field(recorded)) {
                ((_, None), (_, Some(field))) => format!("{path}:{field}"),
                _ => path.clone(),
            },
        );
    }
    paths::locate(recorded, dir).ok_or_else(|| {
        usage(format!(
            "the {what} '{recorded}' this dataset was made with is not found (looked in the working directory and from {} upwards): pass --{what} PATH to say where it is now",
            dir.display()
        ))
    })
}

/// Check a dataset; print every problem; return whether it is intact.
pub fn verify(
    dir: &Path,
    threads: Option<usize>,
    quiet: bool,
    inputs: &InputOverrides,
) -> Result<bool> {
    let m = Manifest::read(dir)?;
    let mut problems: Vec<String> = Vec::new();
    let ours = needlework_generators::FORMAT_VERSION;
    if m.generator.format_version != ours {
        // Not a mismatch of this format's rows: another format, named, exit 2.
        return Err(usage(format!(
            "{} was made with needlework format {}, this gen makes format {ours}: use needlework {}",
            dir.display(),
            m.generator.format_version,
            m.generator.version
        )));
    }
    let r = &m.recipe;
    r.check().map_err(|e| {
        usage(format!(
            "{} holds a recipe gen does not make: {e}",
            dir.join("manifest.json").display()
        ))
    })?;
    let parts = build_parts(&r.options, &r.split)?;
    let task = &parts[0].1;
    let tokenizer = resolve_input(
        "tokenizer",
        &r.tokenizer,
        Tokenizer::builtin(&r.tokenizer).is_some(),
        inputs.tokenizer.as_ref(),
        dir,
    )?;
    let haystack = resolve_input(
        "haystack",
        &r.haystack,
        BUILTIN_HAYSTACKS.contains(&r.haystack.as_str()),
        inputs.haystack.as_ref(),
        dir,
    )?;
    let template = resolve_input(
        "template",
        &r.template,
        templates::builtin(task.name(), &r.template).is_some(),
        inputs.template.as_ref(),
        dir,
    )?;
    let run = prepare_run(
        task.as_ref(),
        &tokenizer,
        &haystack,
        &template,
        r.seed,
        Some(r.reserve),
    )
    .context("cannot rebuild the run the manifest describes")?;
    for (what, recorded, now) in [
        ("tokenizer", &r.tokenizer_id, run.tokenizer.id()),
        ("haystack", &r.haystack_id, run.haystack_id()),
        (
            "template",
            &r.template_hash,
            run.template.content_hash.clone(),
        ),
    ] {
        anyhow::ensure!(
            *recorded == now,
            "the {what} '{}' is not the one the dataset was made with (recorded {recorded}, found {now})",
            match what {
                "tokenizer" => &r.tokenizer,
                "haystack" => &r.haystack,
                _ => &r.template,
            }
        );
    }
    let mut configs: Vec<String> = Vec::new();
    for (_, t) in &parts {
        let c = r.config_name(t.as_ref());
        if !configs.contains(&c) {
            configs.push(c);
        }
    }
    if configs != m.configs {
        problems.push(format!(
            "manifest configs '{}' do not match its recipe ('{}')",
            m.configs.join(", "),
            configs.join(", ")
        ));
    }
    let per_part = r.row_count();
    let expected_rows = per_part * parts.len() as u64;
    if m.rows != expected_rows || m.files.iter().map(|f| f.rows).sum::<u64>() != expected_rows {
        problems.push(format!(
            "manifest lists {} rows, its recipe makes {expected_rows}",
            m.rows
        ));
    }

    problems.extend(shard_names(&m));
    problems.extend(unlisted_files(dir, &m));
    problems.extend(check_card(dir, &m));
    for mirror in &m.mirrors {
        check_file(dir, mirror, &mut problems)?;
    }

    let threads = threads.unwrap_or_else(crate::prepare::default_threads);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    let batch = batch_size(r, threads);
    let progress = Progress::new(expected_rows, quiet, "verifying");
    let mut dataset = Xxh3::new();
    let mut checked = 0u64;
    // Rows are numbered within their config and split.
    let mut next_index: std::collections::BTreeMap<(&str, &str), u64> = Default::default();
    for file in &m.files {
        let Some((_, task)) = parts
            .iter()
            .find(|(s, t)| *s == file.split && r.config_name(t.as_ref()) == file.config)
        else {
            problems.push(format!(
                "file {} is in config '{}' split '{}', which the recipe does not make",
                file.path, file.config, file.split
            ));
            continue;
        };
        let index_slot = next_index
            .entry((file.config.as_str(), file.split.as_str()))
            .or_insert(0);
        let mut index = *index_slot;
        *index_slot += file.rows;
        let path = dir.join(&file.path);
        if !check_file(dir, file, &mut problems)? {
            continue;
        }
        let start = index;
        let read = (|| -> Result<u64> {
            let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path)?)?
                .with_batch_size(batch)
                .build()?;
            let mut in_file = 0u64;
            for b in reader {
                let stored = from_batch(&b?)?;
                let base = index;
                let fresh: Vec<Result<_>> = pool.install(|| {
                    (0..stored.len() as u64)
                        .into_par_iter()
                        .map(|k| {
                            let i = base + k;
                            if i >= per_part {
                                anyhow::bail!("more rows than the recipe makes");
                            }
                            make_row(task.as_ref(), &run, r, &cell_at(r, i))
                        })
                        .collect()
                });
                for (s, f) in stored.iter().zip(fresh) {
                    let f = f?;
                    dataset.update(f.content_hash.as_bytes());
                    let recomputed = content_hash(&s.row.instance);
                    if s.row.id != f.id
                        || recomputed != f.content_hash
                        || s.row.content_hash != f.content_hash
                        || s.row.provenance_hash != f.provenance_hash
                        || s.canary != r.canary
                    {
                        let what = if s.row.id != f.id {
                            format!("expected row {} here", f.id)
                        } else if recomputed != f.content_hash {
                            "content differs from what its provenance regenerates".to_string()
                        } else if s.canary != r.canary {
                            "canary differs".to_string()
                        } else {
                            "stored hash differs".to_string()
                        };
                        problems.push(format!(
                            "row {} ({} row {}): {what}",
                            s.row.id,
                            file.path,
                            index - start
                        ));
                    }
                    index += 1;
                    in_file += 1;
                    checked += 1;
                    progress.advance(s.row.instance.length);
                }
            }
            Ok(in_file)
        })();
        match read {
            Ok(n) if n == file.rows => {}
            Ok(n) => problems.push(format!(
                "file {} has {n} rows, the manifest says {}",
                file.path, file.rows
            )),
            Err(e) => problems.push(format!("cannot read file {}: {e:#}", file.path)),
        }
    }
    progress.finish();
    let hash = format!("{:032x}", dataset.digest128());
    if problems.is_empty() && hash != m.dataset_hash {
        problems.push(format!(
            "dataset hash {hash} differs from the manifest's {}",
            m.dataset_hash
        ));
    }
    if problems.is_empty() {
        println!(
            "ok: {checked} rows of {} regenerate identically (dataset hash {hash})",
            m.configs.join(", ")
        );
        Ok(true)
    } else {
        for p in &problems {
            println!("mismatch: {p}");
        }
        println!(
            "FAILED: {} problem(s) in {} ({checked} rows checked)",
            problems.len(),
            dir.display()
        );
        Ok(false)
    }
}

/// Files a loader could read that the manifest does not list: anything but the manifest, the
/// card, listed files and mirrors (hidden files included), and, in the folders tools write
/// later ([`NOT_DATA`]), any data file a glob would still pick up. An extra `other/x.parquet`
/// would be read by `*/*.parquet`.
fn unlisted_files(dir: &Path, m: &Manifest) -> Vec<String> {
    /// Files a glob loader reads wherever they are, tool folders included.
    fn is_data(name: &str) -> bool {
        [".parquet", ".jsonl", ".arrow", ".csv"]
            .iter()
            .any(|ext| name.to_ascii_lowercase().ends_with(ext))
    }
    fn walk(dir: &Path, rel: &str, tool: bool, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let tool = tool || (rel.is_empty() && NOT_DATA.contains(&name.as_str()));
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                walk(&e.path(), &path, tool, out);
            } else if !tool || is_data(&name) {
                out.push(path);
            }
        }
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
fn check_card(dir: &Path, m: &Manifest) -> Vec<String> {
    fn front_matter(text: &str) -> Option<&str> {
        let rest = text.strip_prefix("---\n")?;
        let end = rest.find("\n---\n")?;
        Some(&rest[..end])
    }
    let expected = card(m);
    let text = crate::paths::read_input(&dir.join("README.md"), 64 << 20, "dataset card")
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

/// A listed file's presence, size and hash against the manifest; false when it is missing.
fn check_file(dir: &Path, entry: &FileEntry, problems: &mut Vec<String>) -> Result<bool> {
    let path = dir.join(&entry.path);
    if !path.exists() {
        problems.push(format!("missing file {}", entry.path));
        return Ok(false);
    }
    if !path.metadata().is_ok_and(|m| m.is_file()) {
        problems.push(format!("file {} is not a regular file", entry.path));
        return Ok(false);
    }
    let (bytes, xxh3) = hash_file(&path)?;
    if bytes != entry.bytes || xxh3 != entry.xxh3 {
        problems.push(format!(
            "file {} changed: {bytes} bytes, xxh3 {xxh3} (manifest: {} bytes, {})",
            entry.path, entry.bytes, entry.xxh3
        ));
    }
    Ok(true)
}

/// Shards must be listed in order under the names their position gives them
/// (`config/split-0000k-of-0000n.parquet`): loaders read them in name order, and rows are in
/// (length, depth, sample) order only if the names follow the manifest.
fn shard_names(m: &Manifest) -> Vec<String> {
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
