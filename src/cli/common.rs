//! The options every generating command takes, and the one place they become a checked,
//! clap-free [`Config`]: lengths and depths parsed, threads and shards resolved. Below this
//! module nothing reads a flag.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use needlework_generators::tasks::TaskParams;

use crate::cli::grid::{parse_depths, parse_lengths};
use crate::cli::sched::{parse_shard_value, shard_of, ShardValue};
use crate::run::config::{Config, Given};
use crate::usage::usage;

/// The most worker threads `--threads` takes.
pub const MAX_THREADS: usize = 1024;

/// Options every generating command takes.
#[derive(Debug, Args, Clone)]
pub struct CommonArgs {
    /// Target lengths in tokens: 4k,32k,1m (k = 1024), exact integers, or a doubling range 4k..128k.
    #[arg(long)]
    pub len: Option<String>,
    /// N evenly spaced depths over 0-100 % (1 means 50 %), or a list of percents like 0,25,50,100.
    #[arg(long)]
    pub depths: Option<String>,
    /// Instances per (length, depth) cell.
    #[arg(long, default_value_t = 1)]
    pub samples: u64,
    /// Master seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// o200k, cl100k, gpt2, words, chars, or a path to a Hugging Face tokenizer.json.
    #[arg(long, default_value = "o200k")]
    pub tokenizer: String,
    /// Tokens kept free for the answer (default: the task's max_new_tokens).
    #[arg(long)]
    pub reserve: Option<u64>,
    /// generated, noise, needles, none, or a path: .txt, a directory of .txt, file.jsonl[:field],
    /// file.parquet[:column] (default: generated for niah, none for needlechain).
    #[arg(long)]
    pub haystack: Option<String>,
    /// A template name (see `gen list templates`) or a path to a .j2 file.
    #[arg(long, default_value = "default")]
    pub template: String,
    /// The model's chat template: a Hugging Face tokenizer_config.json (its chat_template) or a
    /// .jinja file. Lengths then count what the model reads: the rendered chat, with special
    /// tokens, and the answer prefix as the start of its turn.
    #[arg(long)]
    pub chat_template: Option<String>,
    /// A system message for the chat template.
    #[arg(long)]
    pub system: Option<String>,
    /// Dataset directory (default ./datasets/<task>-s<seed>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace a non-empty --out directory.
    #[arg(long)]
    pub force: bool,
    /// Worker threads (default: all cores); never changes the output.
    #[arg(long)]
    pub threads: Option<usize>,
    /// zstd (level 3), snappy or none.
    #[arg(long, default_value = "zstd")]
    pub compression: String,
    /// Rows per Parquet file (default: split at about 256 MiB of uncompressed text).
    #[arg(long)]
    pub rows_per_file: Option<u64>,
    /// Split name (letters, digits, underscores, dots); posgen: train or test.
    #[arg(long, default_value = "test")]
    pub split: String,
    /// Canary GUID (default: derived from the recipe, so reruns are byte-identical).
    #[arg(long)]
    pub canary: Option<String>,
    /// Also write one JSON Lines file per Parquet file.
    #[arg(long)]
    pub jsonl: bool,
    /// A private split: a 256-bit seed from the operating system, kept only in --seed-file;
    /// the dataset carries a commitment to it, never the seed.
    #[arg(long, conflicts_with = "seed")]
    pub private: bool,
    /// Where the private seed is kept (outside --out); an existing seed file is reused, so the
    /// shards of one private suite share one seed.
    #[arg(long, requires = "private")]
    pub seed_file: Option<PathBuf>,
    /// Share no instance with these datasets (per task: niah key-value pairs and values,
    /// babilong stories, chains, seed tuples, item lists, operand tuples); repeatable.
    #[arg(long, num_args = 1.., value_name = "DIR")]
    pub disjoint_from: Vec<String>,
    /// Add a control row per instance: no-context (the question without its context).
    #[arg(long, value_name = "KIND")]
    pub controls: Option<String>,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub shard: ShardArgs,
}

/// Which shard of a dataset to make, on one of several machines (`gen merge` joins them).
#[derive(Debug, Args, Clone, Default)]
pub struct ShardArgs {
    /// Split the rows into N shards and make only one (with --shard-index); `gen merge` joins
    /// the parts into the dataset one machine makes.
    /// `env` reads the batch scheduler's worker count (docs/schedulers.md).
    #[arg(long, requires = "shard_index", value_name = "N|env", value_parser = parse_shard_value)]
    pub num_shards: Option<ShardValue>,
    /// The shard to make: 0 to N-1, or `env` for the one the batch scheduler's variable names
    /// (Slurm arrays, Kubernetes Indexed Jobs, AWS Batch, Google Cloud Batch, Cloud Run jobs).
    #[arg(long, requires = "num_shards", value_name = "I|env", value_parser = parse_shard_value)]
    pub shard_index: Option<ShardValue>,
}

impl CommonArgs {
    /// Whether `--haystack` names a haystack (a diluted chain, hidden sort items).
    pub fn has_haystack(&self) -> bool {
        self.haystack.as_deref().is_some_and(|h| h != "none")
    }

    /// The checked configuration of a command of `params`, whose haystack is named by
    /// `haystack_flag` (`--haystack`, or qa's `--data`).
    pub fn config(&self, params: &TaskParams, haystack_flag: &'static str) -> Result<Config> {
        let lengths = match &self.len {
            Some(len) => Some(parse_lengths(len, params.zero_length()).map_err(usage)?),
            None => None,
        };
        let depths = match &self.depths {
            Some(d) => Some(Given {
                text: d.clone(),
                value: parse_depths(d).map_err(usage)?,
            }),
            None => None,
        };
        Ok(Config {
            lengths,
            depths,
            samples: self.samples,
            seed: self.seed,
            tokenizer: self.tokenizer.clone(),
            reserve: self.reserve,
            haystack: self.haystack.clone(),
            haystack_flag,
            template: self.template.clone(),
            chat_template: self.chat_template.clone(),
            system: self.system.clone(),
            out: self.out.clone(),
            force: self.force,
            threads: threads(self.threads)?,
            compression: self.compression.clone(),
            rows_per_file: self.rows_per_file,
            split: self.split.clone(),
            canary: self.canary.clone(),
            jsonl: self.jsonl,
            private: self.private,
            seed_file: self.seed_file.clone(),
            disjoint_from: self.disjoint_from.clone(),
            controls: self.controls.clone(),
            quiet: self.quiet,
            shard: shard_of(self.shard.num_shards, self.shard.shard_index)?,
        })
    }
}

/// Worker threads: `--threads` (1 to [`MAX_THREADS`]), else every core.
pub fn threads(threads: Option<usize>) -> Result<usize> {
    match threads {
        Some(n) if n == 0 || n > MAX_THREADS => Err(usage(format!(
            "invalid --threads {n}: expected 1 to {MAX_THREADS}"
        ))),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}
