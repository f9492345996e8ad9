//! Every variant's rows recomputed from their text: the lengths fit, the asked id's items stand
//! where the row says, the answers are what the context holds for them.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::*;
use crate::haystack::documents::Documents;
use crate::haystack::mmlu::tests::bank;
use crate::haystack::Haystack;
use crate::tasks::builtin_template;
use crate::{Template, Tokenizer};

fn run_for(variant: Ruler2Variant, tok: Tokenizer, seed: u64) -> Run {
    let haystack = match variant.data() {
        Ruler2Data::None => None,
        Ruler2Data::Mmlu => Some(Haystack::of_mmlu(Arc::new(bank(60, 3000)))),
        Ruler2Data::HotpotQa => {
            let bytes = include_bytes!("../../../../tests/fixtures/qa/hotpotqa.json");
            Some(Haystack::of_documents(Arc::new(
                Documents::parse("hotpotqa.json", bytes).unwrap(),
            )))
        }
    };
    Run {
        haystack,
        tokenizer: tok,
        template: Template::compile("ruler2", builtin_template(NAME, "default").unwrap()).unwrap(),
        seed: seed.into(),
        reserve: 0,
        reader: Default::default(),
    }
}

fn task(variant: Ruler2Variant) -> Ruler2 {
    Ruler2Params::of(variant).build().unwrap()
}

fn params(i: &Instance) -> serde_json::Value {
    serde_json::from_str(&i.params).unwrap()
}

/// The labelled items of an MMLU context: (id, line), in context order.
fn items(input: &str) -> Vec<(String, String)> {
    input
        .lines()
        .filter_map(|l| l.strip_prefix("Question "))
        .filter_map(|l| {
            let (id, rest) = l.split_once(": ")?;
            (id.len() == 7 && id.bytes().all(|b| b.is_ascii_digit()))
                .then(|| (id.to_string(), rest.to_string()))
        })
        .collect()
}

fn check(variant: Ruler2Variant, i: &Instance, run: &Run) {
    let p = params(i);
    let tok = &run.tokenizer;
    assert!(
        i.prompt_tokens + u64::from(i.max_new_tokens) <= i.target_length,
        "{variant}"
    );
    assert_eq!(i.length as usize, tok.count(&i.input).unwrap());
    assert_eq!(p["raw_question_tokens"], json!(i.length));
    let room = i.target_length - u64::from(i.max_new_tokens) - i.prompt_tokens;
    let next = p["next_unit_tokens"].as_u64().unwrap();
    assert!(room < next, "{variant}: {room} left, next unit {next}");
    assert!(i.max_new_tokens as usize > tok.count(&i.target).unwrap());
    match variant.data() {
        Ruler2Data::None => {
            let key = p["key"].as_str().unwrap();
            let lines: Vec<&str> = i.input.lines().collect();
            let head = format!("The hidden number of {key} is ");
            let mut found = Vec::new();
            let mut per_key: BTreeMap<&str, usize> = BTreeMap::new();
            let first = lines
                .iter()
                .position(|l| l.starts_with("The hidden number of "))
                .unwrap();
            for (at, l) in lines.iter().enumerate() {
                if let Some(rest) = l.strip_prefix("The hidden number of ") {
                    let (k, _) = rest.split_once(" is ").unwrap();
                    *per_key.entry(k).or_default() += 1;
                }
                if let Some(v) = l.strip_prefix(&head) {
                    found.push((at - first + 1, v.trim_end_matches('.').to_string()));
                }
            }
            let values: Vec<String> = found.iter().map(|f| f.1.clone()).collect();
            assert_eq!(values, i.answers);
            let at: Vec<usize> = found.iter().map(|f| f.0).collect();
            assert_eq!(json!(at), p["needle_lines"]);
            let m = if variant.multi() { 4 } else { 1 };
            assert_eq!(values.len(), m);
            assert!(values.iter().all(|v| v.len() == 10));
            // Every key has m lines, but one cut at the tail.
            assert_eq!(json!(per_key.values().sum::<usize>()), p["units"]);
            let short = per_key.values().filter(|&&c| c != m).count();
            assert!(
                short <= 1 && per_key.values().all(|&c| c <= m),
                "{per_key:?}"
            );
        }
        Ruler2Data::Mmlu => {
            let id = p["id"].as_str().unwrap();
            let all = items(&i.input);
            let context: Vec<&(String, String)> = all.iter().collect();
            let mut places = Vec::new();
            let mut mine = Vec::new();
            for (k, (x, line)) in context.iter().enumerate() {
                if x == id {
                    places.push(k + 1);
                    mine.push(line.clone());
                }
            }
            let m = if variant.multi() { 4 } else { 1 };
            let solves = matches!(
                variant,
                Ruler2Variant::MkNiahMedium | Ruler2Variant::MkNiahHard
            );
            // Worked examples repeat items of the list after it.
            let shown = if solves {
                p["shot_items"].as_array().unwrap().len()
            } else {
                0
            };
            assert_eq!(json!(all.len() - shown), p["units"], "{variant}");
            if !solves {
                assert_eq!(json!(places), p["needle_items"], "{variant}");
                assert_eq!(mine.len(), m);
            }
            let mut per_id: BTreeMap<&str, usize> = BTreeMap::new();
            for (x, _) in &all {
                *per_id.entry(x).or_default() += 1;
            }
            if !variant.multi() && !solves {
                assert!(per_id.values().all(|&c| c == 1));
            }
            match variant {
                Ruler2Variant::MkNiahEasy => assert_eq!(i.answers, vec![mine[0].clone()]),
                Ruler2Variant::MvNiahEasy => assert_eq!(i.answers, mine),
                Ruler2Variant::MvNiahMedium | Ruler2Variant::MvNiahHard => {
                    let k = p["ordinal"].as_u64().unwrap() as usize;
                    assert_eq!(i.answers, vec![mine[k - 1].clone()]);
                    assert!(i.question.contains(&format!("{} (1 indexed)", ordinal(k))));
                }
                _ => {
                    let b = bank(60, 3000);
                    let t = p["test_questions"][0].as_u64().unwrap() as usize;
                    assert_eq!(b.test[t].line(), mine[0]);
                    assert_eq!(i.target, b.test[t].letter().to_string());
                    assert_eq!(i.metric, Metric::Letter);
                    let shots = p["shot_items"].as_array().unwrap();
                    assert_eq!(shots.len(), 5);
                    // Each worked example is a context item, shown after the list with its answer.
                    for s in shots {
                        let (x, line) = &all[s.as_u64().unwrap() as usize - 1];
                        let shown = format!("Question {x}: {line}\nAnswer: ");
                        assert!(i.input.contains(&shown));
                    }
                }
            }
        }
        Ruler2Data::HotpotQa => {
            let gold: Vec<String> = p["gold_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            let headers: Vec<&str> = i
                .input
                .split("\n\n")
                .filter_map(|b| b.strip_prefix("Document "))
                .filter_map(|b| b.split_once(":\n").map(|h| h.0))
                .collect();
            for (g, at) in gold.iter().zip(p["gold_documents"].as_array().unwrap()) {
                assert_eq!(headers[at.as_u64().unwrap() as usize - 1], g);
            }
            assert_eq!(headers.len() as u64, p["documents"].as_u64().unwrap());
            assert_eq!(p["documents"], p["units"]);
            let distinct: std::collections::BTreeSet<_> = headers.iter().collect();
            assert_eq!(distinct.len(), headers.len());
            match variant {
                Ruler2Variant::QaBasic => assert_eq!(i.answers, vec![gold[0].clone()]),
                Ruler2Variant::QaEasy => assert_eq!(i.answers, gold),
                _ => assert!(!i.answers.is_empty()),
            }
        }
    }
}

#[test]
fn every_variant_recomputes_from_its_rows() {
    for &variant in Ruler2Variant::ALL {
        for (tok, length) in [
            (Tokenizer::O200k, 4096),
            (Tokenizer::Cl100k, 9000),
            (Tokenizer::O200k, 16384),
        ] {
            let run = run_for(variant, tok, 7);
            let t = task(variant);
            for (sample, depth) in [(0, None), (1, Some(0.0)), (2, Some(50.0)), (3, Some(100.0))] {
                let cell = Cell {
                    length,
                    depth,
                    sample,
                    slot: sample,
                };
                let i = t
                    .generate(&run, &cell)
                    .unwrap_or_else(|e| panic!("{variant} {length}: {e}"));
                check(variant, &i, &run);
                if let Some(d) = depth {
                    assert!(
                        (i.needle_depths[0] - d).abs() < 8.0,
                        "{variant} {d}: {:?}",
                        i.needle_depths
                    );
                }
            }
        }
    }
}

#[test]
fn rows_are_the_same_made_twice_and_differ_by_seed() {
    for &variant in Ruler2Variant::ALL {
        let cell = Cell {
            length: 4096,
            depth: None,
            sample: 0,
            slot: 0,
        };
        let a = task(variant)
            .generate(&run_for(variant, Tokenizer::O200k, 1), &cell)
            .unwrap();
        let b = task(variant)
            .generate(&run_for(variant, Tokenizer::O200k, 1), &cell)
            .unwrap();
        let c = task(variant)
            .generate(&run_for(variant, Tokenizer::O200k, 2), &cell)
            .unwrap();
        assert_eq!(a, b);
        assert_ne!(a.input, c.input);
    }
}

#[test]
fn a_chat_template_is_counted_and_too_short_lengths_refused() {
    use crate::chat::{ChatTemplate, Reader};
    let chat = Arc::new(
        ChatTemplate::from_bytes(
            include_bytes!("../../../../tests/fixtures/chat/tokenizer_config.json"),
            "tokenizer_config.json",
        )
        .unwrap(),
    );
    for &variant in Ruler2Variant::ALL {
        let mut run = run_for(variant, Tokenizer::O200k, 3);
        run.reader = Reader {
            chat: Some(chat.clone()),
            system: Some("Be brief.".into()),
        };
        let t = task(variant);
        let cell = Cell {
            length: 4096,
            depth: None,
            sample: 0,
            slot: 0,
        };
        let i = t.generate(&run, &cell).unwrap();
        assert!(i.prompt_tokens > i.length);
        assert!(i.prompt_tokens + u64::from(i.max_new_tokens) <= 4096);
        let min = t.minimum_length(&run).unwrap();
        let short = Cell { length: 64, ..cell };
        assert!(
            matches!(t.generate(&run, &short), Err(GenError::TooShort { .. })),
            "{variant}"
        );
        assert!(min > 64);
    }
}

#[test]
fn a_bank_that_runs_out_is_refused_not_looped() {
    let run = Run {
        haystack: Some(Haystack::of_mmlu(Arc::new(bank(4, 30)))),
        ..run_for(Ruler2Variant::MkNiahBasic, Tokenizer::O200k, 1)
    };
    let cell = Cell {
        length: 65536,
        depth: None,
        sample: 0,
        slot: 0,
    };
    let e = task(Ruler2Variant::MkNiahEasy)
        .generate(&run, &cell)
        .unwrap_err();
    assert!(e.to_string().contains("run out"), "{e}");
    // Four test questions hold one mv instance (four needles) per length, not two.
    let t = task(Ruler2Variant::MvNiahHard);
    assert!(t.check_instances(&run, 1).is_ok());
    assert!(t.check_instances(&run, 2).is_err());
}

#[test]
fn ordinals_are_written_as_english_does() {
    let words: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111]
        .map(ordinal)
        .to_vec();
    assert_eq!(
        words,
        [
            "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st",
            "111th"
        ]
    );
}

/// What a model that does as asked writes: copies where the request asks for them, then the
/// answer.
fn ideal(variant: Ruler2Variant, i: &Instance) -> String {
    let p = params(i);
    let item = |a: &str| format!("Question {}: {a}", p["id"].as_str().unwrap_or(""));
    match variant {
        Ruler2Variant::MkNiahBasic | Ruler2Variant::MvNiahBasic => i.answers.join(", "),
        Ruler2Variant::MkNiahEasy | Ruler2Variant::MvNiahHard => item(&i.answers[0]),
        Ruler2Variant::MkNiahMedium => {
            let line = items(&i.input)
                .into_iter()
                .find(|(x, _)| x == p["id"].as_str().unwrap())
                .unwrap()
                .1;
            format!("{}\nAnswer: {}", item(&line), i.target)
        }
        Ruler2Variant::MkNiahHard => {
            format!("The right option is {}.\nAnswer: {}", i.target, i.target)
        }
        Ruler2Variant::MvNiahEasy => i
            .answers
            .iter()
            .map(|a| item(a))
            .collect::<Vec<_>>()
            .join("\n"),
        Ruler2Variant::MvNiahMedium => {
            let all: Vec<String> = items(&i.input)
                .into_iter()
                .filter(|(x, _)| x == p["id"].as_str().unwrap())
                .map(|(_, l)| item(&l))
                .collect();
            format!("{}\n\n{}", all.join("\n"), item(&i.answers[0]))
        }
        Ruler2Variant::QaBasic | Ruler2Variant::QaEasy => format!("Document {}", i.answers[0]),
        Ruler2Variant::QaMedium => {
            let blocks: Vec<&str> = i
                .input
                .split("\n\n")
                .filter(|b| {
                    p["gold_ids"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|g| b.starts_with(&format!("Document {}:", g.as_str().unwrap())))
                })
                .collect();
            format!("{}\n\nAnswer: {}", blocks.join("\n\n"), i.answers[0])
        }
        Ruler2Variant::QaHard => format!("Answer: {}", i.answers[0]),
    }
}

/// Under the rows' own metrics an answer that does as asked scores 1, also after a reasoning
/// block; an empty one, or another item, scores less.
#[test]
fn doing_as_asked_scores_one() {
    use crate::scoring::{score, Gold};
    for &variant in Ruler2Variant::ALL {
        let run = run_for(variant, Tokenizer::O200k, 11);
        for sample in 0..3 {
            let cell = Cell {
                length: 8192,
                depth: None,
                sample,
                slot: sample,
            };
            let i = task(variant).generate(&run, &cell).unwrap();
            let gold = Gold {
                metric: i.metric,
                target: &i.target,
                answers: &i.answers,
                labels: &i.labels,
                question: &i.question,
                answer_prefix: &i.answer_prefix,
                max_new_tokens: i.max_new_tokens,
                input_chars: i.input.chars().count(),
            };
            let answer = ideal(variant, &i);
            assert_eq!(score(&gold, &answer), 1.0, "{variant}: {answer:?}");
            let thought = format!("<think>It could be Answer: Z or 0000000.</think>{answer}");
            assert_eq!(score(&gold, &thought), 1.0, "{variant}");
            assert_eq!(score(&gold, ""), 0.0, "{variant}");
            let wrong = match variant.data() {
                Ruler2Data::None => "1234567890".to_string(),
                Ruler2Data::Mmlu if i.metric == Metric::Letter => {
                    let other = ['A', 'B', 'C', 'D']
                        .into_iter()
                        .find(|c| c.to_string() != i.target);
                    format!("Answer: {}", other.unwrap())
                }
                Ruler2Data::Mmlu => {
                    items(&i.input)
                        .into_iter()
                        .find(|(x, _)| x != params(&i)["id"].as_str().unwrap())
                        .unwrap()
                        .1
                }
                Ruler2Data::HotpotQa => "Document 0000000".to_string(),
            };
            assert!(score(&gold, &wrong) < 1.0, "{variant}: {wrong}");
        }
    }
}

/// Random lengths, depths, seeds and tokenizers (gpt2's, whitespace words, characters): every
/// row fits, its needles stand at the places recorded, and nothing panics; a length too short
/// for the fixed text is refused as such.
#[test]
fn randomized_rows_fit_wherever_they_are_asked() {
    use crate::rng::{Rng, Stream};
    let mut d = Rng::from_seed_u64(2026, Stream::Content);
    let toks = [
        Tokenizer::O200k,
        Tokenizer::Cl100k,
        Tokenizer::builtin("gpt2").unwrap(),
        Tokenizer::Words,
        Tokenizer::Chars,
    ];
    let mut made = 0;
    for round in 0..120 {
        let variant = Ruler2Variant::ALL[round % Ruler2Variant::ALL.len()];
        let tok = toks[d.index(toks.len())].clone();
        let run = run_for(variant, tok, d.next_u64());
        let length = 200 + d.below(12_000);
        let depth = match d.index(3) {
            0 => None,
            _ => Some(d.below(101) as f64),
        };
        let mut p = Ruler2Params::of(variant);
        p.per_id = 2 + d.below(5) as u32;
        p.shots = d.below(7) as u32;
        let t = p.build().unwrap();
        let sample = d.below(3);
        let cell = Cell {
            length,
            depth,
            sample,
            slot: sample,
        };
        match t.generate(&run, &cell) {
            Ok(i) => {
                assert!(
                    i.prompt_tokens + u64::from(i.max_new_tokens) <= length,
                    "{variant}"
                );
                assert_eq!(i.length as usize, run.tokenizer.count(&i.input).unwrap());
                let q = params(&i);
                let room = length - u64::from(i.max_new_tokens) - i.prompt_tokens;
                assert!(
                    room < q["next_unit_tokens"].as_u64().unwrap(),
                    "{variant}: {room}"
                );
                if let Some(places) = q["needle_items"].as_array() {
                    let id = q["id"].as_str().unwrap();
                    let all = items(&i.input);
                    for at in places {
                        assert_eq!(all[at.as_u64().unwrap() as usize - 1].0, id, "{variant}");
                    }
                }
                made += 1;
            }
            Err(GenError::TooShort { .. }) => {
                assert!(length < 2500, "{variant} at {length}: too short?");
            }
            Err(e) => panic!("{variant} at {length}: {e}"),
        }
    }
    assert!(made > 80, "{made}");
}
