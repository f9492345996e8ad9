//! The deterministic core of needlework.
//!
//! Seed and parameters in, instance out: no I/O beyond the inputs handed in, no clocks, no
//! shared random state. The `gen` binary is a thin shell around this crate (CLI, Parquet,
//! manifest, verification). A task is one module implementing [`Task`], its parameter struct
//! (registered in [`tasks::TaskParams`]), plus its template.
//!
//! Generating one instance from code:
//!
//! ```
//! use needlework_generators::tasks::niah::{NiahParams, NiahVariant};
//! use needlework_generators::tasks::{Part, TaskParams};
//! use needlework_generators::{tasks, Cell, Haystack, HaystackKind, Run, Template, Tokenizer};
//!
//! let params = TaskParams::Niah(NiahParams::variant(NiahVariant::Single));
//! let Part { task, .. } = params.parts().unwrap().remove(0);
//! let tokenizer = Tokenizer::builtin("o200k").unwrap();
//! let haystack = Haystack::prepare(HaystackKind::Noise, None, &tokenizer).unwrap();
//! let source = tasks::builtin_template("niah", "default").unwrap();
//! let run = Run {
//!     template: Template::compile("niah/default", source).unwrap(),
//!     haystack: Some(haystack),
//!     tokenizer,
//!     seed: 7.into(),
//!     reserve: task.default_reserve() as u64,
//!     reader: Default::default(),
//! };
//! let cell = Cell { length: 2048, depth: Some(50.0), sample: 0, slot: 0 };
//! let instance = task.generate(&run, &cell).unwrap();
//! // What the model reads, plus what it may write, fits the length.
//! assert!(instance.prompt_tokens + u64::from(instance.max_new_tokens) <= 2048);
//! assert!(instance.input.contains(&instance.answers[0]));
//! ```
#![warn(missing_docs)]
// One module-file style: a module with children is `name/mod.rs`.
#![warn(clippy::self_named_module_files)]

#[macro_use]
pub mod choice;
pub mod chat;
pub mod fit;
pub mod guard;
pub mod hash;
pub mod haystack;
pub mod identity;
pub mod jinja;
pub mod rng;
pub mod scoring;
pub mod tasks;
pub mod template;
pub mod tokenizer;

use thiserror::Error;

pub use haystack::{Corpus, Haystack, HaystackKind};
use template::Vars;
pub use template::{Frame, Template, TemplateError};
pub use tokenizer::{Tokenizer, TokenizerError};

/// Bumped whenever generated content changes for the same inputs; part of every provenance
/// hash, so old datasets verify as "made by another format" rather than silently differing.
///
/// - 1: the first released rows.
/// - 2: haystack units screened against each instance's needles (`params.screened_units`);
///   long corpus sentences cut; `prompt_tokens` column, answer prefix and chat template counted
///   in the budget; posgen, babilong, needlechain and sort sampling fixes.
/// - 3: the `generated` haystack is new prose (a large Zipf-weighted vocabulary, names, numbers,
///   dates and compounds), so every row that uses it changes; babilong stories follow bAbI's
///   task procedures (world start, story sizes, question timing, casts, qa14's places;
///   `params.facts`, `params.departures`); arith sum screens its total; JSON Lines mirrors
///   named `*.rows.jsonl` (clear of RULER's chunk pattern).
/// - 4: the `generated` haystack has English's word statistics (flat Zipf draws over grown
///   lists, sixteen topic vocabularies, focus nouns per paragraph, repeated phrases, a new
///   grammar), so every row that uses it changes; latent needles draw from the prose's names,
///   now split by pronoun and more of them.
/// - 5: facts stand only after a sentence end (the fill's cut sentence moves before the last
///   whole sentence, needles skip boundaries inside long sentences), the partial top-up cuts
///   inside runs without spaces, and a fill whose counts jump about is bisected: rows with a
///   haystack change.
pub const FORMAT_VERSION: u32 = 5;

/// Everything that can go wrong while generating.
#[derive(Debug, Error)]
pub enum GenError {
    /// Tokenizer failure.
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    /// Template failure.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// A chat template that cannot render this prompt.
    #[error(transparent)]
    Chat(#[from] chat::ChatError),
    /// The budget cannot hold the task's fixed text.
    #[error("a budget of {budget} tokens is too small: this instance needs at least {needed}")]
    TooShort {
        /// Tokens available for the prompt (target length minus reserve).
        budget: usize,
        /// Tokens the fixed text needs.
        needed: usize,
    },
    /// A parameter value the task refuses.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// A user corpus that cannot serve as a haystack.
    #[error("{0}")]
    BadCorpus(String),
    /// Parameters that do not make sense together.
    #[error("{0}")]
    BadParams(String),
    /// A bug: an invariant of this crate was broken.
    #[error("internal error: {0}")]
    Internal(String),
}

/// A task parameter the core refuses, named as the parameter structs spell it (`key_type`), so
/// each front end (command-line flags, or a file of recipes) can word it in its own terms.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid {param} '{value}': expected {expected}")]
pub struct ParamError {
    /// The parameter's field name in its task's parameter struct.
    pub param: &'static str,
    /// The refused value, as the user would write it.
    pub value: String,
    /// What is accepted, in words (may name other parameters by their field names).
    pub expected: String,
}

impl ParamError {
    /// Refuse `value` for `param`.
    pub fn new(param: &'static str, value: impl ToString, expected: impl Into<String>) -> Self {
        ParamError {
            param,
            value: value.to_string(),
            expected: expected.into(),
        }
    }
}

choice! {
    /// How a harness should score a row: the name stored in the `metric` column.
    pub enum Metric {
        /// Every string in `answers` must appear in the output.
        All = "all",
        /// At least one must appear.
        Any = "any",
        /// The output equals `target` after trimming.
        Exact = "exact",
        /// The output equals one of `answers` after the same cleaning as `exact` (SQuAD's exact
        /// match: annotators gave several spellings of one answer).
        OneOf = "one_of",
        /// The same set of items.
        Set = "set",
        /// The labels of the closed set `labels` found in the output are exactly the gold items
        /// (one label for most bAbI tasks, several for lists and paths).
        Label = "label",
        /// OpenAI MRCR's grade: 0 unless the output starts with the target's random string, else
        /// difflib's ratio of the rest to the target's rest.
        Mrcr = "mrcr",
        /// DeepMind MRCR v2's grade: difflib's ratio of the target's rest to the text after the
        /// last occurrence of its random string.
        MrcrV2 = "mrcr_v2",
        /// F1 of the node set on the output's last `Final Answer: [...]` line against `answers`
        /// (GraphWalks).
        F1 = "f1",
        /// [`Metric::F1`] of the lowest line that holds a `Final Answer: [...]` (lm-eval's
        /// `flexible_f1`).
        FlexibleF1 = "flexible_f1",
        /// RULER v2's soft match, the mean over `answers` (its `all` mode).
        SoftAll = "soft_all",
        /// RULER v2's soft match after copied `Document N:` blocks are removed, the best over
        /// `answers` (its `part` mode).
        SoftPart = "soft_part",
        /// RULER v2's soft match of the last paragraph, the mean over `answers` (its `2steps`
        /// mode).
        Soft2Steps = "soft_2steps",
        /// The multiple-choice letter the output gives (boxed, "final answer is", `Answer: X`)
        /// equals `target`.
        Letter = "letter",
    }
}

impl Metric {
    /// Whether the metric scores in steps between 0 and 1 rather than right or wrong.
    pub fn graded(self) -> bool {
        matches!(
            self,
            Metric::Mrcr
                | Metric::MrcrV2
                | Metric::F1
                | Metric::FlexibleF1
                | Metric::SoftAll
                | Metric::SoftPart
                | Metric::Soft2Steps
        )
    }
}

/// One generated instance: the content columns of a row.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    /// Task name, e.g. `niah`.
    pub task: String,
    /// Variant, e.g. `single`.
    pub variant: String,
    /// The complete prompt.
    pub input: String,
    /// The question alone.
    pub question: String,
    /// Completion prefix for base models.
    pub answer_prefix: String,
    /// Canonical answer text.
    pub target: String,
    /// Every gold item.
    pub answers: Vec<String>,
    /// Closed label set for [`Metric::Label`].
    pub labels: Vec<String>,
    /// How to score.
    pub metric: Metric,
    /// Tokens a harness should let the model generate.
    pub max_new_tokens: u32,
    /// Requested length.
    pub target_length: u64,
    /// Measured tokens of `input`.
    pub length: u64,
    /// Measured tokens of what the model reads: `input` and `answer_prefix` (inside the chat
    /// template, with special tokens, when there is one). With `max_new_tokens` it fits
    /// `target_length`.
    pub prompt_tokens: u64,
    /// Tokenizer id.
    pub tokenizer: String,
    /// Requested depth, when the task has a haystack.
    pub depth_percent: Option<f64>,
    /// Token offset of each needle in `input`.
    pub needle_offsets: Vec<u64>,
    /// Actual depth of each needle in percent.
    pub needle_depths: Vec<f64>,
    /// Index within its (length, depth) cell.
    pub sample_index: u64,
    /// Task parameters and per-instance facts, canonical JSON.
    pub params: String,
}

impl Instance {
    /// An instance of `task` at `cell` with the columns every task fills alike already set
    /// (task, variant, coordinates, tokenizer, answer budget) and the content empty: tasks
    /// fill the rest with struct update syntax, so the row's shape is defined here only.
    pub fn at(task: &dyn Task, run: &Run, cell: &Cell) -> Instance {
        Instance {
            task: task.name().to_string(),
            variant: task.variant(),
            input: String::new(),
            question: String::new(),
            answer_prefix: String::new(),
            target: String::new(),
            answers: Vec::new(),
            labels: Vec::new(),
            metric: Metric::Exact,
            max_new_tokens: u32::try_from(run.reserve).unwrap_or(u32::MAX),
            target_length: cell.length,
            length: 0,
            prompt_tokens: 0,
            tokenizer: run.tokenizer.id(),
            depth_percent: cell.depth,
            needle_offsets: Vec::new(),
            needle_depths: Vec::new(),
            sample_index: cell.sample,
            params: String::new(),
        }
    }
}

impl Instance {
    /// [`Instance::at`] holding a fitted prompt: its text, its two counts and where its
    /// needles fell, so a task adds only its question, answers and facts.
    pub fn fitted(task: &dyn Task, run: &Run, cell: &Cell, fitted: fit::Fitted) -> Instance {
        Instance {
            input: fitted.input,
            length: fitted.length as u64,
            prompt_tokens: fitted.prompt_tokens as u64,
            needle_offsets: fitted.needle_offsets,
            needle_depths: fitted.needle_depths,
            ..Instance::at(task, run, cell)
        }
    }
}

/// Coordinates of one instance within a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell {
    /// Requested length in tokens.
    pub length: u64,
    /// Requested depth in percent (None for tasks without a haystack).
    pub depth: Option<f64>,
    /// Sample index within the (length, depth) cell.
    pub sample: u64,
    /// The instance's place among all instances of its length: depth index × samples +
    /// sample. Distinct across depths and samples, equal across lengths, so a task that draws
    /// instances from a finite pool (qa's questions) never repeats one within a length, even
    /// where each depth has one sample (RULER's layout).
    pub slot: u64,
}

impl Run {
    /// The haystack, for tasks that cannot work without one.
    pub fn required_haystack(&self, task: &str) -> Result<&Haystack, GenError> {
        self.haystack
            .as_ref()
            .ok_or_else(|| GenError::BadParams(format!("{task} needs a haystack")))
    }

    /// The coordinates of the instance of `task` at `cell`; `params` is the canonical JSON of
    /// the task's content parameters.
    pub fn coordinates<'a>(
        &self,
        task: &'a str,
        params: &'a str,
        cell: &Cell,
    ) -> rng::Coordinates<'a> {
        rng::Coordinates {
            task,
            params,
            seed: self.seed,
            length: cell.length,
            depth: cell.depth,
            sample: cell.sample,
        }
    }

    /// Identity of the haystack for provenance (`none` without one).
    pub fn haystack_id(&self) -> String {
        self.haystack
            .as_ref()
            .map_or_else(|| "none".to_string(), Haystack::id)
    }
}

/// Run-wide inputs shared by every instance: prepared once, read by all threads.
pub struct Run {
    /// The user's tokenizer.
    pub tokenizer: Tokenizer,
    /// The prepared haystack, if the run has one.
    pub haystack: Option<Haystack>,
    /// The compiled template.
    pub template: Template,
    /// Master seed: public, or a private secret ([`rng::Seed`]).
    pub seed: rng::Seed,
    /// Tokens kept free for the answer: every row's `max_new_tokens`; 0 for tasks that size
    /// the answer budget per row means "per row".
    pub reserve: u64,
    /// How the model reads each prompt (chat template, system message); the budget counts it.
    pub reader: chat::Reader,
}

/// Tokens a per-row answer budget adds to the answer's own count: room for a short preamble
/// or a closing word, so a correct answer is never cut.
pub const ANSWER_SLACK: u32 = 16;

impl Run {
    /// The answer budget (`max_new_tokens`) of a row whose answer is `target`, for tasks that
    /// size it per row: `--reserve` when given (non-zero), else the target's tokens plus
    /// [`ANSWER_SLACK`].
    pub fn answer_tokens(&self, target: &str) -> Result<u32, GenError> {
        let counted = if self.reserve > 0 {
            0
        } else {
            self.tokenizer.count(target)?
        };
        Ok(self.answer_budget(counted))
    }

    /// [`Run::answer_tokens`] for a target already counted (`target_tokens`).
    pub fn answer_budget(&self, target_tokens: usize) -> u32 {
        if self.reserve > 0 {
            return u32::try_from(self.reserve).unwrap_or(u32::MAX);
        }
        u32::try_from(target_tokens)
            .unwrap_or(u32::MAX)
            .saturating_add(ANSWER_SLACK)
    }

    /// The frame of one prompt: the template rendered with `vars`, and the answer prefix the
    /// model reads after it, both counted in the budget.
    pub fn frame(&self, vars: &Vars, answer_prefix: &str) -> Result<Frame, GenError> {
        let mut frame = self.template.frame(vars)?;
        frame.answer_prefix = answer_prefix.to_string();
        frame.reader = self.reader.clone();
        Ok(frame)
    }
}

/// A benchmark task: parameters in, instances out.
pub trait Task: Send + Sync {
    /// Task name (`niah`).
    fn name(&self) -> &'static str;
    /// Variant name; the dataset config is `<name>_<variant>`.
    fn variant(&self) -> String;
    /// Canonical parameters that shape content (part of random streams and provenance).
    fn params(&self) -> serde_json::Value;
    /// Whether the task places content in a haystack (and so accepts depths).
    fn uses_haystack(&self) -> bool;
    /// Whether the task cannot work without a haystack (then `generated` is its default and
    /// `--haystack none` is refused); otherwise its default is no haystack.
    fn requires_haystack(&self) -> bool {
        false
    }
    /// Depths when `--depths` is not given: 50 % for most tasks; `None` where needles are
    /// spread at random (stories), so rows carry no depth.
    fn default_depths(&self) -> Option<Vec<f64>> {
        Some(vec![50.0])
    }
    /// Tokens kept free below the target when no reserve is given: the answer budget of tasks
    /// whose answers have one size (also their rows' `max_new_tokens`), or 0 for tasks that
    /// reserve each row's own answer length while fitting (posgen, sort, arith).
    fn default_reserve(&self) -> u32;
    /// The built-in template used when the user names none (`default`; niah's latent needles
    /// have their own framing).
    fn default_template(&self) -> &'static str {
        "default"
    }
    /// Example values of the template variables the task provides (besides `context`), used to
    /// check a template before any instance is generated.
    fn example_vars(&self) -> template::Vars;
    /// The smallest target length that can hold this task's fixed text under `run`.
    fn minimum_length(&self, run: &Run) -> Result<u64, GenError>;
    /// The smallest target length at which every instance of a run of `samples` samples per
    /// cell can be generated, so a front end refuses a shorter `--len` before any work instead
    /// of failing half-way. Tasks whose fixed text differs between instances (babilong's
    /// stories, posgen's seeds) compute it over the run's actual samples; the others keep
    /// [`Task::minimum_length`].
    fn minimum_length_for(&self, run: &Run, samples: u64) -> Result<u64, GenError> {
        let _ = samples;
        self.minimum_length(run)
    }
    /// Refuse, before any work, a run of `samples` samples per cell that the task cannot fill
    /// with distinct instances (posgen has finitely many seed tuples); the default accepts any
    /// count, for tasks whose space of instances is unbounded.
    fn check_samples(&self, samples: u64) -> Result<(), ParamError> {
        let _ = samples;
        Ok(())
    }
    /// Refuse, before any work, a run whose lengths each hold `per_length` instances (depths ×
    /// samples) when the task draws every instance of a length from a finite pool read with the
    /// run's inputs (qa's questions); the default accepts any number.
    fn check_instances(&self, run: &Run, per_length: u64) -> Result<(), GenError> {
        let _ = (run, per_length);
        Ok(())
    }
    /// The longest target length this task can fill under `run`, and why no longer one can
    /// be filled, for tasks whose content can run out (a list of distinct items); `None` when
    /// every length can be filled, or when the task proves without finding the maximum that
    /// `wanted` (the longest length the run asks for) can be, so that the check costs what the
    /// run needs. Checked before any work, so that a length beyond it is refused as bad input
    /// rather than answered with rows far shorter than asked.
    fn maximum_length(&self, run: &Run, wanted: u64) -> Result<Option<(u64, String)>, GenError> {
        let _ = (run, wanted);
        Ok(None)
    }
    /// Generate the instance at `cell`.
    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError>;
    /// The instance's identity keys, from its recorded columns (a row read back from any
    /// dataset gives the same keys as the instance made it): a split kept disjoint from
    /// others shares no key with them. Each key is tagged with its kind (`pair:`, `value:`);
    /// the caller keeps tasks apart. The default, [`identity::default_identity`], is every
    /// recorded fact but the haystack screen: same facts, same instance. A task overrides it
    /// with what makes two of its instances the same for a model that has seen one (niah: any
    /// key–value pair or value; posgen: the seed tuple), and returns no key for an instance
    /// that has none to share.
    fn identity(&self, instance: &Instance) -> Vec<String> {
        identity::default_identity(instance)
    }
    /// Whether the task's haystack is a file of documents and questions (qa's SQuAD or
    /// HotpotQA file), read in place of prose; a front end then loads it as documents.
    fn reads_documents(&self) -> bool {
        false
    }
    /// Whether the task's haystack is a copy of MMLU (ruler2's multiple-choice tasks), read
    /// in place of prose; a front end then loads it as [`haystack::mmlu::Mmlu`].
    fn reads_mmlu(&self) -> bool {
        false
    }
    /// Whether the task takes the `needles` haystack (distractors of its own needle's form).
    fn takes_needle_haystack(&self) -> bool {
        false
    }
    /// The RULER task this one reproduces over `haystack`, by RULER's name (`niah_single_2`,
    /// `vt`), or `None`: harnesses lay out and name a config by it.
    fn ruler_task(&self, haystack: tasks::RulerHaystack) -> Option<&'static str> {
        let _ = haystack;
        None
    }
    /// Whether a no-context control row means anything for this task: true where the input
    /// holds a context the question is asked about; false where the question is the whole
    /// problem (arithmetic written out) or there is no question without the context (posgen).
    fn has_context(&self) -> bool {
        true
    }
}

/// Serialize a JSON value with object keys sorted at every level, so equal values always give
/// equal bytes whatever map type built them.
pub fn canonical_json(value: &serde_json::Value) -> String {
    fn write(v: &serde_json::Value, out: &mut String) {
        match v {
            serde_json::Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::Value::String(k.clone()).to_string());
                    out.push(':');
                    write(&map[k], out);
                }
                out.push('}');
            }
            serde_json::Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(item, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(value, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let v = serde_json::json!({"b": 1, "a": {"y": [1, {"d": 2, "c": 3}], "x": "s"}});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":{"x":"s","y":[1,{"c":3,"d":2}]},"b":1}"#
        );
    }
}
