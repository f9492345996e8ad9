//! What the `babilong` template (BABILong's prompt structure, in our words) needs per task: a
//! task instruction (what the statements are about, and the one rule a reader needs) and two or
//! three worked examples.
//!
//! The examples are small bAbI stories our own generator made (`seed`, `sample` say which),
//! checked in as data (`templates/babilong/examples.json`) so they never change with the
//! generator. They always use bAbI's names, as BABILong's examples do, whatever the story's
//! vocabulary. Tests replay each one under bAbI's rules and re-solve its answer.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::template::Vars;
use crate::GenError;

const EXAMPLES: &str = include_str!("../../../templates/babilong/examples.json");

/// Per task, qa1 to qa20: what its statements are about, and the rule a reader needs.
const GUIDES: [(&str, &str); 20] = [
    (
        "people and the places they go to",
        "A person is wherever their latest move took them.",
    ),
    (
        "people who go from place to place and pick up or put down objects",
        "An object someone holds goes wherever they go; an object put down stays in the place where it was put down.",
    ),
    (
        "people who go from place to place and pick up or put down objects",
        "An object someone holds goes wherever they go; an object put down stays where it was put down. \"Where was the X before the Y?\" asks for the place the X was in just before it came to the Y.",
    ),
    (
        "how places lie to the north, south, east or west of each other",
        "If one place is north of another, the other is south of it; likewise for east and west.",
    ),
    (
        "people who go from place to place, pick up objects and hand them to each other",
        "The question is about the latest handing over it describes; answer with a person's name or an object.",
    ),
    (
        "people and the places they go to",
        "A person is wherever their latest move took them, and nowhere else.",
    ),
    (
        "people who go from place to place, pick up, put down and hand over objects",
        "Picking up or receiving an object adds it to what a person carries; putting it down or handing it over takes it away.",
    ),
    (
        "people who go from place to place, pick up, put down and hand over objects",
        "Picking up or receiving an object adds it to what a person carries; putting it down or handing it over takes it away. Name what they carry now.",
    ),
    (
        "where people are, and where they are not",
        "The latest statement about a person decides: a move or \"is in\" puts them in that place and no other; \"is not in\" rules that place out.",
    ),
    (
        "where people are, or where they might be",
        "A move or \"is in\" puts a person in that place and no other. \"Either in A or B\" rules out every other place; which of A and B stays open (maybe) unless other statements settle it.",
    ),
    (
        "people and the places they go to; \"he\" or \"she\" stands for the person just named",
        "A person is wherever their latest move took them.",
    ),
    (
        "people who go to places alone or two together",
        "When two people go somewhere together, both of them are there afterwards.",
    ),
    (
        "pairs of people and the places they go to; \"they\" stands for the two just named",
        "Both people of a pair are wherever the pair's latest move took them.",
    ),
    (
        "where people went at different times of day, told out of order",
        "Yesterday comes first, then this morning, this afternoon and this evening. \"Where was X before the Y?\" asks for the place X went to just before going to the Y.",
    ),
    (
        "kinds of animal, what each kind is afraid of, and which kind each one is",
        "An animal of a kind is afraid of whatever its kind is afraid of.",
    ),
    (
        "animals of several kinds and their colours",
        "Animals of the same kind have the same colour.",
    ),
    (
        "where shapes stand relative to each other",
        "Positions carry over: if A is left of B and B is above C, then A is left of C and above it.",
    ),
    (
        "which things are bigger than others or fit inside them",
        "Sizes carry over: if A fits inside B and B fits inside C, then A fits inside C and C is bigger than A.",
    ),
    (
        "how places lie to the north, south, east or west of each other",
        "A way from one place to another is a list of steps, each n, s, e or w (north, south, east or west).",
    ),
    (
        "people, how they feel, where they go and what they pick up",
        "People act on how they feel: a feeling explains where someone goes and what they pick up there.",
    ),
];

/// One worked example: a small story of the task, its question and answer, the story as data
/// (for the tests that replay it), and where our generator made it.
#[derive(Debug, Clone, Deserialize)]
pub struct Example {
    /// The seed our generator made the story with (`--vocab babi`, bAbI's sizes).
    pub seed: u64,
    /// The sample index it made the story for.
    pub sample: u64,
    /// The fact sentences, in story order.
    pub facts: Vec<String>,
    /// The question.
    pub question: String,
    /// The gold items.
    pub answers: Vec<String>,
    /// The question as data.
    pub query: Value,
    /// The supporting facts.
    pub supporting: Vec<usize>,
    /// `events`, `relations` or `statements`.
    pub data_key: String,
    /// The facts as data.
    pub data: Value,
}

type Table = BTreeMap<String, Vec<Example>>;

fn table() -> Result<&'static Table, GenError> {
    static PARSED: OnceLock<Result<Table, String>> = OnceLock::new();
    PARSED
        .get_or_init(|| serde_json::from_str(EXAMPLES).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| GenError::Internal(format!("the babilong examples do not parse: {e}")))
}

/// The worked examples of task `qa`.
pub fn examples(qa: u8) -> Result<&'static [Example], GenError> {
    table()?
        .get(&format!("qa{qa}"))
        .map(Vec::as_slice)
        .ok_or_else(|| GenError::Internal(format!("no babilong examples for qa{qa}")))
}

/// The template variables task `qa` gives every template besides the question: `task`
/// (`qa1`), `topic` and `rule` (its instruction), and `examples` (each with `story`,
/// `question` and `answer`). The default template uses none of them.
pub fn vars(qa: u8) -> Result<Vars, GenError> {
    let (topic, rule) = GUIDES
        .get(usize::from(qa).wrapping_sub(1))
        .copied()
        .ok_or_else(|| GenError::Internal(format!("no babilong instruction for qa{qa}")))?;
    let examples: Vec<Value> = examples(qa)?
        .iter()
        .map(|e| {
            json!({
                "story": e.facts.join(" "),
                "question": e.question,
                "answer": e.answers.join(","),
            })
        })
        .collect();
    Ok(Vars::from([
        ("task", json!(format!("qa{qa}"))),
        ("topic", json!(topic)),
        ("rule", json!(rule)),
        ("examples", json!(examples)),
    ]))
}

#[cfg(test)]
#[path = "prompt_tests.rs"]
mod tests;
