//! The command line: clap's definitions of every subcommand and the conversions that turn
//! raw arguments into checked, clap-free values (`common`, the tasks' own files under
//! `crate::tasks`, `suite`), the command a recipe is made by (`command`), the syntax of
//! lengths and depths (`grid`) and `gen list`. Nothing below this layer names a clap type.

pub mod command;
pub mod common;
pub mod grid;
pub mod list;
pub mod sched;
pub mod suite;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::run::find_inputs::InputPaths;
use crate::run::merge::MergeOptions;
use crate::tasks::TaskCommand;
use suite::SuiteArgs;

/// Synthetic long-context benchmark data at exact token lengths, deterministically.
#[derive(Debug, Parser)]
#[command(name = "gen", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    #[command(flatten)]
    Task(TaskCommand),
    /// Several tasks as one dataset: a built-in suite (ruler, ruler2, babilong, reasoning, frontier) or a .toml file.
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
    /// The corpus the dataset was made with (with its :field suffix, if any); for qa and
    /// ruler2, its --data (a QA file, or ruler2's MMLU directory; also spelled --data).
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
    /// The dataset directory. The files are written into a folder of it named by the
    /// harness: <dir>/lm_eval, <dir>/inspect, <dir>/opencompass or <dir>/ruler.
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

impl MergeArgs {
    /// What the merge layer is asked to do.
    pub fn options(&self) -> MergeOptions {
        MergeOptions {
            parts: self.parts.clone(),
            out: self.out.clone(),
            force: self.force,
            quiet: self.quiet,
        }
    }
}

impl InputOverrides {
    /// The moved inputs' paths.
    pub fn paths(&self) -> InputPaths {
        InputPaths {
            tokenizer: self.tokenizer.clone(),
            haystack: self.haystack.clone(),
            template: self.template.clone(),
            chat_template: self.chat_template.clone(),
        }
    }
}
