//! `gen qa` through the real binary, checked against the data file read independently here:
//! each row asks a question of the file with the file's answers, its gold paragraphs stand in
//! the input whole and numbered where `params` says, no distractor states a gold answer, the
//! first gold paragraph sits at the asked depth, every instance of a length asks its own question
//! (the same at every length), lengths are exact and as full as whole documents allow, and `verify`
//! regenerates it all. Over many seeds, both formats, several tokenizers.
//!

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::common::*;
use needlework_generators::Tokenizer;

/// A question of the file as this test reads it: (question, answers, gold paragraph texts).
type Question = (String, Vec<String>, Vec<String>);

/// The file's answerable questions by id, read with serde_json alone.
fn questions(file: &str) -> BTreeMap<String, Question> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let mut out = BTreeMap::new();
    let strings = |v: &serde_json::Value| -> Vec<String> {
        let mut a: Vec<String> = Vec::new();
        for s in v.as_array().unwrap() {
            let s = s.as_str().unwrap().trim().to_string();
            if !a.contains(&s) {
                a.push(s);
            }
        }
        a
    };
    if let Some(data) = v.get("data") {
        for article in data.as_array().unwrap() {
            for p in article["paragraphs"].as_array().unwrap() {
                for qa in p["qas"].as_array().unwrap() {
                    if qa["is_impossible"].as_bool() == Some(true) {
                        continue;
                    }
                    let texts: Vec<serde_json::Value> = qa["answers"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|a| a["text"].clone())
                        .collect();
                    out.insert(
                        qa["id"].as_str().unwrap().to_string(),
                        (
                            qa["question"].as_str().unwrap().to_string(),
                            strings(&serde_json::Value::Array(texts)),
                            vec![p["context"].as_str().unwrap().to_string()],
                        ),
                    );
                }
            }
        }
    } else {
        for item in v.as_array().unwrap() {
            let supporting: BTreeSet<&str> = item["supporting_facts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f[0].as_str().unwrap())
                .collect();
            let gold = item["context"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| supporting.contains(c[0].as_str().unwrap()))
                .map(|c| {
                    let body: String = c[1]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|s| s.as_str().unwrap())
                        .collect();
                    format!("{}\n{body}", c[0].as_str().unwrap())
                })
                .collect();
            out.insert(
                item["_id"].as_str().unwrap().to_string(),
                (
                    item["question"].as_str().unwrap().to_string(),
                    vec![item["answer"].as_str().unwrap().to_string()],
                    gold,
                ),
            );
        }
    }
    out
}

/// The documents of an input: number → text, as `Document k:\n<text>` blocks between blank
/// lines inside the context.
fn documents(input: &str) -> BTreeMap<usize, String> {
    let mut out = BTreeMap::new();
    let starts: Vec<usize> = input.match_indices("Document ").map(|(i, _)| i).collect();
    for (j, &s) in starts.iter().enumerate() {
        if s > 0 && !input[..s].ends_with("\n\n") {
            continue;
        }
        let Some(colon) = input[s..].find(":\n") else {
            continue;
        };
        let Ok(k) = input[s + 9..s + colon].parse::<usize>() else {
            continue;
        };
        let end = starts
            .get(j + 1..)
            .and_then(|rest| rest.iter().find(|&&e| input[..e].ends_with("\n\n")))
            .map_or_else(
                || {
                    input[s..]
                        .find("\n\nUsing only")
                        .map_or(input.len(), |e| s + e)
                },
                |&e| e - 2,
            );
        out.insert(k, input[s + colon + 2..end].to_string());
    }
    out
}

/// Whether `term` occurs in `text` as whole words, case-insensitively; a number is whole only
/// where no digit group joins it (`9` is not in `9,000`, as it is not in `9000`).
fn mentions(text: &str, term: &str) -> bool {
    let (t, w) = (text.to_lowercase(), term.to_lowercase());
    let joined = |sep: Option<char>, next: Option<char>, edge: Option<char>| {
        matches!(sep, Some(',' | '.' | '_'))
            && next.is_some_and(|c| c.is_ascii_digit())
            && edge.is_some_and(|c| c.is_ascii_digit())
    };
    t.match_indices(&w).any(|(i, _)| {
        let mut before = t[..i].chars().rev();
        let mut after = t[i + w.len()..].chars();
        let (b1, b2) = (before.next(), before.next());
        let (a1, a2) = (after.next(), after.next());
        !b1.is_some_and(char::is_alphanumeric)
            && !a1.is_some_and(char::is_alphanumeric)
            && !joined(b1, b2, w.chars().next())
            && !joined(a1, a2, w.chars().next_back())
    })
}

fn verify_ok(out: &str) {
    let v = gen(&["verify", out, "-q"]);
    assert!(
        v.status.success(),
        "{out}: {}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );
}

#[test]
fn qa_rows_ask_the_files_questions_with_gold_paragraphs_in_place_over_many_seeds() {
    let t = tmp();
    let squad = fixture("qa/squad.json");
    let hotpot = fixture("qa/hotpotqa.json");
    let cases = [
        (&squad, "o200k", "2k,4k", 7u64, false),
        (&squad, "cl100k", "3000", 8, true),
        (&squad, "gpt2", "2k", 9, false),
        (&squad, "words", "1500", 10, false),
        (&hotpot, "o200k", "2k,6k", 11, false),
        (&hotpot, "cl100k", "4k", 12, true),
        (&hotpot, "chars", "8000", 13, false),
    ];
    let mut checked = 0;
    for (k, (file, tokenizer, lens, seed_base, exact)) in cases.into_iter().enumerate() {
        let truth = questions(file);
        for seed in seed_base..seed_base + 3 {
            let out = out_arg(t.path(), &format!("qa{k}_{seed}"));
            let seed_s = seed.to_string();
            let mut args = vec![
                "qa",
                "--data",
                file,
                "--tokenizer",
                tokenizer,
                "--len",
                lens,
                "--depths",
                "0,35,80,100",
                "--samples",
                "3",
                "--seed",
                &seed_s,
            ];
            if exact {
                args.push("--exact");
            }
            generate(&out, &args);
            let tok = Tokenizer::builtin(tokenizer).unwrap();
            let mut by_slot: BTreeMap<(u64, i64), BTreeSet<String>> = BTreeMap::new();
            for r in rows(Path::new(&out)) {
                let p = &r.params;
                let id = p["question_id"].as_str().unwrap().to_string();
                let (question, answers, gold) = &truth[&id];
                by_slot
                    .entry((r.depth_percent.unwrap().to_bits(), r.sample_index))
                    .or_default()
                    .insert(id.clone());
                assert!(r.input.contains(&format!("Question: {question}")), "{id}");
                assert_eq!(&r.answers, answers, "{id}");
                assert_eq!(r.target, answers[0]);
                assert_eq!(r.metric, if exact { "one_of" } else { "any" });
                // Documents numbered 1..n; the gold ones where params say, whole.
                let docs = documents(&r.input);
                let n = p["documents"].as_u64().unwrap() as usize;
                assert_eq!(
                    docs.keys().copied().collect::<Vec<_>>(),
                    (1..=n).collect::<Vec<_>>()
                );
                let at: Vec<usize> = p["gold_documents"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap() as usize)
                    .collect();
                let mut golds: Vec<&String> = at.iter().map(|k| &docs[k]).collect();
                golds.sort();
                let mut want: Vec<&String> = gold.iter().collect();
                want.sort();
                assert_eq!(golds, want, "{id}: the gold paragraphs");
                let screened: Vec<&String> = answers
                    .iter()
                    .filter(|a| !["yes", "no"].contains(&a.as_str()))
                    .collect();
                if !screened.is_empty() {
                    assert!(
                        gold.iter()
                            .any(|g| screened.iter().any(|a| g.contains(a.as_str()))),
                        "{id}: no gold paragraph holds an answer"
                    );
                }
                for (k, d) in &docs {
                    if !at.contains(k) {
                        for a in &screened {
                            assert!(!mentions(d, a), "{id}: distractor {k} mentions {a}");
                        }
                    }
                }
                // Lengths exact; as full as whole documents allow.
                assert_eq!(r.length as usize, tok.count(&r.input).unwrap(), "{id}");
                let budget = r.target_length - r.max_new_tokens;
                let short = budget - r.prompt_tokens;
                let next = p["next_document_tokens"].as_i64().unwrap();
                assert!(short >= 0, "{id}: over budget");
                assert!(
                    short <= next.max((budget / 500).max(16)),
                    "{id}: {short} short of the budget, next document {next}"
                );
                // The first gold paragraph at the asked depth, within one document's share.
                let depth = r.depth_percent.unwrap();
                let share = 100.0 * 2.0 / n as f64 + 2.0;
                assert!(
                    (r.needle_depths[0] - depth).abs() <= share,
                    "{id}: at {} for {depth}",
                    r.needle_depths[0]
                );
                checked += 1;
            }
            // One question per (depth, sample), the same at every length, none asked twice.
            let asked: Vec<&String> = by_slot
                .values()
                .map(|ids| {
                    assert_eq!(ids.len(), 1, "{ids:?}");
                    ids.iter().next().unwrap()
                })
                .collect();
            let distinct: BTreeSet<&&String> = asked.iter().collect();
            assert_eq!(distinct.len(), asked.len());
            verify_ok(&out);
        }
    }
    assert!(checked >= 7 * 3 * 4 * 3, "{checked}");
}

#[test]
fn same_rows_whatever_the_thread_count() {
    let t = tmp();
    let file = fixture("qa/hotpotqa.json");
    let mut made = Vec::new();
    for threads in ["1", "2"] {
        let out = out_arg(t.path(), &format!("t{threads}"));
        generate(
            &out,
            &[
                "qa",
                "--data",
                &file,
                "--len",
                "3k",
                "--depths",
                "5",
                "--samples",
                "2",
                "--threads",
                threads,
            ],
        );
        made.push(dataset_bytes(Path::new(&out)));
    }
    assert_eq!(made[0], made[1]);
}

#[test]
fn bad_qa_input_is_refused() {
    let t = tmp();
    let out = out_arg(t.path(), "bad");
    let squad = fixture("qa/squad.json");
    let not_qa = t.path().join("x.json");
    std::fs::write(&not_qa, "{\"rows\": []}").unwrap();
    let impossible = t.path().join("impossible.json");
    std::fs::write(
        &impossible,
        r#"{"data": [{"paragraphs": [{"context": "A.", "qas": [{"id": "1", "question": "Q?", "answers": [], "is_impossible": true}]}]}]}"#,
    )
    .unwrap();
    let (not_qa, impossible) = (
        not_qa.display().to_string(),
        impossible.display().to_string(),
    );
    for (args, says) in [
        (vec!["qa", "--data", &not_qa], "not SQuAD JSON"),
        (vec!["qa", "--data", &impossible], "no answerable question"),
        (
            vec!["qa", "--data", "missing.json"],
            "invalid --data 'missing.json'",
        ),
        (
            vec!["qa", "--data", &squad, "--format", "csv"],
            "expected squad or hotpotqa",
        ),
        (
            vec!["qa", "--data", &squad, "--format", "hotpotqa"],
            "the recipe says hotpotqa",
        ),
        (
            vec!["qa", "--data", &squad, "--haystack", "noise"],
            "--haystack noise does not apply",
        ),
        (
            vec!["qa", "--data", "generated", "--format", "squad"],
            "not a built-in haystack",
        ),
        (
            vec!["qa", "--data", &squad, "--samples", "5000"],
            "440 answerable questions, fewer than the 5000",
        ),
        (
            vec!["qa", "--data", &squad, "--samples", "40", "--depths", "12"],
            "fewer than the 480 instances per length",
        ),
        (vec!["qa", "--data", &squad, "--len", "100"], "too short"),
        (
            vec!["qa", "--data", &squad, "--len", "1m"],
            "cannot be reached",
        ),
        (
            vec!["qa", "--data", &squad, "--len", "30k"],
            "runs out of distractor paragraphs",
        ),
    ] {
        assert_refused(&args, &out, says);
    }
}

#[test]
fn disjoint_splits_share_no_question_and_controls_hold_no_answer() {
    let t = tmp();
    let squad = fixture("qa/squad.json");
    let a = out_arg(t.path(), "a");
    let base = ["qa", "--data", &squad, "--len", "1500", "--samples", "150"];
    generate(&a, &base);
    let asked = |dir: &str| -> BTreeSet<String> {
        rows(Path::new(dir))
            .iter()
            .map(|r| r.params["question_id"].as_str().unwrap().to_string())
            .collect()
    };
    let before = asked(&a);
    assert_eq!(before.len(), 150);
    let b = out_arg(t.path(), "b");
    // A redraw of sample s asks the question of sample s + k × samples: 60 samples leave
    // room for seven redraws among the file's 440 questions.
    let with = [
        "qa",
        "--data",
        &squad,
        "--len",
        "1500",
        "--samples",
        "60",
        "--seed",
        "5",
    ];
    generate(&b, &[with.as_slice(), &["--disjoint-from", &a]].concat());
    let after = asked(&b);
    assert_eq!(after.len(), 60);
    let plain = out_arg(t.path(), "plain");
    generate(&plain, &with);
    assert!(
        !before.is_disjoint(&asked(&plain)),
        "the same seed without --disjoint-from overlaps"
    );
    assert!(
        before.is_disjoint(&after),
        "{:?}",
        before.intersection(&after).collect::<Vec<_>>()
    );
    verify_ok(&b);
    // 440 answerable questions: 150 taken leave 290, fewer than 300 more samples need.
    let c = out_arg(t.path(), "c");
    let mut too_many = vec!["qa", "--data", &squad, "--len", "1500", "--samples", "300"];
    too_many.extend(["--disjoint-from", &a]);
    let o = gen(&[too_many.as_slice(), &["--out", &c]].concat());
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!Path::new(&c).exists());

    // Controls: the question without the documents, so none of its answers.
    let d = out_arg(t.path(), "d");
    generate(
        &d,
        &[
            "qa",
            "--data",
            &squad,
            "--len",
            "2k",
            "--samples",
            "20",
            "--controls",
            "no-context",
        ],
    );
    let all = rows(Path::new(&d));
    assert_eq!(all.len(), 40);
    for pair in all.chunks(2) {
        let (row, control) = (&pair[0], &pair[1]);
        assert_eq!(control.params["control"], "no_context");
        assert!(!control.input.contains("Document 1:"));
        for answer in &row.answers {
            assert!(!mentions(&control.input, answer), "control holds {answer}");
        }
    }
    verify_ok(&d);
}
