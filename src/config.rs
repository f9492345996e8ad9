//! Validation: turn parsed arguments into one checked recipe before anything is written.
//!
//! The [`Recipe`] is also what the manifest stores, so `gen verify` rebuilds exactly the same
//! run from it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use needlework_generators::tasks::arith::Arith;
use needlework_generators::tasks::babilong::{self, Babilong};
use needlework_generators::tasks::needlechain::NeedleChain;
use needlework_generators::tasks::niah::{ItemType, Niah, Spread};
use needlework_generators::tasks::posgen::PosGen;
use needlework_generators::tasks::sort::Sort;
use needlework_generators::{
    spec, templates, Corpus, Haystack, HaystackKind, Run, Task, Template, Tokenizer,
};
use serde::{Deserialize, Serialize};

use crate::cli::{
    ArithArgs, BabilongArgs, CommonArgs, NeedlechainArgs, NiahArgs, PosgenArgs, SortArgs,
};
use crate::corpus;
use crate::usage;

/// Task-specific options, resolved (every default filled in).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "task", rename_all = "snake_case")]
pub enum TaskOptions {
    /// `gen niah`.
    Niah {
        keys: u32,
        values: u32,
        queries: u32,
        key_type: String,
        value_type: String,
        absent: bool,
        spread: String,
    },
    /// `gen needlechain`.
    Needlechain {
        kind: String,
        order: String,
        question: String,
        chain: Option<u32>,
        diluted: bool,
    },
    /// `gen posgen`.
    Posgen {
        variant: String,
        modulus: u64,
        near: usize,
        far: usize,
        op: String,
        train_len: usize,
        test_len: usize,
        split: String,
        overlap: bool,
        explain: bool,
    },
    /// `gen sort`.
    Sort {
        words: bool,
        digits: (u32, u32),
        duplicates: bool,
        descending: bool,
        output: String,
        items: Option<usize>,
        hidden: bool,
    },
    /// `gen arith`.
    Arith {
        op: String,
        digits: (u32, u32),
        carries: String,
        layout: String,
        count: Option<usize>,
    },
    /// `gen babilong`: one config per bAbI task.
    Babilong {
        tasks: Vec<u8>,
        vocab: String,
        facts: Option<(u32, u32)>,
        fact_window: (f64, f64),
    },
}

impl TaskOptions {
    /// `--len` when none is given: tasks with a native size (posgen, arith, sort with --items)
    /// need none; the others fill 4k.
    fn default_len(&self) -> Option<&'static str> {
        match self {
            TaskOptions::Posgen { .. } => None,
            TaskOptions::Arith { op, .. } if op != "sum" => None,
            TaskOptions::Sort {
                items: Some(_),
                hidden: false,
                ..
            } => None,
            _ => Some("4k"),
        }
    }
}

/// Parse `--digits 40` or `--digits 1..40`.
pub fn parse_digits(s: &str) -> Result<(u32, u32)> {
    let bad = || {
        usage(format!(
            "invalid --digits '{s}': expected a digit count like 40 or a range like 1..40"
        ))
    };
    let (a, b) = match s.split_once("..") {
        Some((a, b)) => (a, b),
        None => (s, s),
    };
    let a: u32 = a.trim().parse().map_err(|_| bad())?;
    let b: u32 = b.trim().parse().map_err(|_| bad())?;
    Ok((a, b))
}

/// Everything that determines a dataset's content: written to the manifest, read by verify.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Recipe {
    pub options: TaskOptions,
    pub lengths: Vec<u64>,
    pub depths: Option<Vec<f64>>,
    pub samples: u64,
    pub seed: u64,
    /// As given on the command line (a name or a path).
    pub tokenizer: String,
    pub tokenizer_id: String,
    pub reserve: u64,
    /// As given (a name or a path, with `:field`).
    pub haystack: String,
    pub haystack_id: String,
    /// A built-in template name or a path.
    pub template: String,
    pub template_hash: String,
    pub split: String,
    pub compression: String,
    pub rows_per_file: Option<u64>,
    pub canary: String,
}

/// A validated generation job.
pub struct Job {
    pub recipe: Recipe,
    /// (split, task) in generation order; one part except for `posgen --split both`.
    pub parts: Vec<(String, Box<dyn Task>)>,
    pub run: Run,
    pub out: PathBuf,
    pub threads: usize,
    pub quiet: bool,
    pub jsonl: bool,
}

impl Recipe {
    /// The dataset config name, e.g. `niah_single`.
    pub fn config_name(&self, task: &dyn Task) -> String {
        format!("{}_{}", task.name(), task.variant())
    }

    /// Number of rows the recipe produces.
    pub fn row_count(&self) -> u64 {
        self.lengths.len() as u64
            * self.depths.as_ref().map_or(1, |d| d.len() as u64)
            * self.samples
    }
}

/// Build the task described by `options`.
pub fn build_task(options: &TaskOptions) -> Result<Box<dyn Task>> {
    match options {
        TaskOptions::Niah {
            keys,
            values,
            queries,
            key_type,
            value_type,
            absent,
            spread,
        } => {
            let key_type = ItemType::parse(key_type, "--key-type").map_err(usage)?;
            let value_type = ItemType::parse(value_type, "--value-type").map_err(usage)?;
            let spread = parse_spread(spread)?;
            let task = Niah::new(
                "single",
                Some(*keys),
                Some(*values),
                Some(*queries),
                key_type,
                value_type,
                Some(*absent),
                spread,
            )
            .map_err(usage)?;
            Ok(Box::new(task))
        }
        TaskOptions::Needlechain {
            kind,
            order,
            question,
            chain,
            diluted,
        } => Ok(Box::new(
            NeedleChain::new(kind, order, Some(question), *chain, *diluted).map_err(usage)?,
        )),
        TaskOptions::Posgen {
            variant,
            modulus,
            near,
            far,
            op,
            train_len,
            test_len,
            split,
            overlap,
            explain,
        } => Ok(Box::new(
            PosGen::new(
                variant, *modulus, *near, *far, op, *train_len, *test_len, split, *overlap,
                *explain,
            )
            .map_err(usage)?,
        )),
        TaskOptions::Sort {
            words,
            digits,
            duplicates,
            descending,
            output,
            items,
            hidden,
        } => Ok(Box::new(
            Sort::new(
                *words,
                *digits,
                *duplicates,
                *descending,
                output,
                *items,
                *hidden,
            )
            .map_err(usage)?,
        )),
        TaskOptions::Arith {
            op,
            digits,
            carries,
            layout,
            count,
        } => Ok(Box::new(
            Arith::new(op, *digits, carries, layout, *count).map_err(usage)?,
        )),
        TaskOptions::Babilong { .. } => {
            let mut parts = build_parts(options, "test")?;
            Ok(parts.remove(0).1)
        }
    }
}

/// Resolve `gen babilong` arguments.
pub fn babilong_options(a: &BabilongArgs) -> Result<TaskOptions> {
    let mut tasks = Vec::new();
    let all = babilong::TASKS;
    for t in a.task.split(',').map(str::trim) {
        if t == "all" {
            tasks.extend(all);
            continue;
        }
        let qa = t
            .strip_prefix("qa")
            .and_then(|n| n.parse::<u8>().ok())
            .filter(|n| (1..=20).contains(n))
            .ok_or_else(|| {
                usage(format!(
                    "invalid --task '{t}': expected qa1 to qa20 (comma-separated) or all"
                ))
            })?;
        tasks.push(qa);
    }
    let mut seen = Vec::new();
    tasks.retain(|t| {
        let new = !seen.contains(t);
        seen.push(*t);
        new
    });
    let facts = match &a.facts {
        None => None,
        Some(f) => Some(parse_range(f, "--facts", "a story size like 20 or 10..50")?),
    };
    let fact_window = {
        let bad = || {
            usage(format!(
                "invalid --fact-window '{}': expected a depth window in percent like 40..60",
                a.fact_window
            ))
        };
        let (lo, hi) = a.fact_window.split_once("..").ok_or_else(bad)?;
        let lo: f64 = lo.trim().parse().map_err(|_| bad())?;
        let hi: f64 = hi.trim().parse().map_err(|_| bad())?;
        (lo, hi)
    };
    let o = TaskOptions::Babilong {
        tasks,
        vocab: a.vocab.clone(),
        facts,
        fact_window,
    };
    build_parts(&o, "test")?;
    if let Some(d) = &a.common.depths {
        let depths = spec::parse_depths(d).map_err(usage)?;
        if let Some(x) = depths
            .iter()
            .find(|&&x| x < fact_window.0 || x > fact_window.1)
        {
            return Err(usage(format!(
                "--depths {x} lies outside --fact-window {}..{}: the first supporting fact goes inside the window",
                fact_window.0, fact_window.1
            )));
        }
    }
    Ok(o)
}

/// Parse `N` or `A..B` into an inclusive range.
fn parse_range(s: &str, option: &str, expected: &str) -> Result<(u32, u32)> {
    let bad = || usage(format!("invalid {option} '{s}': expected {expected}"));
    let (a, b) = s.split_once("..").unwrap_or((s, s));
    let a: u32 = a.trim().parse().map_err(|_| bad())?;
    let b: u32 = b.trim().parse().map_err(|_| bad())?;
    Ok((a, b))
}

/// The (split, task) parts a recipe generates, in order. Everything makes one part, except
/// `posgen --split both`, which makes a train and a test part with disjoint seed tuples, and
/// `babilong`, which makes one config per bAbI task.
pub fn build_parts(options: &TaskOptions, split: &str) -> Result<Vec<(String, Box<dyn Task>)>> {
    if let TaskOptions::Babilong {
        tasks,
        vocab,
        facts,
        fact_window,
    } = options
    {
        return tasks
            .iter()
            .map(|&qa| {
                let task = Babilong::new(qa, vocab, *facts, *fact_window).map_err(usage)?;
                Ok((split.to_string(), Box::new(task) as Box<dyn Task>))
            })
            .collect();
    }
    if let TaskOptions::Posgen { split: s, .. } = options {
        if s == "both" {
            return ["train", "test"]
                .iter()
                .map(|part| {
                    let mut o = options.clone();
                    if let TaskOptions::Posgen { split, .. } = &mut o {
                        *split = part.to_string();
                    }
                    Ok((part.to_string(), build_task(&o)?))
                })
                .collect();
        }
    }
    Ok(vec![(split.to_string(), build_task(options)?)])
}

/// Resolve `gen posgen` arguments.
pub fn posgen_options(a: &PosgenArgs) -> Result<TaskOptions> {
    let o = TaskOptions::Posgen {
        variant: a.variant.clone(),
        modulus: a.modulus,
        near: a.near,
        far: a.far,
        op: a.op.clone(),
        train_len: a.train_len,
        test_len: a.test_len,
        split: a.common.split.clone(),
        overlap: a.overlap,
        explain: a.explain,
    };
    build_parts(&o, &a.common.split)?;
    Ok(o)
}

/// Resolve `gen sort` arguments.
pub fn sort_options(a: &SortArgs) -> Result<TaskOptions> {
    let o = TaskOptions::Sort {
        words: a.words,
        digits: parse_digits(&a.digits)?,
        duplicates: a.duplicates,
        descending: a.descending,
        output: a.output.clone(),
        items: a.items,
        hidden: a.common.haystack.as_deref().is_some_and(|h| h != "none"),
    };
    build_task(&o)?;
    Ok(o)
}

/// Resolve `gen arith` arguments.
pub fn arith_options(a: &ArithArgs) -> Result<TaskOptions> {
    let o = TaskOptions::Arith {
        op: a.op.clone(),
        digits: parse_digits(&a.digits)?,
        carries: a.carries.clone(),
        layout: a.layout.clone(),
        count: a.count,
    };
    build_task(&o)?;
    Ok(o)
}

/// Resolve `gen needlechain` arguments into task options.
pub fn needlechain_options(args: &NeedlechainArgs) -> Result<TaskOptions> {
    let diluted = args.common.haystack.as_deref().is_some_and(|h| h != "none");
    let task = NeedleChain::new(
        &args.kind,
        &args.order,
        args.question.as_deref(),
        args.chain,
        diluted,
    )
    .map_err(usage)?;
    Ok(TaskOptions::Needlechain {
        kind: args.kind.clone(),
        order: args.order.clone(),
        question: task.question_name().to_string(),
        chain: args.chain,
        diluted,
    })
}

fn parse_spread(s: &str) -> Result<Spread> {
    match s {
        "random" => Ok(Spread::Random),
        "even" => Ok(Spread::Even),
        _ => Err(usage(format!(
            "invalid --spread '{s}': expected random or even"
        ))),
    }
}

/// Resolve `gen niah` arguments into task options.
pub fn niah_options(args: &NiahArgs) -> Result<TaskOptions> {
    let key_type = ItemType::parse(&args.key_type, "--key-type").map_err(usage)?;
    let value_type = ItemType::parse(&args.value_type, "--value-type").map_err(usage)?;
    let spread = parse_spread(&args.spread)?;
    let niah = Niah::new(
        &args.variant,
        args.keys,
        args.values,
        args.queries,
        key_type,
        value_type,
        args.absent.then_some(true),
        spread,
    )
    .map_err(usage)?;
    Ok(TaskOptions::Niah {
        keys: niah.keys,
        values: niah.values,
        queries: niah.queries,
        key_type: args.key_type.clone(),
        value_type: args.value_type.clone(),
        absent: niah.absent,
        spread: args.spread.clone(),
    })
}

/// Load the tokenizer, haystack and template a recipe names, and check the template renders
/// with the task's variables.
pub fn prepare_run(
    task: &dyn Task,
    tokenizer: &str,
    haystack: &str,
    template: &str,
    seed: u64,
    reserve: Option<u64>,
) -> Result<Run> {
    let tok = Tokenizer::from_name(tokenizer).map_err(usage)?;
    let (kind, corpus) = match haystack {
        "none" if task.requires_haystack() => {
            return Err(usage(format!(
                "--haystack none does not apply: {} {} needs a haystack",
                task.name(),
                task.variant()
            )))
        }
        "none" => (None, None),
        "generated" => (Some(HaystackKind::Generated), None),
        "noise" => (Some(HaystackKind::Noise), None),
        "needles" if task.name() != "niah" => {
            return Err(usage(format!(
                "--haystack needles is only for niah, not {}",
                task.name()
            )))
        }
        "needles" => (Some(HaystackKind::Needles), None),
        path => {
            let docs = corpus::read_documents(path)?;
            let corpus = Corpus::from_documents(path, &docs).map_err(usage)?;
            (Some(HaystackKind::Corpus), Some(Arc::new(corpus)))
        }
    };
    let haystack = kind
        .map(|kind| Haystack::prepare(kind, corpus, &tok).map_err(usage))
        .transpose()?;
    let (template_name, source) = load_template(task.name(), template)?;
    let template = Template::compile(&template_name, &source).map_err(usage)?;
    template.frame(&task.example_vars()).map_err(usage)?;
    Ok(Run {
        tokenizer: tok,
        haystack,
        template,
        seed,
        reserve: reserve.unwrap_or(task.max_new_tokens() as u64),
    })
}

fn load_template(task: &str, template: &str) -> Result<(String, String)> {
    if let Some(src) = templates::builtin(task, template) {
        return Ok((format!("templates/{task}/{template}.j2"), src.to_string()));
    }
    let path = Path::new(template);
    if template.ends_with(".j2") || template.contains('/') || path.exists() {
        let src = std::fs::read_to_string(path)
            .map_err(|e| usage(format!("cannot read template '{template}': {e}")))?;
        return Ok((template.to_string(), src));
    }
    Err(usage(format!(
        "unknown template '{template}' for {task}: expected one of {} or a path to a .j2 file",
        templates::names(task).join(", ")
    )))
}

/// Validate common arguments and build the job.
pub fn build_job(options: TaskOptions, common: &CommonArgs) -> Result<Job> {
    let parts = build_parts(&options, &common.split)?;
    let task = &parts[0].1;
    let story_alone = matches!(options, TaskOptions::Babilong { .. });
    let lengths = match common.len.as_deref().or(options.default_len()) {
        Some(len) => spec::parse_lengths(len, story_alone).map_err(usage)?,
        // No length target: the task's native size. Recorded as target_length 0.
        None => vec![0],
    };
    let depths = match (&common.depths, task.uses_haystack()) {
        (Some(d), true) => Some(spec::parse_depths(d).map_err(usage)?),
        (None, true) => task.default_depths(),
        (Some(d), false) => {
            return Err(usage(format!(
                "--depths {d} does not apply: {} has no haystack",
                task.name()
            )))
        }
        (None, false) => None,
    };
    if depths.is_some() && common.depths.is_some() && lengths.contains(&0) {
        return Err(usage(
            "--depths does not apply at --len 0: that is the story alone, with no filler",
        ));
    }
    if common.samples == 0 || common.samples > 10_000_000 {
        return Err(usage(format!(
            "invalid --samples {}: expected 1 to 10000000",
            common.samples
        )));
    }
    if !valid_split(&common.split) {
        return Err(usage(format!(
            "invalid --split '{}': split names are letters, digits and underscores, optionally dot-separated (like test or test.v2)",
            common.split
        )));
    }
    if !matches!(common.compression.as_str(), "zstd" | "snappy" | "none") {
        return Err(usage(format!(
            "invalid --compression '{}': expected zstd, snappy or none",
            common.compression
        )));
    }
    if common.rows_per_file == Some(0) {
        return Err(usage(
            "invalid --rows-per-file 0: expected a positive number",
        ));
    }
    let threads = match common.threads {
        Some(0) => return Err(usage("invalid --threads 0: expected a positive number")),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    if let Some(c) = &common.canary {
        if c.trim().is_empty() || c.contains('\n') {
            return Err(usage(
                "invalid --canary: expected a non-empty single-line string",
            ));
        }
    }

    let haystack = common.haystack.clone().unwrap_or_else(|| {
        if task.requires_haystack() {
            "generated"
        } else {
            "none"
        }
        .to_string()
    });
    let run = prepare_run(
        task.as_ref(),
        &common.tokenizer,
        &haystack,
        &common.template,
        common.seed,
        common.reserve,
    )?;
    let (mut minimum, mut needs) = (0, String::new());
    for (_, part) in &parts {
        let m = part.minimum_length(&run).map_err(usage)?;
        if m > minimum {
            (minimum, needs) = (m, format!("{} {}", part.name(), part.variant()));
        }
    }
    if let Some(&short) = lengths.iter().find(|&&l| l > 0 && l < minimum) {
        return Err(usage(format!(
            "--len {short} is too short for {needs} with these options, template, tokenizer and reserve {}: the minimum is {minimum} tokens",
            run.reserve
        )));
    }

    let out = common.out.clone().unwrap_or_else(|| {
        PathBuf::from("datasets").join(format!("{}-s{}", task.name(), common.seed))
    });
    if out.exists() {
        let non_empty = std::fs::read_dir(&out)
            .with_context(|| format!("cannot read --out {}", out.display()))?
            .next()
            .is_some();
        if !out.is_dir() {
            return Err(usage(format!(
                "--out {} exists and is not a directory",
                out.display()
            )));
        }
        if non_empty && !common.force {
            return Err(usage(format!(
                "--out {} exists and is not empty: choose another directory or pass --force to replace it",
                out.display()
            )));
        }
    }

    let mut recipe = Recipe {
        options,
        lengths,
        depths,
        samples: common.samples,
        seed: common.seed,
        tokenizer: common.tokenizer.clone(),
        tokenizer_id: run.tokenizer.id(),
        reserve: run.reserve,
        haystack,
        haystack_id: run.haystack_id(),
        template: common.template.clone(),
        template_hash: run.template.content_hash.clone(),
        split: common.split.clone(),
        compression: common.compression.clone(),
        rows_per_file: common.rows_per_file,
        canary: String::new(),
    };
    recipe.canary = match &common.canary {
        Some(c) => c.clone(),
        None => derived_canary(&recipe),
    };
    Ok(Job {
        recipe,
        parts,
        run,
        out,
        threads,
        quiet: common.quiet,
        jsonl: common.jsonl,
    })
}

/// A GUID derived from the recipe: unique per dataset, yet the same on every rerun so the
/// files stay byte-identical.
fn derived_canary(recipe: &Recipe) -> String {
    let json = serde_json::to_string(recipe).unwrap_or_default();
    let h = xxhash_rust::xxh3::xxh3_128(json.as_bytes());
    let hi = ((h >> 64) as u64 & 0xffff_ffff_ffff_0fff) | 0x4000;
    let lo = (h as u64 & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xffff,
        hi & 0xffff,
        lo >> 48,
        lo & 0xffff_ffff_ffff
    )
}

fn valid_split(s: &str) -> bool {
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
