//! Preparation: validate the common arguments, load the tokenizer, haystack and template a
//! recipe names, check the output directory, and assemble one checked [`Job`] before anything
//! is written.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use needlework_generators::tasks::TaskParams;
use needlework_generators::{
    templates, Corpus, Haystack, HaystackKind, Run, Task, Template, Tokenizer,
};

use crate::cli::CommonArgs;
use crate::corpus;
use crate::paths;
use crate::recipe::{
    build_parts, derived_canary, valid_split, Recipe, BUILTIN_HAYSTACKS, MAX_SAMPLES,
};
use crate::spec;
use crate::usage::usage;
use crate::writer::OutLock;

/// A validated generation job.
pub struct Job {
    /// What the manifest records.
    pub recipe: Recipe,
    /// (split, task) in generation order; one part except for `posgen --split both` and
    /// several babilong tasks.
    pub parts: Vec<(String, Box<dyn Task>)>,
    /// Inputs shared by every instance.
    pub run: Run,
    /// The dataset directory.
    pub out: PathBuf,
    /// Worker threads.
    pub threads: usize,
    /// No progress bar.
    pub quiet: bool,
    /// Also write JSON Lines mirrors.
    pub jsonl: bool,
    /// The lock on `out`, held until the job (and so the generation) is dropped.
    pub _lock: OutLock,
}

/// A tokenizer, haystack or template as the recipe records it: a built-in name as given, a
/// path without this machine's directories ([`paths::record`]).
fn recorded_input(given: &str, builtin: bool) -> String {
    if builtin {
        given.to_string()
    } else {
        paths::record(given)
    }
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

/// Worker threads when none are asked for: every core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A built-in tokenizer by name, or a tokenizer.json read from disk.
fn load_tokenizer(name: &str) -> Result<Tokenizer> {
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
    let tok = load_tokenizer(tokenizer)?;
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
        reserve: reserve.unwrap_or(task.default_reserve() as u64),
    })
}

fn load_template(task: &str, template: &str) -> Result<(String, String)> {
    if let Some(src) = templates::builtin(task, template) {
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
        templates::names(task).join(", ")
    )))
}

/// Validate common arguments and build the job.
pub fn build_job(options: TaskParams, common: &CommonArgs) -> Result<Job> {
    let parts = build_parts(&options, &common.split)?;
    let task = &parts[0].1;
    let story_alone = matches!(options, TaskParams::Babilong(_));
    // Tasks with a size of their own need no length target; the others fill 4k.
    let default_len = (!options.native_size()).then_some("4k");
    let lengths = match common.len.as_deref().or(default_len) {
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
    if common.samples == 0 || common.samples > MAX_SAMPLES {
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
        None => default_threads(),
    };
    if let Some(c) = &common.canary {
        if !is_guid(c) {
            return Err(usage(format!(
                "invalid --canary '{}': expected a GUID like 8c1f6a2e-3b4d-4e5f-9a0b-1c2d3e4f5a6b (a common word would be found in every input)",
                c.escape_debug()
            )));
        }
    }
    if common.haystack.as_deref().is_some_and(|h| h != "none") && !task.uses_haystack() {
        return Err(usage(format!(
            "--haystack does not apply: {} {} takes no haystack",
            task.name(),
            task.variant()
        )));
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
    for (_, part) in &parts {
        if let Some((maximum, why)) = part.maximum_length(&run).map_err(usage)? {
            if let Some(&long) = lengths.iter().find(|&&l| l > maximum) {
                return Err(usage(format!(
                    "--len {long} cannot be reached by {} {} with these options, template, tokenizer and reserve {}: {why}, so the maximum is {maximum} tokens",
                    part.name(),
                    part.variant(),
                    run.reserve
                )));
            }
        }
    }

    let out = common.out.clone().unwrap_or_else(|| {
        PathBuf::from("datasets").join(format!("{}-s{}", task.name(), common.seed))
    });
    let lock = check_out(&out, common, &haystack)?;

    let mut recipe = Recipe {
        options,
        lengths,
        depths,
        samples: common.samples,
        seed: common.seed,
        tokenizer: recorded_input(
            &common.tokenizer,
            Tokenizer::builtin(&common.tokenizer).is_some(),
        ),
        tokenizer_id: run.tokenizer.id(),
        reserve: run.reserve,
        haystack: recorded_input(&haystack, BUILTIN_HAYSTACKS.contains(&haystack.as_str())),
        haystack_id: run.haystack_id(),
        template: recorded_input(
            &common.template,
            templates::builtin(task.name(), &common.template).is_some(),
        ),
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
        _lock: lock,
    })
}

/// Check the output directory and take its lock: `out` must not be a file, the current
/// directory or one of its ancestors; a non-empty `out` is replaced only with --force, and
/// never when an input (haystack, template, tokenizer file) lies inside it. Leftovers of
/// killed runs are cleaned under the lock, before anything is written.
fn check_out(out: &Path, common: &CommonArgs, haystack: &str) -> Result<OutLock> {
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
    lock.clean_leftovers(out, common.force)?;
    if out.exists() {
        let non_empty = std::fs::read_dir(out)
            .with_context(|| format!("cannot read --out {}", out.display()))?
            .next()
            .is_some();
        if non_empty && !common.force {
            return Err(usage(format!(
                "--out {} exists and is not empty: choose another directory or pass --force to replace it",
                out.display()
            )));
        }
        let real = out
            .canonicalize()
            .with_context(|| format!("cannot resolve --out {}", out.display()))?;
        for (flag, value) in [
            ("--haystack", haystack),
            ("--template", common.template.as_str()),
            ("--tokenizer", common.tokenizer.as_str()),
        ] {
            // A path, or a file.jsonl:field / file.parquet:column spec; names that are not
            // paths (built-ins) resolve nowhere and pass.
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
