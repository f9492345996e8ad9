//! `fwe`: frequent words extraction, following the structure of RULER's task of that name.
//!
//! A text of made-up coded words (six random lowercase letters) whose counts follow a Zipf
//! law: the word of rank k appears ⌊N · k^-alpha / H⌋ times, H = Σ k^-alpha over the
//! vocabulary. As in RULER, the top-ranked word is noise (`...`), rendered but not counted
//! (`params.ignored`), and the vocabulary holds one word per 50 tokens of the budget. The answer
//! is the `top` most frequent coded words; sizes whose counts would tie at the cut are never
//! used, so the answer is unambiguous. N is the size: the largest text that fits is taken.

use std::collections::BTreeSet;

use serde_json::json;

use crate::fit::lists::{list_tokens, spaced_word, ItemTokens};
use crate::fit::render::{render_facts, render_joined_counted};
use crate::fit::search::{largest_list, ListLength};
use crate::fit::Fitted;
use crate::rng::{Coordinates, Stream};
use crate::tasks::Params;
use crate::template::{vars, Frame, Vars};
use crate::{canonical_json, Cell, GenError, Instance, Metric, ParamError, Run, Task};
use serde::{Deserialize, Serialize};

/// The task's name: its command, its manifests' tag and the key of its random streams.
pub const NAME: &str = "fwe";
/// One line saying what the task is.
pub const ABOUT: &str = "frequent words extraction: name the most frequent coded words of a Zipf-distributed text (RULER)";
/// The task's built-in templates, (name, source), the first its default.
pub const TEMPLATES: &[(&str, &str)] =
    &[("default", include_str!("../../templates/fwe/default.j2"))];

/// RULER's answer budget for frequent words extraction.
pub const MAX_NEW_TOKENS: u32 = 50;
/// The noise word: rendered at the top rank, never counted.
pub const NOISE: &str = "...";
/// Letters of a coded word (RULER's default).
const WORD_LETTERS: usize = 6;
/// Budget tokens per vocabulary word (RULER's vocabulary size is the budget over 50).
const TOKENS_PER_VOCAB_WORD: usize = 50;
/// Most words asked for.
pub const MAX_TOP: u32 = 50;

/// fwe's parameters, spelled as manifests and `params` record them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FweParams {
    /// The Zipf exponent of the counts.
    pub alpha: f64,
    /// How many of the most frequent coded words are asked for.
    pub top: u32,
}

impl Default for FweParams {
    /// RULER's defaults: alpha 2, the top 3 asked.
    fn default() -> Self {
        FweParams { alpha: 2.0, top: 3 }
    }
}

impl Params for FweParams {
    type Built = Fwe;

    /// Check every parameter and make the task.
    fn build(&self) -> Result<Fwe, ParamError> {
        if !(self.alpha >= 1.0 && self.alpha <= 4.0) {
            return Err(ParamError::new(
                "alpha",
                self.alpha,
                "a Zipf exponent from 1 to 4",
            ));
        }
        if self.top == 0 || self.top > MAX_TOP {
            return Err(ParamError::new("top", self.top, format!("1 to {MAX_TOP}")));
        }
        Ok(Fwe {
            params: self.clone(),
        })
    }
}

/// Validated fwe parameters.
#[derive(Debug, Clone)]
pub struct Fwe {
    /// The checked parameters.
    pub params: FweParams,
}

/// `k^-alpha`: by repeated multiplication for whole exponents (exact, the same on every
/// platform), else `powf`.
fn weight(k: usize, alpha: f64) -> f64 {
    if alpha.fract() == 0.0 {
        let mut p = 1.0f64;
        for _ in 0..alpha as u32 {
            p *= k as f64;
        }
        1.0 / p
    } else {
        (k as f64).powf(-alpha)
    }
}

impl Fwe {
    fn content_params(&self) -> serde_json::Value {
        json!({"alpha": self.params.alpha, "top": self.params.top})
    }

    /// Vocabulary size for a budget: one word per 50 tokens, and at least the noise word, the
    /// asked words and one more.
    fn vocab_size(&self, budget: usize) -> usize {
        (budget / TOKENS_PER_VOCAB_WORD).max(self.params.top as usize + 2)
    }

    /// Counts per rank (1-based rank k at index k-1) for a nominal size `n`.
    fn counts(&self, n: usize, vocab: usize) -> Vec<usize> {
        let weights: Vec<f64> = (1..=vocab).map(|k| weight(k, self.params.alpha)).collect();
        let h: f64 = weights.iter().sum();
        weights
            .iter()
            .map(|w| (n as f64 * w / h).floor() as usize)
            .collect()
    }

    /// The smallest size from which the asked words' counts stand strictly above the next
    /// word's (their expected counts differ by at least one, so their floors differ).
    fn smallest_size(&self, vocab: usize) -> usize {
        let h: f64 = (1..=vocab).map(|k| weight(k, self.params.alpha)).sum();
        let last = self.params.top as usize + 1; // rank of the last asked word
        let gap = weight(last, self.params.alpha) - weight(last + 1, self.params.alpha);
        (h / gap).ceil() as usize + 1
    }

    /// The vocabulary: the noise word, then distinct coded words, ranked.
    fn vocabulary(&self, vocab: usize, coords: &Coordinates<'_>) -> Vec<String> {
        let mut rng = coords.rng(Stream::Content);
        let mut used = BTreeSet::new();
        let mut words = vec![NOISE.to_string()];
        while words.len() < vocab {
            let w: String = (0..WORD_LETTERS)
                .map(|_| char::from(b'a' + rng.below(26) as u8))
                .collect();
            if used.insert(w.clone()) {
                words.push(w);
            }
        }
        words
    }

    fn text(&self, vocab: &[String], n: usize, coords: &Coordinates<'_>) -> Vec<String> {
        self.order(n, vocab.len(), coords)
            .into_iter()
            .map(|i| vocab[i].clone())
            .collect()
    }

    /// The text of size `n` as vocabulary ranks (0-based), in text order.
    fn order(&self, n: usize, vocab: usize, coords: &Coordinates<'_>) -> Vec<usize> {
        let mut list = Vec::new();
        for (rank, c) in self.counts(n, vocab).into_iter().enumerate() {
            list.extend(std::iter::repeat_n(rank, c));
        }
        coords.rng(Stream::Placement).shuffle(&mut list);
        list
    }

    fn question(&self) -> (String, String) {
        let n = self.params.top;
        (
            format!("Which {n} coded words occur most often in the text above? Leave out the \"{NOISE}\" marks: they are not words."),
            format!("The {n} most frequent coded words are:"),
        )
    }

    /// The prompt tokens of the text `order` (vocabulary ranks) in `frame`, counted from the
    /// words' `word_tokens` ([`spaced_word`]), or `None` when a word has none.
    fn counted(
        &self,
        run: &Run,
        frame: &Frame,
        vocab: &[String],
        word_tokens: &[Option<ItemTokens>],
        order: &[usize],
    ) -> Result<Option<usize>, GenError> {
        let Some(tokens) = list_tokens(order.iter().map(|&i| word_tokens[i])) else {
            return Ok(None);
        };
        let words: Vec<&str> = order.iter().map(|&i| vocab[i].as_str()).collect();
        let fitted = render_joined_counted(&run.tokenizer, frame, &words, " ", tokens)?;
        Ok(Some(fitted.prompt_tokens))
    }

    fn render(&self, run: &Run, list: &[String]) -> Result<Fitted, GenError> {
        let (question, prefix) = self.question();
        let frame = run.frame(&vars([("question", &question)]), &prefix)?;
        render_facts(&run.tokenizer, &frame, &[list.join(" ")])
    }
}

/// One text-size search: the vocabulary and each word's count after a space.
struct Tries<'a> {
    fwe: &'a Fwe,
    run: &'a Run,
    frame: Frame,
    coords: &'a Coordinates<'a>,
    vocab: &'a [String],
    word_tokens: Vec<Option<ItemTokens>>,
}

impl ListLength for Tries<'_> {
    fn counted(&mut self, n: usize) -> Result<Option<usize>, GenError> {
        let order = self.fwe.order(n, self.vocab.len(), self.coords);
        let prompt =
            self.fwe
                .counted(self.run, &self.frame, self.vocab, &self.word_tokens, &order)?;
        Ok(prompt.map(|p| p + self.run.reserve as usize))
    }

    fn rendered(&mut self, n: usize) -> Result<usize, GenError> {
        let text = self.fwe.text(self.vocab, n, self.coords);
        Ok(self.fwe.render(self.run, &text)?.prompt_tokens + self.run.reserve as usize)
    }
}

impl Task for Fwe {
    fn name(&self) -> &'static str {
        NAME
    }

    fn variant(&self) -> String {
        format!("a{}_top{}", self.params.alpha, self.params.top).replace('.', "_")
    }

    fn params(&self) -> serde_json::Value {
        self.content_params()
    }

    /// RULER's frequent words: Zipf counts with alpha 2, the top 3 asked.
    fn ruler_task(&self, _: crate::tasks::RulerHaystack) -> Option<&'static str> {
        let p = &self.params;
        (p.alpha == 2.0 && p.top == 3).then_some(NAME)
    }

    fn uses_haystack(&self) -> bool {
        false
    }

    fn default_reserve(&self) -> u32 {
        MAX_NEW_TOKENS.max(10 * self.params.top)
    }

    fn example_vars(&self) -> Vars {
        vars([("question", "Which 3 coded words occur most often?")])
    }

    fn minimum_length(&self, run: &Run) -> Result<u64, GenError> {
        let params = canonical_json(&self.content_params());
        let coords = Coordinates::sizing(NAME, &params, run.seed);
        // The vocabulary grows with the budget, and the smallest size with it: estimate at a
        // small budget, then again at that estimate.
        let mut minimum = 0u64;
        for _ in 0..2 {
            let budget = minimum.saturating_sub(run.reserve) as usize;
            let vocab = self.vocabulary(self.vocab_size(budget), &coords);
            let n = self.smallest_size(vocab.len());
            let fitted = self.render(run, &self.text(&vocab, n, &coords))?;
            minimum =
                minimum.max((fitted.prompt_tokens as u64 * 11).div_ceil(10) + 16 + run.reserve);
        }
        Ok(minimum)
    }

    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
        let params = canonical_json(&self.content_params());
        let coords = run.coordinates(NAME, &params, cell);
        let budget = (cell.length as usize).saturating_sub(run.reserve as usize);
        let vocab = self.vocabulary(self.vocab_size(budget), &coords);
        let min = self.smallest_size(vocab.len());
        // Every word is at least one token: no more words than the length.
        let max = (cell.length as usize + 1).max(min);
        // Each try counts the text from its words' own counts (they are joined by spaces);
        // the text found is rendered and counted whole once more.
        let (question, answer_prefix) = self.question();
        let mut tries = Tries {
            fwe: self,
            run,
            frame: run.frame(&vars([("question", &question)]), &answer_prefix)?,
            coords: &coords,
            word_tokens: vocab
                .iter()
                .map(|w| spaced_word(&run.tokenizer, w))
                .collect::<Result<Vec<_>, _>>()?,
            vocab: &vocab,
        };
        let n = largest_list(min, max, cell.length as usize, &mut tries)?;
        let list = self.text(&vocab, n, &coords);
        let fitted = self.render(run, &list)?;
        let top = self.params.top as usize;
        let answers: Vec<String> = vocab[1..=top].to_vec();
        let mut p = self.content_params();
        p["size"] = json!(n);
        p["vocabulary"] = json!(vocab.len());
        p["words"] = json!(list);
        p["ignored"] = json!([NOISE]);
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::tasks::cwe::most_frequent;
    use crate::Tokenizer;

    fn run(tok: Tokenizer, seed: u64) -> Run {
        crate::tasks::plain_run(NAME, tok, seed, 50)
    }

    /// A text counted from its words' counts takes the prompt tokens its whole rendering does,
    /// for every size tried.
    #[test]
    fn counted_texts_measure_as_whole_renderings_do() {
        let mut d = crate::rng::Rng::from_seed_u64(4, Stream::Content);
        for seed in 0..8u64 {
            let mut run = run(
                [Tokenizer::O200k, Tokenizer::Cl100k][seed as usize % 2].clone(),
                seed,
            );
            run.reserve = 0;
            let fwe = FweParams::default().build().unwrap();
            let json = canonical_json(&fwe.content_params());
            let coords = Coordinates {
                task: NAME,
                params: &json,
                seed: seed.into(),
                length: 0,
                depth: None,
                sample: seed,
            };
            let vocab = fwe.vocabulary(5 + d.index(400), &coords);
            let (question, answer_prefix) = fwe.question();
            let frame = run
                .frame(&vars([("question", &question)]), &answer_prefix)
                .unwrap();
            let word_tokens: Vec<_> = vocab
                .iter()
                .map(|w| spaced_word(&run.tokenizer, w).unwrap())
                .collect();
            for _ in 0..5 {
                let n = fwe.smallest_size(vocab.len()) + d.index(20_000);
                let order = fwe.order(n, vocab.len(), &coords);
                let got = fwe.counted(&run, &frame, &vocab, &word_tokens, &order);
                let whole = fwe.render(&run, &fwe.text(&vocab, n, &coords)).unwrap();
                assert_eq!(
                    got.unwrap(),
                    Some(whole.prompt_tokens),
                    "seed {seed}, size {n}"
                );
            }
        }
    }

    #[test]
    fn answers_are_the_most_frequent_coded_words_over_many_seeds() {
        for seed in 0..10u64 {
            let tok =
                [Tokenizer::O200k, Tokenizer::Cl100k, Tokenizer::Chars][seed as usize % 3].clone();
            let run = run(tok, seed);
            let params = FweParams {
                alpha: [2.0, 1.5, 3.0][seed as usize % 3],
                top: 1 + (seed % 4) as u32,
            };
            let task = params.build().unwrap();
            let cell = Cell {
                length: 1200 + 700 * seed,
                depth: None,
                sample: seed,
                slot: seed,
            };
            let inst = task.generate(&run, &cell).unwrap();
            let p: serde_json::Value = serde_json::from_str(&inst.params).unwrap();
            let words: Vec<String> = serde_json::from_value(p["words"].clone()).unwrap();
            let ignored: Vec<String> = serde_json::from_value(p["ignored"].clone()).unwrap();
            assert_eq!(ignored, [NOISE]);
            assert!(words.iter().any(|w| w == NOISE));
            let mut got = inst.answers.clone();
            got.sort();
            assert_eq!(
                most_frequent(&words, &ignored, params.top as usize),
                Some(got),
                "seed {seed}"
            );
            assert_eq!(
                inst.length as usize,
                run.tokenizer.count(&inst.input).unwrap()
            );
            let filled = inst.prompt_tokens + 50;
            assert!(
                filled <= cell.length && filled + 24 >= cell.length,
                "{filled} {cell:?}"
            );
            assert!(inst.input.contains(&words.join(" ")));
        }
    }

    #[test]
    fn whole_exponents_are_exact() {
        assert_eq!(weight(4, 2.0), 1.0 / 16.0);
        assert_eq!(weight(3, 1.0), 1.0 / 3.0);
        let task = FweParams::default().build().unwrap();
        let c = task.counts(10_000, 80);
        assert!(c.windows(2).all(|w| w[0] >= w[1]));
        assert!(c[3] > c[4]);
    }

    #[test]
    fn bad_parameters_are_refused() {
        let e = FweParams { alpha: 0.5, top: 3 }.build().unwrap_err();
        assert_eq!(e.param, "alpha");
        let e = FweParams {
            alpha: f64::NAN,
            top: 3,
        }
        .build()
        .unwrap_err();
        assert_eq!(e.param, "alpha");
        assert_eq!(
            FweParams { alpha: 2.0, top: 0 }.build().unwrap_err().param,
            "top"
        );
    }
}
