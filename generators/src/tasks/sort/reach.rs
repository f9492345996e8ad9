//! How long a length-filled list can get, for refusing lengths no list reaches before any
//! work, cheaply where a bound proves the lengths asked for within reach.

use super::{Sort, SortOutput, MAX_ITEMS};
use crate::fit::lists::splits_before_space_after;
use crate::fit::render::render_facts;
use crate::fit::tolerance;
use crate::rng::Coordinates;
use crate::{canonical_json, GenError, Run};

impl Sort {
    /// The item space in words, for refusals.
    pub(super) fn space_name(&self) -> String {
        match (self.params.words, self.params.digits) {
            (true, _) => "the words of the word list".to_string(),
            (false, (1, 1)) => "the numbers of 1 digit".to_string(),
            (false, (a, b)) if a == b => format!("the numbers of {a} digits"),
            (false, (a, b)) => format!("the numbers of {a} to {b} digits"),
        }
    }

    /// At least how many tokens a list of `n` items and its answer budget fill, known without
    /// drawing them where the tokenizer proves it: values joined by spaces, under an encoding
    /// that splits before a space after any item's last character, read at least a token per
    /// item, in the prompt and in the answer alike.
    pub(super) fn fills_at_least(&self, run: &Run, n: usize) -> Option<usize> {
        if self.params.output != SortOutput::Values {
            return None;
        }
        let tok = &run.tokenizer;
        let splits = |last: Option<char>| last.is_some_and(|c| splits_before_space_after(tok, c));
        let proven = if self.params.words {
            self.vocab.iter().all(|w| splits(w.chars().next_back()))
        } else {
            ('0'..='9').all(|d| splits(Some(d)))
        };
        proven.then(|| n + run.answer_budget(n) as usize)
    }

    /// What gives more distinct items, for refusals.
    pub(super) fn remedy(&self) -> &'static str {
        if self.params.words {
            "allow duplicates for more"
        } else {
            "allow duplicates, or widen digits, for more"
        }
    }

    /// [`Task::maximum_length`](crate::Task::maximum_length) for sort: lists of distinct items
    /// run out, and even duplicates stop at [`MAX_ITEMS`].
    pub(super) fn longest_length(
        &self,
        run: &Run,
        wanted: u64,
    ) -> Result<Option<(u64, String)>, GenError> {
        if self.params.hidden || self.params.items.is_some() {
            return Ok(None); // a haystack fills any length; a fixed list has its own
        }
        let n = self.max_items();
        // Every distinct item is the same set in any instance, so it fills the same length;
        // a list of MAX_ITEMS random items varies a little between instances: keep 1 % back.
        let every = !self.params.duplicates && self.distinct() <= MAX_ITEMS as u128;
        let keep = |full: usize| if every { full } else { full - full / 100 };
        // Drawing and counting the longest list (100 000 items) takes longer than a run of
        // many 32k rows: lengths that a bound proves within reach need not wait for it.
        if let Some(least) = self.fills_at_least(run, n) {
            if wanted <= keep(least) as u64 {
                // The frame is still rendered with the real question, so that a template that
                // fails on it is refused up front, as the full check refused it.
                self.frame(run, &self.question())?;
                return Ok(None);
            }
        }
        let params = canonical_json(&self.content_params());
        let coords = Coordinates::sizing(super::NAME, &params, run.seed);
        let items = self.items(n, &coords);
        let (facts, question, target, ..) = self.render_parts(&items);
        let frame = self.frame(run, &question)?;
        // What the model reads and its answer budget, as every row is measured.
        let full = render_facts(&run.tokenizer, &frame, &facts)?.prompt_tokens
            + run.answer_tokens(&target)? as usize;
        let reach = keep(full);
        // The longest budget whose tolerance window still holds `reach` tokens.
        let mut budget = reach;
        while budget + 1 - tolerance(budget + 1) <= reach {
            budget += 1;
        }
        let why = if every {
            format!(
                "all {n} distinct items, every one of {} (no duplicates), fill {full} tokens ({})",
                self.space_name(),
                self.remedy()
            )
        } else {
            format!("the longest list, {n} items, fills about {reach} tokens")
        };
        Ok(Some((budget as u64, why)))
    }
}
