//! What the model reads fits the length: the answer prefix and, with `--chat-template`, the
//! rendered chat with its special tokens are counted in `prompt_tokens`, and together with
//! `max_new_tokens` they fit `target_length`. (The reference counts — tiktoken, tokenizers,
//! transformers' apply_chat_template — are compared in CI by tests/python/check_dataset.py.)

use std::path::Path;

use crate::common::*;
use needlework_generators::Tokenizer;

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

/// `gen inspect DIR --prompts`: one JSON line per row, by row id.
fn shown_prompts(dir: &str) -> std::collections::BTreeMap<String, String> {
    let out = gen_ok(&["inspect", dir, "--prompts"]);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["id"].as_str().unwrap().to_string(),
                v["prompt"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_model_prompt_is_shown_and_exported_as_counted() {
    let t = tmp();
    let tok_path = fixture("chat/tokenizer.json");
    let tok = Tokenizer::from_json_bytes(&std::fs::read(&tok_path).unwrap(), &tok_path).unwrap();
    let chat = out_arg(t.path(), "chat");
    let cfg = chat_fixture("tokenizer_config.json");
    let recipe = [
        "niah",
        "--variant",
        "multivalue",
        "--len",
        "1k,2k",
        "--depths",
        "2",
    ];
    let mut args = recipe.to_vec();
    args.extend([
        "--tokenizer",
        &tok_path,
        "--chat-template",
        &cfg,
        "--system",
        "Be brief.",
    ]);
    generate(&chat, &args);
    let shown = shown_prompts(&chat);
    let rows = rows(Path::new(&chat));
    assert_eq!(shown.len(), rows.len());
    for row in &rows {
        let prompt = &shown[&row.id];
        // The template's system turn, the user turn holding the input, the model's turn opened
        // and started with the answer prefix; counted with special tokens, it is prompt_tokens.
        assert!(
            prompt.starts_with("<s><|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n")
        );
        assert!(prompt.contains(row.input.trim()), "{}", row.id);
        let turn = format!("<|im_end|>\n<|im_start|>assistant\n{}", row.answer_prefix);
        assert!(prompt.ends_with(&turn), "{}: {prompt:?}", row.id);
        assert_eq!(
            tok.count_special(prompt).unwrap() as i64,
            row.prompt_tokens,
            "{}",
            row.id
        );
    }
    // RULER sends `input` then `answer_prefix`: the export's input is the rendered chat.
    gen_ok(&["export", "ruler", &chat]);
    let ruler =
        std::fs::read_to_string(Path::new(&chat).join("ruler/niah_multivalue/validation.jsonl"))
            .unwrap();
    let mut exported = 0;
    for line in ruler.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let sent = format!(
            "{}{}",
            v["input"].as_str().unwrap(),
            v["answer_prefix"].as_str().unwrap()
        );
        assert_eq!(sent, shown[v["others"]["id"].as_str().unwrap()]);
        exported += 1;
    }
    assert_eq!(exported, rows.len());
    // lm-eval and OpenCompass read the rendered chat from a file beside their code.
    gen_ok(&["export", "lm-eval", &chat]);
    let yaml = std::fs::read_to_string(
        Path::new(&chat).join("lm_eval/needlework_chat_niah_multivalue.yaml"),
    )
    .unwrap();
    assert!(yaml.contains("doc_to_text: !function needlework_chat_utils.doc_to_text"));
    let turns = std::fs::read_to_string(Path::new(&chat).join("lm_eval/chat_turns.jsonl")).unwrap();
    assert_eq!(turns.lines().count(), rows.len());

    // Without a chat template the model reads the input then the answer prefix, and the
    // exports send just that (no file of turns).
    let plain = out_arg(t.path(), "plain");
    generate(&plain, &recipe);
    let shown = shown_prompts(&plain);
    for row in rows_of(&plain) {
        assert_eq!(
            shown[&row.id],
            format!("{}{}", row.input, row.answer_prefix)
        );
    }
    gen_ok(&["export", "lm-eval", &plain]);
    assert!(!Path::new(&plain).join("lm_eval/chat_turns.jsonl").exists());

    // --prompts needs a dataset; --chat-template on inspect needs --prompts.
    let file = parquet_files(Path::new(&plain)).remove(0);
    let res = gen(&["inspect", file.to_str().unwrap(), "--prompts"]);
    assert_eq!(res.status.code(), Some(2));
    let res = gen(&["inspect", &plain, "--chat-template", &cfg]);
    assert_eq!(res.status.code(), Some(2));
}

fn rows_of(dir: &str) -> Vec<TestRow> {
    rows(Path::new(dir))
}

#[test]
fn a_jinja_template_takes_the_special_tokens_beside_it() {
    let t = tmp();
    let tok_path = fixture("chat/tokenizer.json");
    let beside = chat_fixture("chatml.jinja");
    let alone = t.path().join("chatml.jinja");
    std::fs::copy(&beside, &alone).unwrap();
    let base = [
        "babilong",
        "--task",
        "qa1",
        "--len",
        "1k",
        "--tokenizer",
        &tok_path,
    ];
    let mut prompts = Vec::new();
    for (name, template) in [
        ("beside", beside.as_str()),
        ("alone", alone.to_str().unwrap()),
    ] {
        let out = out_arg(t.path(), name);
        let mut args = base.to_vec();
        args.extend(["--chat-template", template]);
        generate(&out, &args);
        assert!(gen(&["verify", &out, "-q"]).status.success());
        prompts.push(shown_prompts(&out).into_values().next().unwrap());
    }
    // Beside tokenizer_config.json, {{ bos_token }} is its <s>; alone, there is none.
    assert!(
        prompts[0].starts_with("<s><|im_start|>system"),
        "{}",
        prompts[0]
    );
    assert!(
        prompts[1].starts_with("<|im_start|>system"),
        "{}",
        prompts[1]
    );
}
