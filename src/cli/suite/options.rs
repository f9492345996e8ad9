//! A suite run's options: the overrides its command line gives (over the suite's keys), the
//! command the manifest records for them, and what makes the suite fresh (one private seed,
//! one exclusion), from the command line or the suite's top keys.

use std::path::PathBuf;

use anyhow::Result;

use super::file::{Setting, SuiteFile, Word};
use super::SuiteArgs;
use crate::cli::command::{depths as render_depths, length as render_length};
use crate::cli::grid::{parse_depths, parse_lengths};
use crate::run::paths;
use crate::run::prepare::builtin_tokenizer;
use crate::usage::usage;

/// The command a suite run records: `gen suite SOURCE` and the overrides given, each in one
/// spelling (lengths as `4k`, built-in tokenizers by their first name, paths recorded), so
/// every spelling of one run records one command.
pub fn suite_command(a: &SuiteArgs, recorded: &str) -> Result<Vec<String>> {
    let mut out = vec!["gen".to_string(), "suite".to_string(), recorded.to_string()];
    let mut push = |f: &str, v: String| {
        if v.starts_with('-') {
            out.push(format!("{f}={v}"));
        } else {
            out.extend([f.to_string(), v]);
        }
    };
    if let Some(q) = &a.qa_data {
        push("--qa-data", paths::record(q));
    }
    if let Some(q) = &a.qa2_data {
        push("--qa2-data", paths::record(q));
    }
    if let Some(m) = &a.mmlu_data {
        push("--mmlu-data", paths::record(m));
    }
    if let Some(l) = &a.len {
        let l = parse_lengths(l, true).map_err(usage)?;
        push(
            "--len",
            l.iter()
                .map(|&v| render_length(v))
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    if let Some(d) = &a.depths {
        push("--depths", render_depths(&parse_depths(d).map_err(usage)?));
    }
    if let Some(s) = a.samples {
        push("--samples", s.to_string());
    }
    if let Some(s) = a.seed {
        push("--seed", s.to_string());
    }
    if let Some(t) = &a.tokenizer {
        push(
            "--tokenizer",
            builtin_tokenizer(t).map_or_else(|| paths::record(t), str::to_string),
        );
    }
    if let Some(c) = &a.chat_template {
        push("--chat-template", paths::record(c));
    }
    if let Some(s) = &a.system {
        push("--system", s.clone());
    }
    if let Some(c) = &a.compression {
        push("--compression", c.clone());
    }
    if let Some(n) = a.rows_per_file {
        push("--rows-per-file", n.to_string());
    }
    if let Some(c) = &a.canary {
        push("--canary", c.to_ascii_lowercase());
    }
    if let Some(c) = &a.controls {
        push("--controls", c.clone());
    }
    for d in &a.disjoint_from {
        push("--disjoint-from", paths::record(d));
    }
    if a.private {
        out.push("--private".into());
    }
    if a.jsonl {
        out.push("--jsonl".into());
    }
    Ok(out)
}

/// The value the command line gives a placeholder (`{qa_data}`: `--qa-data`), if any.
pub fn placeholder<'a>(a: &'a SuiteArgs, p: &str) -> Option<&'a String> {
    match p {
        "{qa_data}" => a.qa_data.as_ref(),
        "{qa2_data}" => a.qa2_data.as_ref(),
        "{mmlu_data}" => a.mmlu_data.as_ref(),
        _ => None,
    }
}

/// The command-line overrides of a suite run, as (key, word).
pub fn overrides(a: &SuiteArgs) -> Vec<(&'static str, Word)> {
    let t = |v: &Option<String>| v.clone().map(Word::Text);
    let n = |v: Option<u64>| v.map(|n| Word::Text(n.to_string()));
    [
        ("lengths", t(&a.len)),
        ("depths", t(&a.depths)),
        ("samples", n(a.samples)),
        ("seed", n(a.seed)),
        ("tokenizer", t(&a.tokenizer)),
        ("chat_template", t(&a.chat_template)),
        ("system", t(&a.system)),
        ("compression", t(&a.compression)),
        ("rows_per_file", n(a.rows_per_file)),
        ("canary", t(&a.canary)),
        ("controls", t(&a.controls)),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.map(|v| (k, v)))
    .collect()
}

/// What makes a suite fresh, from the command line, else the suite's top keys: one private
/// seed and one exclusion for every entry (`controls` goes to each entry's command).
pub struct FreshOptions {
    /// A private suite.
    pub private: bool,
    /// Its seed file.
    pub seed_file: Option<PathBuf>,
    /// The excluded datasets, each as given and as recorded.
    pub disjoint: Vec<(String, String)>,
}

/// The suite's freshness options, checked: `private` a switch, `seed_file` only with it,
/// and no public `seed` in a private suite.
pub fn fresh_options(a: &SuiteArgs, shown: &str, file: &SuiteFile) -> Result<FreshOptions> {
    let top = |k: &str| file.top.iter().find(|s| s.key == k);
    let bad = |s: &Setting, m: &str| usage(format!("{shown}:{}: {m}", s.line));
    let private = a.private
        || match top("private") {
            None => false,
            Some(s) => match s.word {
                Word::Switch(b) => b,
                _ => return Err(bad(s, "private takes true or false")),
            },
        };
    let seed_file = match (&a.seed_file, top("seed_file")) {
        (Some(p), _) => Some(p.clone()),
        (None, Some(s)) => match &s.word {
            Word::Text(t) => Some(PathBuf::from(t)),
            _ => return Err(bad(s, "seed_file takes the path of the seed file")),
        },
        (None, None) => None,
    };
    if seed_file.is_some() && !private {
        return Err(usage(
            "--seed-file applies only to a private suite: give --private (or private = true at the top of the suite)",
        ));
    }
    if private {
        if let Some(seed) = a.seed {
            return Err(usage(format!(
                "invalid --seed {seed} with --private: a private suite has no public seed (its seed is drawn in secret into --seed-file)"
            )));
        }
        if let Some(s) = top("seed") {
            return Err(bad(
                s,
                "seed does not apply to a private suite: its seed is drawn in secret into --seed-file",
            ));
        }
    }
    let given: Vec<String> = if a.disjoint_from.is_empty() {
        match top("disjoint_from") {
            None => Vec::new(),
            Some(s) => match &s.word {
                Word::Text(t) => vec![t.clone()],
                Word::List(l) => l.clone(),
                Word::Switch(_) => {
                    return Err(bad(
                        s,
                        "disjoint_from takes a dataset directory or a list of them",
                    ))
                }
            },
        }
    } else {
        a.disjoint_from.clone()
    };
    Ok(FreshOptions {
        private,
        seed_file,
        disjoint: given
            .into_iter()
            .map(|g| {
                let recorded = paths::record(&g);
                (g, recorded)
            })
            .collect(),
    })
}

/// The public seed a suite run names its default directory after.
pub fn public_seed(a: &SuiteArgs, file: &SuiteFile) -> u64 {
    a.seed
        .or_else(|| {
            file.top
                .iter()
                .find(|s| s.key == "seed")
                .and_then(|s| match &s.word {
                    Word::Text(t) => t.parse().ok(),
                    _ => None,
                })
        })
        .unwrap_or(0)
}
