//! The worked examples as data: where they come from (our generator at a fixed seed, remade
//! with `UPDATE_BABILONG_EXAMPLES=1`), and what every example must be. Their answers are
//! re-derived under bAbI's rules in `rules_tests.rs` (walks) and `puzzles_tests.rs` (puzzles),
//! and by the integration tests' own solver (`tests/babilong.rs`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::super::spec::{self, Labels};
use super::super::{Babilong, Story};
use super::*;

/// The seed the examples were made with: one no row uses by chance more than any other.
const SEED: u64 = 0x6261_6269_6c6f_6e67;

/// How many examples task `qa` shows: three where its answers come in three kinds.
fn wanted(qa: u8) -> usize {
    if matches!(qa, 5 | 7 | 8 | 10) {
        3
    } else {
        2
    }
}

/// The longest example story of task `qa`, in facts (puzzles have one size, or few).
fn longest(qa: u8) -> usize {
    match qa {
        2 | 5 | 7 | 8 | 14 => 6,
        3 | 15 => 8,
        16 => 9,
        18 => 5,
        _ => 4,
    }
}

/// What two examples of a task must differ in: the answer, and for qa5 the question's form
/// too, for qa8 the number of objects.
fn kind(qa: u8, story: &Story) -> String {
    match qa {
        5 => format!("{}:{}", story.query["kind"], story.answers.join(",")),
        8 => story.answers.len().to_string() + &(story.answers == ["nothing"]).to_string(),
        _ => story.answers.join(","),
    }
}

/// Whether a story is plain enough to teach from: in qa10, no "either" statement about
/// someone the story has already placed (bAbI then deduces from both, which is right but a
/// poor first example).
fn plain(story: &Story) -> bool {
    let facts = story.data.as_array().map(Vec::as_slice).unwrap_or_default();
    facts.iter().enumerate().all(|(i, f)| {
        f.get("either").is_none() || facts[..i].iter().all(|g| g["actor"] != f["actor"])
    })
}

/// The first stories at [`SEED`] short enough and different enough, per task.
fn make() -> BTreeMap<String, Vec<Value>> {
    let mut out = BTreeMap::new();
    for qa in 1..=20u8 {
        let task = Babilong::new(qa, "babi", None, (0.0, 100.0)).unwrap();
        let mut kinds = BTreeSet::new();
        let mut chosen = Vec::new();
        for sample in 0..100_000 {
            let story = task.story(SEED, sample).unwrap();
            let fits = story.facts.len() <= longest(qa) && plain(&story);
            if !fits || !kinds.insert(kind(qa, &story)) {
                continue;
            }
            chosen.push(json!({
                "seed": SEED,
                "sample": sample,
                "facts": story.facts,
                "question": story.question,
                "answers": story.answers,
                "query": story.query,
                "supporting": story.supporting,
                "data_key": story.data_key,
                "data": story.data,
            }));
            if chosen.len() == wanted(qa) {
                break;
            }
        }
        assert_eq!(chosen.len(), wanted(qa), "qa{qa}: too few small stories");
        out.insert(format!("qa{qa}"), chosen);
    }
    out
}

#[test]
fn examples_are_small_stories_of_each_task() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/templates/babilong/examples.json"
    );
    if std::env::var_os("UPDATE_BABILONG_EXAMPLES").is_some() {
        let text = serde_json::to_string_pretty(&make()).unwrap() + "\n";
        std::fs::write(path, text).unwrap();
        // The file is compiled in: the next build checks what was written.
        return;
    }
    assert_eq!(table().unwrap().len(), 20);
    for qa in 1..=20u8 {
        let examples = examples(qa).unwrap();
        assert_eq!(examples.len(), wanted(qa), "qa{qa}");
        let rules = spec::find(qa).unwrap();
        let classic = Babilong::new(qa, "babi", None, (0.0, 100.0)).unwrap();
        let mut kinds = BTreeSet::new();
        for e in examples {
            let n = e.facts.len();
            assert!(n <= longest(qa), "qa{qa}: {n} facts");
            assert_eq!(e.data.as_array().map(Vec::len), Some(n), "qa{qa}");
            assert!(e.supporting.iter().all(|&s| s < n));
            assert!(!e.answers.is_empty());
            assert!(e.question.ends_with('?'));
            let data = e.data.as_array().unwrap();
            assert!(data
                .iter()
                .enumerate()
                .all(|(i, f)| f.get("either").is_none()
                    || data[..i].iter().all(|g| g["actor"] != f["actor"])));
            assert!(kinds.insert(e.answers.join(",") + &e.query["kind"].to_string()));
            // The answer is one of the task's labels for bAbI's names.
            if rules.labels != Labels::FromPuzzle {
                let story = classic.story(e.seed, e.sample).unwrap();
                for a in &e.answers {
                    assert!(story.labels.contains(a), "qa{qa}: {a}");
                }
            }
        }
    }
}

#[test]
fn vars_hold_the_instruction_and_the_examples() {
    for qa in 1..=20u8 {
        let v = vars(qa).unwrap();
        assert_eq!(v["task"], json!(format!("qa{qa}")));
        assert!(v["rule"].as_str().unwrap().ends_with('.'));
        let shown = v["examples"].as_array().unwrap();
        let data = examples(qa).unwrap();
        assert_eq!(shown.len(), data.len());
        for (s, e) in shown.iter().zip(data) {
            assert_eq!(s["story"], json!(e.facts.join(" ")));
            assert_eq!(s["answer"], json!(e.answers.join(",")));
        }
    }
    assert!(vars(0).is_err() && vars(21).is_err());
}
