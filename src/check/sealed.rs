//! A private split before its seed is revealed: what `verify` checks without the seed, and
//! `gen reveal`, which publishes the seed into the manifest.
//!
//! Without the seed no row can be regenerated, but everything else can be checked: every
//! listed file against its size and hash, every shard's schema and metadata, every row's
//! content hash, id and provenance (the provenance names the commitment, not the seed), the
//! mirrors against the rows, the dataset hash, the manifest against its recipe, and the card.

use std::path::Path;

use anyhow::{Context, Result};
use needlework_generators::hash::{content_hash, Provenance};
use needlework_generators::identity::is_control;
use needlework_generators::rng::hex;
use needlework_generators::{canonical_json, Cell, Task};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use xxhash_rust::xxh3::Xxh3;

use crate::dataset::files::{check_card, check_file, shard_names, unlisted_files};
use crate::dataset::head::Head;
use crate::dataset::manifest::{card, row_json, Manifest};
use crate::dataset::schema::{from_batch, schema};
use crate::run::disjoint::{combined, Exclusion, MAX_DRAWS};
use crate::run::generate::{cell_at, manifest_of, Written};
use crate::run::private::{matches, parse_hex, Secret};
use crate::run::recipe::Recipe;
use crate::usage::usage;

/// The recipes of a dataset as `verify` reads them: each entry's config name (a suite's),
/// recipe and (split, task) parts.
pub type Parted = [(Option<String>, Recipe, Vec<(String, Box<dyn Task>)>)];

/// What `verify` without the seed found of a disjoint split's excluded datasets: their
/// identities (found again, as with the seed), or why they could not be.
pub enum Excluded {
    /// Not a disjoint split.
    None,
    /// The excluded datasets' identities: every row is checked against them.
    Found(Exclusion),
    /// They were not found: disjointness is not checked, and the report says why.
    Missing(String),
}

/// The provenance hash of a row of `task` at `cell`, with `extra` facts.
fn provenance_of(
    r: &Recipe,
    task: &dyn Task,
    params: &str,
    cell: &Cell,
    reader_id: &str,
    extra: &[(&str, String)],
) -> String {
    Provenance {
        task: task.name(),
        variant: &task.variant(),
        params,
        seed: r.seed,
        cell,
        template_hash: &r.template_hash,
        haystack_id: &r.haystack_id,
        tokenizer_id: &r.tokenizer_id,
        reserve: r.reserve,
        reader_id,
        extra,
    }
    .hash()
}

/// Whether `provenance` is the one a row at `cell` has: its recipe's facts, then for a
/// disjoint split any number of redraws below [`MAX_DRAWS`] (the count only the seed tells),
/// then the control mark of a control row.
fn provenance_matches(
    r: &Recipe,
    (task, params, reader_id): (&dyn Task, &str, &str),
    cell: &Cell,
    control: bool,
    provenance: &str,
) -> bool {
    let base = r.provenance_extra(Some(&combined(&r.disjoint_from)));
    let draws = if r.disjoint_from.is_empty() {
        1
    } else {
        MAX_DRAWS
    };
    (0..draws).any(|draw| {
        let mut extra = base.clone();
        if draw > 0 {
            extra.push(("redraw", draw.to_string()));
        }
        if control {
            extra.push(("control", r.controls.clone().unwrap_or_default()));
        }
        provenance_of(r, task, params, cell, reader_id, &extra) == provenance
    })
}

/// The reader id of a recipe's rows (chat template and system message), as [`Run`] gives it.
///
/// [`Run`]: needlework_generators::Run
fn reader_id(r: &Recipe) -> String {
    r.chat_template_hash.as_ref().map_or_else(String::new, |h| {
        format!(
            "chat:{h}:system:{}",
            r.system.as_deref().map_or_else(
                || "none".to_string(),
                |s| format!("{:032x}", xxhash_rust::xxh3::xxh3_128(s.as_bytes()))
            )
        )
    })
}

/// Check a private split whose seed is not at hand (every entry of a suite): the problems
/// found, and the manifest its recipes and files make (for `verify` to compare with the one
/// found), whose `head` is given.
pub fn check_sealed(
    dir: &Path,
    m: &Manifest,
    parted: &Parted,
    head: Head,
    excluded: &Excluded,
) -> Result<(Vec<String>, Manifest)> {
    let mut problems = shard_names(m);
    problems.extend(unlisted_files(dir, m));
    problems.extend(check_card(dir, m));
    let mut dataset_hash = Xxh3::new();
    let mut rows = 0u64;
    let config_of = |config: &Option<String>, r: &Recipe, t: &dyn Task| {
        config.clone().unwrap_or_else(|| r.config_name(t))
    };
    let mut next_in_part: std::collections::BTreeMap<(String, String), u64> = Default::default();
    for (k, file) in m.files.iter().enumerate() {
        let listed_ok = check_file(dir, file, &mut problems)?;
        let Some((r, task)) = parted.iter().find_map(|(config, r, parts)| {
            parts
                .iter()
                .find(|(s, t)| *s == file.split && config_of(config, r, t.as_ref()) == file.config)
                .map(|(_, t)| (r, t.as_ref()))
        }) else {
            problems.push(format!(
                "file {} is of no config its recipe makes",
                file.path
            ));
            continue;
        };
        if !listed_ok {
            continue;
        }
        let per = r.rows_per_instance();
        let start = next_in_part
            .entry((file.config.clone(), file.split.clone()))
            .or_insert(0);
        let params = canonical_json(&task.params());
        let reader = reader_id(r);
        let path = dir.join(&file.path);
        let builder = std::fs::File::open(&path)
            .map_err(anyhow::Error::from)
            .and_then(|f| Ok(ParquetRecordBatchReaderBuilder::try_new(f)?));
        let builder = match builder {
            Ok(b) => b,
            Err(e) => {
                problems.push(format!("cannot read file {}: {e:#}", file.path));
                continue;
            }
        };
        if builder.schema().fields() != schema().fields() {
            problems.push(format!("file {} does not have gen's schema", file.path));
            continue;
        }
        let mut mirror = Xxh3::new();
        let mut mirror_bytes = 0u64;
        for batch in builder.build()? {
            let batch = batch.with_context(|| format!("reading {}", file.path))?;
            for stored in from_batch(&batch).with_context(|| format!("reading {}", file.path))? {
                let i = *start;
                *start += 1;
                rows += 1;
                let row = &stored.row;
                dataset_hash.update(row.content_hash.as_bytes());
                let line = serde_json::to_vec(&row_json(row, &stored.canary))?;
                mirror.update(&line);
                mirror.update(b"\n");
                mirror_bytes += line.len() as u64 + 1;
                let cell = cell_at(r, i / per);
                let control = i % per == 1;
                let what = if content_hash(&row.instance) != row.content_hash {
                    "its content does not have its content hash"
                } else if stored.canary != r.canary {
                    "its canary differs from the manifest's"
                } else if row.provenance_hash.get(..16) != Some(row.id.as_str()) {
                    "its id is not its provenance hash's"
                } else if !provenance_matches(
                    r,
                    (task, &params, &reader),
                    &cell,
                    control,
                    &row.provenance_hash,
                ) {
                    "its provenance hash is not one its recipe and place give"
                } else if control != is_control(&row.instance.params)
                    || row.instance.sample_index != cell.sample
                {
                    "it is not the row its place holds (control or sample index)"
                } else if matches!(excluded, Excluded::Found(e) if !control && e.shares(task, &row.instance))
                {
                    "it shares an identity with a dataset this split is kept disjoint from"
                } else {
                    continue;
                };
                problems.push(format!("row {} ({} row {}): {what}", row.id, file.path, i));
            }
        }
        if let Some(entry) = m.mirrors.get(k) {
            let h = format!("{:032x}", mirror.digest128());
            if h != entry.xxh3 || mirror_bytes != entry.bytes {
                problems.push(format!(
                    "mirror {} does not hold the rows of {}",
                    entry.path, file.path
                ));
            }
        }
    }
    for mirror in &m.mirrors {
        check_file(dir, mirror, &mut problems)?;
    }
    let mut configs: Vec<String> = Vec::new();
    for (config, r, parts) in parted {
        for (_, t) in parts {
            let c = config_of(config, r, t.as_ref());
            if !configs.contains(&c) {
                configs.push(c);
            }
        }
    }
    let expected = manifest_of(
        head,
        Written {
            configs,
            files: m.files.clone(),
            mirrors: m.mirrors.clone(),
            rows,
            dataset_hash: format!("{:032x}", dataset_hash.digest128()),
        },
        m.generator.clone(),
    );
    let claimed: u64 = parted
        .iter()
        .map(|(_, r, parts)| r.row_count() * parts.len() as u64)
        .sum();
    if rows != claimed {
        problems.push(format!(
            "the files hold {rows} rows, its recipe makes {claimed}"
        ));
    }
    Ok((problems, expected))
}

/// What `verify` prints of an intact private split checked without its seed.
pub fn print_sealed_ok(dir: &Path, expected: &Manifest, excluded: &Excluded) {
    println!(
        "ok without the seed: {} rows of {}: every file has its hash, every row its content hash, id and provenance, the schema and the manifest are gen's (dataset hash {})",
        expected.rows,
        expected.configs.join(", "),
        expected.dataset_hash
    );
    match excluded {
        Excluded::None => {}
        Excluded::Found(_) => println!(
            "no row shares an identity with the datasets it is kept disjoint from ({})",
            expected
                .recipe
                .disjoint_from
                .iter()
                .map(|e| e.path.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Excluded::Missing(why) => println!("disjointness not checked: {why}"),
    }
    println!(
        "this is a private split (commitment {}): regenerating its rows needs the seed: gen verify {} --seed-file PATH",
        expected.recipe.private.as_ref().map_or("", |p| p.commitment.as_str()),
        dir.display()
    );
}

/// The seed `verify` regenerates a private split with: the seed file's, checked against the
/// commitment, or none (a public split, or a private one verified without its seed). A
/// revealed seed must match the commitment too. `Ok(Err(problem))` names a mismatch (exit 1).
pub fn seed_given(
    dir: &Path,
    r: &crate::run::recipe::Recipe,
    seed_file: Option<&Path>,
) -> Result<std::result::Result<Option<Secret>, String>> {
    let secret = match (seed_file, &r.private) {
        (Some(_), None) => {
            return Err(usage(format!(
                "--seed-file does not apply: {} is a public split (its seed is in its manifest)",
                dir.display()
            )))
        }
        (Some(path), Some(p)) => {
            let s = Secret::read(path)?;
            if !matches(p, &s) {
                return Ok(Err(format!(
                        "the seed in {} does not match the dataset's commitment {} (salt {}): it is not the seed this split was made with",
                        path.display(),
                        p.commitment,
                        p.salt
                )));
            }
            Some(s)
        }
        (None, _) => None,
    };
    if let Some(p) = r.private.as_ref().filter(|p| p.seed.is_some()) {
        let revealed = p.seed.as_deref().and_then(parse_hex).map(|seed| Secret {
            seed,
            salt: [0; 32],
        });
        if !revealed.as_ref().is_some_and(|s| matches(p, s)) {
            return Ok(Err(format!(
                "manifest.json: recipe.private.seed does not match the dataset's commitment {}",
                p.commitment
            )));
        }
    }
    Ok(Ok(secret))
}

/// `gen reveal`: publish a private split's seed into its manifest, once it matches the
/// commitment. Only `recipe.private.seed` is added; every row, file and hash stays, so the
/// split verifies as before, now regenerable by anyone. The card is rewritten when it is
/// still the one gen wrote. False (exit 1) when the seed is not the committed one.
pub fn reveal(dir: &Path, seed_file: &Path) -> Result<bool> {
    let mut m = Manifest::read(dir)?;
    let Some(private) = m.recipe.private.clone() else {
        return Err(usage(format!(
            "{} is a public split: there is no seed to reveal",
            dir.display()
        )));
    };
    let secret = Secret::read(seed_file)?;
    if !matches(&private, &secret) {
        println!(
            "mismatch: the seed in {} does not match the dataset's commitment {}: nothing revealed",
            seed_file.display(),
            private.commitment
        );
        return Ok(false);
    }
    let seed = hex(&secret.seed);
    if private.seed.as_deref() == Some(seed.as_str()) {
        println!("{} already reveals its seed", dir.display());
        return Ok(true);
    }
    let card_path = dir.join("README.md");
    let old_card = card(&m);
    let card_untouched = std::fs::read_to_string(&card_path).is_ok_and(|c| c == old_card);
    // A suite's entries share the one seed: each records it, as the recipe does.
    let entries = m.suite.iter_mut().flat_map(|s| s.entries.iter_mut());
    for r in std::iter::once(&mut m.recipe).chain(entries.map(|e| &mut e.recipe)) {
        if let Some(p) = r.private.as_mut() {
            p.seed = Some(seed.clone());
        }
    }
    m.write(dir)?;
    if card_untouched {
        std::fs::write(&card_path, card(&m))
            .with_context(|| format!("cannot write {}", card_path.display()))?;
    }
    println!(
        "revealed the seed of {} (commitment {}): gen verify {} now regenerates every row",
        dir.display(),
        private.commitment,
        dir.display()
    );
    Ok(true)
}
