//! The common options of one generating command, checked and typed: what the run layer takes
//! in place of the command line (which builds it in `cli::common`). A suite builds one per
//! entry, through the same command line, so an entry and its command are configured alike.

use std::path::PathBuf;

use crate::run::shard::Shard;

/// A generating command's common options, every value parsed; the run layer reads nothing
/// else of the command line.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Target lengths as given (sorted, in tokens), or `None` for the task's default.
    pub lengths: Option<Vec<u64>>,
    /// Requested depths in percent as given, with their spelling for messages.
    pub depths: Option<Given<Vec<f64>>>,
    /// Instances per (length, depth) cell.
    pub samples: u64,
    /// Master seed.
    pub seed: u64,
    /// A built-in tokenizer's name or a tokenizer.json path.
    pub tokenizer: String,
    /// Tokens kept free for the answer, when given.
    pub reserve: Option<u64>,
    /// A haystack name or corpus path, when given (qa: its data file).
    pub haystack: Option<String>,
    /// The flag that names the haystack, for messages (`--haystack`, or qa's `--data`).
    pub haystack_flag: &'static str,
    /// A template name or path (`default`: the task's own).
    pub template: String,
    /// The model's chat template file.
    pub chat_template: Option<String>,
    /// A system message for the chat template.
    pub system: Option<String>,
    /// The dataset directory, when given.
    pub out: Option<PathBuf>,
    /// Replace a non-empty `out`.
    pub force: bool,
    /// Worker threads.
    pub threads: usize,
    /// Parquet compression.
    pub compression: String,
    /// Rows per Parquet file, when fixed.
    pub rows_per_file: Option<u64>,
    /// Split name.
    pub split: String,
    /// Canary GUID, when given.
    pub canary: Option<String>,
    /// Also write JSON Lines mirrors.
    pub jsonl: bool,
    /// A private split.
    pub private: bool,
    /// Where a private seed is kept.
    pub seed_file: Option<PathBuf>,
    /// Datasets to share no instance with, as given.
    pub disjoint_from: Vec<String>,
    /// Control rows to add (`no-context`).
    pub controls: Option<String>,
    /// No progress bar.
    pub quiet: bool,
    /// Only this shard of the rows, when sharded.
    pub shard: Option<Shard>,
}

/// A parsed value with the text it was parsed from, so refusals quote what the user wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Given<T> {
    /// The text as given.
    pub text: String,
    /// Its value.
    pub value: T,
}

impl Config {
    /// Whether a haystack is named (a diluted chain, hidden sort items).
    pub fn has_haystack(&self) -> bool {
        self.haystack.as_deref().is_some_and(|h| h != "none")
    }
}
