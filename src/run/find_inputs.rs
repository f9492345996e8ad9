//! Finding the inputs a recipe records — tokenizer, haystack, template, chat template — by
//! their recorded identities (the working directory first, then the dataset and its ancestors,
//! or a path given on the command line), for `gen verify` and for the commands that show or
//! send what the model reads.

use std::path::Path;

use anyhow::Result;
use needlework_generators::chat::Reader;
use needlework_generators::rng::Seed;
use needlework_generators::{tasks, Run, Task, Tokenizer};

use crate::run::paths;
use crate::run::prepare::{load_chat_template, load_haystack, load_template, load_tokenizer};
use crate::run::recipe::{Recipe, BUILTIN_HAYSTACKS};
use crate::usage::usage;

/// Paths that replace the recorded ones when an input moved since the dataset was made
/// (checked against the recorded hashes).
#[derive(Debug, Clone, Default)]
pub struct InputPaths {
    /// The tokenizer.json the dataset was made with.
    pub tokenizer: Option<String>,
    /// The corpus (with its `:field` suffix, if any), qa's data file, or ruler2's (an MMLU
    /// directory or a HotpotQA file).
    pub haystack: Option<String>,
    /// The template file.
    pub template: Option<String>,
    /// The chat template file.
    pub chat_template: Option<String>,
}

/// One input the recipe records: the flag that overrides it, its recorded name, and the
/// identity the dataset was made with.
struct Recorded<'a> {
    what: &'static str,
    name: &'a str,
    id: &'a str,
    /// Whether a name is a built-in one (not a path).
    builtin: &'a dyn Fn(&str) -> bool,
}

/// The input a recipe records, loaded: a built-in as it is; a path from `--<what>` if given,
/// else the first of the places it may be ([`paths::candidates`]: the working directory, then
/// the dataset and its ancestors) whose content has the recorded identity. An override that
/// does not apply (the dataset used a built-in) is refused; when no candidate matches, the
/// error names each one tried and what it holds.
fn pick<T>(
    rec: &Recorded,
    given: Option<&String>,
    dir: &Path,
    load: impl Fn(&str) -> Result<(String, T)>,
) -> Result<T> {
    let (what, name) = (rec.what, rec.name);
    let candidates: Vec<String> = match given {
        Some(g) if (rec.builtin)(name) => {
            return Err(usage(if name == "none" {
                format!("--{what} {g} does not apply: {} was made with no {what}", dir.display())
            } else {
                format!(
                    "--{what} {g} does not apply: {} was made with the built-in {what} '{name}'",
                    dir.display()
                )
            }))
        }
        Some(g) if (rec.builtin)(g) => {
            return Err(usage(format!(
                "--{what} {g} names a built-in {what}, but {} was made with the file '{name}': pass the path of that file",
                dir.display()
            )))
        }
        // `--haystack moved.jsonl` for a recorded `corpus.jsonl:body` keeps the field.
        Some(g) => vec![match (paths::split_field(g), paths::split_field(name)) {
            ((_, None), (_, Some(field))) => format!("{g}:{field}"),
            _ => g.clone(),
        }],
        None if (rec.builtin)(name) => vec![name.to_string()],
        None => paths::candidates(name, dir),
    };
    if candidates.is_empty() {
        return Err(usage(format!(
            "the {what} '{name}' this dataset was made with is not found (looked in the working directory and from {} upwards): pass --{what} PATH to say where it is now",
            dir.display()
        )));
    }
    let mut tried: Vec<String> = Vec::new();
    let mut first_error = None;
    for c in &candidates {
        match load(c) {
            Ok((id, loaded)) if id == rec.id => return Ok(loaded),
            Ok((id, _)) => tried.push(format!("{c} holds {id}")),
            Err(e) => {
                tried.push(format!("{c} cannot be used ({e})"));
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) if tried.len() == 1 => Err(e),
        _ => Err(anyhow::anyhow!(
            "the {what} '{name}' is not the one the dataset was made with (recorded {}): tried {}",
            rec.id,
            tried.join("; ")
        )),
    }
}

/// Load the inputs the recipe names, checked against their recorded identities.
pub fn rebuild_run(
    r: &Recipe,
    task: &dyn Task,
    inputs: &InputPaths,
    dir: &Path,
    seed: Seed,
) -> Result<Run> {
    let tokenizer = pick(
        &Recorded {
            what: "tokenizer",
            name: &r.tokenizer,
            id: &r.tokenizer_id,
            builtin: &|n| Tokenizer::builtin(n).is_some(),
        },
        inputs.tokenizer.as_ref(),
        dir,
        |p| load_tokenizer(p).map(|t| (t.id(), t)),
    )?;
    let haystack = pick(
        &Recorded {
            what: "haystack",
            name: &r.haystack,
            id: &r.haystack_id,
            builtin: &|n| BUILTIN_HAYSTACKS.contains(&n),
        },
        inputs.haystack.as_ref(),
        dir,
        |p| {
            let h = load_haystack(task, p, &tokenizer)?;
            Ok((h.as_ref().map_or_else(|| "none".into(), |h| h.id()), h))
        },
    )?;
    let template = pick(
        &Recorded {
            what: "template",
            name: &r.template,
            id: &r.template_hash,
            builtin: &|n| tasks::builtin_template(task.name(), n).is_some(),
        },
        inputs.template.as_ref(),
        dir,
        |p| load_template(task, p).map(|t| (t.content_hash.clone(), t)),
    )?;
    let reader = chat_reader(r, &tokenizer, inputs.chat_template.as_ref(), dir)?;
    Ok(Run {
        tokenizer,
        haystack,
        template,
        seed,
        reserve: r.reserve,
        reader,
    })
}

/// What the model of a dataset reads around each `input` (its chat template, checked against
/// the recorded hash, and system message), for the commands that send or show model prompts:
/// `gen inspect --prompts` and the exports. The tokenizer is loaded only when a chat template
/// is recorded (its special tokens are checked against it, as when the dataset was made).
pub fn recorded_reader(
    r: &Recipe,
    tokenizer_override: Option<&String>,
    chat_override: Option<&String>,
    dir: &Path,
) -> Result<Reader> {
    if r.chat_template.is_none() && chat_override.is_none() && r.system.is_none() {
        return Ok(Reader::default());
    }
    let tokenizer = pick(
        &Recorded {
            what: "tokenizer",
            name: &r.tokenizer,
            id: &r.tokenizer_id,
            builtin: &|n| Tokenizer::builtin(n).is_some(),
        },
        tokenizer_override,
        dir,
        |p| load_tokenizer(p).map(|t| (t.id(), t)),
    )?;
    chat_reader(r, &tokenizer, chat_override, dir)
}

/// The recorded chat template (found like the other inputs) and system message.
fn chat_reader(
    r: &Recipe,
    tokenizer: &Tokenizer,
    chat_override: Option<&String>,
    dir: &Path,
) -> Result<Reader> {
    let chat = match (&r.chat_template, &r.chat_template_hash) {
        (Some(name), Some(id)) => Some(pick(
            &Recorded {
                what: "chat-template",
                name,
                id,
                builtin: &|_| false,
            },
            chat_override,
            dir,
            |p| load_chat_template(p, tokenizer).map(|c| (c.content_hash.clone(), c)),
        )?),
        (None, None) if chat_override.is_some() => {
            return Err(usage(format!(
                "--chat-template does not apply: {} was made without a chat template",
                dir.display()
            )))
        }
        (None, None) => None,
        _ => {
            return Err(usage(
                "the manifest's recipe names a chat template without its hash (or a hash without a template)",
            ))
        }
    };
    if r.system.is_some() && chat.is_none() {
        return Err(usage(
            "the manifest's recipe has a system message but no chat template",
        ));
    }
    Ok(Reader {
        chat: chat.map(std::sync::Arc::new),
        system: r.system.clone(),
    })
}
