//! Templates and tokenizer files an adversary writes: growth that must stop by size, parsers
//! that must not panic, chat templates that must be read as transformers reads them (an
//! always-open assistant turn, macros, `strftime_now` on the recorded date) or refused.

use std::path::Path;

use crate::common::*;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// `--template` and `--chat-template` sources that grow a value without end: each refused
/// with the size budget's one line, exit 2, nothing written. The check is by size (the
/// budget is spent before the growth is allocated), so each ends after a few steps.
#[test]
fn templates_that_grow_a_string_are_stopped_by_size() {
    let t = tmp();
    let growers = [
        "{% set ns = namespace(s='x') %}{% for i in range(200) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        "{% set ns = namespace(s='ab') %}{% for i in range(200) %}{% set ns.s = ns.s * 2 %}{% endfor %}",
        "{{ range(100000)|join('a long separator between the numbers' * 20) }}",
        "{% set ns = namespace(l=[1]) %}{% for i in range(200) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l|length }}",
        "{% set big = 'x' * 9000000 %}{% for i in range(10000) %}{{ big }}{% endfor %}",
    ];
    for (i, grower) in growers.iter().enumerate() {
        let prompt = write(
            t.path(),
            &format!("p{i}.j2"),
            &format!("{grower}{{{{ context }}}}"),
        );
        let out = out_arg(t.path(), &format!("p{i}"));
        assert_refused(
            &["niah", "--len", "1k", "--template", &prompt],
            &out,
            "makes more than",
        );
        let chat = write(
            t.path(),
            &format!("c{i}.jinja"),
            &format!("{grower}{{{{ messages[0]['content'] }}}}{{% if add_generation_prompt %}}A:{{% endif %}}"),
        );
        let out = out_arg(t.path(), &format!("c{i}"));
        assert_refused(
            &["niah", "--len", "1k", "--chat-template", &chat],
            &out,
            "makes more than",
        );
    }
}

/// A tokenizer.json whose components panic inside `tokenizers` is a malformed file: one
/// line, exit 2, no backtrace.
#[test]
fn tokenizer_files_that_panic_the_parser_are_refused_in_one_line() {
    let t = tmp();
    let base: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("tokenizer-metaspace.json")).unwrap(),
    )
    .unwrap();
    for (i, map) in ["", "not base64!", "AAAA"].iter().enumerate() {
        let mut json = base.clone();
        json["normalizer"] =
            serde_json::json!({"type": "Precompiled", "precompiled_charsmap": map});
        let file = write(t.path(), &format!("tok{i}.json"), &json.to_string());
        let out = out_arg(t.path(), &format!("o{i}"));
        let res = gen(&["niah", "--len", "1k", "--tokenizer", &file, "--out", &out]);
        let stderr = String::from_utf8_lossy(&res.stderr);
        if res.status.success() {
            // A charsmap that happens to parse gives a usable tokenizer.
            continue;
        }
        assert_eq!(res.status.code(), Some(2), "{map:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{map:?}: {stderr}");
        assert!(
            stderr.contains("not a valid Hugging Face tokenizer.json"),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!Path::new(&out).exists());
    }
}

/// A template that ends with the assistant header whatever `add_generation_prompt` says
/// opens the model's turn: accepted, as transformers renders it. So is one without a
/// generation prompt whose user turn ends where the reply begins (Mistral's `[/INST]`).
/// One that closes the conversation after the user turn is still refused.
#[test]
fn a_template_whose_turn_is_always_open_is_accepted() {
    let t = tmp();
    let tok = fixture("chat/tokenizer.json");
    let open = fixture("chat/open-turn.jinja");
    let inst = write(
        t.path(),
        "inst.jinja",
        "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'user' %}[INST] {{ m['content'] }} [/INST]{% else %}{{ m['content'] }}{{ eos_token }}{% endif %}{% endfor %}",
    );
    for (name, chat) in [("open", &open), ("inst", &inst)] {
        let out = out_arg(t.path(), name);
        generate(
            &out,
            &[
                "niah",
                "--len",
                "1k",
                "--tokenizer",
                &tok,
                "--chat-template",
                chat,
            ],
        );
        assert!(gen(&["verify", &out, "-q"]).status.success(), "{name}");
        let prompts = gen_ok(&["inspect", &out, "--prompts"]);
        let text = String::from_utf8_lossy(&prompts.stdout);
        let want = if name == "open" {
            "<|im_start|>assistant"
        } else {
            " [/INST]"
        };
        for line in text.lines() {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            let prompt = row["prompt"].as_str().unwrap();
            assert!(prompt.contains(want), "{name}: {prompt:.80}");
        }
    }
    let closed = write(
        t.path(),
        "closed.jinja",
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}<|endoftext|>",
    );
    let out = out_arg(t.path(), "closed");
    assert_refused(
        &["niah", "--len", "1k", "--chat-template", &closed],
        &out,
        "would not be opened",
    );
}

/// `{% macro %}` and `strftime_now` work as in transformers: the Llama-3-style fixture puts
/// the recorded date in the system turn, the macro fixture renders its turns; a directive
/// gen cannot render exactly is refused rather than rendered differently.
#[test]
fn macros_and_the_recorded_date_render_as_transformers_does() {
    let t = tmp();
    let tok = fixture("chat/tokenizer.json");
    for (name, file, want) in [
        (
            "llama",
            "chat/llama3.jinja",
            "<s><|start_header_id|>system<|end_header_id|>\n\nDate of this conversation: 01 Jan 2025\n\nAnswer from the document alone.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n",
        ),
        (
            "macros",
            "chat/macros.jinja",
            "<s><|im_start|>system\nRead what follows, then answer in few words.<|im_end|>\n<|im_start|>user\n",
        ),
    ] {
        let out = out_arg(t.path(), name);
        let chat = fixture(file);
        generate(
            &out,
            &["niah", "--len", "1k", "--tokenizer", &tok, "--chat-template", &chat],
        );
        assert!(gen(&["verify", &out, "-q"]).status.success(), "{name}");
        let prompts = gen_ok(&["inspect", &out, "--prompts"]);
        let text = String::from_utf8_lossy(&prompts.stdout);
        let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert!(
            first["prompt"].as_str().unwrap().starts_with(want),
            "{name}: {:.200}",
            first["prompt"]
        );
    }
    // Another date format, and a system message replacing the default.
    let other = write(
        t.path(),
        "date.jinja",
        "{{ strftime_now('%A %-d %B %Y, %H:%M') }}|{% for m in messages %}{{ m['content'] }}{% endfor %}{% if add_generation_prompt %}>{% endif %}",
    );
    let out = out_arg(t.path(), "date");
    generate(&out, &["niah", "--len", "1k", "--chat-template", &other]);
    let prompts = gen_ok(&["inspect", &out, "--prompts"]);
    assert!(String::from_utf8_lossy(&prompts.stdout).contains("Wednesday 1 January 2025, 00:00|"));
    for directive in ["%s", "%Ez"] {
        let bad = write(
            t.path(),
            "bad.jinja",
            &format!("{{{{ strftime_now('{directive}') }}}}{{{{ messages[0]['content'] }}}}{{% if add_generation_prompt %}}>{{% endif %}}"),
        );
        let out = out_arg(t.path(), "bad");
        assert_refused(
            &["niah", "--len", "1k", "--chat-template", &bad],
            &out,
            "strftime_now",
        );
    }
}

/// QA files with questions no row could answer: an answer in no paragraph (SQuAD and
/// HotpotQA), a repeated id, supporting facts naming no title. Those questions are left out
/// and counted on stderr; every row made has each gold answer in its input.
#[test]
fn qa_questions_without_an_answer_in_their_paragraphs_are_skipped_and_counted() {
    let t = tmp();
    let mut base: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("qa/squad.json")).unwrap()).unwrap();
    // Break three questions of the first paragraph: an answer no paragraph holds, a
    // repeated id, and (kept, one answer dropped) an extra answer found nowhere.
    let qas = &mut base["data"][0]["paragraphs"][0]["qas"];
    qas[0]["answers"] =
        serde_json::json!([{"text": "a phrase in no paragraph at all", "answer_start": 0}]);
    let first_id = qas[1]["id"].clone();
    qas[2]["id"] = first_id;
    let answerable = |q: &serde_json::Value| {
        q["is_impossible"] != true && q["answers"].as_array().is_some_and(|a| !a.is_empty())
    };
    let paragraph = &mut base["data"][1]["paragraphs"][0]["qas"];
    let k = paragraph
        .as_array()
        .unwrap()
        .iter()
        .position(answerable)
        .unwrap();
    paragraph[k]["answers"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"text": "another phrase found nowhere", "answer_start": 0}));
    let squad = write(t.path(), "squad.json", &base.to_string());

    let mut hotpot: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("qa/hotpotqa.json")).unwrap())
            .unwrap();
    let list = hotpot.as_array_mut().unwrap();
    let not_yes_no = |q: &serde_json::Value| !matches!(q["answer"].as_str(), Some("yes" | "no"));
    let i = list.iter().position(not_yes_no).unwrap();
    list[i]["answer"] = "an answer written nowhere".into();
    let j = list.iter().skip(i + 1).position(not_yes_no).unwrap() + i + 1;
    list[j]["supporting_facts"] = serde_json::json!([["A title that is not there", 0]]);
    let hotpot = write(t.path(), "hotpot.json", &hotpot.to_string());

    for (name, file, says) in [
        ("squad", &squad, "skipped 1 question whose answer is in none of their gold paragraphs, 1 question whose id an earlier question has; dropped 1 answer"),
        ("hotpot", &hotpot, "1 question whose answer is in none of their gold paragraphs, 1 question whose supporting_facts name a title"),
    ] {
        let out = out_arg(t.path(), name);
        let res = gen(&["qa", "--data", file, "--len", "2k", "--depths", "3", "--samples", "8", "--out", &out]);
        let stderr = String::from_utf8_lossy(&res.stderr);
        assert!(res.status.success(), "{name}: {stderr}");
        assert!(stderr.contains(says), "{name}: {stderr}");
        let rows = rows(Path::new(&out));
        assert!(!rows.is_empty());
        for row in rows {
            for a in &row.answers {
                assert!(
                    a == "yes" || a == "no" || row.input.contains(a.as_str()),
                    "{name} {}: answer {a:?} not in the input",
                    row.id
                );
            }
        }
    }
}
