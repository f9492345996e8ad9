//! `sort`: sort N items, at any N, optionally hidden in a haystack.
//!
//! Integers (digit count drawn first, then digits) or words; duplicates or not; ascending or
//! descending; output the sorted values or, in the keyed form, the labels ordered by their
//! values. Answers are written without brackets so harnesses never parse them as lists.

use std::collections::{BTreeSet, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use serde_json::json;

use crate::fit::render::render_facts;
use crate::fit::{fit, tolerance, NeedleSpec};
use crate::haystack::Screen;
use crate::rng::{Coordinates, Rng, Stream};
use crate::tasks::Params;
use crate::template::{vars, Vars};
use crate::{canonical_json, Cell, GenError, Instance, Metric, ParamError, Run, Task};
use serde::{Deserialize, Serialize};

mod minimum;
mod reach;
mod tries;

/// The task's name: its command, its manifests' tag and the key of its random streams.
pub const NAME: &str = "sort";
/// One line saying what the task is.
pub const ABOUT: &str =
    "sort N numbers or words (or labels by value), optionally hidden in a haystack";
/// The task's built-in templates, (name, source), the first its default.
pub const TEMPLATES: &[(&str, &str)] = &[(
    "default",
    include_str!("../../../templates/sort/default.j2"),
)];

const WORDS: &[&str] = &[
    include_str!("../../../haystacks/words/noun.txt"),
    include_str!("../../../haystacks/vocab/key_nouns.txt"),
    include_str!("../../../haystacks/vocab/key_adjectives.txt"),
];

/// The start of the model's answer, read right after the prompt.
const ANSWER_PREFIX: &str = "Sorted:";

/// Most items `--len` may pick, and the most `--items` takes.
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

impl Params for SortParams {
    type Built = Sort;

    /// Check every parameter and make the task.
    fn build(&self) -> Result<Sort, ParamError> {
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
        let sort = Sort {
            params: self.clone(),
            vocab,
        };
        let distinct = sort.distinct();
        if let Some(n) = self.items {
            if n == 0 || n > MAX_ITEMS {
                return Err(ParamError::new("items", n, format!("1 to {MAX_ITEMS}")));
            }
            if !self.duplicates && n as u128 > distinct {
                return Err(ParamError::new(
                    "items",
                    n,
                    format!(
                        "at most {distinct} without duplicates, every distinct item among {} ({})",
                        sort.space_name(),
                        sort.remedy()
                    ),
                ));
            }
        } else if self.hidden && !self.duplicates && (HIDDEN_ITEMS as u128) > distinct {
            // The hidden form's default count must exist too, or drawing it would never end
            // (only digit ranges are this small: the word list holds hundreds).
            return Err(ParamError::new(
                "digits",
                if digits.0 == digits.1 {
                    digits.0.to_string()
                } else {
                    format!("{}..{}", digits.0, digits.1)
                },
                format!(
                    "digits with at least the {HIDDEN_ITEMS} distinct numbers hidden by default, but {} are only {distinct} (allow duplicates, or give items)",
                    sort.space_name()
                ),
            ));
        }
        Ok(sort)
    }

    fn native_size(&self) -> bool {
        self.items.is_some() && !self.hidden
    }
}

/// An instance's items as drawn so far, with what the draw needs to go on.
struct ItemStream {
    rng: Rng,
    /// Items listed (without duplicates), by [`Sort::item`]'s key; only asked whether it
    /// holds one.
    seen: HashSet<u128, BuildHasherDefault<KeyHasher>>,
    /// Items listed per digit count (at most 30), to skip spent counts.
    listed: [u64; 31],
    out: Vec<String>,
    /// Each item's key, in the items' order: keys order items as [`Sort::cmp`] does.
    keys: Vec<u128>,
}

/// Hashes an item's key with one folded multiply; the set is only asked about membership,
/// so the hash never shows in the output.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u128(u128::from(self.0) << 8 | u128::from(b));
        }
    }

    fn write_u128(&mut self, key: u128) {
        let x = (key as u64) ^ ((key >> 64) as u64).rotate_left(29) ^ self.0;
        let m = u128::from(x) * 0x9E37_79B9_7F4A_7C15;
        self.0 = (m as u64) ^ ((m >> 64) as u64);
    }
}

impl ItemStream {
    fn new(coords: &Coordinates<'_>) -> Self {
        ItemStream {
            rng: coords.rng(Stream::Content),
            seen: HashSet::default(),
            listed: [0; 31],
            out: Vec::new(),
            keys: Vec::new(),
        }
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

    /// How many distinct items exist: every word of the list, or every integer with a digit
    /// count in range (ten with one digit, since 0 counts, and 9 × 10^(d−1) with d digits).
    pub fn distinct(&self) -> u128 {
        if self.params.words {
            return self.vocab.len() as u128;
        }
        (self.params.digits.0..=self.params.digits.1)
            .map(Self::class_size)
            .sum()
    }

    /// Integers with exactly `d` digits (digits are at most 30, so this fits).
    fn class_size(d: u32) -> u128 {
        if d <= 1 {
            10
        } else {
            10u128.saturating_pow(d - 1).saturating_mul(9)
        }
    }

    /// Most items a length-filled list may hold: every distinct item when they are fewer than
    /// [`MAX_ITEMS`] and duplicates are not allowed.
    fn max_items(&self) -> usize {
        if self.params.duplicates {
            MAX_ITEMS
        } else {
            self.distinct().min(MAX_ITEMS as u128) as usize
        }
    }

    /// One item and a key that only it has and that orders items as [`Sort::cmp`] does (a
    /// word's place in the word list, which is in byte order; a number's value); integers
    /// take a digit count first (one that `open` allows: without duplicates, a
    /// count with numbers left), then the digits.
    fn item(&self, rng: &mut Rng, open: impl Fn(u32) -> bool) -> (String, u128) {
        if self.params.words {
            let i = rng.index(self.vocab.len());
            return (self.vocab[i].to_string(), i as u128);
        }
        let d = loop {
            let d = rng.range_inclusive(self.params.digits.0 as u64, self.params.digits.1 as u64)
                as u32;
            if self.params.duplicates || open(d) {
                break d;
            }
        };
        if d == 1 {
            let v = rng.below(10);
            return (v.to_string(), u128::from(v));
        }
        let mut s = String::with_capacity(d as usize);
        let first = 1 + rng.below(9);
        let mut value = u128::from(first);
        s.push(char::from(b'0' + first as u8));
        for _ in 1..d {
            let digit = rng.below(10);
            value = value * 10 + u128::from(digit);
            s.push(char::from(b'0' + digit as u8));
        }
        (s, value)
    }

    /// The first `n` items of this instance's item stream (a prefix of every longer one).
    fn items(&self, n: usize, coords: &Coordinates<'_>) -> Vec<String> {
        let mut stream = ItemStream::new(coords);
        self.extend(&mut stream, n);
        stream.out
    }

    /// Draw `stream` on until it holds `n` items. Without duplicates a drawn item already
    /// listed is drawn again, and a digit count whose numbers are all listed is no longer
    /// drawn, so the draw always ends: callers never ask for more than [`Sort::distinct`]
    /// items (more would be cut to that many).
    fn extend(&self, stream: &mut ItemStream, n: usize) {
        let n = if self.params.duplicates {
            n
        } else {
            n.min(self.distinct().min(usize::MAX as u128) as usize)
        };
        let ItemStream {
            rng,
            seen,
            listed,
            out,
            keys,
        } = stream;
        if !self.params.duplicates {
            seen.reserve(n.saturating_sub(out.len()));
        }
        while out.len() < n {
            let (it, key) = self.item(rng, |d| {
                u128::from(listed[d as usize]) < Self::class_size(d)
            });
            if self.params.duplicates || seen.insert(key) {
                if !self.params.words {
                    listed[it.len()] += 1;
                }
                out.push(it);
                keys.push(key);
            }
        }
    }

    /// Compare two items: numerically for numbers, byte-wise for words.
    fn cmp(&self, a: &str, b: &str) -> std::cmp::Ordering {
        if self.params.words {
            a.cmp(b)
        } else {
            (a.len(), a).cmp(&(b.len(), b))
        }
    }

    /// The template around a list, for `question`.
    fn frame(&self, run: &Run, question: &str) -> Result<crate::Frame, GenError> {
        run.frame(
            &vars([
                ("question", question),
                ("hidden", if self.params.hidden { "yes" } else { "" }),
            ]),
            ANSWER_PREFIX,
        )
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
        self.render_sorted(items, &self.sorted_order(items))
    }

    /// The indices of `items` in answer order; ties keep label order, which the question
    /// states, so the order is total and that of a prefix is this order without the rest.
    fn sorted_order(&self, items: &[String]) -> Vec<usize> {
        if !self.params.words {
            // Numbers have no leading zeros, so ordering by length, then digits, is ordering
            // by value: sort (value, index) pairs, the value flipped for descending order.
            let keys: Option<Vec<(u128, usize)>> = items
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let v = s.parse::<u128>().ok()?;
                    Some((
                        if self.params.descending {
                            u128::MAX - v
                        } else {
                            v
                        },
                        i,
                    ))
                })
                .collect();
            if let Some(mut keys) = keys {
                keys.sort_unstable();
                return keys.into_iter().map(|(_, i)| i).collect();
            }
        }
        let mut idx: Vec<usize> = (0..items.len()).collect();
        idx.sort_by(|&a, &b| {
            let o = self.cmp(&items[a], &items[b]);
            let o = if self.params.descending {
                o.reverse()
            } else {
                o
            };
            o.then(a.cmp(&b))
        });
        idx
    }

    /// The question, the same for every list size.
    fn question(&self) -> String {
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
        if self.params.output == SortOutput::Keys {
            format!(
                "List every label ordered by its value, {dir}; when values are equal, put the labels in alphabetical order. Write the labels separated by commas, with no spaces."
            )
        } else {
            format!(
                "Sort all of these {what} in {dir} order{}. Write them separated by single spaces.",
                if self.params.duplicates {
                    ", keeping repeated ones"
                } else {
                    ""
                }
            )
        }
    }

    /// [`Sort::render_parts`] with the items' answer order (`idx`) given.
    fn render_sorted(
        &self,
        items: &[String],
        idx: &[usize],
    ) -> (Vec<String>, String, String, Vec<String>, Vec<String>) {
        let q = self.question();
        if self.params.output == SortOutput::Keys {
            let labels: Vec<String> = (0..items.len()).map(Self::label).collect();
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
            (facts, q, order.join(","), order, labels)
        } else {
            let sorted: Vec<String> = idx.iter().map(|&i| items[i].clone()).collect();
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
            (facts, q, sorted.join(" "), sorted, Vec::new())
        }
    }
}

impl Task for Sort {
    /// The item list, in the order given.
    fn identity(&self, instance: &Instance) -> Vec<String> {
        crate::identity::fact_key(instance, "items", "items")
    }

    fn name(&self) -> &'static str {
        NAME
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
        self.plain_minimum(run)
    }

    fn maximum_length(&self, run: &Run, wanted: u64) -> Result<Option<(u64, String)>, GenError> {
        self.longest_length(run, wanted)
    }

    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
        let params = canonical_json(&self.content_params());
        let coords = run.coordinates(NAME, &params, cell);
        let tok = &run.tokenizer;
        // What the model reads plus its answer budget fills the target length.
        let total = cell.length as usize;
        // One item stream for every size tried: each list is a prefix of the longest drawn,
        // so a search draws each item once (near a small space's end, draws repeat a lot).
        let mut stream = ItemStream::new(&coords);
        let build = |stream: &mut ItemStream, n: usize| -> Result<_, GenError> {
            self.extend(stream, n);
            let items = stream.out[..n.min(stream.out.len())].to_vec();
            let (facts, question, target, answers, keys) = self.render_parts(&items);
            let frame = self.frame(run, &question)?;
            Ok((items, facts, question, target, answers, keys, frame))
        };
        let mut screened = None;
        let (items, question, target, answers, keys, fitted, max_new_tokens) = if self.params.hidden
        {
            let n = self.params.items.unwrap_or(HIDDEN_ITEMS);
            let (items, facts, question, target, answers, keys, frame) = build(&mut stream, n)?;
            let answer = run.answer_tokens(&target)?;
            let budget = total.saturating_sub(answer as usize);
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
            (items, question, target, answers, keys, fitted, answer)
        } else if let Some(n) = self.params.items {
            let (items, facts, question, target, answers, keys, frame) = build(&mut stream, n)?;
            let answer = run.answer_tokens(&target)?;
            let budget = total.saturating_sub(answer as usize);
            let fitted = render_facts(tok, &frame, &facts)?;
            if cell.length > 0 && fitted.prompt_tokens > budget {
                return Err(GenError::TooShort {
                    budget,
                    needed: fitted.prompt_tokens,
                });
            }
            (items, question, target, answers, keys, fitted, answer)
        } else {
            let max = self.max_items();
            let (n, order, frame) = self.fill(run, &mut stream, max, total)?;
            stream.out.truncate(n);
            let items = std::mem::take(&mut stream.out);
            let (facts, question, target, answers, keys) = self.render_sorted(&items, &order);
            let fitted = render_facts(tok, &frame, &facts)?;
            let answer = run.answer_tokens(&target)?;
            // `maximum_length` refuses such lengths up front; never write a short row.
            let filled = fitted.prompt_tokens + answer as usize;
            if n == max && total - filled > tolerance(total) {
                return Err(GenError::BadParams(format!(
                    "a target of {} tokens cannot be reached: the longest list, {n} items, fills {filled} tokens",
                    cell.length
                )));
            }
            (items, question, target, answers, keys, fitted, answer)
        };
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
        let fitted = fitted.keep_needles(self.params.hidden);
        Ok(Instance {
            question,
            answer_prefix: ANSWER_PREFIX.into(),
            target,
            answers,
            metric: Metric::Exact,
            max_new_tokens,
            params: canonical_json(&p),
            ..Instance::fitted(self, run, cell, fitted)
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

    fn params(digits: (u32, u32), words: bool, duplicates: bool) -> SortParams {
        SortParams {
            words,
            digits,
            duplicates,
            descending: false,
            output: SortOutput::Values,
            items: None,
            hidden: false,
        }
    }

    fn run() -> Run {
        Run {
            haystack: None,
            tokenizer: crate::Tokenizer::O200k,
            template: crate::Template::compile(
                "default.j2",
                crate::tasks::builtin_template(NAME, "default").unwrap(),
            )
            .unwrap(),
            seed: 1.into(),
            reserve: 0,
            reader: Default::default(),
        }
    }

    fn coords(params: &str) -> Coordinates<'_> {
        Coordinates {
            task: NAME,
            params,
            seed: 1.into(),
            length: 0,
            depth: None,
            sample: 0,
        }
    }

    /// Each try of a search counts the list from its items and reuses the longest order:
    /// it must take the length a whole rendering and count of the same list takes, for
    /// every option, tokenizer and answer budget, whether the sizes tried grow or shrink.
    #[test]
    fn tries_measure_lists_as_whole_renderings_do() {
        let mut d = Rng::from_seed_u64(9, Stream::Content);
        for case in 0..48 {
            let mut p = params([(1, 6), (1, 3), (3, 3), (30, 30)][case % 4], false, false);
            p.words = case % 5 == 0;
            p.duplicates = case % 3 == 0 || (p.words && case % 2 == 0);
            p.descending = case % 7 < 3;
            if case % 6 == 5 {
                p.output = SortOutput::Keys;
            }
            let sort = p.build().unwrap();
            let mut run = run();
            run.tokenizer = [crate::Tokenizer::O200k, crate::Tokenizer::Cl100k][case % 2].clone();
            run.reserve = if case % 4 == 1 { 40 } else { 0 };
            let json = canonical_json(&sort.content_params());
            let mut stream = ItemStream::new(&coords(&json));
            let mut tries = tries::Tries::new(&sort, &run).unwrap();
            for _ in 0..6 {
                let n = 1 + d.index(sort.max_items().min(2000));
                let got = tries.length(&mut stream, n).unwrap();
                let items = sort.items(n, &coords(&json));
                let (facts, question, target, ..) = sort.render_parts(&items);
                let frame = sort.frame(&run, &question).unwrap();
                let whole = render_facts(&run.tokenizer, &frame, &facts).unwrap();
                let want = whole.prompt_tokens + run.answer_tokens(&target).unwrap() as usize;
                assert_eq!(got, want, "case {case}, {n} items");
            }
        }
    }

    #[test]
    fn distinct_items_are_counted_exactly() {
        let count = |d, w| params(d, w, false).build().unwrap().distinct();
        assert_eq!(count((1, 1), false), 10);
        assert_eq!(count((2, 2), false), 90);
        assert_eq!(count((1, 3), false), 1000);
        assert_eq!(count((2, 3), false), 990);
        assert_eq!(count((30, 30), false), 9 * 10u128.pow(29));
        let words = params((1, 1), true, false).build().unwrap();
        assert_eq!(words.distinct(), words.vocab.len() as u128);
    }

    /// Drawing every distinct item ends, with each item once (it used to give up after a
    /// number of misses and return a short list).
    #[test]
    fn a_whole_item_space_can_be_drawn() {
        for (digits, want) in [((1, 1), 10usize), ((1, 2), 100), ((2, 3), 990)] {
            let sort = params(digits, false, false).build().unwrap();
            let p = canonical_json(&sort.content_params());
            let items = sort.items(want, &coords(&p));
            let distinct: BTreeSet<u64> = items.iter().map(|i| i.parse().unwrap()).collect();
            assert_eq!(distinct.len(), want, "{digits:?}");
            let lowest = if digits.0 == 1 {
                0
            } else {
                10u64.pow(digits.0 - 1)
            };
            assert_eq!(distinct.first(), Some(&lowest));
            assert_eq!(distinct.last(), Some(&(10u64.pow(digits.1) - 1)));
            // More is cut to the space, never looped on.
            assert_eq!(sort.items(want + 5, &coords(&p)).len(), want);
        }
    }

    /// Asking for more distinct items than exist is refused with the maximum; as many as exist
    /// is fine (the limit used to be half the space).
    #[test]
    fn counts_beyond_the_space_are_refused() {
        let with = |digits, items, hidden| SortParams {
            items,
            hidden,
            ..params(digits, false, false)
        };
        let e = with((1, 1), Some(11), false).build().unwrap_err();
        assert_eq!((e.param, e.value.as_str()), ("items", "11"));
        assert!(e.expected.contains("at most 10"), "{}", e.expected);
        assert!(with((1, 1), Some(10), false).build().is_ok());
        assert!(with((1, 3), Some(1000), false).build().is_ok());
        assert!(with((1, 3), Some(1001), false).build().is_err());
        // Hidden items default to 20, which one digit cannot give without duplicates.
        let e = with((1, 1), None, true).build().unwrap_err();
        assert_eq!((e.param, e.value.as_str()), ("digits", "1"));
        assert!(with((1, 1), Some(10), true).build().is_ok());
        assert!(with((1, 2), None, true).build().is_ok());
        let words = SortParams {
            items: Some(100_000),
            ..params((1, 1), true, false)
        };
        assert!(words.build().unwrap_err().expected.contains("duplicates"));
    }

    /// The search's answer order (item keys, merged as the stream grows) is the order that
    /// sorting the items themselves gives, for words and numbers, with duplicates, either way.
    #[test]
    fn keyed_answer_orders_sort_as_items_do() {
        let mut d = Rng::from_seed_u64(8, Stream::Content);
        for case in 0..40 {
            let mut p = params(
                [(1, 6), (1, 1), (1, 3), (28, 30)][case % 4],
                case % 5 == 0,
                false,
            );
            p.duplicates = case % 3 == 0 || p.digits == (1, 1);
            p.descending = case % 2 == 1;
            let sort = p.build().unwrap();
            let run = run();
            let json = canonical_json(&sort.content_params());
            let mut stream = ItemStream::new(&coords(&json));
            let mut tries = tries::Tries::new(&sort, &run).unwrap();
            for _ in 0..8 {
                let n = 1 + d.index(sort.max_items().min(3000));
                sort.extend(&mut stream, n);
                let n = n.min(stream.out.len());
                let got = tries.answer_order(&stream, n);
                assert_eq!(got, sort.sorted_order(&stream.out[..n]), "case {case}, {n}");
            }
        }
    }

    /// Where `never_falls` holds, the length tried never falls as the list grows, at every
    /// size up to 1200, under both encodings, with duplicates, either order, a reserve and a
    /// chat template; so the aimed search finds what doubling and bisecting find. Words,
    /// keyed answers and other tokenizers keep the bisecting search.
    #[test]
    fn number_lengths_never_fall_as_lists_grow() {
        use crate::chat::{ChatTemplate, Reader};
        use crate::fit::search::{largest_fitting, largest_fitting_monotone};
        let chat = std::sync::Arc::new(
            ChatTemplate::from_bytes(
                include_bytes!("../../../../tests/fixtures/chat/tokenizer_config.json"),
                "tokenizer_config.json",
            )
            .unwrap(),
        );
        let mut d = Rng::from_seed_u64(5, Stream::Content);
        for case in 0..20 {
            let digits = [(1, 6), (1, 1), (1, 3), (2, 9), (30, 30)][case % 5];
            let mut p = params(digits, false, digits == (1, 1) || case % 3 == 0);
            p.descending = case % 2 == 1;
            let sort = p.build().unwrap();
            let mut run = run();
            run.tokenizer = [crate::Tokenizer::O200k, crate::Tokenizer::Cl100k][case % 2].clone();
            run.reserve = if case % 4 == 1 { 40 } else { 0 };
            if case % 4 == 3 {
                run.reader = Reader {
                    chat: Some(chat.clone()),
                    system: None,
                };
            }
            let json = canonical_json(&sort.content_params());
            let mut stream = ItemStream::new(&coords(&json));
            let mut tries = tries::Tries::new(&sort, &run).unwrap();
            assert!(tries.never_falls(), "case {case}");
            let max = sort.max_items().min(1200);
            let lengths: Vec<usize> = (1..=max)
                .map(|n| tries.length(&mut stream, n).unwrap())
                .collect();
            for (n, pair) in lengths.windows(2).enumerate() {
                assert!(pair[0] <= pair[1], "case {case}: {} items {pair:?}", n + 1);
            }
            for _ in 0..20 {
                let budget = d.index(lengths[max - 1] + 100);
                let aimed = largest_fitting_monotone(1, max, budget, |n| Ok(lengths[n - 1]));
                let bisected = largest_fitting(1, max, budget, |n| Ok(((), lengths[n - 1])));
                assert_eq!(
                    aimed.map_err(|e| e.to_string()),
                    bisected.map(|(n, ())| n).map_err(|e| e.to_string()),
                    "case {case}, budget {budget}"
                );
            }
        }
        for (words, output, tok) in [
            (true, SortOutput::Values, crate::Tokenizer::O200k),
            (false, SortOutput::Keys, crate::Tokenizer::O200k),
            (false, SortOutput::Values, crate::Tokenizer::Gpt2),
        ] {
            let sort = SortParams {
                output,
                ..params((1, 6), words, false)
            }
            .build()
            .unwrap();
            let mut run = run();
            run.tokenizer = tok;
            assert!(!tries::Tries::new(&sort, &run).unwrap().never_falls());
        }
    }

    /// The bound that spares drawing the longest list never lets a length past the exact
    /// maximum: for any length asked, `maximum_length` proves it within reach or gives that
    /// maximum. Where the encoding proves a token per item, 32k needs no draw.
    #[test]
    fn bounded_lengths_never_pass_the_exact_maximum() {
        use crate::Tokenizer::{Cl100k, Gpt2, O200k};
        let keys = SortOutput::Keys;
        let values = SortOutput::Values;
        for (tok, digits, words, duplicates, reserve, output, spared) in [
            (O200k, (1, 6), false, false, 0, values, true),
            (Cl100k, (2, 5), false, false, 0, values, true),
            (O200k, (1, 1), false, true, 0, values, true),
            (Cl100k, (1, 1), true, true, 100, values, true),
            (O200k, (1, 3), false, false, 0, values, false),
            (O200k, (1, 6), false, false, 0, keys, false),
            (Gpt2, (1, 6), false, false, 0, values, false),
        ] {
            let mut run = run();
            run.tokenizer = tok;
            run.reserve = reserve;
            let sort = SortParams {
                output,
                ..params(digits, words, duplicates)
            }
            .build()
            .unwrap();
            let (max, _) = sort.maximum_length(&run, u64::MAX).unwrap().unwrap();
            let case = format!(
                "{:?} {digits:?} words {words} dup {duplicates} {output:?}",
                run.tokenizer.id()
            );
            for wanted in [1, 4096, 32768, max / 2, max - 1, max, max + 1, 2 * max] {
                match sort.maximum_length(&run, wanted).unwrap() {
                    None => assert!(wanted <= max, "{case}: {wanted} > {max}"),
                    Some((got, _)) => assert_eq!(got, max, "{case}"),
                }
            }
            let bound = sort.fills_at_least(&run, sort.max_items());
            assert_eq!(bound.is_some() && max > 32768, spared, "{case}");
            assert_eq!(
                sort.maximum_length(&run, 32768).unwrap().is_none(),
                spared,
                "{case}"
            );
            if let Some(least) = bound {
                // max holds what the longest list fills, less 1 % where lists vary.
                assert!(
                    (least - least / 100) as u64 <= max,
                    "{case}: {least} > {max}"
                );
            }
        }
    }

    /// The same promise over random options: every length the bound lets through without
    /// drawing the longest list (those up to the bound itself) is within the exact maximum.
    #[test]
    fn random_options_never_let_a_length_past_the_exact_maximum() {
        let mut d = Rng::from_seed_u64(21, Stream::Content);
        for case in 0..10 {
            let lo = 1 + d.index(30) as u32;
            let hi = (lo + d.index(6) as u32).min(30);
            let mut p = params((lo, hi), d.index(4) == 0, d.index(2) == 0);
            p.descending = d.index(2) == 0;
            let sort = p.build().unwrap();
            let mut run = run();
            run.tokenizer = [crate::Tokenizer::O200k, crate::Tokenizer::Cl100k][case % 2].clone();
            run.reserve = [0, 0, 1, 700][d.index(4)];
            let (max, _) = sort.maximum_length(&run, u64::MAX).unwrap().unwrap();
            let Some(least) = sort.fills_at_least(&run, sort.max_items()) else {
                panic!("case {case}: values under an OpenAI encoding have a bound");
            };
            let edge = (least - least / 100) as u64;
            for wanted in [
                1 + d.index(edge as usize) as u64,
                edge,
                edge + 1,
                max,
                max + 1,
            ] {
                if sort.maximum_length(&run, wanted).unwrap().is_none() {
                    assert!(wanted <= max, "case {case} {p:?}: {wanted} > {max}");
                }
            }
        }
    }

    /// Lists that fill a length stop at the space without duplicates, and only at MAX_ITEMS
    /// with them (they used to stop at the space either way: ten 1-digit items at any length).
    #[test]
    fn longest_lists_and_lengths() {
        let run = run();
        let exact = params((1, 3), false, false).build().unwrap();
        assert_eq!(exact.max_items(), 1000);
        let (longest, why) = exact.maximum_length(&run, u64::MAX).unwrap().unwrap();
        assert!(why.contains("1000 distinct"), "{why}");
        let cell = |length| Cell {
            length,
            depth: None,
            sample: 3,
            slot: 3,
        };
        let inst = exact.generate(&run, &cell(longest)).unwrap();
        let budget = longest as usize;
        let filled = (inst.prompt_tokens + u64::from(inst.max_new_tokens)) as usize;
        assert!(filled <= budget && filled + tolerance(budget) >= budget);
        let dup = params((1, 1), false, true).build().unwrap();
        assert_eq!(dup.max_items(), MAX_ITEMS);
        let (longest, _) = dup.maximum_length(&run, u64::MAX).unwrap().unwrap();
        assert!(longest > 50_000, "{longest}");
        let inst = dup.generate(&run, &cell(4096)).unwrap();
        // The list is read and written back: the answer budget takes about half the length.
        let filled = inst.prompt_tokens + u64::from(inst.max_new_tokens);
        assert!(filled + 24 >= 4096 && filled <= 4096, "{filled}");
        let fixed = SortParams {
            items: Some(5),
            ..params((1, 3), false, false)
        };
        assert!(fixed
            .build()
            .unwrap()
            .maximum_length(&run, u64::MAX)
            .unwrap()
            .is_none());
    }
}
