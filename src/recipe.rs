//! The recipe: everything that determines a dataset's content. The manifest stores it and
//! `gen verify` rebuilds the same run from it, so its serialized form is a compatibility
//! contract (field names, order and value spellings stay as datasets already hold them).

use anyhow::Result;
use needlework_generators::tasks::TaskParams;
use needlework_generators::{templates, Task, Tokenizer};
use serde::{Deserialize, Serialize};

use crate::options::worded;
use crate::spec::{MAX_DEPTHS, MAX_LENGTH};

/// Haystack names that are not paths.
pub const BUILTIN_HAYSTACKS: &[&str] = &["generated", "noise", "needles", "none"];

/// Most instances per (length, depth) cell.
pub const MAX_SAMPLES: u64 = 10_000_000;

/// Everything that determines a dataset's content: written to the manifest, read by verify.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Recipe {
    /// The task and its parameters (serialized with the task's name under `task`).
    pub options: TaskParams,
    /// Target lengths in tokens; `0` means the task's native size.
    pub lengths: Vec<u64>,
    /// Requested depths in percent, or None for tasks without one.
    pub depths: Option<Vec<f64>>,
    /// Instances per (length, depth) cell.
    pub samples: u64,
    /// Master seed.
    pub seed: u64,
    /// As given on the command line (a name or a path).
    pub tokenizer: String,
    /// The tokenizer's identity (name, or `hf:` and the file hash).
    pub tokenizer_id: String,
    /// Tokens kept free below each target for the answer.
    pub reserve: u64,
    /// As given (a name or a path, with `:field`).
    pub haystack: String,
    /// The haystack's identity (kind and content hash).
    pub haystack_id: String,
    /// A built-in template name or a path.
    pub template: String,
    /// Content hash of the template source.
    pub template_hash: String,
    /// The split rows are written to (parts may name their own).
    pub split: String,
    /// Parquet compression.
    pub compression: String,
    /// Rows per Parquet file, when fixed by the user.
    pub rows_per_file: Option<u64>,
    /// The dataset's canary GUID.
    pub canary: String,
}

impl Recipe {
    /// The dataset config name, e.g. `niah_single`.
    pub fn config_name(&self, task: &dyn Task) -> String {
        format!("{}_{}", task.name(), task.variant())
    }

    /// Check what the command line checks, for recipes read back from a manifest (which anyone
    /// can edit): lengths, depths, samples, split, compression. A manifest asking for a 2^64-token
    /// instance is refused here, not attempted.
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.lengths.is_empty() || self.lengths.iter().any(|&l| l > MAX_LENGTH) {
            return Err(format!(
                "lengths {:?}: expected 1 to {} lengths of at most {MAX_LENGTH} tokens",
                self.lengths, MAX_DEPTHS
            ));
        }
        if let Some(d) = &self.depths {
            if d.is_empty()
                || d.len() as u64 > MAX_DEPTHS
                || d.iter().any(|x| !(0.0..=100.0).contains(x))
            {
                return Err(format!(
                    "depths: expected 1 to {MAX_DEPTHS} percents between 0 and 100"
                ));
            }
        }
        if self.samples == 0 || self.samples > MAX_SAMPLES {
            return Err(format!(
                "samples {}: expected 1 to {MAX_SAMPLES}",
                self.samples
            ));
        }
        if self.reserve > MAX_LENGTH {
            return Err(format!(
                "reserve {}: expected at most {MAX_LENGTH}",
                self.reserve
            ));
        }
        if !valid_split(&self.split) {
            return Err(format!("split '{}' is not a valid split name", self.split));
        }
        if !matches!(self.compression.as_str(), "zstd" | "snappy" | "none") {
            return Err(format!(
                "compression '{}': expected zstd, snappy or none",
                self.compression
            ));
        }
        if self.rows_per_file == Some(0) {
            return Err("rows_per_file 0: expected a positive number".into());
        }
        Ok(())
    }

    /// Number of rows one part of the recipe produces.
    pub fn row_count(&self) -> u64 {
        self.lengths.len() as u64
            * self.depths.as_ref().map_or(1, |d| d.len() as u64)
            * self.samples
    }
}

/// The (split, task) parts a recipe generates, in order: one per config, and posgen's train
/// and test parts under `--split both`.
pub fn build_parts(options: &TaskParams, split: &str) -> Result<Vec<(String, Box<dyn Task>)>> {
    Ok(options
        .parts()
        .map_err(worded)?
        .into_iter()
        .map(|part| (part.split.unwrap_or(split).to_string(), part.task))
        .collect())
}

/// A GUID derived from the recipe: unique per dataset, yet the same on every rerun so the
/// files stay byte-identical.
///
/// Input paths say where inputs were found, not what they are (their ids and hashes do), so
/// they are left out: the same inputs reached from another directory give the same canary.
pub fn derived_canary(recipe: &Recipe) -> String {
    let mut r = recipe.clone();
    if Tokenizer::builtin(&r.tokenizer).is_none() {
        r.tokenizer.clear();
    }
    if !BUILTIN_HAYSTACKS.contains(&r.haystack.as_str()) {
        r.haystack.clear();
    }
    if templates::builtin(r.options.name(), &r.template).is_none() {
        r.template.clear();
    }
    let json = serde_json::to_string(&r).unwrap_or_default();
    let h = xxhash_rust::xxh3::xxh3_128(json.as_bytes());
    needlework_generators::hash::uuid_v4((h >> 64) as u64, h as u64)
}

/// The command line as the manifest and card record it: the recipe, not the invocation. Flags
/// that never change content (`--out`, `--threads`, `--quiet`, `--force`) are dropped and input
/// paths are written as the recipe records them, so the same recipe gives the same manifest
/// wherever, and with however many threads, it runs.
pub fn canonical_command(argv: &[String], recipe: &Recipe) -> Vec<String> {
    const DROPPED_WITH_VALUE: &[&str] = &["--out", "--threads"];
    const DROPPED: &[&str] = &["--quiet", "-q", "--force"];
    let recorded = |flag: &str| -> Option<&str> {
        match flag {
            "--haystack" => Some(&recipe.haystack),
            "--template" => Some(&recipe.template),
            "--tokenizer" => Some(&recipe.tokenizer),
            _ => None,
        }
    };
    let mut out = Vec::with_capacity(argv.len());
    let mut args = argv.iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v)),
            _ => (arg.as_str(), None),
        };
        if DROPPED.contains(&flag) {
            continue;
        }
        if DROPPED_WITH_VALUE.contains(&flag) {
            if inline.is_none() {
                args.next();
            }
            continue;
        }
        if let Some(value) = recorded(flag) {
            if inline.is_none() {
                args.next();
            }
            out.push(flag.to_string());
            out.push(value.to_string());
            continue;
        }
        out.push(arg.clone());
    }
    out
}

/// Hugging Face's split-name rule: `^\w+(\.\w+)*$`.
pub fn valid_split(s: &str) -> bool {
    !s.is_empty()
        && s.split('.')
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_record_the_recipe_not_the_invocation() {
        let recipe: Recipe = serde_json::from_str(
            &std::fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/datasets-format1/niah/manifest.json"
            ))
            .unwrap(),
        )
        .map(|m: serde_json::Value| serde_json::from_value(m["recipe"].clone()).unwrap())
        .unwrap();
        let mut recipe = recipe;
        recipe.haystack = "data/corpus.jsonl:body".into();
        let argv: Vec<String> = [
            "gen",
            "niah",
            "--len",
            "4k",
            "--out",
            "/home/me/x",
            "--threads=2",
            "-q",
            "--haystack",
            "/home/me/project/data/corpus.jsonl:body",
            "--force",
            "--seed",
            "7",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            canonical_command(&argv, &recipe).join(" "),
            "gen niah --len 4k --haystack data/corpus.jsonl:body --seed 7"
        );
    }

    #[test]
    fn split_names_follow_the_hugging_face_rule() {
        for ok in ["test", "train", "test.v2", "a_b"] {
            assert!(valid_split(ok), "{ok}");
        }
        for bad in ["", "te st", "a..b", ".a", "a-b", "a/b"] {
            assert!(!valid_split(bad), "{bad}");
        }
    }
}
