//! Preparation: validate the common arguments, load the tokenizer, haystack and template a
//! recipe names, check the output directory, and assemble one checked [`Job`] before anything
//! is written.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use needlework_generators::chat::{ChatTemplate, Reader};
use needlework_generators::tasks::TaskParams;
use needlework_generators::tokenizer::BUILTIN_TOKENIZERS;
use needlework_generators::{
    tasks, Corpus, Haystack, HaystackKind, Run, Task, Template, Tokenizer,
};

use crate::dataset::head::Suite;
use crate::dataset::lock::OutLock;
use crate::run::config::Config;
use crate::run::corpus;
use crate::run::disjoint::Exclusion;
use crate::run::fresh::Fresh;
use crate::run::mmlu;
use crate::run::paths;
use crate::run::private::{Private, SeedFile};
use crate::run::recipe::{build_parts, derived_canary, Excluded, Recipe, BUILTIN_HAYSTACKS};
use crate::run::shard::{Rerun, Shard};
use crate::usage::{refused, usage};

/// One recipe of a dataset, ready to generate: a command's only entry, or one of a suite's.
pub struct Entry {
    /// The config name a suite gives the entry (`niah_single_1`), else the task's own.
    pub config: Option<String>,
    /// What the manifest records.
    pub recipe: Recipe,
    /// (split, task) in generation order; one part except for `posgen --split both` and
    /// several babilong tasks.
    pub parts: Parts,
    /// Inputs shared by every instance.
    pub run: Run,
    /// The identities the rows must not share (`--disjoint-from`), if any: one for the
    /// dataset, shared by a suite's entries.
    pub exclusion: Option<Arc<Exclusion>>,
    /// A private split's seed file, kept once every check has passed.
    pub seed_file: Option<SeedFile>,
}

/// A validated generation job.
pub struct Job {
    /// For `gen suite`: the command the manifest records and the suite (a one-command
    /// dataset's command is rendered from its recipe).
    pub suite: Option<(Vec<String>, Suite)>,
    /// The recipes to generate, in order (one unless a suite).
    pub entries: Vec<Entry>,
    /// The dataset directory (a shard's part directory with `shard`).
    pub out: PathBuf,
    /// Worker threads.
    pub threads: usize,
    /// No progress bar.
    pub quiet: bool,
    /// Also write JSON Lines mirrors.
    pub jsonl: bool,
    /// Only this shard's rows, into a part directory for `gen merge`.
    pub shard: Option<Shard>,
    /// `--force`: a shard's complete part in `out` is made again instead of kept.
    pub force: bool,
    /// A newly drawn private seed, written to its file once every check has passed.
    pub seed_file: Option<SeedFile>,
    /// The lock on `out`, held until the job (and so the generation) is dropped.
    pub _lock: OutLock,
}

/// `8-4-4-4-12` hexadecimal digits: the canary form training pipelines filter on.
fn is_guid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The name a recipe records for a built-in tokenizer: the first of its names in
/// `gen list tokenizers` (`o200k` for `o200k_base`), so every spelling makes one recipe.
pub fn builtin_tokenizer(name: &str) -> Option<&'static str> {
    let id = Tokenizer::builtin(name)?.id();
    BUILTIN_TOKENIZERS
        .iter()
        .map(|(n, _)| *n)
        .find(|n| Tokenizer::builtin(n).is_some_and(|t| t.id() == id))
}

/// A built-in tokenizer by name, or a tokenizer.json read from disk.
pub fn load_tokenizer(name: &str) -> Result<Tokenizer> {
    if let Some(tok) = Tokenizer::builtin(name) {
        return Ok(tok);
    }
    let path = Path::new(name);
    if path.extension().is_some_and(|e| e == "json") || path.exists() {
        let bytes = paths::read_input(path, paths::MAX_TOKENIZER_BYTES, "tokenizer file")?;
        return Tokenizer::from_json_bytes(&bytes, name).map_err(usage);
    }
    Err(usage(format!(
        "unknown tokenizer '{name}': expected o200k, cl100k, gpt2, words, chars, or a path to a tokenizer.json"
    )))
}

/// The haystack a recipe names (a built-in name or a corpus path), prepared for `tok`; `None`
/// for `none`.
pub fn load_haystack(task: &dyn Task, haystack: &str, tok: &Tokenizer) -> Result<Option<Haystack>> {
    if task.reads_mmlu() {
        return mmlu::load_mmlu(task, haystack).map(Some);
    }
    if task.reads_documents() {
        return corpus::load_documents(task, haystack).map(Some);
    }
    let (kind, corpus) = match haystack {
        "none" if task.requires_haystack() => {
            return Err(usage(format!(
                "--haystack none does not apply: {} {} needs a haystack",
                task.name(),
                task.variant()
            )))
        }
        "none" => return Ok(None),
        "generated" => (HaystackKind::Generated, None),
        "noise" => (HaystackKind::Noise, None),
        "needles" if !task.takes_needle_haystack() => {
            return Err(usage(format!(
                "--haystack needles is only for niah, not {}",
                task.name()
            )))
        }
        "needles" => (HaystackKind::Needles, None),
        path => {
            let docs = corpus::read_documents(path)?;
            let corpus = Corpus::from_documents(path, &docs).map_err(usage)?;
            (HaystackKind::Corpus, Some(Arc::new(corpus)))
        }
    };
    Ok(Some(Haystack::prepare(kind, corpus, tok).map_err(usage)?))
}

/// A built-in template by name or a template file, compiled and checked to render with the
/// task's variables.
pub fn load_template(task: &dyn Task, template: &str) -> Result<Template> {
    let (name, source) = template_source(task.name(), template)?;
    let template = Template::compile(&name, &source).map_err(usage)?;
    template.frame(&task.example_vars()).map_err(usage)?;
    Ok(template)
}

/// Load the tokenizer, haystack and template a recipe names, and check the template renders
/// with the task's variables.
pub fn prepare_run(
    task: &dyn Task,
    tokenizer: &str,
    haystack: &str,
    template: &str,
    (seed, reserve): (needlework_generators::rng::Seed, u64),
    (chat_template, system): (Option<&str>, Option<&str>),
) -> Result<Run> {
    let tokenizer = load_tokenizer(tokenizer)?;
    let haystack = load_haystack(task, haystack, &tokenizer)?;
    let template = load_template(task, template)?;
    let chat = chat_template
        .map(|p| load_chat_template(p, &tokenizer))
        .transpose()?;
    Ok(Run {
        tokenizer,
        haystack,
        template,
        seed,
        reserve,
        reader: Reader {
            chat: chat.map(Arc::new),
            system: system.map(str::to_string),
        },
    })
}

/// A chat template file, compiled and checked: it renders, keeps the user message, opens the
/// model's turn, and its special tokens are special tokens of the tokenizer (a built-in
/// encoding would otherwise count `<|im_start|>` as six tokens of text).
pub fn load_chat_template(path: &str, tok: &Tokenizer) -> Result<ChatTemplate> {
    let bytes = paths::read_input(Path::new(path), paths::MAX_TEMPLATE_BYTES, "chat template")?;
    // A model's chat_template.jinja is read with the tokenizer_config.json beside it (its
    // bos_token and eos_token), as transformers reads them.
    let config = Path::new(path)
        .parent()
        .map(|d| d.join("tokenizer_config.json"))
        .filter(|c| !path.ends_with(".json") && c.is_file())
        .map(|c| paths::read_input(&c, paths::MAX_TEMPLATE_BYTES, "tokenizer config"))
        .transpose()?;
    let chat = ChatTemplate::from_bytes_beside(&bytes, path, config.as_deref()).map_err(usage)?;
    if let Some(specials) = tok.builtin_specials() {
        let probe = chat.render(None, "x", true).map_err(usage)?;
        let mut markers: Vec<&str> = probe
            .match_indices("<|")
            .filter_map(|(i, _)| probe[i..].find("|>").map(|j| &probe[i..i + j + 2]))
            .collect();
        markers.extend(
            [chat.bos_token.as_str(), chat.eos_token.as_str()]
                .into_iter()
                .filter(|t| !t.is_empty() && probe.contains(*t)),
        );
        if let Some(m) = markers.iter().find(|m| !specials.contains(m)) {
            return Err(usage(format!(
                "chat template {path} uses the special token {m}, which the {} tokenizer does not have: give the model's tokenizer.json with --tokenizer",
                tok.id()
            )));
        }
    }
    Ok(chat)
}

fn template_source(task: &str, template: &str) -> Result<(String, String)> {
    if let Some(src) = tasks::builtin_template(task, template) {
        return Ok((format!("templates/{task}/{template}.j2"), src.to_string()));
    }
    let path = Path::new(template);
    if template.ends_with(".j2") || template.contains('/') || path.exists() {
        let bytes = paths::read_input(path, paths::MAX_TEMPLATE_BYTES, "template")?;
        let src = String::from_utf8(bytes)
            .map_err(|_| usage(format!("template '{template}' is not UTF-8")))?;
        return Ok((template.to_string(), src));
    }
    Err(usage(format!(
        "unknown template '{template}' for {task}: expected one of {} or a path to a .j2 file",
        tasks::templates(task)
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

/// How a recipe takes its input names: a command line's paths are recorded portably
/// ([`paths::record`]); a command rendered from a recipe already holds recorded paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputNames {
    /// Record each path relative to the working directory.
    Record,
    /// Take each name as it stands.
    AsRecorded,
}

/// The (split, task) parts of a recipe, in generation order.
pub type Parts = Vec<(String, Box<dyn Task>)>;

/// The haystack a command asks for: `--haystack`, else `generated` where a haystack is needed
/// and `none` elsewhere.
fn haystack_of(config: &Config, task: &dyn Task) -> String {
    config.haystack.clone().unwrap_or_else(|| {
        if task.requires_haystack() {
            "generated"
        } else {
            "none"
        }
        .to_string()
    })
}

/// The recipe a command line asks for, checked, without reading any input: every field but
/// the inputs' identities (`tokenizer_id`, `haystack_id`, `template_hash`, filled in once they
/// are loaded) and a derived canary (empty until then). Every spelling of the same choices
/// gives the same recipe: lengths and depths as numbers, built-in tokenizers by their first
/// name, canaries in lower case, input paths recorded portably.
pub fn plan(options: TaskParams, config: &Config, names: InputNames) -> Result<(Recipe, Parts)> {
    let parts = build_parts(&options, &config.split)?;
    let task = parts[0].1.as_ref();
    // Tasks with a size of their own need no length target; the others fill 4k. No length
    // target means the task's native size, recorded as target_length 0.
    let lengths = match &config.lengths {
        Some(l) => l.clone(),
        None if options.native_size() => vec![0],
        None => vec![4096],
    };
    let depths = match (&config.depths, task.uses_haystack()) {
        (Some(d), true) => Some(d.value.clone()),
        (None, true) => task.default_depths(),
        (Some(d), false) => {
            return Err(usage(format!(
                "--depths {} does not apply: {} has no haystack",
                d.text,
                task.name()
            )))
        }
        (None, false) => None,
    };
    if depths.is_some() && config.depths.is_some() && lengths.contains(&0) {
        return Err(usage(
            "--depths does not apply at --len 0: that is the story alone, with no filler",
        ));
    }
    if let Some(c) = &config.canary {
        if !is_guid(c) {
            return Err(usage(format!(
                "invalid --canary '{}': expected a GUID like 8c1f6a2e-3b4d-4e5f-9a0b-1c2d3e4f5a6b (a common word would be found in every input)",
                c.escape_debug()
            )));
        }
    }
    if config.system.is_some() && config.chat_template.is_none() {
        return Err(usage(
            "--system needs --chat-template: a system message is part of a chat template's rendering",
        ));
    }
    if config.has_haystack() && !task.uses_haystack() {
        return Err(usage(format!(
            "--haystack does not apply: {} {} takes no haystack",
            task.name(),
            task.variant()
        )));
    }
    // A path whose recorded spelling is a built-in name (a file `generated` in the working
    // directory) is recorded as `./generated`, or it would be read back as the built-in.
    let record = |given: &str, builtin: &dyn Fn(&str) -> bool| -> String {
        if builtin(given) {
            return given.to_string();
        }
        let recorded = match names {
            InputNames::AsRecorded => given.to_string(),
            InputNames::Record => paths::record(given),
        };
        if builtin(&recorded) {
            format!("./{recorded}")
        } else {
            recorded
        }
    };
    let haystack = haystack_of(config, task);
    let recipe = Recipe {
        lengths,
        depths,
        samples: config.samples,
        seed: config.seed,
        tokenizer: match builtin_tokenizer(&config.tokenizer) {
            Some(name) => name.to_string(),
            None => record(&config.tokenizer, &|n| Tokenizer::builtin(n).is_some()),
        },
        tokenizer_id: String::new(),
        reserve: config
            .reserve
            .unwrap_or_else(|| task.default_reserve() as u64),
        haystack: record(&haystack, &|n| BUILTIN_HAYSTACKS.contains(&n)),
        haystack_id: String::new(),
        template: record(template_of(config, task), &|n| {
            tasks::builtin_template(task.name(), n).is_some()
        }),
        template_hash: String::new(),
        chat_template: config
            .chat_template
            .as_deref()
            .map(|p| record(p, &|_| false)),
        chat_template_hash: None,
        system: config.system.clone(),
        split: config.split.clone(),
        compression: config.compression.clone(),
        rows_per_file: config.rows_per_file,
        canary: config
            .canary
            .as_deref()
            .map(str::to_ascii_lowercase)
            .unwrap_or_default(),
        // Filled in once the seed is known (a command rendered from a recipe takes the
        // recipe's own).
        private: config.private.then(|| Private {
            commitment: String::new(),
            salt: String::new(),
            seed: None,
        }),
        disjoint_from: config
            .disjoint_from
            .iter()
            .map(|p| Excluded {
                path: record(p, &|_| false),
                identity: String::new(),
            })
            .collect(),
        controls: config.controls.clone(),
        options,
    };
    if let Some(c) = &recipe.controls {
        if let Some((_, t)) = parts.iter().find(|(_, t)| !t.has_context()) {
            return Err(usage(format!(
                "--controls {c} does not apply: {} {} has no context to leave out (its question is the whole prompt)",
                t.name(),
                t.variant()
            )));
        }
    }
    recipe.check().map_err(usage)?;
    for (_, part) in &parts {
        part.check_samples(recipe.samples).map_err(refused)?;
    }
    Ok((recipe, parts))
}

/// Fill in what loading the inputs tells: their identities, and the canary when it is derived.
pub fn complete(recipe: &mut Recipe, tokenizer_id: &str, haystack_id: &str, template_hash: &str) {
    recipe.tokenizer_id = tokenizer_id.to_string();
    recipe.haystack_id = haystack_id.to_string();
    recipe.template_hash = template_hash.to_string();
    if recipe.canary.is_empty() {
        recipe.canary = derived_canary(recipe);
    }
}

/// Validate a command's task and common arguments, load its inputs and check its lengths:
/// one entry of a dataset (nothing is written).
pub fn build_entry(options: TaskParams, config: &Config) -> Result<Entry> {
    let (recipe, parts) = plan(options, config, InputNames::Record)?;
    let out = out_of(config, parts[0].1.name())?;
    let given: Vec<(String, String)> = config
        .disjoint_from
        .iter()
        .zip(&recipe.disjoint_from)
        .map(|(g, r)| (g.clone(), r.path.clone()))
        .collect();
    let mut fresh = Fresh::open(config.private, config.seed_file.as_deref(), &given, &out)?;
    let mut entry = entry_of(recipe, parts, config, &fresh)?;
    entry.seed_file = fresh.seed_file.take();
    Ok(entry)
}

/// The entry of a planned recipe, in a dataset made `fresh` (a suite's entries share one):
/// its seed and exclusion recorded, its inputs loaded, its lengths checked.
pub fn entry_of(mut recipe: Recipe, parts: Parts, config: &Config, fresh: &Fresh) -> Result<Entry> {
    let task = parts[0].1.as_ref();
    let haystack = haystack_of(config, task);
    fresh.record(&mut recipe);
    let seed = fresh.seed(config.seed);
    let run = prepare_run(
        task,
        &config.tokenizer,
        &haystack,
        template_of(config, task),
        (seed, recipe.reserve),
        (config.chat_template.as_deref(), config.system.as_deref()),
    )?;
    let per_length = recipe.depths.as_ref().map_or(1, |d| d.len() as u64) * recipe.samples;
    for (_, part) in &parts {
        part.check_instances(&run, per_length).map_err(usage)?;
    }
    let (mut minimum, mut needs) = (0, String::new());
    // The minimum is computed over the run's samples, so it is skipped when no length needs it
    // (a task's native size, babilong's story alone).
    let targets = recipe.lengths.iter().any(|&l| l > 0);
    for (_, part) in parts.iter().filter(|_| targets) {
        let m = part
            .minimum_length_for(&run, config.samples)
            .map_err(usage)?;
        if m > minimum {
            (minimum, needs) = (m, format!("{} {}", part.name(), part.variant()));
        }
    }
    if let Some(&short) = recipe.lengths.iter().find(|&&l| l > 0 && l < minimum) {
        return Err(usage(format!(
            "--len {short} is too short for {needs} with these options, template, tokenizer and reserve {}: the minimum is {minimum} tokens",
            run.reserve
        )));
    }
    let longest = recipe.lengths.iter().copied().max().unwrap_or(0);
    for (_, part) in &parts {
        if let Some((maximum, why)) = part.maximum_length(&run, longest).map_err(usage)? {
            if let Some(&long) = recipe.lengths.iter().find(|&&l| l > maximum) {
                return Err(usage(format!(
                    "--len {long} cannot be reached by {} {} with these options, template, tokenizer and reserve {}: {why}, so the maximum is {maximum} tokens",
                    part.name(),
                    part.variant(),
                    run.reserve
                )));
            }
        }
    }
    complete(
        &mut recipe,
        &run.tokenizer.id(),
        &run.haystack_id(),
        &run.template.content_hash,
    );
    recipe.chat_template_hash = run.reader.chat.as_ref().map(|c| c.content_hash.clone());
    Ok(Entry {
        config: None,
        recipe,
        parts,
        run,
        exclusion: fresh.exclusion.clone(),
        seed_file: None,
    })
}

/// The template a command names; `default` is the task's own default (niah's latent needles
/// are framed by `latent`, whose instructions ask for a person).
fn template_of<'a>(config: &'a Config, task: &dyn Task) -> &'a str {
    if config.template == "default" {
        task.default_template()
    } else {
        &config.template
    }
}

/// The inputs a command names that could lie inside `--out` (checked before `--force`).
pub fn inputs_of(config: &Config, haystack: &str) -> Vec<(&'static str, String)> {
    vec![
        (config.haystack_flag, haystack.to_string()),
        ("--template", config.template.clone()),
        ("--tokenizer", config.tokenizer.clone()),
        (
            "--chat-template",
            config.chat_template.clone().unwrap_or_default(),
        ),
    ]
}

/// `--out`, or `datasets/<task>-s<seed>` (`-private` for a private split; a shard's part
/// directory with `--shard-index`).
fn out_of(config: &Config, task: &str) -> Result<PathBuf> {
    let shard = config.shard;
    Ok(config.out.clone().unwrap_or_else(|| {
        let name = if config.private {
            format!("{task}-private")
        } else {
            format!("{task}-s{}", config.seed)
        };
        PathBuf::from("datasets").join(match shard {
            Some(s) => s.default_dir(&name),
            None => name,
        })
    }))
}

/// Validate common arguments and build the job.
pub fn build_job(options: TaskParams, config: &Config) -> Result<Job> {
    let threads = config.threads;
    let shard = config.shard;
    let mut entry = build_entry(options, config)?;
    let task = entry.parts[0].1.as_ref();
    let haystack = haystack_of(config, task);
    let out = out_of(config, task.name())?;
    let rerun = Rerun::of(shard);
    let lock = check_out(&out, config.force, rerun, &inputs_of(config, &haystack))?;
    // Kept by generation once every check has passed (a shard's rerun checks its part
    // first), before any row is written.
    let seed_file = entry.seed_file.take();
    Ok(Job {
        suite: None,
        seed_file,
        entries: vec![entry],
        out,
        threads,
        quiet: config.quiet,
        jsonl: config.jsonl,
        shard,
        force: config.force,
        _lock: lock,
    })
}

/// Check the output directory and take its lock: `out` must not be a file, the current
/// directory or one of its ancestors; a non-empty `out` is replaced only with --force, and
/// never when an input (haystack, template, tokenizer file) lies inside it. Leftovers of
/// killed runs are cleaned under the lock, before anything is written. A shard's rerun
/// (`rerun`) may find its earlier part there: generation then compares it with the shard.
pub fn check_out(
    out: &Path,
    force: bool,
    rerun: Rerun,
    inputs: &[(&'static str, String)],
) -> Result<OutLock> {
    if out.exists() {
        if !out.is_dir() {
            return Err(usage(format!(
                "--out {} exists and is not a directory",
                out.display()
            )));
        }
        let real = out
            .canonicalize()
            .with_context(|| format!("cannot resolve --out {}", out.display()))?;
        let cwd = std::env::current_dir()
            .and_then(|d| d.canonicalize())
            .context("cannot resolve the current directory")?;
        if cwd.starts_with(&real) {
            return Err(usage(format!(
                "--out {} is the current directory or one of its ancestors: choose a directory of its own",
                out.display()
            )));
        }
    }
    if out.file_name().is_none() {
        return Err(usage(format!(
            "--out {} does not name a directory of its own",
            out.display()
        )));
    }
    let lock = OutLock::acquire(out)?;
    lock.clean_leftovers(out, force)?;
    if out.exists() {
        let non_empty = std::fs::read_dir(out)
            .with_context(|| format!("cannot read --out {}", out.display()))?
            .next()
            .is_some();
        let part = rerun == Rerun::Shard && out.join("part.json").is_file();
        if non_empty && !force && !part {
            return Err(usage(format!(
                "--out {} exists and is not empty: choose another directory or pass --force to replace it",
                out.display()
            )));
        }
        let real = out
            .canonicalize()
            .with_context(|| format!("cannot resolve --out {}", out.display()))?;
        for (flag, value) in inputs {
            // A path, or a file.jsonl:field / file.parquet:column spec; names that are not
            // paths (built-ins) resolve nowhere and pass.
            let value = value.as_str();
            let candidates = std::iter::once(value).chain(value.rsplit_once(':').map(|(p, _)| p));
            for candidate in candidates {
                if let Ok(input) = Path::new(candidate).canonicalize() {
                    if input.starts_with(&real) {
                        return Err(usage(format!(
                            "{flag} {value} is inside --out {}, which --force would replace: move it out first",
                            out.display()
                        )));
                    }
                }
            }
        }
    }
    Ok(lock)
}
