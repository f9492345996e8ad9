//! The manifest (`manifest.json`) and the dataset card (`README.md`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::dataset::head::Suite;
use crate::dataset::schema::Row;
use crate::run::recipe::Recipe;

/// Our wording of the canary convention.
pub const CANARY_NOTICE: &str = "This is evaluation data made by needlework. It must never be used to train a model or be included in a training corpus. Filter out any document containing this canary GUID.";

pub use crate::dataset::head::NOT_DATA;

/// Largest manifest read (one of a million files is a few hundred MiB).
pub const MAX_MANIFEST_BYTES: u64 = 512 << 20;

/// Identifies manifests written by this tool.
pub const FORMAT: &str = "needlework-dataset";

/// Versions of the crates that shape output: pinned exactly in Cargo.toml, and for the codecs
/// parquet pulls in (the zstd C library and snappy write the compressed bytes), by Cargo.lock
/// (both checked by a test). `verify` remakes file bytes only with the same versions.
pub const OUTPUT_CRATES: &[(&str, &str)] = &[
    ("arrow", "60.1.0"),
    ("bpe-openai", "0.3.2"),
    ("minijinja", "2.24.0"),
    ("parquet", "60.1.0"),
    ("rand_chacha", "0.9.0"),
    ("snap", "1.1.2"),
    ("tiktoken-rs", "0.12.1"),
    ("tokenizers", "0.22.2"),
    ("zstd-sys", "2.1.3+zstd.1.5.7"),
];

/// What the manifest records about one written file. It lives here, not in `writer`, because
/// the manifest is the record and the writer only fills it in: `writer` depends on `manifest`,
/// never the other way round.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileEntry {
    /// Path relative to the dataset directory.
    pub path: String,
    /// The config the file belongs to.
    pub config: String,
    /// The split the file belongs to.
    pub split: String,
    /// Rows in the file, so `verify` can tell a short file from a changed one.
    pub rows: u64,
    /// Size in bytes, checked before hashing.
    pub bytes: u64,
    /// xxh3-128 of the file's bytes.
    pub xxh3: String,
}

/// Which build made a dataset: `verify` refuses a format it does not make, and the crate
/// versions tell why bytes may differ between builds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Generator {
    /// Always `needlework`.
    pub name: String,
    /// The `gen` version that wrote the dataset.
    pub version: String,
    /// The core crate's output format: `verify` regenerates only its own format.
    pub format_version: u32,
    /// Versions of the crates that shape output bytes ([`OUTPUT_CRATES`]).
    pub crates: BTreeMap<String, String>,
}

/// Everything needed to regenerate and check a dataset.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// Always [`FORMAT`]: tells our manifests from other JSON.
    pub format: String,
    /// Which build wrote the dataset.
    pub generator: Generator,
    /// The command as a recipe: no `--out`, `--threads`, `--quiet` or `--force`, and input
    /// paths as the recipe records them, so it is the same wherever the dataset is made.
    pub command: Vec<String>,
    /// Every choice that shaped the rows, enough to regenerate them (a suite's first entry).
    pub recipe: Recipe,
    /// For a dataset made by `gen suite`: every entry's recipe (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<Suite>,
    /// Config names (`niah_single`; `babilong_qa1`, `babilong_qa2`, ...), in generation order.
    pub configs: Vec<String>,
    /// Rows over all files.
    pub rows: u64,
    /// Every Parquet file, in dataset order.
    pub files: Vec<FileEntry>,
    /// The JSON Lines mirrors of the Parquet files (`--jsonl`), hashed and checked like them.
    #[serde(default)]
    pub mirrors: Vec<FileEntry>,
    /// Folders that tools write into the dataset later (harness exports, scores): not data,
    /// so `verify` leaves them out. Every other file must be listed above.
    #[serde(default)]
    pub not_data: Vec<String>,
    /// xxh3-128 over the ordered content hashes of every row.
    pub dataset_hash: String,
}

impl Manifest {
    /// A dataset of another format is named, never read as this one (its files may lack
    /// columns, its rows mean what that format made): `doing` (`cannot export`,
    /// `--disjoint-from`) with the format, today's format and the release that made it, as
    /// `verify` names it. Bad input: exit 2.
    pub fn check_format(&self, dir: &Path, doing: &str) -> Result<()> {
        let ours = needlework_generators::FORMAT_VERSION;
        let theirs = self.generator.format_version;
        if theirs == ours {
            return Ok(());
        }
        let release = if self.generator.version.is_empty() {
            String::new()
        } else {
            format!(": use needlework {}", self.generator.version.escape_debug())
        };
        Err(crate::usage::usage(format!(
            "{doing} {}: it was made with needlework format {theirs}, this gen reads format {ours} datasets only{release}, or remake it with this gen from its recorded command",
            dir.display()
        )))
    }

    /// A config or listed file (shard, mirror) that lives in the dataset's folder `folder`,
    /// compared without case (one folder on case-insensitive file systems): a tool that
    /// replaces that folder (`gen export`, `gen score`) would destroy data, and must refuse.
    pub fn data_in(&self, folder: &str) -> Option<String> {
        let inside = |path: &str| {
            path.split('/')
                .next()
                .is_some_and(|top| top.eq_ignore_ascii_case(folder))
        };
        self.configs
            .iter()
            .find(|c| c.eq_ignore_ascii_case(folder))
            .map(|c| format!("its config {c}"))
            .or_else(|| {
                self.files
                    .iter()
                    .chain(&self.mirrors)
                    .find(|f| inside(&f.path))
                    .map(|f| format!("its data file {}", f.path))
            })
    }

    /// This build, as a manifest records it.
    pub fn generator() -> Generator {
        Generator {
            name: "needlework".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            format_version: needlework_generators::FORMAT_VERSION,
            crates: OUTPUT_CRATES
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// Read `dir/manifest.json`; an error when it is missing or not one of ours.
    pub fn read(dir: &Path) -> Result<Manifest> {
        let path = dir.join("manifest.json");
        if !path.exists() {
            return Err(crate::usage::usage(format!(
                "{} is not a needlework dataset: it has no manifest.json",
                dir.display()
            )));
        }
        // A regular file of bounded size: a manifest linked to /dev/zero or a pipe is refused.
        let bytes = crate::run::paths::read_input(&path, MAX_MANIFEST_BYTES, "manifest")?;
        let m: Manifest = serde_json::from_slice(&bytes).map_err(|e| {
            crate::usage::usage(format!(
                "{} is not a needlework manifest: {e}",
                path.display()
            ))
        })?;
        if m.format != FORMAT {
            return Err(crate::usage::usage(format!(
                "{} is not a needlework manifest: format '{}', expected '{FORMAT}'",
                path.display(),
                m.format
            )));
        }
        Ok(m)
    }

    /// Write `dir/manifest.json`, pretty-printed so datasets diff well in review.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)? + "\n";
        let path = dir.join("manifest.json");
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
    }
}

/// One row as a JSON object with the same columns as the Parquet files.
pub fn row_json(row: &Row, canary: &str) -> serde_json::Value {
    let i = &row.instance;
    json!({
        "id": row.id,
        "task": i.task,
        "variant": i.variant,
        "input": i.input,
        "question": i.question,
        "answer_prefix": i.answer_prefix,
        "target": i.target,
        "answers": i.answers,
        "labels": i.labels,
        "metric": i.metric.as_str(),
        "max_new_tokens": i.max_new_tokens,
        "target_length": i.target_length,
        "length": i.length,
        "tokenizer": i.tokenizer,
        "depth_percent": i.depth_percent,
        "needle_offsets": i.needle_offsets,
        "needle_depths": i.needle_depths,
        "sample_index": i.sample_index,
        "params": i.params,
        "provenance_hash": row.provenance_hash,
        "content_hash": row.content_hash,
        "canary": canary,
    })
}

/// `arg` as a POSIX shell reads it back: bare when it is plain, else in single quotes, so the
/// card's command can be pasted (`--haystack 'my corpus.txt'`).
fn shell_word(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,%+@".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

/// The card's lines about a private, disjoint or controlled split (none for a plain one).
fn fresh_rows(r: &Recipe) -> String {
    let mut out = String::new();
    if let Some(p) = &r.private {
        let state = match &p.seed {
            Some(seed) => format!("revealed: seed `{seed}`"),
            None => "the seed is secret until revealed; `gen verify` checks every file and row hash without it".into(),
        };
        out.push_str(&format!(
            "| private split | commitment `{}` = SHA-256(`{}` ‖ salt ‖ seed), salt `{}`; {state} |\n",
            p.commitment,
            needlework_generators::rng::COMMITMENT_TAG,
            p.salt
        ));
    }
    for e in &r.disjoint_from {
        out.push_str(&format!(
            "| disjoint from | `{}` (identities `{}`) |\n",
            e.path, e.identity
        ));
    }
    if let Some(c) = &r.controls {
        out.push_str(&format!(
            "| controls | {c}: after each instance, its question without the context (`params.control`) |\n"
        ));
    }
    out
}

/// The Hugging Face dataset card.
pub fn card(m: &Manifest) -> String {
    let r = &m.recipe;
    let lengths: Vec<String> = r.lengths.iter().map(|l| l.to_string()).collect();
    let depths = r.depths.as_ref().map_or("none".to_string(), |d| {
        d.iter()
            .map(|x| format!("{}", (x * 100.0).round() / 100.0))
            .collect::<Vec<_>>()
            .join(", ")
    });
    let cmd = m
        .command
        .iter()
        .map(|a| shell_word(a))
        .collect::<Vec<_>>()
        .join(" ");
    let mut configs = String::new();
    for config in &m.configs {
        configs.push_str(&format!("- config_name: {config}\n  data_files:\n"));
        let mut splits: Vec<&str> = Vec::new();
        for f in m.files.iter().filter(|f| &f.config == config) {
            if !splits.contains(&f.split.as_str()) {
                splits.push(&f.split);
            }
        }
        for s in splits {
            configs.push_str(&format!(
                "  - split: {s}\n    path: {config}/{s}-*.parquet\n"
            ));
        }
    }
    let config = m.configs.join(", ");
    let first = m.configs.first().cloned().unwrap_or_default();
    let suite = m.suite.as_ref().map_or(String::new(), |s| {
        let skipped: String = s
            .skipped
            .iter()
            .map(|k| format!("- `{}` was not made: {}\n", k.config, k.why))
            .collect();
        // A suite is fresh as a whole: one private seed, one exclusion, controls everywhere.
        let fresh = r.private.is_some() || !r.disjoint_from.is_empty() || r.controls.is_some();
        format!(
            "\n## Suite\n\nMade by the suite `{}` (text hash `{}`): {} configs from {} recipes, one canary, every recipe in `manifest.json` under `suite.entries`. The table below shows the first.{}\n{}{}",
            s.source,
            s.hash,
            m.configs.len(),
            s.entries.len(),
            if fresh {
                " Its private seed (one seed, one commitment), excluded datasets and controls hold for every config."
            } else {
                ""
            },
            if skipped.is_empty() { "" } else { "\n" },
            skipped
        )
    });
    format!(
        r#"---
configs:
{configs}tags:
- needlework
- long-context
- synthetic
---

# {config}

Synthetic long-context evaluation data generated by needlework {version}.

**Canary GUID: {canary}**

{notice}
{suite}
## Recipe

| | |
|---|---|
| command | `{cmd}` |
| rows | {rows} |
| target lengths | {lengths} |
| depths (%) | {depths} |
| samples per cell | {samples} |
| tokenizer | `{tokenizer}` (`{tokenizer_id}`) |
| reserve | {reserve} tokens |
| haystack | `{haystack}` (`{haystack_id}`) |
| template | `{template}` (`{template_hash}`) |
| dataset hash | `{dataset_hash}` |
{fresh}
Every row records its measured `length` (tokens of `input`), the token offset and actual depth of
each needle, its scoring `metric`, and a `provenance_hash`/`content_hash`. Check the whole dataset
with `gen verify <this directory>`; load it with
`datasets.load_dataset("<this directory>", "{first}")`.
"#,
        version = m.generator.version,
        canary = r.canary,
        notice = CANARY_NOTICE,
        rows = m.rows,
        lengths = lengths.join(", "),
        samples = r.samples,
        tokenizer = r.tokenizer,
        tokenizer_id = r.tokenizer_id,
        reserve = r.reserve,
        haystack = r.haystack,
        haystack_id = r.haystack_id,
        template = r.template,
        template_hash = r.template_hash,
        dataset_hash = m.dataset_hash,
        fresh = fresh_rows(r),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_commands_paste_into_a_shell() {
        assert_eq!(shell_word("--len"), "--len");
        assert_eq!(shell_word("data/x.jsonl:body"), "data/x.jsonl:body");
        assert_eq!(shell_word("sp ace/c.txt"), "'sp ace/c.txt'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn output_crate_versions_match_the_lock_file() {
        let lock = include_str!("../../Cargo.lock");
        for (name, version) in OUTPUT_CRATES {
            // Arrow's crates are released together under one version; the manifest keeps the
            // name `arrow`, and gen depends on arrow-array and arrow-schema of that version.
            let crate_name = if *name == "arrow" {
                "arrow-array"
            } else {
                name
            };
            let entry = format!("name = \"{crate_name}\"\nversion = \"{version}\"");
            assert!(lock.contains(&entry), "{name} {version} not in Cargo.lock");
        }
    }
}
