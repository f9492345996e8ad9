//! `cwe`: common words extraction, following the structure of RULER's task of that name.
//!
//! A numbered list of words in which a few common words each appear `common_repeats` times
//! and every other word `rare_repeats` times, shuffled; the answer is the common words. Since
//! common words repeat strictly more often than any other, there is no tie at the cut. The
//! number of rare words is the size: the largest list that fits the length is taken.

use std::collections::BTreeSet;

use serde_json::json;

use crate::fit::lists::NumberedList;
use crate::fit::render::{render_facts, render_joined_counted};
use crate::fit::search::{largest_list, ListLength};
use crate::fit::Fitted;
use crate::rng::{Coordinates, Rng, Stream};
use crate::tasks::Params;
use crate::template::{vars, Frame, Vars};
use crate::{canonical_json, Cell, GenError, Instance, Metric, ParamError, Run, Task};
use serde::{Deserialize, Serialize};

/// The task's name: its command, its manifests' tag and the key of its random streams.
pub const NAME: &str = "cwe";
/// One line saying what the task is.
pub const ABOUT: &str =
    "common words extraction: name the words a long list repeats most often (RULER)";
/// The task's built-in templates, (name, source), the first its default.
pub const TEMPLATES: &[(&str, &str)] =
    &[("default", include_str!("../../templates/cwe/default.j2"))];

const REAL_WORDS: &[&str] = &[
    include_str!("../../haystacks/vocab/list_words.txt"),
    include_str!("../../haystacks/words/noun.txt"),
    include_str!("../../haystacks/words/verb.txt"),
    include_str!("../../haystacks/words/adjective.txt"),
    include_str!("../../haystacks/vocab/key_nouns.txt"),
    include_str!("../../haystacks/vocab/key_adjectives.txt"),
];

/// RULER's answer budget for common words extraction.
pub const MAX_NEW_TOKENS: u32 = 120;
/// Most common words an instance may ask for.
pub const MAX_COMMON: u32 = 100;
/// Most repeats of one word.
pub const MAX_REPEATS: u32 = 1000;
/// Most distinct rare words a list may hold (far beyond any length's need).
const MAX_RARE: usize = 2_000_000;

/// Syllables coined words are made of once the real words are used up: consonant, vowel.
const ONSETS: &[u8] = b"bdfgklmnprstvz";
const VOWELS: &[u8] = b"aeiou";

/// cwe's parameters, spelled as manifests and `params` record them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CweParams {
    /// How many common words (the answer's size).
    pub common: u32,
    /// How often each common word appears.
    pub common_repeats: u32,
    /// How often every other word appears (fewer than `common_repeats`).
    pub rare_repeats: u32,
}

impl Default for CweParams {
    /// RULER's defaults: 10 common words, 30 repeats against 3.
    fn default() -> Self {
        CweParams {
            common: 10,
            common_repeats: 30,
            rare_repeats: 3,
        }
    }
}

impl Params for CweParams {
    type Built = Cwe;

    /// Check every parameter and make the task.
    fn build(&self) -> Result<Cwe, ParamError> {
        if self.common == 0 || self.common > MAX_COMMON {
            return Err(ParamError::new(
                "common",
                self.common,
                format!("1 to {MAX_COMMON}"),
            ));
        }
        if self.rare_repeats == 0 || self.rare_repeats >= MAX_REPEATS {
            return Err(ParamError::new(
                "rare_repeats",
                self.rare_repeats,
                format!("1 to {}", MAX_REPEATS - 1),
            ));
        }
        if self.common_repeats <= self.rare_repeats || self.common_repeats > MAX_REPEATS {
            return Err(ParamError::new(
                "common_repeats",
                self.common_repeats,
                format!(
                    "more than rare_repeats ({}) and at most {MAX_REPEATS}, so the common words stand apart",
                    self.rare_repeats
                ),
            ));
        }
        let mut real: BTreeSet<&'static str> = BTreeSet::new();
        for list in REAL_WORDS {
            real.extend(
                list.lines()
                    .map(str::trim)
                    .filter(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase())),
            );
        }
        Ok(Cwe {
            params: self.clone(),
            real: real.into_iter().collect(),
        })
    }
}

/// Validated cwe parameters with the word list they draw from.
#[derive(Debug, Clone)]
pub struct Cwe {
    /// The checked parameters.
    pub params: CweParams,
    real: Vec<&'static str>,
}

/// An instance's distinct words as drawn so far: the real words in a random order, then coined
/// ones; a longer list extends a shorter one.
struct WordStream {
    rng: Rng,
    real: Vec<&'static str>,
    used: BTreeSet<String>,
    out: Vec<String>,
}

impl WordStream {
    fn new(real: &[&'static str], coords: &Coordinates<'_>) -> Self {
        let mut rng = coords.rng(Stream::Content);
        let mut real = real.to_vec();
        rng.shuffle(&mut real);
        let used = real.iter().map(|w| w.to_string()).collect();
        WordStream {
            rng,
            real,
            used,
            out: Vec::new(),
        }
    }

    /// A made-up word of two to four consonant-vowel syllables, not yet used.
    fn coin(&mut self) -> String {
        loop {
            let syllables = 2 + self.rng.below(3) as usize;
            let mut w = String::with_capacity(2 * syllables);
            for _ in 0..syllables {
                w.push(char::from(*self.rng.choose(ONSETS)));
                w.push(char::from(*self.rng.choose(VOWELS)));
            }
            // 14 × 5 syllables give millions of words: the draws that repeat are few.
            if self.used.insert(w.clone()) {
                return w;
            }
        }
    }

    fn extend(&mut self, n: usize) {
        while self.out.len() < n {
            let i = self.out.len();
            let w = if i < self.real.len() {
                self.real[i].to_string()
            } else {
                self.coin()
            };
            self.out.push(w);
        }
    }
}

impl Cwe {
    fn content_params(&self) -> serde_json::Value {
        json!({
            "common": self.params.common,
            "common_repeats": self.params.common_repeats,
            "rare_repeats": self.params.rare_repeats,
        })
    }

    /// The list of `rare` rare words after the common ones, shuffled by the instance's own
    /// stream (the same shuffle for the same size).
    fn list(&self, words: &[String], coords: &Coordinates<'_>) -> Vec<String> {
        self.order(words.len(), coords)
            .into_iter()
            .map(|i| words[i].clone())
            .collect()
    }

    /// [`Cwe::list`] as indices into the words.
    fn order(&self, words: usize, coords: &Coordinates<'_>) -> Vec<usize> {
        let common = self.params.common as usize;
        let mut list = Vec::new();
        for i in 0..words {
            let times = if i < common {
                self.params.common_repeats
            } else {
                self.params.rare_repeats
            };
            list.extend(std::iter::repeat_n(i, times as usize));
        }
        coords.rng(Stream::Placement).shuffle(&mut list);
        list
    }

    fn question(&self) -> (String, String) {
        let n = self.params.common;
        (
            format!("Which {n} words occur most often in the list above? Give each of them once."),
            format!("The {n} most frequent words are:"),
        )
    }

    /// The prompt tokens of the list `order` (indices into `words`) in `frame`, counted from
    /// its numbers' and words' counts (`counts`), or `None` when the tokenizer gives no rule.
    fn counted(
        &self,
        run: &Run,
        frame: &Frame,
        words: &[String],
        order: &[usize],
        counts: &mut NumberedList,
    ) -> Result<Option<usize>, GenError> {
        let Some(tokens) = counts.tokens(&run.tokenizer, words, order)? else {
            return Ok(None);
        };
        let text = NumberedList::text(words, order);
        let fitted = render_joined_counted(&run.tokenizer, frame, &[text], "\n", tokens)?;
        Ok(Some(fitted.prompt_tokens))
    }

    fn render(&self, run: &Run, list: &[String]) -> Result<Fitted, GenError> {
        let order: Vec<usize> = (0..list.len()).collect();
        let text = NumberedList::text(list, &order);
        let (question, prefix) = self.question();
        let frame = run.frame(&vars([("question", &question)]), &prefix)?;
        render_facts(&run.tokenizer, &frame, &[text])
    }
}

/// One list-size search: the words drawn so far and the counts of their numbered lines.
struct Tries<'a> {
    cwe: &'a Cwe,
    run: &'a Run,
    frame: Frame,
    coords: &'a Coordinates<'a>,
    words: WordStream,
    counts: NumberedList,
}

impl ListLength for Tries<'_> {
    fn counted(&mut self, rare: usize) -> Result<Option<usize>, GenError> {
        let n = self.cwe.params.common as usize + rare;
        self.words.extend(n);
        let order = self.cwe.order(n, self.coords);
        let prompt = self.cwe.counted(
            self.run,
            &self.frame,
            &self.words.out,
            &order,
            &mut self.counts,
        )?;
        Ok(prompt.map(|p| p + self.run.reserve as usize))
    }

    fn rendered(&mut self, rare: usize) -> Result<usize, GenError> {
        let n = self.cwe.params.common as usize + rare;
        self.words.extend(n);
        let list = self.cwe.list(&self.words.out[..n], self.coords);
        Ok(self.cwe.render(self.run, &list)?.prompt_tokens + self.run.reserve as usize)
    }
}

impl Task for Cwe {
    fn name(&self) -> &'static str {
        NAME
    }

    fn variant(&self) -> String {
        format!(
            "n{}_r{}_{}",
            self.params.common, self.params.common_repeats, self.params.rare_repeats
        )
    }

    fn params(&self) -> serde_json::Value {
        self.content_params()
    }

    /// RULER's common words: 10 common words repeated 30 times among words repeated 3 times.
    fn ruler_task(&self, _: crate::tasks::RulerHaystack) -> Option<&'static str> {
        let p = &self.params;
        ((p.common, p.common_repeats, p.rare_repeats) == (10, 30, 3)).then_some(NAME)
    }

    fn uses_haystack(&self) -> bool {
        false
    }

    fn default_reserve(&self) -> u32 {
        MAX_NEW_TOKENS.max(12 * self.params.common)
    }

    fn example_vars(&self) -> Vars {
        vars([("question", "Which 10 words occur most often?")])
    }

    fn minimum_length(&self, run: &Run) -> Result<u64, GenError> {
        let params = canonical_json(&self.content_params());
        let coords = Coordinates::sizing(NAME, &params, run.seed);
        let mut words = WordStream::new(&self.real, &coords);
        words.extend(self.params.common as usize + 1);
        let fitted = self.render(run, &self.list(&words.out, &coords))?;
        // Other instances draw other (longer) words: leave room for them.
        Ok((fitted.prompt_tokens as u64 * 6).div_ceil(5) + 16 + run.reserve)
    }

    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
        let params = canonical_json(&self.content_params());
        let coords = run.coordinates(NAME, &params, cell);
        let common = self.params.common as usize;
        let max = MAX_RARE.min(cell.length as usize / self.params.rare_repeats as usize + 1);
        let (question, answer_prefix) = self.question();
        let mut tries = Tries {
            cwe: self,
            run,
            frame: run.frame(&vars([("question", &question)]), &answer_prefix)?,
            coords: &coords,
            words: WordStream::new(&self.real, &coords),
            counts: NumberedList::default(),
        };
        let rare = largest_list(1, max.max(1), cell.length as usize, &mut tries)?;
        let words = tries.words;
        let list = self.list(&words.out[..common + rare], &coords);
        let fitted = self.render(run, &list)?;
        let answers: Vec<String> = words.out[..common].to_vec();
        let mut p = self.content_params();
        p["rare"] = json!(rare);
        p["words"] = json!(list);
        p["ignored"] = json!([] as [String; 0]);
        // The list is the context, not a needle in it.
        let fitted = fitted.keep_needles(false);
        Ok(Instance {
            question,
            answer_prefix,
            target: answers.join(", "),
            answers,
            metric: Metric::All,
            params: canonical_json(&p),
            ..Instance::fitted(self, run, cell, fitted)
        })
    }
}

/// The `n` most frequent words of `words` not in `ignored`, when the n-th is strictly more
/// frequent than the next (else `None`): what a reader can count from `params.words`, so tests
/// recompute cwe and fwe answers with it.
pub fn most_frequent(words: &[String], ignored: &[String], n: usize) -> Option<Vec<String>> {
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for w in words.iter().filter(|w| !ignored.contains(w)) {
        *counts.entry(w).or_default() += 1;
    }
    let mut by: Vec<(usize, &str)> = counts.into_iter().map(|(w, c)| (c, w)).collect();
    by.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    if by.len() < n || (by.len() > n && by[n - 1].0 <= by[n].0) {
        return None;
    }
    let mut top: Vec<String> = by[..n].iter().map(|(_, w)| w.to_string()).collect();
    top.sort();
    Some(top)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::Tokenizer;

    fn run(tok: Tokenizer, seed: u64) -> Run {
        crate::tasks::plain_run(NAME, tok, seed, 120)
    }

    #[test]
    fn answers_are_the_most_frequent_words_over_many_seeds() {
        for seed in 0..10u64 {
            let tok =
                [Tokenizer::O200k, Tokenizer::Gpt2, Tokenizer::Words][seed as usize % 3].clone();
            let run = run(tok, seed);
            let params = CweParams {
                common: 3 + (seed % 4) as u32,
                common_repeats: 5 + (seed % 3) as u32,
                rare_repeats: 1 + (seed % 2) as u32,
            };
            let task = params.build().unwrap();
            let cell = Cell {
                length: 1500 + 500 * seed,
                depth: None,
                sample: seed,
                slot: seed,
            };
            let inst = task.generate(&run, &cell).unwrap();
            let p: serde_json::Value = serde_json::from_str(&inst.params).unwrap();
            let words: Vec<String> = serde_json::from_value(p["words"].clone()).unwrap();
            let mut got = inst.answers.clone();
            got.sort();
            assert_eq!(
                most_frequent(&words, &[], params.common as usize),
                Some(got)
            );
            assert_eq!(
                inst.length as usize,
                run.tokenizer.count(&inst.input).unwrap()
            );
            // The largest list that fits: within a few tokens of the budget.
            let filled = inst.prompt_tokens + 120;
            assert!(
                filled <= cell.length && filled + 24 >= cell.length,
                "{filled}"
            );
            for (i, w) in words.iter().enumerate() {
                assert!(inst.input.contains(&format!("\n{}. {w}\n", i + 1)));
            }
        }
    }

    /// A list counted from its numbers' and words' counts takes the prompt tokens its whole
    /// rendering does, for sizes tried growing and shrinking, with real and coined words.
    #[test]
    fn counted_lists_measure_as_whole_renderings_do() {
        let mut d = crate::rng::Rng::from_seed_u64(6, Stream::Content);
        for seed in 0..8u64 {
            let run = run(
                [Tokenizer::O200k, Tokenizer::Cl100k][seed as usize % 2].clone(),
                seed,
            );
            let task = CweParams::default().build().unwrap();
            let coords = Coordinates {
                task: NAME,
                params: "{}",
                seed: seed.into(),
                length: 0,
                depth: None,
                sample: seed,
            };
            let (question, answer_prefix) = task.question();
            let frame = run
                .frame(&vars([("question", &question)]), &answer_prefix)
                .unwrap();
            let mut words = WordStream::new(&task.real, &coords);
            let mut counts = NumberedList::default();
            for _ in 0..5 {
                let n = task.params.common as usize + 1 + d.index(3000);
                words.extend(n);
                let order = task.order(n, &coords);
                let got = task.counted(&run, &frame, &words.out, &order, &mut counts);
                let whole = task.render(&run, &task.list(&words.out[..n], &coords));
                let want = Some(whole.unwrap().prompt_tokens);
                assert_eq!(got.unwrap(), want, "seed {seed}, {n} words");
            }
        }
    }

    #[test]
    fn long_lists_coin_distinct_words() {
        let task = CweParams::default().build().unwrap();
        let coords = Coordinates {
            task: NAME,
            params: "{}",
            seed: 1.into(),
            length: 0,
            depth: None,
            sample: 0,
        };
        let mut s = WordStream::new(&task.real, &coords);
        s.extend(5000);
        let distinct: BTreeSet<&String> = s.out.iter().collect();
        assert_eq!(distinct.len(), 5000);
        assert!(task.real.len() > 500, "{}", task.real.len());
    }

    #[test]
    fn ties_at_the_cut_are_no_answer() {
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(most_frequent(&w(&["a", "b", "a", "c", "b"]), &[], 1), None);
        assert_eq!(
            most_frequent(&w(&["a", "b", "a", "c", "b", "x", "x", "x"]), &w(&["x"]), 2),
            Some(w(&["a", "b"]))
        );
    }

    #[test]
    fn bad_parameters_are_refused() {
        let d = CweParams::default();
        let e = CweParams {
            common_repeats: 3,
            ..d.clone()
        }
        .build()
        .unwrap_err();
        assert_eq!(e.param, "common_repeats");
        assert_eq!(
            CweParams { common: 0, ..d }.build().unwrap_err().param,
            "common"
        );
    }
}
