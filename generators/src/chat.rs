//! Chat templates: what an instruct model really reads around `input`.
//!
//! A model served with a chat template reads `input` inside a user turn, with special tokens
//! and a generation prompt around it, and the answer prefix as the start of its own turn. The
//! length promise is about what the model reads, so the template is rendered as Hugging Face
//! `transformers` renders it (`apply_chat_template` with `add_generation_prompt=True`: Jinja with
//! `trim_blocks`, `lstrip_blocks`, loop controls, Python string methods, `raise_exception`,
//! `tojson` as Python's `json.dumps`) and counted with special tokens recognised.

use std::sync::Arc;

use minijinja::value::{Kwargs, Value};
use minijinja::{Environment, Error, ErrorKind};
use thiserror::Error;

use crate::jinja::{Bounded, Whitespace};

/// A chat template that cannot be used.
#[derive(Debug, Error)]
#[error("chat template {label}: {reason}")]
pub struct ChatError {
    /// The file it came from.
    pub label: String,
    /// Why it cannot be used, on one line.
    pub reason: String,
}

/// A compiled chat template with the special-token strings it may use.
pub struct ChatTemplate {
    code: Bounded,
    label: String,
    /// `bos_token` as the template sees it (empty when the file gives none).
    pub bos_token: String,
    /// `eos_token` as the template sees it.
    pub eos_token: String,
    /// xxh3-128 of the template source and the special tokens: what provenance records.
    pub content_hash: String,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ChatTemplate({})", self.label)
    }
}

/// A special token in `tokenizer_config.json`: a string or an `AddedToken` object.
fn token_string(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(o) => o
            .get("content")
            .and_then(|c| c.as_str())
            .unwrap_or_default()
            .to_string(),
        _ => String::new(),
    }
}

impl ChatTemplate {
    /// From the bytes of a Hugging Face `tokenizer_config.json` (its `chat_template`, a string
    /// or a list of named templates, of which `default` is used, as `transformers` does) or of a
    /// plain `.jinja` file (no special tokens then: see [`ChatTemplate::from_bytes_beside`]).
    /// The caller reads the file.
    pub fn from_bytes(bytes: &[u8], label: &str) -> Result<ChatTemplate, ChatError> {
        Self::from_bytes_beside(bytes, label, None)
    }

    /// As [`ChatTemplate::from_bytes`], where a plain `.jinja` file takes its special tokens
    /// from `config`, the bytes of the `tokenizer_config.json` beside it (as `transformers`
    /// loads a model's `chat_template.jinja` together with that file), if there is one.
    pub fn from_bytes_beside(
        bytes: &[u8],
        label: &str,
        config: Option<&[u8]>,
    ) -> Result<ChatTemplate, ChatError> {
        let err = |reason: String| ChatError {
            label: label.to_string(),
            reason,
        };
        let text = std::str::from_utf8(bytes).map_err(|_| err("it is not UTF-8 text".into()))?;
        // A JSON object opens with `{` then a key or `}`; Jinja opens `{%`, `{{` or `{#`.
        let looks_json = label.ends_with(".json")
            || text
                .trim_start()
                .strip_prefix('{')
                .is_some_and(|rest| rest.trim_start().starts_with(['"', '}']));
        if !looks_json {
            let (bos, eos) = match config {
                None => (String::new(), String::new()),
                Some(config) => {
                    let json: serde_json::Value = serde_json::from_slice(config).map_err(|e| {
                        err(format!(
                            "the tokenizer_config.json beside it is not valid JSON ({e})"
                        ))
                    })?;
                    (
                        token_string(&json["bos_token"]),
                        token_string(&json["eos_token"]),
                    )
                }
            };
            return Self::compile(text, bos, eos, label);
        }
        let json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| err(format!("it is not valid JSON ({e})")))?;
        let source = match &json["chat_template"] {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(list) => {
                let named = |name: &str| {
                    list.iter()
                        .find(|t| t["name"] == name)
                        .and_then(|t| t["template"].as_str())
                };
                named("default").map(str::to_string).ok_or_else(|| {
                    err("its chat_template is a list without a template named 'default'".into())
                })?
            }
            serde_json::Value::Null => {
                return Err(err("it has no chat_template".into()));
            }
            _ => {
                return Err(err(
                    "its chat_template is neither a string nor a list".into()
                ))
            }
        };
        let bos = token_string(&json["bos_token"]);
        let eos = token_string(&json["eos_token"]);
        Self::compile(&source, bos, eos, label)
    }

    fn compile(
        source: &str,
        bos_token: String,
        eos_token: String,
        label: &str,
    ) -> Result<ChatTemplate, ChatError> {
        let mut env = Environment::new();
        env.set_fuel(Some(crate::jinja::FUEL));
        env.set_unknown_method_callback(|state, value, method, args| {
            crate::jinja::check_method(value, method, args)?;
            minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
        });
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", |format: String| {
            crate::jinja::date::strftime_now(&format)
        });
        env.add_filter("tojson", tojson);
        let ws = Whitespace {
            keep_trailing_newline: false,
            lstrip_blocks: true,
            trim_blocks: true,
        };
        let code = Bounded::compile(env, "chat", source, ws).map_err(|e| ChatError {
            label: label.to_string(),
            reason: one_line(&e),
        })?;
        let mut hashed = Vec::new();
        for part in [source, &bos_token, &eos_token] {
            hashed.extend_from_slice(&(part.len() as u64).to_le_bytes());
            hashed.extend_from_slice(part.as_bytes());
        }
        let template = ChatTemplate {
            code,
            label: label.to_string(),
            bos_token,
            eos_token,
            content_hash: format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&hashed)),
        };
        template.check()?;
        Ok(template)
    }

    /// Refuse a template that does not render, drops the user message, or adds no generation
    /// prompt: counts made with it would not describe what the model reads.
    fn check(&self) -> Result<(), ChatError> {
        let probe = "needlework probe: the user message";
        let with = self.render(None, probe, true)?;
        if !with.contains(probe) {
            return Err(self.error("its rendering does not contain the user message"));
        }
        let without = self.render(None, probe, false)?;
        if with == without && !self.opens_reply(probe, &with) {
            return Err(self.error(
                "add_generation_prompt adds nothing and the rendering does not end where an assistant reply would begin, so the model's turn would not be opened",
            ));
        }
        Ok(())
    }

    /// Whether `with` (the rendering of one user message `probe` with the generation prompt)
    /// ends where the model's reply begins: the same conversation with an assistant reply,
    /// rendered as history, continues `with` by that reply (after whitespace at most). A
    /// template that always ends with the assistant header, whatever `add_generation_prompt`
    /// says, opens the turn this way; one that drops or closes the turn does not.
    fn opens_reply(&self, probe: &str, with: &str) -> bool {
        let reply = "needlework probe: the model's reply";
        let messages = vec![message("user", probe), message("assistant", reply)];
        let Ok(history) = self.render_messages(messages, false) else {
            return false;
        };
        history
            .strip_prefix(with)
            .is_some_and(|rest| rest.trim_start().starts_with(reply))
    }

    fn error(&self, reason: &str) -> ChatError {
        ChatError {
            label: self.label.clone(),
            reason: reason.to_string(),
        }
    }

    /// The template rendered with one user message `user` (after an optional system
    /// message), as `apply_chat_template(messages, tokenize=False,
    /// add_generation_prompt=...)` renders it.
    pub fn render(
        &self,
        system: Option<&str>,
        user: &str,
        add_generation_prompt: bool,
    ) -> Result<String, ChatError> {
        let mut messages = Vec::new();
        if let Some(s) = system {
            messages.push(message("system", s));
        }
        messages.push(message("user", user));
        self.render_messages(messages, add_generation_prompt)
    }

    /// The template rendered over `messages`, as `apply_chat_template` renders them.
    fn render_messages(
        &self,
        messages: Vec<Value>,
        add_generation_prompt: bool,
    ) -> Result<String, ChatError> {
        let inputs: usize = messages
            .iter()
            .map(|m| {
                m.get_attr("content")
                    .map_or(0, |c| c.as_str().map_or(0, str::len))
            })
            .sum::<usize>()
            + self.bos_token.len()
            + self.eos_token.len();
        let ctx = minijinja::context! {
            messages => messages,
            add_generation_prompt => add_generation_prompt,
            bos_token => self.bos_token,
            eos_token => self.eos_token,
        };
        self.code
            .render(ctx, crate::jinja::budget(inputs))
            .map_err(|e| self.error(&one_line(&e)))
    }
}

/// A message as an ordered map (`role` first, as Python's dict literal keeps it).
fn message(role: &str, content: &str) -> Value {
    Value::from_iter([
        ("role", Value::from(role)),
        ("content", Value::from(content)),
    ])
}

fn one_line(e: &dyn std::fmt::Display) -> String {
    e.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn raise_exception(message: String) -> Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, message))
}

/// Python's `json.dumps(value, ensure_ascii=False, indent=indent)`, as `transformers` defines
/// `tojson` for chat templates (minijinja's own escapes HTML characters and drops spaces).
fn tojson(value: Value, kwargs: Kwargs) -> Result<Value, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    let _: Option<bool> = kwargs.get("ensure_ascii")?;
    let _: Option<bool> = kwargs.get("sort_keys")?;
    kwargs.assert_all_used()?;
    let mut out = String::new();
    python_json(&value, indent, 0, &mut out)?;
    Ok(Value::from_safe_string(out))
}

fn python_json(
    v: &Value,
    indent: Option<usize>,
    depth: usize,
    out: &mut String,
) -> Result<(), Error> {
    use minijinja::value::ValueKind as K;
    let newline = |out: &mut String, depth: usize| -> Result<(), Error> {
        if let Some(n) = indent {
            let pad = n.saturating_mul(depth);
            crate::jinja::fits(out.len().saturating_add(pad))?;
            out.push('\n');
            out.push_str(&" ".repeat(pad));
        }
        Ok(())
    };
    // What is written so far must fit what the render may still make.
    crate::jinja::fits(out.len())?;
    let item_sep = if indent.is_some() { "," } else { ", " };
    let string = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    match v.kind() {
        K::Undefined | K::None => out.push_str("null"),
        K::Bool => out.push_str(if v.is_true() { "true" } else { "false" }),
        K::Number if v.is_integer() => out.push_str(&v.to_string()),
        K::Number => match f64::try_from(v.clone()) {
            Ok(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e16 => {
                out.push_str(&format!("{f:.1}"))
            }
            _ => out.push_str(&v.to_string()),
        },
        K::String => out.push_str(&string(v.as_str().unwrap_or_default())),
        K::Seq | K::Iterable => {
            let items: Vec<Value> = v.try_iter()?.collect();
            if items.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, depth + 1)?;
                python_json(item, indent, depth + 1, out)?;
            }
            newline(out, depth)?;
            out.push(']');
        }
        K::Map => {
            let keys: Vec<Value> = v.try_iter()?.collect();
            if keys.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            out.push('{');
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, depth + 1)?;
                out.push_str(&string(&key.to_string()));
                out.push_str(": ");
                python_json(&v.get_item(key)?, indent, depth + 1, out)?;
            }
            newline(out, depth)?;
            out.push('}');
        }
        _ => out.push_str(&string(&v.to_string())),
    }
    Ok(())
}

/// What the model reads around `input`: a chat template (with an optional system message), or
/// nothing but the answer prefix.
#[derive(Debug, Clone, Default)]
pub struct Reader {
    /// The chat template, if the model reads one.
    pub chat: Option<Arc<ChatTemplate>>,
    /// The system message, if any (only with a chat template).
    pub system: Option<String>,
}

impl Reader {
    /// Identity for provenance: the chat template's hash and the system message's, or empty
    /// when the model reads `input` and the answer prefix alone.
    pub fn id(&self) -> String {
        match &self.chat {
            None => String::new(),
            Some(chat) => format!(
                "chat:{}:system:{}",
                chat.content_hash,
                self.system.as_deref().map_or_else(
                    || "none".to_string(),
                    |s| format!("{:032x}", xxhash_rust::xxh3::xxh3_128(s.as_bytes()))
                )
            ),
        }
    }

    /// The text the model reads for `input` followed by `answer_prefix`: the rendered chat
    /// (user turn = `input`, generation prompt added) then the answer prefix as the start of
    /// the assistant turn; without a template, `input` immediately followed by the prefix
    /// (what the lm-eval export sends).
    pub fn model_prompt(&self, input: &str, answer_prefix: &str) -> Result<String, ChatError> {
        let mut text = self.turns(input)?;
        text.push_str(answer_prefix);
        Ok(text)
    }

    /// What the model reads before the answer prefix: the rendered chat up to the opening of
    /// the model's turn, or `input` itself without a template. Exports send this followed by
    /// the answer prefix, so that harnesses which append the prefix themselves (lm-eval's
    /// `gen_prefix`, RULER's `answer_prefix`) send exactly [`Reader::model_prompt`].
    pub fn turns(&self, input: &str) -> Result<String, ChatError> {
        match &self.chat {
            Some(chat) => chat.render(self.system.as_deref(), input, true),
            None => Ok(input.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHATML: &str = r#"{
      "bos_token": "<s>",
      "eos_token": {"content": "<|im_end|>", "special": true},
      "chat_template": "{{ bos_token }}{% for m in messages %}{% if loop.first and m['role'] != 'system' %}<|im_start|>system\nYou help.<|im_end|>\n{% endif %}<|im_start|>{{ m['role'] }}\n{{ m['content'].strip() }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    }"#;

    #[test]
    fn chatml_renders_like_transformers() {
        let t = ChatTemplate::from_bytes(CHATML.as_bytes(), "cfg.json").unwrap();
        assert_eq!(t.eos_token, "<|im_end|>");
        let got = t.render(None, "  Hello there. ", true).unwrap();
        assert_eq!(
            got,
            "<s><|im_start|>system\nYou help.<|im_end|>\n<|im_start|>user\nHello there.<|im_end|>\n<|im_start|>assistant\n"
        );
        let reader = Reader {
            chat: Some(Arc::new(t)),
            system: Some("Be brief.".into()),
        };
        let p = reader.model_prompt("Q?", "Answer:").unwrap();
        assert!(p.starts_with("<s><|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nQ?"));
        assert!(p.ends_with("<|im_start|>assistant\nAnswer:"));
    }

    /// The project's ChatML-like fixture, against what transformers 5.23 renders for it.
    #[test]
    fn fixture_matches_transformers_byte_for_byte() {
        let cfg = include_bytes!("../../tests/fixtures/chat/tokenizer_config.json");
        let t = ChatTemplate::from_bytes(cfg, "tokenizer_config.json").unwrap();
        assert_eq!(t.bos_token, "<s>");
        assert_eq!(
            t.render(None, "  Hello there.\n", true).unwrap(),
            "<s><|im_start|>system\nYou read long documents carefully and answer briefly.<|im_end|>\n<|im_start|>user\nHello there.<|im_end|>\n<|im_start|>assistant\n"
        );
        assert_eq!(
            t.render(Some("Be brief. "), "Q?", true).unwrap(),
            "<s><|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant\n"
        );
        let jinja = include_bytes!("../../tests/fixtures/chat/chatml.jinja");
        let j = ChatTemplate::from_bytes(jinja, "chatml.jinja").unwrap();
        assert_eq!(j.bos_token, "");
        assert!(j
            .render(None, "Q?", true)
            .unwrap()
            .starts_with("<|im_start|>system"));
    }

    #[test]
    fn bad_templates_are_refused_with_a_reason() {
        let cases = [
            ("{% for %}", "syntax"),
            ("{\"chat_template\": 3}", "neither"),
            ("{\"bos_token\": \"x\"}", "no chat_template"),
            ("{{ raise_exception('no system role') }}", "no system role"),
            (
                "fixed text {% if add_generation_prompt %}A:{% endif %}",
                "user message",
            ),
            ("{{ messages[0]['content'] }}", "adds nothing"),
            (
                "{% set r = range(50000) %}{% for i in r %}{% for j in r %}{% endfor %}{% endfor %}",
                "fuel",
            ),
            (
                "{\"chat_template\": [{\"name\": \"tool_use\", \"template\": \"x\"}]}",
                "default",
            ),
        ];
        for (source, needle) in cases {
            let e = ChatTemplate::from_bytes(source.as_bytes(), "t.jinja").unwrap_err();
            let s = e.to_string();
            assert!(s.contains(needle) || s.contains("t.jinja"), "{source}: {s}");
            assert!(s.contains(needle), "{source}: {s}");
        }
    }

    #[test]
    fn tojson_is_pythons() {
        let t = ChatTemplate::from_bytes(
            b"{{ messages | tojson }}|{{ {'a': [1, 2.0, 'x<y'], 'b': {}} | tojson(indent=2) }}{% if add_generation_prompt %}!{% endif %}",
            "j.jinja",
        )
        .unwrap();
        let got = t.render(None, "hé", false).unwrap();
        assert_eq!(
            got,
            "[{\"role\": \"user\", \"content\": \"hé\"}]|{\n  \"a\": [\n    1,\n    2.0,\n    \"x<y\"\n  ],\n  \"b\": {}\n}"
        );
    }

    #[test]
    fn loop_controls_and_namespace_work() {
        let t = ChatTemplate::from_bytes(
            b"{% set ns = namespace(n=0) %}{% for m in messages %}{% if m.role == 'system' %}{% continue %}{% endif %}{% set ns.n = ns.n + 1 %}{{ m.content }}{% if ns.n > 0 %}{% break %}{% endif %}{% endfor %}{{ ns.n }}{% if add_generation_prompt %}>{% endif %}",
            "l.jinja",
        )
        .unwrap();
        assert_eq!(t.render(Some("s"), "u", true).unwrap(), "u1>");
    }

    #[test]
    fn a_turn_left_open_is_accepted_and_a_closed_one_refused() {
        let open = [
            // Always ends with the assistant header.
            "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n",
            // No generation prompt: the reply follows the closing [/INST].
            "{% for m in messages %}{% if m.role == 'user' %}[INST] {{ m.content }} [/INST]{% else %}{{ m.content }}</s>{% endif %}{% endfor %}",
        ];
        for source in open {
            let t = ChatTemplate::from_bytes(source.as_bytes(), "o.jinja").unwrap();
            assert!(t.render(None, "Q", true).unwrap().contains('Q'));
        }
        let closed = [
            "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}<|endoftext|>",
            // The reply is not where the rendering ends: it drops the history.
            "{{ messages[0]['content'] }} Answer:",
        ];
        for source in closed {
            let e = ChatTemplate::from_bytes(source.as_bytes(), "c.jinja").unwrap_err();
            assert!(
                e.to_string().contains("would not be opened"),
                "{source}: {e}"
            );
        }
    }

    /// What transformers renders for a macro template and for `strftime_now` on 2025-01-01.
    #[test]
    fn macros_and_strftime_now_render_as_transformers_does() {
        let t = ChatTemplate::from_bytes(
            b"{% macro turn(r, c) %}<{{ r }}>{{ c | trim }}</{{ r }}>{% endmacro %}{% for m in messages %}{{ turn(m.role, m.content) }}{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}",
            "m.jinja",
        )
        .unwrap();
        assert_eq!(
            t.render(Some("S"), " Q ", true).unwrap(),
            "<system>S</system><user>Q</user><assistant>"
        );
        let llama = include_bytes!("../../tests/fixtures/chat/llama3.jinja");
        let t = ChatTemplate::from_bytes(llama, "llama3.jinja").unwrap();
        assert_eq!(
            t.render(None, "Q?", true).unwrap(),
            "<|start_header_id|>system<|end_header_id|>\n\nDate of this conversation: 01 Jan 2025\n\nAnswer from the document alone.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nQ?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
        );
        let e = ChatTemplate::from_bytes(
            b"{{ strftime_now('%s') }}{{ messages[0].content }}{% if add_generation_prompt %}>{% endif %}",
            "s.jinja",
        )
        .unwrap_err();
        assert!(e.to_string().contains("strftime_now"), "{e}");
    }
}
