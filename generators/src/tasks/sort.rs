//! `sort`: sort N items, at any N, optionally hidden in a haystack.
//!
//! Integers (digit count drawn first, then digits) or words; duplicates or not; ascending or
//! descending; output the sorted values or, in the keyed form, the labels ordered by their
//! values. Answers are written without brackets so harnesses never parse them as lists.

use std::collections::BTreeSet;

use serde_json::json;

use crate::fit::{fit, largest_fitting, render_facts, NeedleSpec};
use crate::haystack::Screen;
use crate::rng::{Coordinates, Rng, Stream};
use crate::template::{vars, Vars};
use crate::{canonical_json, Cell, GenError, Instance, Metric, ParamError, Run, Task};
use serde::{Deserialize, Serialize};

const WORDS: &[&str] = &[
    include_str!("../../haystacks/words/noun.txt"),
    include_str!("../../haystacks/vocab/key_nouns.txt"),
    include_str!("../../haystacks/vocab/key_adjectives.txt"),
];

/// Most items `--len` may pick.
pub const MAX_ITEMS: usize = 100_000;
/// Items when a haystack is used without `--items`.
pub const HIDDEN_ITEMS: usize = 20;

choice! {
    /// What the answer lists.
    pub enum SortOutput {
        /// The items, sorted.
        Values = "values",
        /// The labels, ordered by their items (`K:25,L:7,M:319` gives `L,K,M`).
        Keys = "keys",
    }
}

/// sort's parameters, spelled as manifests record them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SortParams {
    /// Words instead of integers.
    pub words: bool,
    /// Digit range of integers (inclusive).
    pub digits: (u32, u32),
    /// Allow repeated items.
    pub duplicates: bool,
    /// Largest first.
    pub descending: bool,
    /// Values, or labels ordered by their values.
    pub output: SortOutput,
    /// Exact item count, or None to fill the length.
    pub items: Option<usize>,
    /// Items hidden in a haystack.
    pub hidden: bool,
}

impl SortParams {
    /// Check every parameter and make the task.
    pub fn build(&self) -> Result<Sort, ParamError> {
        let digits = self.digits;
        if digits.0 == 0 || digits.1 < digits.0 || digits.1 > 30 {
            return Err(ParamError::new(
                "digits",
                format!("{}..{}", digits.0, digits.1),
                "a range within 1..30",
            ));
        }
        let mut vocab: BTreeSet<&'static str> = BTreeSet::new();
        for list in WORDS {
            vocab.extend(list.lines().map(str::trim).filter(|l| !l.is_empty()));
        }
        let vocab: Vec<&'static str> = vocab.into_iter().collect();
        let capacity = if self.words {
            vocab.len() as f64
        } else {
            10f64.powi(digits.1 as i32)
        };
        if let Some(n) = self.items {
            if n == 0 || n > MAX_ITEMS {
                return Err(ParamError::new("items", n, format!("1 to {MAX_ITEMS}")));
            }
            if !self.duplicates && n as f64 > capacity / 2.0 {
                return Err(ParamError::new(
                    "items",
                    n,
                    format!(
                        "at most {} distinct items in this item space (allow duplicates for more)",
                        (capacity / 2.0) as u64
                    ),
                ));
            }
        }
        Ok(Sort {
            params: self.clone(),
            vocab,
        })
    }
}

/// Validated sort parameters with the word list they draw from.
#[derive(Debug, Clone)]
pub struct Sort {
    /// The checked parameters.
    pub params: SortParams,
    vocab: Vec<&'static str>,
}

impl Sort {
    fn content_params(&self) -> serde_json::Value {
        json!({
            "items": if self.params.words { "words" } else { "numbers" },
            "digits": [self.params.digits.0, self.params.digits.1],
            "duplicates": self.params.duplicates,
            "order": if self.params.descending { "descending" } else { "ascending" },
            "output": if self.params.output == SortOutput::Keys { "keys" } else { "values" },
            "count": self.params.items,
            "hidden": self.params.hidden,
        })
    }

    fn capacity(&self) -> usize {
        if self.params.words {
            self.vocab.len()
        } else {
            10usize
                .saturating_pow(self.params.digits.1)
                .min(usize::MAX / 2)
        }
    }

    fn item(&self, rng: &mut Rng) -> String {
        if self.params.words {
            return rng.choose(&self.vocab).to_string();
        }
        let d =
            rng.range_inclusive(self.params.digits.0 as u64, self.params.digits.1 as u64) as u32;
        if d == 1 {
            return rng.below(10).to_string();
        }
        let mut s = String::with_capacity(d as usize);
        s.push(char::from(b'1' + rng.below(9) as u8));
        for _ in 1..d {
            s.push(char::from(b'0' + rng.below(10) as u8));
        }
        s
    }

    /// The first `n` items of this instance's item stream (a prefix of every longer one).
    fn items(&self, n: usize, coords: &Coordinates<'_>) -> Vec<String> {
        let mut rng = coords.rng(Stream::Content);
        let mut seen = BTreeSet::new();
        let mut out = Vec::with_capacity(n);
        let mut misses = 0usize;
        while out.len() < n {
            let it = self.item(&mut rng);
            if self.params.duplicates || seen.insert(it.clone()) {
                out.push(it);
            } else {
                misses += 1;
                if misses > 64 * n + 1024 {
                    break; // the item space is exhausted; --len then stops here
                }
            }
        }
        out
    }

    /// Compare two items: numerically for numbers, byte-wise for words.
    fn cmp(&self, a: &str, b: &str) -> std::cmp::Ordering {
        if self.params.words {
            a.cmp(b)
        } else {
            (a.len(), a).cmp(&(b.len(), b))
        }
    }

    fn label(i: usize) -> String {
        // A, B, …, Z, AA, AB, …: bijective base 26.
        let mut n = i + 1;
        let mut s = Vec::new();
        while n > 0 {
            n -= 1;
            s.push(b'A' + (n % 26) as u8);
            n /= 26;
        }
        s.reverse();
        String::from_utf8(s).unwrap_or_default()
    }

    /// Prompt pieces and answer for `items`: (listing facts, question, target, answers, keys).
    /// What a haystack sentence must not mention when items are hidden: any item, any label
    /// as the notes name it, and the notes' own phrase.
    fn screen(&self, items: &[String], labels: &[String]) -> Screen {
        let mut screen = Screen::new(items);
        for label in labels {
            screen.add(&format!("label {label}"));
        }
        screen.add(if self.params.words {
            "note the word"
        } else {
            "note the number"
        });
        screen
    }

    fn render_parts(
        &self,
        items: &[String],
    ) -> (Vec<String>, String, String, Vec<String>, Vec<String>) {
        let what = if self.params.words {
            "words"
        } else {
            "numbers"
        };
        let dir = if self.params.descending {
            "descending"
        } else {
            "ascending"
        };
        let labels: Vec<String> = (0..items.len()).map(Self::label).collect();
        let mut idx: Vec<usize> = (0..items.len()).collect();
        idx.sort_by(|&a, &b| {
            let o = self.cmp(&items[a], &items[b]);
            let o = if self.params.descending {
                o.reverse()
            } else {
                o
            };
            // Ties keep label order, which the question states.
            o.then(a.cmp(&b))
        });
        let sorted: Vec<String> = idx.iter().map(|&i| items[i].clone()).collect();
        if self.params.output == SortOutput::Keys {
            let facts = if self.params.hidden {
                labels
                    .iter()
                    .zip(items)
                    .map(|(l, v)| format!("Note that label {l} carries the value {v}."))
                    .collect()
            } else {
                vec![labels
                    .iter()
                    .zip(items)
                    .map(|(l, v)| format!("{l}:{v}"))
                    .collect::<Vec<_>>()
                    .join(",")]
            };
            let order: Vec<String> = idx.iter().map(|&i| labels[i].clone()).collect();
            let q = format!(
                "List every label ordered by its value, {dir}; when values are equal, put the labels in alphabetical order. Write the labels separated by commas, with no spaces."
            );
            (facts, q, order.join(","), order, labels)
        } else {
            let facts = if self.params.hidden {
                items
                    .iter()
                    .map(|v| {
                        format!(
                            "Note the {} {v}.",
                            if self.params.words { "word" } else { "number" }
                        )
                    })
                    .collect()
            } else {
                vec![items.join(" ")]
            };
            let q =
                format!(
                "Sort all of these {what} in {dir} order{}. Write them separated by single spaces.",
                if self.params.duplicates { ", keeping repeated ones" } else { "" }
            );
            (facts, q, sorted.join(" "), sorted, Vec::new())
        }
    }
}

impl Task for Sort {
    fn name(&self) -> &'static str {
        "sort"
    }

    fn variant(&self) -> String {
        format!(
            "{}_{}{}",
            if self.params.words {
                "words"
            } else {
                "numbers"
            },
            if self.params.output == SortOutput::Keys {
                "keys"
            } else {
                "values"
            },
            if self.params.hidden { "_hidden" } else { "" }
        )
    }

    fn params(&self) -> serde_json::Value {
        self.content_params()
    }

    fn uses_haystack(&self) -> bool {
        self.params.hidden
    }

    fn default_reserve(&self) -> u32 {
        0
    }

    fn example_vars(&self) -> Vars {
        vars([("question", "Sort these numbers."), ("hidden", "")])
    }

    fn minimum_length(&self, run: &Run) -> Result<u64, GenError> {
        let frame = run.template.frame(&self.example_vars())?;
        let n = run
            .tokenizer
            .count(&format!("{}{}", frame.prefix, frame.suffix))?;
        let per_item = if self.params.hidden { 12 } else { 4 };
        Ok((n + 32 + per_item * self.params.items.unwrap_or(1)) as u64 + run.reserve)
    }

    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
        let params = canonical_json(&self.content_params());
        let coords = run.coordinates("sort", &params, cell);
        let tok = &run.tokenizer;
        let budget = cell.length.saturating_sub(run.reserve) as usize;
        let build = |n: usize| -> Result<_, GenError> {
            let items = self.items(n, &coords);
            let (facts, question, target, answers, keys) = self.render_parts(&items);
            let frame = run.template.frame(&vars([
                ("question", &question),
                ("hidden", if self.params.hidden { "yes" } else { "" }),
            ]))?;
            Ok((items, facts, question, target, answers, keys, frame))
        };
        let mut screened = None;
        let (items, _facts, question, target, answers, keys, fitted) = if self.params.hidden {
            let n = self.params.items.unwrap_or(HIDDEN_ITEMS);
            let (items, facts, question, target, answers, keys, frame) = build(n)?;
            let haystack = run.required_haystack("hidden sort items")?;
            let mut placement = coords.rng(Stream::Placement);
            let first = cell.depth.unwrap_or(50.0);
            let needles: Vec<NeedleSpec> = facts
                .iter()
                .enumerate()
                .map(|(i, f)| NeedleSpec {
                    text: f.clone(),
                    depth: if i == 0 {
                        first
                    } else {
                        100.0 * placement.unit_f64()
                    },
                })
                .collect();
            let mut stream = haystack
                .stream(tok, Rng::from_key(coords.key(), Stream::Haystack), None)?
                .with_screen(self.screen(&items, &keys));
            let fitted = fit(tok, &frame, &needles, &mut stream, budget)?;
            screened = Some(stream.screened_units());
            (items, facts, question, target, answers, keys, fitted)
        } else if let Some(n) = self.params.items {
            let (items, facts, question, target, answers, keys, frame) = build(n)?;
            let fitted = render_facts(tok, &frame, &facts)?;
            if cell.length > 0 && fitted.length > budget {
                return Err(GenError::TooShort {
                    budget,
                    needed: fitted.length,
                });
            }
            (items, facts, question, target, answers, keys, fitted)
        } else {
            let max = self.capacity().min(MAX_ITEMS);
            let (_, (items, facts, question, target, answers, keys, fitted)) =
                largest_fitting(1, max, budget, |n| {
                    let (items, facts, question, target, answers, keys, frame) = build(n)?;
                    let fitted = render_facts(tok, &frame, &facts)?;
                    let len = fitted.length;
                    Ok(((items, facts, question, target, answers, keys, fitted), len))
                })?;
            (items, facts, question, target, answers, keys, fitted)
        };
        let target_tokens = tok.count(&target)?;
        let mut p = self.content_params();
        p["items"] = json!(items);
        p["count"] = json!(items.len());
        p["keys"] = json!(keys);
        p["kind"] = json!(if self.params.words {
            "words"
        } else {
            "numbers"
        });
        if let Some(n) = screened {
            p["screened_units"] = json!(n);
        }
        Ok(Instance {
            input: fitted.input,
            question,
            answer_prefix: "Sorted:".into(),
            target,
            answers,
            metric: Metric::Exact,
            max_new_tokens: (target_tokens + 16) as u32,
            length: fitted.length as u64,
            needle_offsets: if self.params.hidden {
                fitted.needle_offsets
            } else {
                Vec::new()
            },
            needle_depths: if self.params.hidden {
                fitted.needle_depths
            } else {
                Vec::new()
            },
            params: canonical_json(&p),
            ..Instance::at(self, run, cell)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_bijective_base_26() {
        assert_eq!(Sort::label(0), "A");
        assert_eq!(Sort::label(25), "Z");
        assert_eq!(Sort::label(26), "AA");
        assert_eq!(Sort::label(27), "AB");
        assert_eq!(Sort::label(701), "ZZ");
        assert_eq!(Sort::label(702), "AAA");
    }

    #[test]
    fn keyed_and_value_answers() {
        let s = SortParams {
            words: false,
            digits: (1, 3),
            duplicates: true,
            descending: false,
            output: SortOutput::Keys,
            items: Some(3),
            hidden: false,
        }
        .build()
        .unwrap();
        let items: Vec<String> = ["25", "7", "319"].iter().map(|s| s.to_string()).collect();
        let (facts, _, target, _, _) = s.render_parts(&items);
        assert_eq!(facts, vec!["A:25,B:7,C:319"]);
        assert_eq!(target, "B,A,C");
        let s = SortParams {
            words: false,
            digits: (1, 3),
            duplicates: true,
            descending: true,
            output: SortOutput::Values,
            items: Some(3),
            hidden: false,
        }
        .build()
        .unwrap();
        let items: Vec<String> = ["25", "7", "25", "100"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(s.render_parts(&items).2, "100 25 25 7");
    }
}
