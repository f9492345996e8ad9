//! `mk_niah_basic` and `mv_niah_basic`: a context of nothing but key lines, each a word key and
//! a 10-digit value. In `mk` every key is distinct; in `mv` every key, the asked one too, has
//! `per_id` lines with distinct values, so the asked key's lines look like any other's.

use std::collections::BTreeSet;

use serde_json::json;

use super::fill::{Piece, Pool, Source};
use super::{needle_places, Answer, Ruler2, Skeleton};
use crate::rng::{Rng, Stream};
use crate::template::Frame;
use crate::tokenizer::Tokenizer;
use crate::{canonical_json, Cell, GenError, Instance, Metric, Run};

const ADJECTIVES: &str = include_str!("../../../haystacks/prose/adjectives.txt");
const NOUNS: &str = include_str!("../../../haystacks/prose/nouns.txt");

/// Draws in a row that may all be taken before the key space counts as used up.
const MAX_DRAWS: usize = 4096;

/// The words keys are made of: our prose vocabulary's adjectives and nouns (771 × 2,061
/// pairs, enough distinct keys for several million tokens of lines).
#[derive(Debug, Clone)]
pub(super) struct Keys {
    adjectives: Vec<&'static str>,
    nouns: Vec<&'static str>,
}

impl Keys {
    /// The built-in lists; a noun's `singular/plural` form gives its singular.
    pub fn builtin() -> Keys {
        let words = |text: &'static str| -> Vec<&'static str> {
            let mut seen = BTreeSet::new();
            text.lines()
                .filter(|l| !l.trim_start().starts_with('#'))
                .flat_map(str::split_whitespace)
                .map(|w| w.split('/').next().unwrap_or(w))
                .filter(|w| w.chars().all(|c| c.is_ascii_lowercase()) && seen.insert(*w))
                .collect()
        };
        Keys {
            adjectives: words(ADJECTIVES),
            nouns: words(NOUNS),
        }
    }

    fn draw(&self, rng: &mut Rng) -> String {
        format!(
            "{}-{}",
            rng.choose(&self.adjectives),
            rng.choose(&self.nouns)
        )
    }

    /// A key not in `used` (which it joins), or `None` when [`MAX_DRAWS`] draws were taken.
    fn fresh(&self, rng: &mut Rng, used: &mut BTreeSet<String>) -> Option<String> {
        (0..MAX_DRAWS)
            .map(|_| self.draw(rng))
            .find(|k| used.insert(k.clone()))
    }
}

/// One line of the context.
fn line(key: &str, value: u64) -> String {
    format!("The hidden number of {key} is {value}.")
}

/// A 10-digit value not in `used`.
fn fresh_value(rng: &mut Rng, used: &mut BTreeSet<u64>) -> u64 {
    loop {
        let v = rng.range_inclusive(1_000_000_000, 9_999_999_999);
        if used.insert(v) {
            return v;
        }
    }
}

/// Distractor lines: `per_id` consecutive lines (in pull order) per key, each key fresh.
struct Lines<'a> {
    keys: &'a Keys,
    used_keys: BTreeSet<String>,
    used_values: BTreeSet<u64>,
    per_key: usize,
    current: Option<(String, usize)>,
}

impl Source for Lines<'_> {
    fn pull(&mut self, tok: &Tokenizer, rng: &mut Rng) -> Result<Option<Piece>, GenError> {
        let (key, left) = match self.current.take() {
            Some((k, left)) if left > 0 => (k, left),
            _ => match self.keys.fresh(rng, &mut self.used_keys) {
                Some(k) => (k, self.per_key),
                None => return Ok(None),
            },
        };
        let text = line(&key, fresh_value(rng, &mut self.used_values));
        self.current = Some((key, left - 1));
        Ok(Some(Piece {
            tokens: tok.count(&format!("\n{text}"))?,
            text,
            key: rng.next_u64(),
            tag: 0,
        }))
    }
}

/// The asked key, its values (in needle order) and the request.
struct Needle {
    key: String,
    values: Vec<u64>,
}

fn needle(task: &Ruler2, run: &Run, cell: &Cell) -> Needle {
    let params = canonical_json(&task.content_params());
    let mut rng = run
        .coordinates(super::NAME, &params, cell)
        .rng(Stream::Content);
    let key = task.keys.draw(&mut rng);
    let mut used = BTreeSet::new();
    let values = (0..task.needle_count())
        .map(|_| fresh_value(&mut rng, &mut used))
        .collect();
    Needle { key, values }
}

fn texts(task: &Ruler2, n: &Needle) -> (&'static str, String) {
    if task.params.variant.multi() {
        (
            "Below is a list of hidden numbers, one per line, each belonging to a name; a name may have several. Remember them: a question about one name follows the list.",
            format!(
                "What are all the hidden numbers of {}? Give every one of them, and nothing else.",
                n.key
            ),
        )
    } else {
        (
            "Below is a list of hidden numbers, one per line, each belonging to a name. Remember them: a question about one name follows the list.",
            format!(
                "What is the hidden number of {}? Give the number alone.",
                n.key
            ),
        )
    }
}

/// The needles and the frame, for the minimum length.
pub(super) fn skeleton(
    task: &Ruler2,
    run: &Run,
    cell: &Cell,
) -> Result<(Skeleton, Frame), GenError> {
    let n = needle(task, run, cell);
    let (instruction, question) = texts(task, &n);
    Ok((skeleton_of(&n), Ruler2::frame(run, instruction, &question)?))
}

fn skeleton_of(n: &Needle) -> Skeleton {
    Skeleton {
        needles: n.values.iter().map(|&v| line(&n.key, v)).collect(),
        answer_text: n
            .values
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        min_units: 0,
    }
}

pub(super) fn generate(task: &Ruler2, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
    let n = needle(task, run, cell);
    let (instruction, question) = texts(task, &n);
    let skeleton = skeleton_of(&n);
    let lines = Lines {
        keys: &task.keys,
        used_keys: BTreeSet::from([n.key.clone()]),
        used_values: n.values.iter().copied().collect(),
        per_key: task.needle_count(),
        current: None,
    };
    let params = canonical_json(&task.content_params());
    let rng = run
        .coordinates(super::NAME, &params, cell)
        .rng(Stream::Haystack);
    let mut pool = Pool::new(Box::new(lines), rng);
    let frame = Ruler2::frame(run, instruction, &question)?;
    let filled = task.fill(run, cell, &skeleton, &mut pool, "\n", &|_, _| {
        Ok(frame.clone())
    })?;
    let (places, in_order) = needle_places(&filled.order, skeleton.needles.len());
    let answers: Vec<String> = in_order.iter().map(|&j| n.values[j].to_string()).collect();
    let mut lines: Vec<usize> = places.clone();
    lines.sort_unstable();
    let facts = json!({ "key": n.key, "needle_lines": lines });
    Ok(task.row(
        run,
        cell,
        filled,
        Answer {
            question,
            target: answers.join(", "),
            answers,
            metric: Metric::SoftAll,
            facts,
        },
    ))
}
