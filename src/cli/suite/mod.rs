//! `gen suite NAME|FILE.toml`: several tasks as one dataset. A suite is TOML: shared keys at the
//! top (`seed`, `tokenizer`, `lengths`, `depths`, `samples`, …), then one `[[task]]` table per
//! entry with `task = "niah"` (the subcommand), an optional config `name`, and the task's
//! options under their flag names with underscores (`key_type = "uuids"`). Each entry becomes
//! the command line it stands for and goes through the very parsing and checks of that command,
//! so a suite entry and a command make the same recipe. Common options on the command line
//! override the file everywhere. Built-in suites are such files, embedded.

pub mod file;
pub mod options;

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{Args, Parser};
use needlework_generators::tasks;

use crate::cli::common::{threads, ShardArgs};
use crate::cli::{Cli, Command};
use crate::dataset::head::{config_clash, valid_config, Skipped, Suite, SuiteEntry};
use crate::run::fresh::Fresh;
use crate::run::paths;
use crate::run::prepare::{check_out, entry_of, plan, Entry, InputNames, Job};
use crate::run::recipe::{build_parts, derived_canary, BUILTIN_HAYSTACKS};
use crate::run::shard::Rerun;
use crate::tasks::{flag_of, flags_of, task_ids, worded};
use crate::usage::{usage, UsageError};
use file::{parse, Setting, SuiteFile, Word, BUILTIN_SUITES, PLACEHOLDERS};
use options::{fresh_options, overrides, placeholder, public_seed, suite_command};

/// `gen suite`: a suite's entries, with the common options that override the suite's.
#[derive(Debug, Args, Clone)]
pub struct SuiteArgs {
    /// A built-in suite (ruler, ruler2, babilong, reasoning, frontier) or a .toml suite file.
    pub suite: String,
    /// The QA file of the suite's `{qa_data}` entries: SQuAD JSON for ruler's qa_1, HotpotQA
    /// JSON for ruler2's qa_basic..qa_hard; without it they are skipped.
    #[arg(long)]
    pub qa_data: Option<String>,
    /// HotpotQA JSON for the suite's `{qa2_data}` entries (RULER's qa_2); without it they are skipped.
    #[arg(long)]
    pub qa2_data: Option<String>,
    /// The MMLU directory of the suite's `{mmlu_data}` entries (ruler2's mk/mv easy..hard): the
    /// Hub's cais/mmlu `all` config (test-*.parquet and auxiliary_train-*.parquet, or
    /// test.jsonl and auxiliary_train.jsonl); without it they are skipped.
    #[arg(long)]
    pub mmlu_data: Option<String>,
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

/// Keys every entry may set (or inherit from the top of the suite).
const ENTRY_KEYS: &[&str] = &[
    "lengths", "depths", "samples", "reserve", "haystack", "template", "split",
];

/// Keys only the top of a suite sets: one value for the whole dataset.
const DATASET_KEYS: &[&str] = &[
    "seed",
    "tokenizer",
    "chat_template",
    "system",
    "compression",
    "rows_per_file",
    "canary",
    "depth_per_sample",
    "about",
    "private",
    "seed_file",
    "disjoint_from",
    "controls",
];

/// Dataset keys the suite resolves itself (one seed file, one exclusion for every entry)
/// rather than handing to each entry's command.
const FRESH_KEYS: &[&str] = &["private", "seed_file", "disjoint_from"];

/// Command-line options a suite file does not set.
const NOT_SUITE_KEYS: &[&str] = &[
    "len",
    "out",
    "force",
    "threads",
    "quiet",
    "jsonl",
    "num_shards",
    "shard_index",
];

/// A suite entry's task command, resolved into its parameters and checked configuration.
fn resolve(cli: &Cli) -> Result<(tasks::TaskParams, crate::run::config::Config)> {
    match &cli.command {
        Command::Task(t) => t.resolve(),
        _ => Err(usage("not a task")),
    }
}

/// Whether `task` is a generating command of this build.
fn is_task(task: &str) -> bool {
    tasks::TASKS.iter().any(|(n, _)| *n == task)
}

/// Where a suite came from: a built-in name or a file.
struct Source {
    /// As the manifest records it: the name, or the file's recorded path.
    recorded: String,
    /// The name datasets default to (`ruler`, or the file's stem).
    name: String,
    /// The TOML text.
    text: String,
    /// Whether built in: built-in suites may list tasks this build lacks (skipped, named).
    builtin: bool,
    /// The file, for error messages (`ruler.toml` for a built-in).
    shown: String,
}

fn source(given: &str) -> Result<Source> {
    if let Some((name, text)) = BUILTIN_SUITES.iter().find(|(n, _)| *n == given) {
        return Ok(Source {
            recorded: name.to_string(),
            name: name.to_string(),
            text: text.to_string(),
            builtin: true,
            shown: format!("suite {name}"),
        });
    }
    let path = Path::new(given);
    if !(given.ends_with(".toml") || given.contains('/') || path.exists()) {
        return Err(usage(format!(
            "unknown suite '{given}': expected {} or a path to a .toml suite file",
            BUILTIN_SUITES
                .iter()
                .map(|s| s.0)
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let bytes = paths::read_input(path, paths::MAX_TEMPLATE_BYTES, "suite file")?;
    let text =
        String::from_utf8(bytes).map_err(|_| usage(format!("suite file {given} is not UTF-8")))?;
    let recorded = paths::record(given);
    Ok(Source {
        name: path
            .file_stem()
            .map_or_else(|| "suite".into(), |s| s.to_string_lossy().into_owned()),
        recorded,
        text,
        builtin: false,
        shown: given.to_string(),
    })
}

/// A refusal about one place of the suite: `FILE:LINE: message`, still exit 2 when it was.
fn at(shown: &str, line: usize, e: anyhow::Error) -> anyhow::Error {
    match e.downcast_ref::<UsageError>() {
        Some(u) => usage(format!("{shown}:{line}: {u}")),
        None => e.context(format!("{shown}:{line}")),
    }
}

/// The value of a dataset-wide or entry key: the command line's, else the entry's, else the
/// top's.
fn setting<'a>(key: &str, entry: &'a [Setting], top: &'a [Setting]) -> Option<&'a Setting> {
    entry
        .iter()
        .find(|s| s.key == key)
        .or_else(|| top.iter().find(|s| s.key == key))
}

/// The flag a suite key of `task`'s entry sets: a task key is its argument's id, a common
/// key its option's name (`lengths` sets `--len`).
fn key_flag(task: &str, key: &str) -> String {
    if key == "lengths" {
        "--len".into()
    } else {
        flag_of(task, key)
    }
}

/// A config name `c` may join the `earlier` ones (each with its [[task]]'s line) unless it
/// names the same folder as one of them — the same name, or one differing only in case, which
/// case-insensitive file systems and the Hub take for one — or a folder gen writes into every
/// dataset (export's and score's), which would replace its data.
fn check_config_name(c: &str, earlier: &[(String, usize)]) -> std::result::Result<(), String> {
    let names: Vec<&str> = earlier.iter().map(|(n, _)| n.as_str()).collect();
    match config_clash(c, &names) {
        None => Ok(()),
        Some((Some(i), why)) => Err(format!(
            "{why} (the config of the [[task]] at line {}): give one of them another name",
            earlier[i].1
        )),
        Some((None, why)) => Err(format!("{why}: give the config another name")),
    }
}

/// A suite's entries, each checked like its command, with the suite's record; skipped entries
/// named. Every entry shares `fresh` (one private seed, one exclusion). Nothing is written.
fn expand(
    a: &SuiteArgs,
    src: &Source,
    file: &SuiteFile,
    fresh: &Fresh,
) -> Result<(Vec<Entry>, Vec<Skipped>)> {
    for s in &file.top {
        let known = DATASET_KEYS.contains(&s.key.as_str()) || ENTRY_KEYS.contains(&s.key.as_str());
        if !known {
            let hint = if NOT_SUITE_KEYS.contains(&s.key.as_str()) {
                format!("{} is given on the command line, not in a suite", s.key)
            } else {
                format!(
                    "unknown key '{}' at the top of the suite: expected {}, {} or [[task]] tables",
                    s.key,
                    DATASET_KEYS.join(", "),
                    ENTRY_KEYS.join(", ")
                )
            };
            return Err(usage(format!("{}:{}: {hint}", src.shown, s.line)));
        }
    }
    let cli = overrides(a);
    let depth_per_sample = setting("depth_per_sample", &[], &file.top)
        .map(|s| s.word == Word::Switch(true))
        .unwrap_or(false);
    let mut entries: Vec<Entry> = Vec::new();
    let mut lines: Vec<usize> = Vec::new();
    let mut skipped = Vec::new();
    let mut configs: Vec<(String, usize)> = Vec::new();
    for spec in &file.tasks {
        let shown_name = spec.name.clone().unwrap_or_else(|| spec.task.clone());
        let here = |msg: String| usage(format!("{}:{}: {msg}", src.shown, spec.line));
        if !is_task(&spec.task) {
            if src.builtin {
                skipped.push(Skipped {
                    config: shown_name,
                    why: format!("task '{}' is not in this build of gen", spec.task),
                });
                continue;
            }
            return Err(here(format!(
                "unknown task '{}': expected one of {}",
                spec.task,
                tasks::TASKS
                    .iter()
                    .map(|t| t.0)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let own = task_ids(&spec.task);
        let mut argv = vec!["gen".to_string(), spec.task.clone()];
        let mut missing: Option<String> = None;
        for s in &spec.settings {
            let bad = |m: String| usage(format!("{}:{}: {m}", src.shown, s.line));
            if DATASET_KEYS.contains(&s.key.as_str()) {
                return Err(bad(format!(
                    "{} is one value for the whole dataset: set it at the top of the suite",
                    s.key
                )));
            }
            if ENTRY_KEYS.contains(&s.key.as_str()) {
                continue;
            }
            if !own.contains(&s.key) {
                return Err(bad(format!(
                    "unknown key '{}' for {}: expected name, {}, {}",
                    s.key,
                    spec.task,
                    own.join(", "),
                    ENTRY_KEYS.join(", ")
                )));
            }
            match &s.word {
                Word::Switch(true) => argv.push(key_flag(&spec.task, &s.key)),
                Word::Switch(false) => {}
                Word::List(_) => return Err(bad(format!("{} takes one value", s.key))),
                Word::Text(t) => {
                    let t = match PLACEHOLDERS.iter().find(|(p, _)| p == t) {
                        Some((p, opt)) => match placeholder(a, p) {
                            Some(g) => g.clone(),
                            None => {
                                missing = Some(format!("no {opt} given"));
                                continue;
                            }
                        },
                        None if t.starts_with('{') && t.ends_with('}') => {
                            return Err(bad(format!(
                                "unknown placeholder {t}: expected {}",
                                PLACEHOLDERS
                                    .iter()
                                    .map(|p| p.0)
                                    .collect::<Vec<_>>()
                                    .join(" or ")
                            )))
                        }
                        None => t.clone(),
                    };
                    argv.push(format!("{}={t}", key_flag(&spec.task, &s.key)));
                }
            }
        }
        if let Some(why) = missing {
            skipped.push(Skipped {
                config: shown_name,
                why,
            });
            continue;
        }
        // Common keys: the command line's value, else the entry's, else the top's.
        let mut common_flags: Vec<String> = Vec::new();
        for key in ENTRY_KEYS.iter().chain(DATASET_KEYS) {
            if ["depths", "samples", "depth_per_sample", "about"].contains(key)
                || FRESH_KEYS.contains(key)
            {
                continue;
            }
            let word = cli
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, w)| w.clone())
                .or_else(|| setting(key, &spec.settings, &file.top).map(|s| s.word.clone()));
            match word {
                Some(Word::Text(t)) => {
                    common_flags.push(format!("{}={t}", key_flag(&spec.task, key)))
                }
                Some(Word::Switch(_)) => {
                    return Err(here(format!("{key} takes a value, not true/false")))
                }
                Some(Word::List(_)) => return Err(here(format!("{key} takes one value"))),
                None => {}
            }
        }
        let pick = |key: &str| -> Result<Option<String>> {
            match cli
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, w)| w.clone())
                .or_else(|| setting(key, &spec.settings, &file.top).map(|s| s.word.clone()))
            {
                Some(Word::Text(t)) => Ok(Some(t)),
                Some(Word::Switch(_)) => Err(here(format!("{key} takes a value, not true/false"))),
                Some(Word::List(_)) => Err(here(format!("{key} takes one value"))),
                None => Ok(None),
            }
        };
        let (depths, samples) = (pick("depths")?, pick("samples")?);
        argv.extend(common_flags);
        let parse_entry = |argv: &[String]| -> Result<Cli> {
            Cli::try_parse_from(argv).map_err(|e| {
                let text = e.render().to_string();
                let first = text
                    .lines()
                    .next()
                    .unwrap_or("bad option")
                    .trim_start_matches("error: ")
                    .to_string();
                here(format!("[[task]] {shown_name}: {first}"))
            })
        };
        // RULER draws one depth per sample: a haystack task gets `samples` evenly spaced
        // depths of one sample each, so a config has samples × lengths rows.
        let spread = if depth_per_sample && depths.is_none() {
            let (options, config) = resolve(&parse_entry(&argv)?)
                .map_err(|e| at(&src.shown, spec.line, worded(e, &spec.task)))?;
            let parts = build_parts(&options, &config.split)
                .map_err(|e| at(&src.shown, spec.line, worded(e, &spec.task)))?;
            parts[0].1.uses_haystack()
        } else {
            false
        };
        match (spread, samples) {
            (true, s) => argv.extend([
                format!("--depths={}", s.as_deref().unwrap_or("1")),
                "--samples=1".into(),
            ]),
            (false, s) => {
                argv.extend(depths.map(|d| format!("--depths={d}")));
                argv.extend(s.map(|s| format!("--samples={s}")));
            }
        }
        let mut entry = resolve(&parse_entry(&argv)?)
            .and_then(|(o, config)| {
                let (recipe, parts) = plan(o, &config, InputNames::Record)?;
                entry_of(recipe, parts, &config, fresh)
            })
            .map_err(|e| {
                let e = worded(e, &spec.task);
                let e = match e.downcast_ref::<UsageError>() {
                    Some(u) => usage(format!("[[task]] {shown_name}: {u}")),
                    None => e,
                };
                at(&src.shown, spec.line, e)
            })?;
        let made: Vec<String> = {
            let mut c: Vec<String> = Vec::new();
            for (_, t) in &entry.parts {
                let n = entry.recipe.config_name(t.as_ref());
                if !c.contains(&n) {
                    c.push(n);
                }
            }
            c
        };
        if let Some(name) = &spec.name {
            if made.len() > 1 {
                return Err(here(format!(
                    "name = \"{name}\" names one config, but this [[task]] makes {}: drop name",
                    made.join(", ")
                )));
            }
            if !valid_config(name) {
                return Err(here(format!(
                    "invalid name '{name}': config names are letters, digits and underscores"
                )));
            }
            entry.config = Some(name.clone());
        }
        for c in entry
            .config
            .iter()
            .cloned()
            .map(|c| vec![c])
            .next()
            .unwrap_or(made)
        {
            check_config_name(&c, &configs).map_err(here)?;
            configs.push((c, spec.line));
        }
        entries.push(entry);
        lines.push(spec.line);
    }
    if entries.is_empty() {
        return Err(usage(format!(
            "{}: no entry can be made: {}",
            src.shown,
            skipped
                .iter()
                .map(|s| format!("{} ({})", s.config, s.why))
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }
    // One canary for the dataset: the one given, else one derived from every entry's recipe.
    let given = entries[0].recipe.canary.clone();
    let explicit = a.canary.is_some() || setting("canary", &[], &file.top).is_some();
    if !explicit {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        for e in &entries {
            let mut r = e.recipe.clone();
            r.canary.clear();
            h.update(derived_canary(&r).as_bytes());
            h.update(e.config.as_deref().unwrap_or("").as_bytes());
        }
        let d = h.digest128();
        let canary = needlework_generators::hash::uuid_v4((d >> 64) as u64, d as u64);
        for e in &mut entries {
            e.recipe.canary = canary.clone();
        }
    } else {
        for e in &mut entries {
            e.recipe.canary = given.clone();
        }
    }
    Ok((entries, skipped))
}

/// `gen suite`: expand the suite, check everything, and build the job.
pub fn build_suite_job(a: &SuiteArgs) -> Result<Job> {
    let threads = threads(a.threads)?;
    let shard = crate::cli::sched::shard_of(a.shard.num_shards, a.shard.shard_index)?;
    let src = source(&a.suite)?;
    let file = parse(&src.text).map_err(|(line, e)| usage(format!("{}:{line}: {e}", src.shown)))?;
    let command = suite_command(a, &src.recorded)?;
    let options = fresh_options(a, &src.shown, &file)?;
    let out = a.out.clone().unwrap_or_else(|| {
        let name = if options.private {
            format!("{}-private", src.name)
        } else {
            format!("{}-s{}", src.name, public_seed(a, &file))
        };
        PathBuf::from("datasets").join(match shard {
            Some(s) => s.default_dir(&name),
            None => name,
        })
    });
    let fresh = Fresh::open(
        options.private,
        options.seed_file.as_deref(),
        &options.disjoint,
        &out,
    )?;
    let (entries, skipped) = expand(a, &src, &file, &fresh)?;
    let mut inputs: Vec<(&'static str, String)> = vec![("suite", a.suite.clone())];
    inputs.extend(a.qa_data.iter().map(|q| ("--qa-data", q.clone())));
    inputs.extend(a.qa2_data.iter().map(|q| ("--qa2-data", q.clone())));
    inputs.extend(a.mmlu_data.iter().map(|q| ("--mmlu-data", q.clone())));
    for e in &entries {
        let r = &e.recipe;
        // Each input named by the flag that gives it (qa's haystack is its --data file).
        if !BUILTIN_HAYSTACKS.contains(&r.haystack.as_str()) {
            inputs.push((flags_of(&r.options).haystack_flag, r.haystack.clone()));
        }
        inputs.push(("--template", r.template.clone()));
        inputs.push(("--tokenizer", r.tokenizer.clone()));
        inputs.extend(
            r.chat_template
                .iter()
                .map(|c| ("--chat-template", c.clone())),
        );
    }
    let lock = check_out(&out, a.force, Rerun::of(shard), &inputs)?;
    if !a.quiet {
        for s in &skipped {
            eprintln!("skipped {}: {}", s.config, s.why);
        }
    }
    let hash = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(src.text.as_bytes()));
    let suite = Suite {
        source: src.recorded.clone(),
        hash,
        skipped,
        entries: entries
            .iter()
            .map(|e| SuiteEntry {
                config: e.config.clone(),
                recipe: e.recipe.clone(),
            })
            .collect(),
    };
    Ok(Job {
        suite: Some((command, suite)),
        entries,
        out,
        threads,
        quiet: a.quiet,
        jsonl: a.jsonl,
        shard,
        force: a.force,
        seed_file: fresh.seed_file,
        _lock: lock,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_suites_parse() {
        for (name, text) in BUILTIN_SUITES {
            let f = parse(text).unwrap_or_else(|e| panic!("{name}: {e:?}"));
            assert!(!f.tasks.is_empty(), "{name}");
        }
    }

    #[test]
    fn task_keys_are_flag_names_with_underscores() {
        let k = task_ids("niah");
        assert!(k.contains(&"key_type".to_string()) && k.contains(&"variant".to_string()));
        assert!(!k.contains(&"seed".to_string()) && !k.contains(&"len".to_string()));
        assert!(task_ids("babilong").contains(&"tasks".to_string()));
    }
}
