//! Command-line definitions (clap). Parsing only: closed choices parse into the core's typed
//! enums here, and the `options` module turns each task's arguments into its parameter struct.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use needlework_generators::tasks::arith::{Carries, Layout, Op};
use needlework_generators::tasks::babilong::params::Vocabulary;
use needlework_generators::tasks::needlechain::{Kind, Order, Question};
use needlework_generators::tasks::niah::{ItemType, NeedleKind, NiahVariant, Spread};
use needlework_generators::tasks::posgen::{Operation, Variant};
use needlework_generators::tasks::sort::SortOutput;

/// Synthetic long-context benchmark data at exact token lengths, deterministically.
#[derive(Debug, Parser)]
#[command(name = "gen", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Needle in a haystack: find the values of keys hidden in long text.
    Niah(Box<NiahArgs>),
    /// A context made only of relevant facts: salary chains or kinship chains.
    Needlechain(Box<NeedlechainArgs>),
    /// Position-generalisation sequences (PosGen, from Resonance RoPE).
    Posgen(Box<PosgenArgs>),
    /// Sort N items, at any N.
    Sort(Box<SortArgs>),
    /// Arithmetic at any number of digits; or a sum of numbers hidden in text.
    Arith(Box<ArithArgs>),
    /// bAbI reasoning stories (qa1-qa20), simulated afresh, hidden in text of any length.
    Babilong(Box<BabilongArgs>),
    /// Variable tracking: chains of assignments hidden in text (RULER's vt).
    Vt(Box<VtArgs>),
    /// Common words extraction: the words a long list repeats most (RULER's cwe).
    Cwe(Box<CweArgs>),
    /// Frequent words extraction: the most frequent coded words of a Zipf text (RULER's fwe).
    Fwe(Box<FweArgs>),
    /// Document QA over your SQuAD or HotpotQA file: gold paragraphs among distractors (RULER's qa).
    Qa(Box<QaArgs>),
    /// Several tasks as one dataset: a built-in suite (ruler, babilong, reasoning) or a .toml file.
    Suite(Box<SuiteArgs>),
    /// Join the parts written by --num-shards/--shard-index into the one-machine dataset.
    Merge(MergeArgs),
    /// Regenerate every row of a dataset from its manifest and compare.
    Verify(VerifyArgs),
    /// Publish a private split's seed into its manifest (checked against the commitment).
    Reveal(RevealArgs),
    /// Write harness files into a dataset: lm-eval task YAMLs, an inspect task, OpenCompass configs, RULER's layout.
    Export(ExportArgs),
    /// Score predictions against a dataset: accuracy per config x length x depth, and a heatmap.
    Score(ScoreArgs),
    /// Counts per task x length x depth, length statistics and hashes.
    Inspect(InspectArgs),
    /// List tasks, tokenizers, haystacks, templates, suites or niah's needles.
    List(ListArgs),
}

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
    #[arg(long, requires = "shard_index")]
    pub num_shards: Option<u64>,
    /// The shard to make: 0 to N-1 (Kubernetes: $JOB_COMPLETION_INDEX; Slurm: $SLURM_ARRAY_TASK_ID).
    #[arg(long, requires = "num_shards")]
    pub shard_index: Option<u64>,
}

/// `gen suite`: a suite's entries, with the common options that override the suite's.
#[derive(Debug, Args, Clone)]
pub struct SuiteArgs {
    /// A built-in suite (ruler, babilong, reasoning) or a .toml suite file.
    pub suite: String,
    /// SQuAD JSON for the suite's `{qa_data}` entries (RULER's qa_1); without it they are skipped.
    #[arg(long)]
    pub qa_data: Option<String>,
    /// HotpotQA JSON for the suite's `{qa2_data}` entries (RULER's qa_2); without it they are skipped.
    #[arg(long)]
    pub qa2_data: Option<String>,
    /// Target lengths for every entry (overrides the suite's `lengths`).
    #[arg(long)]
    pub len: Option<String>,
    /// Depths for every entry that has a haystack (overrides the suite's `depths`).
    #[arg(long)]
    pub depths: Option<String>,
    /// Instances per (length, depth) cell (overrides the suite's `samples`).
    #[arg(long)]
    pub samples: Option<u64>,
    /// Master seed (overrides the suite's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Tokenizer for every entry (overrides the suite's `tokenizer`).
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// The model's chat template (overrides the suite's `chat_template`).
    #[arg(long)]
    pub chat_template: Option<String>,
    /// A system message for the chat template (overrides the suite's `system`).
    #[arg(long)]
    pub system: Option<String>,
    /// zstd, snappy or none (overrides the suite's `compression`).
    #[arg(long)]
    pub compression: Option<String>,
    /// Rows per Parquet file (overrides the suite's `rows_per_file`).
    #[arg(long)]
    pub rows_per_file: Option<u64>,
    /// Canary GUID (default: derived from the suite's recipes).
    #[arg(long)]
    pub canary: Option<String>,
    /// A private suite: one 256-bit seed from the operating system for every config, kept only
    /// in --seed-file; the dataset carries one commitment to it (overrides the suite's `private`).
    #[arg(long, conflicts_with = "seed")]
    pub private: bool,
    /// Where the private seed is kept (outside --out); an existing seed file is reused, so the
    /// shards of one private suite share one seed (overrides the suite's `seed_file`).
    #[arg(long)]
    pub seed_file: Option<PathBuf>,
    /// Share no instance with these datasets: each config avoids the identities of every
    /// instance of its task in them, whatever their configs (overrides the suite's `disjoint_from`).
    #[arg(long, num_args = 1.., value_name = "DIR")]
    pub disjoint_from: Vec<String>,
    /// Add a control row per instance in every config: no-context (overrides the suite's `controls`).
    #[arg(long, value_name = "KIND")]
    pub controls: Option<String>,
    /// Dataset directory (default ./datasets/<suite>-s<seed>, or <suite>-private).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace a non-empty --out directory.
    #[arg(long)]
    pub force: bool,
    /// Worker threads (default: all cores); never changes the output.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Also write one JSON Lines file per Parquet file.
    #[arg(long)]
    pub jsonl: bool,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub shard: ShardArgs,
}

/// `gen merge`: shard parts into one dataset.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The part directories written with --num-shards N --shard-index I, one per index.
    #[arg(required = true)]
    pub parts: Vec<PathBuf>,
    /// The dataset directory to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Replace a non-empty --out directory.
    #[arg(long)]
    pub force: bool,
    /// No summary line.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Args, Clone)]
pub struct NiahArgs {
    /// single, multikey, multivalue, multiquery or none.
    #[arg(long, default_value = "single")]
    pub variant: NiahVariant,
    /// Keys inserted (needles per value).
    #[arg(long)]
    pub keys: Option<u32>,
    /// Values per key.
    #[arg(long)]
    pub values: Option<u32>,
    /// Keys asked about (at most --keys).
    #[arg(long)]
    pub queries: Option<u32>,
    /// words, numbers or uuids.
    #[arg(long, default_value = "words")]
    pub key_type: ItemType,
    /// numbers, words or uuids.
    #[arg(long, default_value = "numbers")]
    pub value_type: ItemType,
    /// Ask about a key that is not in the text (answer: none).
    #[arg(long)]
    pub absent: bool,
    /// Where needles after the first go: random or even.
    #[arg(long, default_value = "random")]
    pub spread: Spread,
    /// Near-miss facts per instance: a key one edit from an asked key, or an asked key with a
    /// withdrawn or denied value (0 to 50).
    #[arg(long, default_value_t = 0)]
    pub confusers: u32,
    /// code (access codes) or latent (a person beside a landmark, dish, river, artwork or
    /// instrument; the question names only where it leads, sharing no word with the needle).
    #[arg(long, default_value = "code")]
    pub needle: NeedleKind,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args, Clone)]
pub struct NeedlechainArgs {
    /// salary (NeedleChain) or kinship (Ancestral Trace).
    #[arg(long, default_value = "salary")]
    pub kind: Kind,
    /// forward, backward, shuffled or parallel (salary only).
    #[arg(long, default_value = "forward")]
    pub order: Order,
    /// salary: single or total; kinship: eldest, ancestor or distance.
    #[arg(long)]
    pub question: Option<Question>,
    /// Exact number of facts (default: the largest chain that fits --len).
    #[arg(long)]
    pub chain: Option<u32>,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args, Clone)]
pub struct PosgenArgs {
    /// recursive, cot or semi-recursive.
    #[arg(long, default_value = "recursive")]
    pub variant: Variant,
    /// Tokens are integers modulo this.
    #[arg(long, default_value_t = 17)]
    pub modulus: u64,
    /// j: how many previous tokens each token depends on.
    #[arg(long, default_value_t = 3)]
    pub near: usize,
    /// k: how many far tokens each token depends on.
    #[arg(long, default_value_t = 1)]
    pub far: usize,
    /// The operation combining the inputs (add: modular addition).
    #[arg(long, default_value = "add")]
    pub op: Operation,
    /// Positions of a training sequence.
    #[arg(long, default_value_t = 64)]
    pub train_len: usize,
    /// Positions of a test sequence.
    #[arg(long, default_value_t = 256)]
    pub test_len: usize,
    /// Let train and test sequences share seed tuples (disjoint by default).
    #[arg(long)]
    pub overlap: bool,
    /// State the rule in one line before the seed.
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args, Clone)]
pub struct SortArgs {
    /// Number of items (default: as many as fit --len; 20 with a haystack).
    #[arg(long)]
    pub items: Option<usize>,
    /// Digit count range of integers, like 3 or 1..5.
    #[arg(long, default_value = "1..3")]
    pub digits: String,
    /// Sort words instead of integers.
    #[arg(long)]
    pub words: bool,
    /// Allow repeated items.
    #[arg(long)]
    pub duplicates: bool,
    /// Largest first.
    #[arg(long)]
    pub descending: bool,
    /// values, or keys (labels ordered by their values: K:25,L:7,M:319 -> L,K,M).
    #[arg(long, default_value = "values")]
    pub output: SortOutput,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args, Clone)]
pub struct ArithArgs {
    /// add, sub, mul, or sum (numbers hidden in a haystack).
    #[arg(long, default_value = "add")]
    pub op: Op,
    /// Digits per operand, like 40 or 1..40 (the count is drawn first, then the digits).
    #[arg(long, default_value = "1..10")]
    pub digits: String,
    /// any, none or max (add and sub).
    #[arg(long, default_value = "any")]
    pub carries: Carries,
    /// plain, reversed, reversed-answer, padded or hints.
    #[arg(long, default_value = "plain")]
    pub layout: Layout,
    /// How many numbers --op sum hides.
    #[arg(long)]
    pub count: Option<usize>,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args, Clone)]
pub struct BabilongArgs {
    /// bAbI tasks, one config each: qa1,qa2,... (qa1-qa20), or all.
    #[arg(long, default_value = "qa1")]
    pub task: String,
    /// babi (bAbI's six places, three objects, four actors) or fresh (new names per instance).
    #[arg(long, default_value = "babi")]
    pub vocab: Vocabulary,
    /// Story size in facts, like 20 or 10..50 (default: bAbI's sizes per task).
    #[arg(long)]
    pub facts: Option<String>,
    /// Keep every fact within this depth window in percent, like 40..60.
    #[arg(long, default_value = "0..100")]
    pub fact_window: String,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args, Clone)]
pub struct VtArgs {
    /// Chains of assignments; the first chain's value is asked about.
    #[arg(long, default_value_t = 1)]
    pub chains: u32,
    /// Variable-to-variable assignments after each chain's first (its value).
    #[arg(long, default_value_t = 4)]
    pub hops: u32,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args, Clone)]
pub struct CweArgs {
    /// How many common words (the answer).
    #[arg(long, default_value_t = 10)]
    pub common: u32,
    /// How often each common word appears.
    #[arg(long, default_value_t = 30)]
    pub common_repeats: u32,
    /// How often every other word appears (fewer than --common-repeats).
    #[arg(long, default_value_t = 3)]
    pub rare_repeats: u32,
    #[command(flatten)]
    pub common_args: CommonArgs,
}

#[derive(Debug, Args, Clone)]
pub struct FweArgs {
    /// The Zipf exponent of the word counts (1 to 4).
    #[arg(long, default_value_t = 2.0)]
    pub alpha: f64,
    /// How many of the most frequent coded words are asked for.
    #[arg(long, default_value_t = 3)]
    pub top: u32,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args, Clone)]
pub struct QaArgs {
    /// The SQuAD (v1.1/v2.0) or HotpotQA JSON file whose paragraphs and questions are used;
    /// it is the haystack, recorded by hash. Nothing is downloaded.
    #[arg(long)]
    pub data: String,
    /// squad or hotpotqa (default: detected from the file: SQuAD is an object, HotpotQA a list).
    #[arg(long)]
    pub format: Option<String>,
    /// Score by exact match with one of the gold answers (metric one_of) instead of "a gold
    /// answer occurs in the output" (metric any, RULER's).
    #[arg(long)]
    pub exact: bool,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The dataset directory.
    pub dir: PathBuf,
    /// Where the recorded inputs are now, when they moved (checked against the recorded hashes).
    #[command(flatten)]
    pub inputs: InputOverrides,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    /// A private split's seed file: check the commitment and regenerate every row.
    #[arg(long)]
    pub seed_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RevealArgs {
    /// The private dataset's directory.
    pub dir: PathBuf,
    /// The seed file it was made with.
    #[arg(long)]
    pub seed_file: PathBuf,
}

/// Paths that replace the recorded ones when an input moved since the dataset was made.
#[derive(Debug, Args, Clone, Default)]
pub struct InputOverrides {
    /// The tokenizer.json the dataset was made with.
    #[arg(long)]
    pub tokenizer: Option<String>,
    /// The corpus the dataset was made with (with its :field suffix, if any); for qa, its
    /// QA data file (also spelled --data).
    #[arg(long, alias = "data")]
    pub haystack: Option<String>,
    /// The template file the dataset was made with.
    #[arg(long)]
    pub template: Option<String>,
    /// The chat template file the dataset was made with.
    #[arg(long)]
    pub chat_template: Option<String>,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// lm-eval, inspect, opencompass or ruler.
    pub harness: String,
    /// The dataset directory (the files are written into <dir>/<harness>).
    pub dir: PathBuf,
    /// The dataset's name in task, group, module and variable names (letters, digits, _;
    /// default: the directory's name, made plain).
    #[arg(long)]
    pub name: Option<String>,
    /// The chat template file the dataset was made with, if it moved.
    #[arg(long)]
    pub chat_template: Option<String>,
}

#[derive(Debug, Args)]
pub struct ScoreArgs {
    /// The dataset directory.
    pub dir: PathBuf,
    /// JSON Lines of {"id", "prediction"} (also RULER's prediction files, by others.id or
    /// index, and lm-eval's --log_samples files); a directory stands for its *.jsonl files.
    /// Repeat to read several.
    #[arg(long, required = true)]
    pub predictions: Vec<PathBuf>,
    /// Where scores.json and the heatmaps go (default: <dir>/scores).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Only the table: no warnings about missing or unknown ids.
    #[arg(short, long)]
    pub quiet: bool,
    /// Score only the rows that have a prediction (by default a row without one counts as
    /// wrong); said loudly on stderr.
    #[arg(long)]
    pub only_present: bool,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A dataset directory or one Parquet file.
    pub path: PathBuf,
    /// Print what the model reads, one JSON line per row ({"config", "id", "prompt"}): the
    /// input inside the dataset's chat template, then the answer prefix (a dataset directory).
    #[arg(long)]
    pub prompts: bool,
    /// The chat template file the dataset was made with, if it moved (with --prompts).
    #[arg(long)]
    pub chat_template: Option<String>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// tasks, tokenizers, haystacks, templates, suites or needles (default: all).
    pub what: Option<String>,
}
