//! Prompt templates: minijinja, compiled once per run, strict about undefined variables.
//!
//! Templates only frame the prompt; the context is spliced in afterwards. The template is
//! rendered with a sentinel in place of `context`, and the text around the sentinel becomes the
//! prompt's prefix and suffix. That keeps multi-megabyte contexts out of the template engine
//! and tells the fitter exactly where the context starts.

use std::collections::BTreeMap;

use minijinja::{Environment, UndefinedBehavior};
use thiserror::Error;

use crate::chat::{ChatError, Reader};
use crate::jinja::{Bounded, Whitespace};
use crate::tokenizer::Tokenizer;
use crate::GenError;

/// Marks where the context goes; a private-use character cannot occur in normal text.
const SENTINEL: &str = "\u{E000}needlework:context\u{E000}";

/// Template variables a task provides (besides `context`).
pub type Vars = BTreeMap<&'static str, serde_json::Value>;

/// Variables from string pairs.
pub fn vars<const N: usize>(pairs: [(&'static str, &str); N]) -> Vars {
    pairs
        .into_iter()
        .map(|(k, v)| (k, serde_json::Value::String(v.to_string())))
        .collect()
}

/// A template problem, reported with the file and position.
#[derive(Debug, Error)]
#[error("template {location}: {message}")]
pub struct TemplateError {
    /// `file:line:column` (or just the file when no position is known).
    pub location: String,
    /// What is wrong.
    pub message: String,
}

/// A compiled template and its identity.
pub struct Template {
    code: Bounded,
    name: String,
    /// xxh3-128 of the template source: part of every row's provenance.
    pub content_hash: String,
}

/// The rendered prompt around the context, and what the model reads around the prompt.
#[derive(Debug, Clone)]
pub struct Frame {
    /// Everything before the context.
    pub prefix: String,
    /// Everything after the context.
    pub suffix: String,
    /// The start of the model's answer, read right after `input` (counted in the budget).
    pub answer_prefix: String,
    /// How the model reads `input` (chat template or none).
    pub reader: Reader,
}

impl PartialEq for Frame {
    fn eq(&self, other: &Frame) -> bool {
        (&self.prefix, &self.suffix, &self.answer_prefix)
            == (&other.prefix, &other.suffix, &other.answer_prefix)
    }
}

impl Frame {
    /// Whether the model reads `input` and nothing else (no answer prefix, no chat template).
    pub fn reads_only_input(&self) -> bool {
        self.answer_prefix.is_empty() && self.reader.chat.is_none()
    }

    /// What the model reads for `input`, when that is more than `input` itself.
    pub fn model_prompt(&self, input: &str) -> Result<Option<String>, ChatError> {
        if self.reads_only_input() {
            return Ok(None);
        }
        self.reader
            .model_prompt(input, &self.answer_prefix)
            .map(Some)
    }

    /// Tokens the model reads for `input`: with a chat template, counted with special tokens
    /// recognised; otherwise `input` and the answer prefix counted as text.
    pub fn model_tokens(&self, tok: &Tokenizer, input: &str) -> Result<usize, GenError> {
        match self.model_prompt(input)? {
            None => Ok(tok.count(input)?),
            Some(p) if self.reader.chat.is_some() => Ok(tok.count_special(&p)?),
            Some(p) => Ok(tok.count(&p)?),
        }
    }

    /// [`Frame::model_tokens`] for an `input` already counted (`input_tokens`): only the
    /// edges of the input are counted again with what the model reads around it.
    pub fn model_tokens_around(
        &self,
        tok: &Tokenizer,
        input: &str,
        input_tokens: usize,
    ) -> Result<usize, GenError> {
        let Some(prompt) = self.model_prompt(input)? else {
            return Ok(input_tokens);
        };
        let special = self.reader.chat.is_some();
        let at = if prompt.starts_with(input) {
            Some(0)
        } else {
            prompt.find(input)
        };
        Ok(match at {
            Some(at) => tok.count_around(&prompt, at, input.len(), input_tokens, special)?,
            None if special => tok.count_special(&prompt)?,
            None => tok.count(&prompt)?,
        })
    }

    /// Tokens of everything but the context, as the model reads it.
    pub fn fixed_tokens(&self, tok: &Tokenizer) -> Result<usize, GenError> {
        self.model_tokens(tok, &format!("{}{}", self.prefix, self.suffix))
    }
}

impl Template {
    /// Compile `source`; `name` is the file name used in messages.
    pub fn compile(name: &str, source: &str) -> Result<Template, TemplateError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_fuel(Some(crate::jinja::FUEL));
        let ws = Whitespace {
            keep_trailing_newline: true,
            ..Whitespace::default()
        };
        let code = Bounded::compile(env, name, source, ws).map_err(|e| locate(&e, name, source))?;
        Ok(Template {
            code,
            name: name.to_string(),
            content_hash: format!("{:032x}", xxhash_rust::xxh3::xxh3_128(source.as_bytes())),
        })
    }

    /// Render around the context. `vars` are the task's variables; `context` is added here.
    pub fn frame(&self, vars: &Vars) -> Result<Frame, TemplateError> {
        let mut all: BTreeMap<&str, &serde_json::Value> =
            vars.iter().map(|(k, v)| (*k, v)).collect();
        let sentinel = serde_json::Value::String(SENTINEL.to_string());
        all.insert("context", &sentinel);
        let inputs: usize = all.values().map(|v| v.to_string().len()).sum();
        let rendered = self
            .code
            .render(
                minijinja::Value::from_serialize(&all),
                crate::jinja::budget(inputs),
            )
            .map_err(|e| self.error(&e))?;
        let mut parts = rendered.split(SENTINEL);
        let prefix = parts.next().unwrap_or_default().to_string();
        let (Some(suffix), None) = (parts.next(), parts.next()) else {
            return Err(TemplateError {
                location: self.name.clone(),
                message: "the template must output {{ context }} exactly once, unfiltered".into(),
            });
        };
        Ok(Frame {
            prefix,
            suffix: suffix.to_string(),
            answer_prefix: String::new(),
            reader: Reader::default(),
        })
    }

    fn error(&self, e: &minijinja::Error) -> TemplateError {
        locate(e, &self.name, self.code.source())
    }
}

fn locate(e: &minijinja::Error, name: &str, source: &str) -> TemplateError {
    let line = e.line();
    let column = e.range().map(|r| {
        let start = r.start.min(source.len());
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        source[line_start..start].chars().count() + 1
    });
    let location = match (line, column) {
        (Some(l), Some(c)) => format!("{name}:{l}:{c}"),
        (Some(l), None) => format!("{name}:{l}"),
        _ => name.to_string(),
    };
    let mut message = match e.detail() {
        Some(d) => format!("{}: {}", e.kind(), d),
        None => e.kind().to_string(),
    };
    if let Some(snippet) = e.range().and_then(|r| source.get(r)) {
        message.push_str(&format!(" at '{snippet}'"));
    }
    TemplateError {
        location,
        message: message.split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> Vars {
        super::vars([("question", "Q?")])
    }

    #[test]
    fn frames_around_the_context_and_keeps_newlines() {
        let t = Template::compile("t.j2", "Read <b>this</b>:\n{{ context }}\n{{ question }}\n")
            .unwrap();
        let f = t.frame(&vars()).unwrap();
        assert_eq!(f.prefix, "Read <b>this</b>:\n");
        assert_eq!(f.suffix, "\nQ?\n");
    }

    #[test]
    fn undefined_variable_names_file_line_and_column() {
        let t = Template::compile("t.j2", "A\n{{ context }}\nB {{ nope }}").unwrap();
        let e = t.frame(&vars()).unwrap_err();
        assert_eq!(e.location, "t.j2:3:6", "{e}");
        assert!(e.to_string().contains("undefined"), "{e}");
    }

    #[test]
    fn syntax_error_is_located() {
        let e = Template::compile("bad.j2", "ok\n{% if %}").err().unwrap();
        assert!(e.location.starts_with("bad.j2:2"), "{e}");
    }

    #[test]
    fn context_must_appear_once() {
        let t = Template::compile("t.j2", "{{ question }}").unwrap();
        assert!(t.frame(&vars()).is_err());
        let t = Template::compile("t.j2", "{{ context }}{{ context }}").unwrap();
        assert!(t.frame(&vars()).is_err());
    }
}
