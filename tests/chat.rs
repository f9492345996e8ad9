//! What the model reads fits the length: the answer prefix and, with `--chat-template`, the
//! rendered chat with its special tokens are counted in `prompt_tokens`, and together with
//! `max_new_tokens` they fit `target_length`. (The reference counts — tiktoken, tokenizers,
//! transformers' apply_chat_template — are compared in CI by tests/python/check_dataset.py.)

mod common;

use std::path::Path;

use common::*;

fn chat_fixture(name: &str) -> String {
    fixture(&format!("chat/{name}"))
}

/// Every row: prompt_tokens + max_new_tokens within [target - tolerance, target].
fn assert_budget(dir: &Path) {
    let rows = rows(dir);
    assert!(!rows.is_empty());
    for row in rows {
        let (prompt, max_new) = (row.prompt_tokens, row.max_new_tokens);
        let target = row.target_length;
        let tol = (target / 500).max(16);
        assert!(
            prompt + max_new <= target && prompt + max_new + tol >= target,
            "{}: prompt {prompt} + answer {max_new} vs target {target}",
            row.id
        );
        assert!(
            prompt >= row.length,
            "{}: the model reads input at least",
            row.id
        );
    }
}

#[test]
fn the_answer_prefix_is_counted_in_the_budget() {
    let t = tmp();
    for (name, args) in [
        ("niah", vec!["niah", "--len", "1k,4k", "--depths", "3"]),
        ("mv", vec!["niah", "--variant", "multivalue", "--len", "2k"]),
        (
            "arith",
            vec!["arith", "--op", "sum", "--len", "2k", "--samples", "3"],
        ),
        ("gpt2", vec!["niah", "--len", "3000", "--tokenizer", "gpt2"]),
    ] {
        let out = out_arg(t.path(), name);
        generate(&out, &args);
        assert_budget(Path::new(&out));
    }
}

#[test]
fn a_chat_template_is_counted_and_verified() {
    let t = tmp();
    let out = out_arg(t.path(), "chat");
    let tok = fixture("chat/tokenizer.json");
    let cfg = chat_fixture("tokenizer_config.json");
    generate(
        &out,
        &[
            "niah",
            "--len",
            "1k,3k",
            "--depths",
            "3",
            "--tokenizer",
            &tok,
            "--chat-template",
            &cfg,
            "--system",
            "Answer briefly.",
        ],
    );
    let dir = Path::new(&out);
    assert_budget(dir);
    // The chat adds tokens: the system turn, the markers, the generation prompt.
    for row in rows(dir) {
        assert!(row.prompt_tokens > row.length + 10, "{}", row.id);
    }
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"chat_template\"") && manifest.contains("Answer briefly."));
    assert!(gen(&["verify", &out, "-q"]).status.success());

    // The same recipe without a system message is another dataset.
    let other = out_arg(t.path(), "nosys");
    generate(
        &other,
        &[
            "niah",
            "--len",
            "1k,3k",
            "--depths",
            "3",
            "--tokenizer",
            &tok,
            "--chat-template",
            &cfg,
        ],
    );
    assert_ne!(dataset_bytes(dir), dataset_bytes(Path::new(&other)));

    // A moved chat template is named, and found again with --chat-template.
    let moved = t.path().join("moved.json");
    let copied = t.path().join("copy");
    std::fs::create_dir(&copied).unwrap();
    std::fs::copy(&cfg, &moved).unwrap();
    let res = gen(&[
        "verify",
        &out,
        "--chat-template",
        moved.to_str().unwrap(),
        "-q",
    ]);
    assert!(
        res.status.success(),
        "{}",
        String::from_utf8_lossy(&res.stderr)
    );
    // An edited template is another template.
    let edited = t.path().join("edited.json");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&edited, text.replace("answer briefly", "answer at length")).unwrap();
    let res = gen(&[
        "verify",
        &out,
        "--chat-template",
        edited.to_str().unwrap(),
        "-q",
    ]);
    assert_ne!(res.status.code(), Some(0));
}

#[test]
fn unusable_chat_templates_are_refused() {
    let t = tmp();
    let out = out_arg(t.path(), "x");
    let cfg = chat_fixture("tokenizer_config.json");
    let tok = fixture("chat/tokenizer.json");
    // A built-in encoding without the template's special tokens.
    assert_refused(&["niah", "--chat-template", &cfg], &out, "does not have");
    // A system message without a template.
    assert_refused(
        &["niah", "--system", "Hi."],
        &out,
        "--system needs --chat-template",
    );
    let bad = |name: &str, text: &str| {
        let p = t.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    for (file, needle) in [
        (
            bad("syntax.jinja", "{% for m in messages %}"),
            "syntax.jinja",
        ),
        (
            bad("nogen.jinja", "{{ messages[0]['content'] }}"),
            "add_generation_prompt adds nothing",
        ),
        (
            bad(
                "nouser.jinja",
                "Hello{% if add_generation_prompt %}>{% endif %}",
            ),
            "user message",
        ),
        (
            bad("nokey.json", "{\"bos_token\": \"<s>\"}"),
            "no chat_template",
        ),
        (bad("empty.json", ""), "not valid JSON"),
        (bad("empty.jinja", ""), "user message"),
    ] {
        assert_refused(
            &["niah", "--tokenizer", &tok, "--chat-template", &file],
            &out,
            needle,
        );
    }
    // A length too small once the chat is counted.
    assert_refused(
        &[
            "niah",
            "--len",
            "60",
            "--tokenizer",
            &tok,
            "--chat-template",
            &cfg,
        ],
        &out,
        "too short",
    );
}
