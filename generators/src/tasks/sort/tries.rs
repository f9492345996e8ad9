//! sort's search for the longest list that fits: each try reuses what the tries before it
//! computed, so a search draws, orders and counts each item once.

use super::{ItemStream, Sort, SortOutput};
use crate::fit::lists::{list_tokens, spaced_word, splits_before_space_after, ItemTokens};
use crate::fit::render::{render_facts, render_joined_counted};
use crate::fit::search::{largest_list, ListLength};
use crate::{GenError, Run};

impl Sort {
    /// The size of the longest list (at most `max`) whose rendering and answer budget fit
    /// `total`, tried with [`Tries`], with its answer order and its frame.
    pub(super) fn fill(
        &self,
        run: &Run,
        stream: &mut ItemStream,
        max: usize,
        total: usize,
    ) -> Result<(usize, Vec<usize>, crate::Frame), GenError> {
        let mut tries = Tries::new(self, run)?;
        let mut search = Search {
            tries: &mut tries,
            stream,
        };
        let n = largest_list(1, max, total, &mut search)?;
        let n = n.min(stream.out.len());
        let order = tries.answer_order(stream, n);
        Ok((n, order, tries.frame))
    }
}

/// What the tries of one list-size search share: the answer order of the longest list drawn
/// (a shorter list's order is that order without the later items) and, for values, each
/// item's count, from which a list and its answer are counted without tokenizing them.
pub(super) struct Tries<'a> {
    sort: &'a Sort,
    run: &'a Run,
    frame: crate::Frame,
    /// Every item drawn, as (key flipped for descending order, index), in answer order.
    order: Vec<(u128, usize)>,
    item_tokens: Vec<Option<ItemTokens>>,
}

impl<'a> Tries<'a> {
    pub(super) fn new(sort: &'a Sort, run: &'a Run) -> Result<Self, GenError> {
        Ok(Tries {
            sort,
            run,
            frame: sort.frame(run, &sort.question())?,
            order: Vec::new(),
            item_tokens: Vec::new(),
        })
    }

    /// Whether the length tried never falls as the list grows: true for numbers listed and
    /// answered as values under an encoding that splits before a space after a digit. Each
    /// item then adds its own tokens to the list, and to the answer either the same or, when
    /// it comes first, its tokens alone while the item it displaces gains the space that the
    /// encoding reads as one token of its own.
    pub(super) fn never_falls(&self) -> bool {
        let sort = self.sort;
        !sort.params.words
            && sort.params.output == SortOutput::Values
            && ('0'..='9').all(|d| splits_before_space_after(&self.run.tokenizer, d))
    }

    /// The answer order of the stream's first `n` items (drawn already): by their keys
    /// (flipped for descending order), ties by index. Items drawn since the last call are
    /// sorted alone and merged in.
    pub(super) fn answer_order(&mut self, stream: &ItemStream, n: usize) -> Vec<usize> {
        let have = self.order.len();
        if have < stream.keys.len() {
            let descending = self.sort.params.descending;
            let mut new: Vec<(u128, usize)> = stream.keys[have..]
                .iter()
                .enumerate()
                .map(|(i, &k)| (if descending { u128::MAX - k } else { k }, have + i))
                .collect();
            new.sort_unstable();
            let old = std::mem::take(&mut self.order);
            self.order = Vec::with_capacity(old.len() + new.len());
            let (mut a, mut b) = (old.into_iter().peekable(), new.into_iter().peekable());
            while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
                let next = if x <= y { a.next() } else { b.next() };
                self.order.extend(next);
            }
            self.order.extend(a.chain(b));
        }
        self.order
            .iter()
            .map(|&(_, i)| i)
            .filter(|&i| i < n)
            .collect()
    }

    /// What the list of the stream's first `n` items and its answer budget take, counted
    /// from the items' own counts: for values under an encoding whose rule proves it.
    fn counted(&mut self, stream: &mut ItemStream, n: usize) -> Result<Option<usize>, GenError> {
        let (sort, run, tok) = (self.sort, self.run, &self.run.tokenizer);
        sort.extend(stream, n);
        let n = n.min(stream.out.len());
        if sort.params.output != SortOutput::Values {
            return Ok(None);
        }
        let idx = self.answer_order(stream, n);
        for item in &stream.out[self.item_tokens.len()..] {
            self.item_tokens.push(spaced_word(tok, item)?);
        }
        let list = list_tokens(self.item_tokens[..n].iter().copied());
        let answer = list_tokens(idx.iter().map(|&i| self.item_tokens[i]));
        let (Some(list), Some(answer)) = (list, answer) else {
            return Ok(None);
        };
        let items = &stream.out[..n];
        let fitted = render_joined_counted(tok, &self.frame, items, " ", list)?;
        Ok(Some(
            fitted.prompt_tokens + run.answer_budget(answer) as usize,
        ))
    }

    /// [`Tries::counted`], rendered and counted whole.
    fn rendered(&mut self, stream: &mut ItemStream, n: usize) -> Result<usize, GenError> {
        let (sort, run, tok) = (self.sort, self.run, &self.run.tokenizer);
        sort.extend(stream, n);
        let n = n.min(stream.out.len());
        let idx = self.answer_order(stream, n);
        let (facts, _, target, ..) = sort.render_sorted(&stream.out[..n], &idx);
        let fitted = render_facts(tok, &self.frame, &facts)?;
        Ok(fitted.prompt_tokens + run.answer_tokens(&target)? as usize)
    }

    /// What one try of the search measures: counted where proven, else whole.
    #[cfg(test)]
    pub(super) fn length(&mut self, stream: &mut ItemStream, n: usize) -> Result<usize, GenError> {
        match self.counted(stream, n)? {
            Some(tokens) => Ok(tokens),
            None => self.rendered(stream, n),
        }
    }
}

/// A search over one stream's list sizes.
struct Search<'s, 'a> {
    tries: &'s mut Tries<'a>,
    stream: &'s mut ItemStream,
}

impl ListLength for Search<'_, '_> {
    fn counted(&mut self, n: usize) -> Result<Option<usize>, GenError> {
        self.tries.counted(self.stream, n)
    }

    fn rendered(&mut self, n: usize) -> Result<usize, GenError> {
        self.tries.rendered(self.stream, n)
    }

    fn never_falls(&self) -> bool {
        self.tries.never_falls()
    }
}
