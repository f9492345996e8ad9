//! The recipe: everything that determines a dataset's content. The manifest stores it and
//! `gen verify` rebuilds the same run from it, so its serialized form is a compatibility
//! contract (field names, order and value spellings stay as datasets already hold them).

use anyhow::Result;
use needlework_generators::tasks::TaskParams;
use needlework_generators::{tasks, Task, Tokenizer};
use serde::{Deserialize, Serialize};

use crate::run::private::{parse_hex, Private, Secret};
use crate::usage::refused;
use needlework_generators::rng::Seed;

/// Largest accepted target length (64m tokens): beyond it one instance would not fit in the
/// memory budget of a worker.
pub const MAX_LENGTH: u64 = 64 * 1024 * 1024;
/// Most depths a `--depths N` grid may have.
pub const MAX_DEPTHS: u64 = 1000;

/// Haystack names that are not paths.
pub const BUILTIN_HAYSTACKS: &[&str] = &["generated", "noise", "needles", "none"];

/// Most instances per (length, depth) cell.
pub const MAX_SAMPLES: u64 = 10_000_000;

/// The longest split name.
pub const MAX_SPLIT: usize = 64;

/// Parquet compressions `--compression` takes.
pub const COMPRESSIONS: &[&str] = &["zstd", "snappy", "none"];

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
    /// The model's chat template (a path), when lengths count what a chat model reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_template: Option<String>,
    /// Content hash of the chat template and its special tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_template_hash: Option<String>,
    /// The system message given to the chat template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The split rows are written to (parts may name their own).
    pub split: String,
    /// Parquet compression.
    pub compression: String,
    /// Rows per Parquet file, when fixed by the user.
    pub rows_per_file: Option<u64>,
    /// The dataset's canary GUID.
    pub canary: String,
    /// A private split's commitment and salt (and its seed, once revealed); absent for a
    /// public split, whose `seed` regenerates it. In a private recipe `seed` is 0 and unused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private: Option<Private>,
    /// Datasets this split shares no instance with (`--disjoint-from`), each with the hash
    /// of the identities it excludes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disjoint_from: Vec<Excluded>,
    /// Control rows added after each instance's row (`no-context`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controls: Option<String>,
}

/// What the run and check layers ask of the command line without knowing its flags: the one
/// command that makes a recipe (manifests record it; `verify` checks every recorded recipe is
/// one a command makes), and the suite a recorded `gen suite` command names. The command-line
/// layer implements it and hands it down.
pub trait Commands: Sync {
    /// The canonical command that makes `recipe` (with `--jsonl` when the dataset has JSON
    /// Lines mirrors); why not, when no command makes it.
    fn command(&self, recipe: &Recipe, jsonl: bool) -> std::result::Result<Vec<String>, String>;
    /// The suite source (`ruler`, a file) a recorded command runs; `None` when it is not a
    /// `gen suite` command.
    fn suite_source(&self, command: &[String]) -> Option<String>;
}

/// One dataset a split is kept disjoint from, as the recipe records it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Excluded {
    /// Its directory, recorded like any input path.
    pub path: String,
    /// xxh3-128 over the sorted identity keys of its instances, hex.
    pub identity: String,
}

/// The control kinds `--controls` takes.
pub const CONTROLS: &[&str] = &["no-context"];

impl Recipe {
    /// The dataset config name, e.g. `niah_single`.
    pub fn config_name(&self, task: &dyn Task) -> String {
        format!("{}_{}", task.name(), task.variant())
    }

    /// The one check of everything a recipe holds that its parts do not check themselves
    /// (lengths, depths, samples, reserve, split, compression, rows per file), with one message
    /// each, worded as the flag that sets it. The command line builds its recipe and checks it
    /// here; `verify` checks recipes read back from a manifest (which anyone can edit) here too,
    /// so a manifest asking for a 2^64-token instance is refused, not attempted.
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.lengths.is_empty()
            || self.lengths.len() as u64 > MAX_DEPTHS
            || self.lengths.iter().any(|&l| l > MAX_LENGTH)
        {
            return Err(format!(
                "invalid --len {}: expected 1 to {MAX_DEPTHS} lengths of at most {MAX_LENGTH} tokens",
                self.lengths
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ));
        }
        if let Some(d) = &self.depths {
            if d.is_empty()
                || d.len() as u64 > MAX_DEPTHS
                || d.iter().any(|x| !(0.0..=100.0).contains(x))
            {
                return Err(format!(
                    "invalid --depths: expected 1 to {MAX_DEPTHS} percents between 0 and 100"
                ));
            }
        }
        if self.samples == 0 || self.samples > MAX_SAMPLES {
            return Err(format!(
                "invalid --samples {}: expected 1 to {MAX_SAMPLES}",
                self.samples
            ));
        }
        if self.reserve > MAX_LENGTH {
            return Err(format!(
                "invalid --reserve {}: expected at most {MAX_LENGTH}",
                self.reserve
            ));
        }
        if self.split.chars().count() > MAX_SPLIT {
            return Err(format!(
                "invalid --split of {} characters: split names are at most {MAX_SPLIT}",
                self.split.chars().count()
            ));
        }
        if !valid_split(&self.split) {
            return Err(format!(
                "invalid --split '{}': split names are letters, digits and underscores, optionally dot-separated (like test or test.v2)",
                self.split
            ));
        }
        if !COMPRESSIONS.contains(&self.compression.as_str()) {
            return Err(format!(
                "invalid --compression '{}': expected zstd, snappy or none",
                self.compression
            ));
        }
        if let Some(c) = self.controls.as_deref().filter(|c| !CONTROLS.contains(c)) {
            return Err(format!("invalid --controls '{c}': expected no-context"));
        }
        if self.private.is_some() && self.seed != 0 {
            return Err(format!(
                "invalid --seed {} with --private: a private split has no public seed",
                self.seed
            ));
        }
        if self.rows_per_file == Some(0) {
            return Err("invalid --rows-per-file 0: expected a positive number".into());
        }
        Ok(())
    }

    /// A private record read back from a manifest: its commitment, salt and any revealed seed
    /// are 64 lower-case hex digits each (a command line's recipe fills them in later).
    pub fn check_private(&self) -> std::result::Result<(), String> {
        if let Some(p) = &self.private {
            let hex64 = |s: &str| {
                s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            };
            if !hex64(&p.commitment)
                || !hex64(&p.salt)
                || p.seed.as_deref().is_some_and(|s| !hex64(s))
            {
                return Err("invalid private seed record: the commitment, salt and seed are 64 lower-case hex digits".into());
            }
        }
        Ok(())
    }

    /// Number of instances one part of the recipe produces.
    pub fn instance_count(&self) -> u64 {
        self.lengths.len() as u64
            * self.depths.as_ref().map_or(1, |d| d.len() as u64)
            * self.samples
    }

    /// Rows per instance: its own, and its control row with `--controls`.
    pub fn rows_per_instance(&self) -> u64 {
        1 + u64::from(self.controls.is_some())
    }

    /// Number of rows one part of the recipe produces (control rows included).
    pub fn row_count(&self) -> u64 {
        self.instance_count() * self.rows_per_instance()
    }

    /// The seed the run derives its streams from: the public `seed`, a private split's
    /// revealed seed, or the secret given (checked against the commitment by the caller).
    /// `None` for a private split whose seed is neither revealed nor given.
    pub fn run_seed(&self, secret: Option<&Secret>) -> Option<Seed> {
        match (&self.private, secret) {
            (None, _) => Some(Seed::public(self.seed)),
            (Some(_), Some(s)) => Some(s.run_seed()),
            (Some(p), None) => p.seed.as_deref().and_then(parse_hex).map(Seed::private),
        }
    }

    /// Facts besides the fixed fields that determine every row, for its provenance: the
    /// private commitment and the excluded datasets.
    pub fn provenance_extra(&self, exclusion_hash: Option<&str>) -> Vec<(&'static str, String)> {
        let mut extra = Vec::new();
        if let Some(p) = &self.private {
            extra.push(("private", p.commitment.clone()));
        }
        if let Some(h) = exclusion_hash.filter(|_| !self.disjoint_from.is_empty()) {
            extra.push(("disjoint_from", h.to_string()));
        }
        extra
    }
}

/// The (split, task) parts a recipe generates, in order: one per config, and posgen's train
/// and test parts under `--split both`.
pub fn build_parts(options: &TaskParams, split: &str) -> Result<Vec<(String, Box<dyn Task>)>> {
    Ok(options
        .parts()
        .map_err(refused)?
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
    if tasks::builtin_template(r.options.name(), &r.template).is_none() {
        r.template.clear();
    }
    // A chat template is always a file: its hash stands for it.
    if let Some(path) = r.chat_template.as_mut() {
        path.clear();
    }
    // Revealing a private seed changes no row: the commitment stands for the seed.
    if let Some(p) = r.private.as_mut() {
        p.seed = None;
    }
    // Excluded datasets are named by what they exclude, wherever they were found.
    for e in &mut r.disjoint_from {
        e.path.clear();
    }
    let json = serde_json::to_string(&r).unwrap_or_default();
    let h = xxhash_rust::xxh3::xxh3_128(json.as_bytes());
    needlework_generators::hash::uuid_v4((h >> 64) as u64, h as u64)
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
    fn split_names_follow_the_hugging_face_rule() {
        for ok in ["test", "train", "test.v2", "a_b"] {
            assert!(valid_split(ok), "{ok}");
        }
        for bad in ["", "te st", "a..b", ".a", "a-b", "a/b"] {
            assert!(!valid_split(bad), "{bad}");
        }
    }
}
