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
use needlework_generators::rng::hex;
use needlework_generators::{canonical_json, Task};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use xxhash_rust::xxh3::Xxh3;

use crate::dataset_files::{check_card, check_file, shard_names, unlisted_files};
use crate::generate::{cell_at, manifest_of, single_head, Written};
use crate::manifest::{card, row_json, Manifest};
use crate::private::{matches, parse_hex, Secret};
use crate::schema::{from_batch, schema};
use crate::usage::usage;

/// Check a private split whose seed is not at hand: the problems found, and the manifest its
/// recipe and files make (for `verify` to compare with the one found).
pub fn check_sealed(
    dir: &Path,
    m: &Manifest,
    parts: &[(String, Box<dyn Task>)],
) -> Result<(Vec<String>, Manifest)> {
    let r = &m.recipe;
    let mut problems = shard_names(m);
    problems.extend(unlisted_files(dir, m));
    problems.extend(check_card(dir, m));
    let mut dataset_hash = Xxh3::new();
    let mut rows = 0u64;
    let per = r.rows_per_instance();
    // Provenance is recomputed where the recipe alone fixes it: a redrawn row of a disjoint
    // split names its draw, which only the seed tells, so there the id is checked against it.
    let recompute = r.disjoint_from.is_empty();
    let mut next_in_part: std::collections::BTreeMap<(String, String), u64> = Default::default();
    for (k, file) in m.files.iter().enumerate() {
        let listed_ok = check_file(dir, file, &mut problems)?;
        let Some((_, task)) = parts
            .iter()
            .find(|(s, t)| *s == file.split && r.config_name(t.as_ref()) == file.config)
        else {
            problems.push(format!(
                "file {} is of no config its recipe makes",
                file.path
            ));
            continue;
        };
        if !listed_ok {
            continue;
        }
        let start = next_in_part
            .entry((file.config.clone(), file.split.clone()))
            .or_insert(0);
        let params = canonical_json(&task.params());
        let reader_id = r.chat_template_hash.as_ref().map_or_else(String::new, |h| {
            format!(
                "chat:{h}:system:{}",
                r.system.as_deref().map_or_else(
                    || "none".to_string(),
                    |s| format!("{:032x}", xxhash_rust::xxh3::xxh3_128(s.as_bytes()))
                )
            )
        });
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
                let mut extra = r.provenance_extra(None);
                if !r.disjoint_from.is_empty() {
                    extra.clear();
                }
                if i % per == 1 {
                    extra.push(("control", r.controls.clone().unwrap_or_default()));
                }
                let provenance = Provenance {
                    task: task.name(),
                    variant: &task.variant(),
                    params: &params,
                    seed: r.seed,
                    cell: &cell,
                    template_hash: &r.template_hash,
                    haystack_id: &r.haystack_id,
                    tokenizer_id: &r.tokenizer_id,
                    reserve: r.reserve,
                    reader_id: &reader_id,
                    extra: &extra,
                }
                .hash();
                let what = if content_hash(&row.instance) != row.content_hash {
                    "its content does not have its content hash"
                } else if stored.canary != r.canary {
                    "its canary differs from the manifest's"
                } else if row.provenance_hash.get(..16) != Some(row.id.as_str()) {
                    "its id is not its provenance hash's"
                } else if recompute && provenance != row.provenance_hash {
                    "its provenance hash is not the one its recipe and place give"
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
    for (_, t) in parts {
        let c = r.config_name(t.as_ref());
        if !configs.contains(&c) {
            configs.push(c);
        }
    }
    let head =
        single_head(r.clone(), !m.mirrors.is_empty()).map_err(|e| usage(format!("{e:#}")))?;
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
    let claimed = r.row_count() * parts.len() as u64;
    if rows != claimed {
        problems.push(format!(
            "the files hold {rows} rows, its recipe makes {claimed}"
        ));
    }
    Ok((problems, expected))
}

/// What `verify` prints of an intact private split checked without its seed.
pub fn print_sealed_ok(dir: &Path, expected: &Manifest) {
    println!(
        "ok without the seed: {} rows of {}: every file has its hash, every row its content hash, id and provenance, the schema and the manifest are gen's (dataset hash {})",
        expected.rows,
        expected.configs.join(", "),
        expected.dataset_hash
    );
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
    r: &crate::recipe::Recipe,
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
    if let Some(p) = m.recipe.private.as_mut() {
        p.seed = Some(seed);
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
