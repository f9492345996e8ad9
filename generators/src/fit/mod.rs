//! Length fitting: fill a token budget with haystack units and needles, exactly.
//!
//! Each unit is tokenized once (by the haystack), the number of whole units that fits is read
//! off prefix sums, a partial sentence tops up the last few tokens word by word, and the final
//! prompt is counted once, reusing each whole unit's count where the tokenizer proves counts
//! add (`Tokenizer::count_assembled`). BPE counts are not additive at every join, so when that
//! count misses the window the goal is corrected by the measured error and the prompt counted
//! again; this converges in one or two extra counts.

pub mod lists;
pub mod render;
pub mod search;

use crate::haystack::{Unit, UnitStream};
use crate::template::Frame;
use crate::tokenizer::{Known, Tokenizer};
use crate::GenError;

/// How far below the budget a fitted prompt may fall: max(16 tokens, 0.2 % of the budget).
pub fn tolerance(budget: usize) -> usize {
    (budget / 500).max(16)
}

/// A needle to place, with the depth (percent of the context) it should start at.
#[derive(Debug, Clone)]
pub struct NeedleSpec {
    /// The needle sentence, without separator.
    pub text: String,
    /// Requested depth in percent, 0–100.
    pub depth: f64,
}

/// A fitted prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// The complete prompt.
    pub input: String,
    /// Tokens of `input`, from one full count.
    pub length: usize,
    /// Tokens the model reads: `input` with the answer prefix (and chat template) around it;
    /// this is what fits the budget. Equal to `length` when the model reads `input` alone.
    pub prompt_tokens: usize,
    /// Token offset in `input` of each needle, in the order given.
    pub needle_offsets: Vec<u64>,
    /// Actual depth of each needle in percent: tokens of context before it ÷ context tokens
    /// other than its own.
    pub needle_depths: Vec<f64>,
    /// Token offset where the context starts.
    pub context_offset: usize,
    /// Tokens of the context, needles included.
    pub context_tokens: usize,
}

impl Fitted {
    /// The prompt with its needle offsets and depths dropped unless `keep`: for contexts whose
    /// parts are not needles (a plain sort list, written-out arithmetic, a sequence).
    pub fn keep_needles(mut self, keep: bool) -> Fitted {
        if !keep {
            self.needle_offsets.clear();
            self.needle_depths.clear();
        }
        self
    }
}

const MAX_ATTEMPTS: usize = 12;

struct Tail<'a> {
    unit: Unit<'a>,
    /// (byte end of the first k words, their estimated tokens), k = 1..
    cuts: Vec<(usize, usize)>,
}

impl<'a> Tail<'a> {
    fn new(unit: Unit<'a>, tok: &Tokenizer) -> Result<Self, GenError> {
        let text = unit.text.as_ref();
        let mut cuts = Vec::new();
        let mut total = 0usize;
        let mut word_start = 0usize;
        let bytes = text.as_bytes();
        let mut i = unit.sep_len;
        // Word ends: a non-space followed by a space or the end of the text.
        while i < bytes.len() {
            let c = text[i..].chars().next().unwrap_or(' ');
            let next = i + c.len_utf8();
            let at_end = next >= bytes.len() || text[next..].starts_with(char::is_whitespace);
            if !c.is_whitespace() && at_end {
                total += tok.count(&text[word_start..next])?;
                cuts.push((next, total));
                word_start = next;
            }
            i = next;
        }
        Ok(Tail { unit, cuts })
    }

    /// The longest word prefix whose estimate fits `room` tokens: (bytes, tokens).
    fn take(&self, room: usize) -> (usize, usize) {
        let k = self.cuts.partition_point(|&(_, t)| t <= room);
        if k == 0 {
            (0, 0)
        } else {
            self.cuts[k - 1]
        }
    }
}

/// Constraints on where needles may go, beyond their depths.
#[derive(Debug, Clone, Copy, Default)]
pub struct Placement {
    /// Keep needles in the order given (for stories, whose facts must stay in order even where
    /// two share a gap). Needles should then be given with non-decreasing depths.
    pub in_order: bool,
    /// Keep every needle's measured depth inside this window (percent).
    pub window: Option<(f64, f64)>,
}

/// Fill `budget` tokens: `frame.prefix`, then haystack units with `needles` at the boundaries
/// nearest their depths, then `frame.suffix`.
pub fn fit(
    tok: &Tokenizer,
    frame: &Frame,
    needles: &[NeedleSpec],
    stream: &mut UnitStream<'_>,
    budget: usize,
) -> Result<Fitted, GenError> {
    fit_placed(tok, frame, needles, stream, budget, Placement::default())
}

/// [`fit`] with placement constraints.
pub fn fit_placed(
    tok: &Tokenizer,
    frame: &Frame,
    needles: &[NeedleSpec],
    stream: &mut UnitStream<'_>,
    budget: usize,
    placement: Placement,
) -> Result<Fitted, GenError> {
    let tol = tolerance(budget);
    let fixed = frame.fixed_tokens(tok)?;
    let own_tokens: Vec<usize> = needles
        .iter()
        .map(|n| tok.count(&format!(" {}", n.text)))
        .collect::<Result<_, _>>()?;
    let needle_tokens: usize = own_tokens.iter().sum();
    // Tokens of the needles that will sit before each needle (those with smaller requested
    // depths), so depths can be aimed at as they are measured: over the context, needles
    // included, except the needle itself.
    let before_tokens: Vec<usize> = needles
        .iter()
        .enumerate()
        .map(|(i, n)| {
            needles
                .iter()
                .enumerate()
                .filter(|(j, m)| m.depth < n.depth || (m.depth == n.depth && *j < i))
                .map(|(j, _)| own_tokens[j])
                .sum()
        })
        .collect();
    let minimum = fixed + needle_tokens;
    if minimum > budget {
        return Err(GenError::TooShort {
            budget,
            needed: minimum,
        });
    }
    // Aim a few tokens inside the window [budget - tol, budget], scaled so the joined text
    // lands there at the first count; small boundary effects either way then still fit.
    let aim = budget - (tol / 2).min(8);
    let mut goal = (aim.saturating_sub(minimum) as f64 / stream.join_ratio()).floor() as i64;

    let mut units: Vec<Unit<'_>> = Vec::new();
    let mut sums: Vec<usize> = vec![0];
    let separate_tail = match stream.tail_unit()? {
        Some(unit) => Some(Tail::new(unit, tok)?),
        None => None,
    };
    let mut unit_tails: Vec<Option<Tail<'_>>> = Vec::new();
    let mut best: Option<Fitted> = None;

    for attempt in 0..MAX_ATTEMPTS {
        let goal_u = goal.max(0) as usize;
        while *sums.last().unwrap_or(&0) <= goal_u {
            let u = stream.next_unit()?;
            sums.push(sums.last().unwrap_or(&0) + u.tokens);
            units.push(u);
            unit_tails.push(None);
        }
        // Whole units that fit, then the partial top-up.
        let n = sums.partition_point(|&s| s <= goal_u) - 1;
        let room = goal_u - sums[n];
        let tail: &Tail<'_> = match &separate_tail {
            Some(t) => t,
            None => {
                if unit_tails[n].is_none() {
                    unit_tails[n] = Some(Tail::new(units[n].clone(), tok)?);
                }
                unit_tails[n].as_ref().unwrap_or_else(|| unreachable!())
            }
        };
        let (tail_bytes, tail_tokens) = tail.take(room);
        let hay_total = sums[n] + tail_tokens;

        // Boundary positions (haystack tokens before them): after 0..n whole units, and after
        // the partial tail when there is one.
        let mut boundary_of = Vec::with_capacity(needles.len());
        for (i, needle) in needles.iter().enumerate() {
            let context = (hay_total + needle_tokens - own_tokens[i]) as f64;
            let want = (needle.depth.clamp(0.0, 100.0) / 100.0 * context - before_tokens[i] as f64)
                .clamp(0.0, hay_total as f64);
            let mut best_b = 0usize;
            let mut best_d = f64::INFINITY;
            // Binary search the nearest prefix sum, then compare neighbours.
            let k = sums[..=n].partition_point(|&s| (s as f64) < want);
            for b in [k.saturating_sub(1), k.min(n)] {
                let d = (sums[b] as f64 - want).abs();
                if d < best_d {
                    best_d = d;
                    best_b = b;
                }
            }
            if tail_bytes > 0 && (hay_total as f64 - want).abs() < best_d {
                best_b = n + 1;
            }
            if let Some((lo, hi)) = placement.window {
                // The whole-unit boundaries whose measured depth lies inside the window, with
                // a few tokens of margin for joins: clamp into them.
                let margin = 4.0;
                let first = (lo / 100.0 * context - before_tokens[i] as f64 + margin).max(0.0);
                let last = hi / 100.0 * context - before_tokens[i] as f64 - margin;
                let b_lo = sums[..=n].partition_point(|&s| (s as f64) < first);
                let b_hi = sums[..=n].partition_point(|&s| (s as f64) <= last);
                if b_lo < b_hi {
                    best_b = best_b.clamp(b_lo, b_hi - 1);
                }
            }
            if placement.in_order {
                if let Some(&prev) = boundary_of.last() {
                    best_b = best_b.max(prev);
                }
            }
            boundary_of.push(best_b);
        }

        // Render.
        let mut input = String::with_capacity(
            frame.prefix.len() + frame.suffix.len() + hay_total * 5 + needles.len() * 80,
        );
        input.push_str(&frame.prefix);
        let ctx_start = input.len();
        let mut needle_marks = vec![(0usize, 0usize); needles.len()];
        let mut order: Vec<usize> = (0..needles.len()).collect();
        order.sort_by_key(|&i| (boundary_of[i], i));
        let mut next_needle = 0usize;
        // Units placed whole, with their separators, keep their counts.
        let mut known: Vec<Known> = Vec::with_capacity(n);
        let push = |input: &mut String, text: &str, sep_len: usize| {
            if input.len() == ctx_start {
                input.push_str(&text[sep_len..]);
            } else {
                input.push_str(text);
            }
        };
        #[allow(clippy::needless_range_loop)] // b also indexes boundaries past the units
        for b in 0..=n + 1 {
            while next_needle < order.len() && boundary_of[order[next_needle]] == b {
                let i = order[next_needle];
                if input.len() > ctx_start {
                    input.push(' ');
                }
                let start = input.len();
                input.push_str(&needles[i].text);
                needle_marks[i] = (start, input.len());
                next_needle += 1;
            }
            if b < n {
                let start = input.len();
                push(&mut input, &units[b].text, units[b].sep_len);
                if units[b].alone && input.len() - start == units[b].text.len() {
                    known.push(Known {
                        start,
                        end: input.len(),
                        tokens: units[b].tokens,
                    });
                }
            } else if b == n && tail_bytes > 0 {
                push(&mut input, &tail.unit.text[..tail_bytes], tail.unit.sep_len);
            }
        }
        let ctx_end = input.len();
        input.push_str(&frame.suffix);

        let fitted = measure(
            tok,
            frame,
            input,
            (ctx_start, ctx_end),
            &needle_marks,
            &known,
        )?;
        let length = fitted.prompt_tokens;
        if length <= budget && length + tol >= budget {
            return Ok(fitted);
        }
        if length <= budget && best.as_ref().is_none_or(|b| b.prompt_tokens < length) {
            best = Some(fitted);
        }
        // Correct the goal by the measured error; past the first tries, lean low so an
        // overshoot cannot repeat.
        goal += aim as i64 - length as i64;
        if length > budget && attempt >= 2 {
            goal -= attempt as i64;
        }
        if goal < 0 {
            if length <= budget {
                break;
            }
            if goal_u == 0 {
                return Err(GenError::TooShort {
                    budget,
                    needed: length,
                });
            }
            goal = 0;
        }
    }
    best.ok_or(GenError::TooShort {
        budget,
        needed: budget + 1,
    })
}

/// Count `input` (reusing the counts of the `known` ranges) and turn byte spans into token
/// offsets and depths; count what the model reads around it when that is more than `input`.
pub(crate) fn measure(
    tok: &Tokenizer,
    frame: &Frame,
    input: String,
    (ctx_start, ctx_end): (usize, usize),
    needle_marks: &[(usize, usize)],
    known: &[Known],
) -> Result<Fitted, GenError> {
    let mut sorted: Vec<usize> = Vec::with_capacity(2 + 2 * needle_marks.len());
    sorted.push(ctx_start);
    sorted.push(ctx_end);
    for &(s, e) in needle_marks {
        sorted.push(s);
        sorted.push(e);
    }
    sorted.sort_unstable();
    let (length, offs) = tok.count_assembled(&input, known, &sorted)?;
    let offset_of = |byte: usize| offs[sorted.partition_point(|&m| m < byte)];
    let context_offset = offset_of(ctx_start);
    let context_tokens = offset_of(ctx_end).saturating_sub(context_offset);
    let mut needle_offsets = Vec::with_capacity(needle_marks.len());
    let mut needle_depths = Vec::with_capacity(needle_marks.len());
    for &(s, e) in needle_marks {
        let start = offset_of(s);
        let own = offset_of(e).saturating_sub(start);
        let others = context_tokens.saturating_sub(own);
        let before = start.saturating_sub(context_offset);
        needle_offsets.push(start as u64);
        needle_depths.push(if others == 0 {
            0.0
        } else {
            (before as f64 / others as f64 * 100.0).min(100.0)
        });
    }
    let prompt_tokens = frame.model_tokens_around(tok, &input, length)?;
    Ok(Fitted {
        input,
        length,
        prompt_tokens,
        needle_offsets,
        needle_depths,
        context_offset,
        context_tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::haystack::{Corpus, Haystack, HaystackKind};
    use crate::rng::{Rng, Stream};
    use std::sync::Arc;

    pub(super) fn frame() -> Frame {
        Frame {
            prefix: "Read this:\n<doc>\n".into(),
            suffix: "\n</doc>\nWhat is the code?".into(),
            answer_prefix: String::new(),
            reader: Default::default(),
        }
    }

    #[test]
    fn generated_haystack_fits_every_budget_and_tokenizer() {
        for tok in [
            Tokenizer::O200k,
            Tokenizer::Cl100k,
            Tokenizer::Gpt2,
            Tokenizer::Words,
            Tokenizer::Chars,
        ] {
            let hay = Haystack::prepare(HaystackKind::Generated, None, &tok).unwrap();
            for (i, budget) in [200usize, 1000, 3968, 9000].into_iter().enumerate() {
                for depth in [0.0, 33.0, 50.0, 100.0] {
                    let rng = Rng::from_seed_u64(i as u64 + 10, Stream::Haystack);
                    let mut stream = hay.stream(&tok, rng, None).unwrap();
                    let needles = [NeedleSpec {
                        text: "The access code for amber-otter is 4417302.".into(),
                        depth,
                    }];
                    let f = fit(&tok, &frame(), &needles, &mut stream, budget).unwrap();
                    assert_eq!(f.length, tok.count(&f.input).unwrap());
                    assert!(
                        f.length <= budget && f.length + tolerance(budget) >= budget,
                        "{} budget {budget}: {}",
                        tok.id(),
                        f.length
                    );
                    let slack = if budget >= 3000 { 3.0 } else { 50.0 };
                    assert!(
                        (f.needle_depths[0] - depth).abs() <= slack,
                        "{} budget {budget} depth {depth}: {}",
                        tok.id(),
                        f.needle_depths[0]
                    );
                    assert!(
                        f.input.starts_with(&frame().prefix) && f.input.ends_with(&frame().suffix)
                    );
                }
            }
        }
    }

    #[test]
    fn offsets_point_at_the_needle() {
        let tok = Tokenizer::O200k;
        let hay = Haystack::prepare(HaystackKind::Generated, None, &tok).unwrap();
        let mut stream = hay
            .stream(&tok, Rng::from_seed_u64(1, Stream::Haystack), None)
            .unwrap();
        let needles = [
            NeedleSpec {
                text: "First needle 1111111.".into(),
                depth: 25.0,
            },
            NeedleSpec {
                text: "Second needle 2222222.".into(),
                depth: 75.0,
            },
        ];
        let f = fit(&tok, &frame(), &needles, &mut stream, 2000).unwrap();
        let ids = bpe_openai::o200k_base().encode(f.input.as_str());
        for (needle, &off) in needles.iter().zip(&f.needle_offsets) {
            let off = off as usize;
            let window = bpe_openai::o200k_base().decode(&ids[off..off + 4]).unwrap();
            let first_word = needle.text.split(' ').next().unwrap();
            assert!(window.trim_start().starts_with(first_word), "{window:?}");
        }
        assert!(f.needle_offsets[0] < f.needle_offsets[1]);
    }

    #[test]
    fn tiny_budget_is_too_short() {
        let tok = Tokenizer::O200k;
        let hay = Haystack::prepare(HaystackKind::Generated, None, &tok).unwrap();
        let mut stream = hay
            .stream(&tok, Rng::from_seed_u64(1, Stream::Haystack), None)
            .unwrap();
        let e = fit(&tok, &frame(), &[], &mut stream, 5).unwrap_err();
        assert!(matches!(e, GenError::TooShort { .. }), "{e}");
    }

    #[test]
    fn corpus_with_long_sentences_still_fits() {
        let long: String = (0..400)
            .map(|i| format!("word{} ", i % 37))
            .collect::<String>()
            + ".";
        let docs = vec![format!("{long} Short one. {long}")];
        let corpus = Arc::new(Corpus::from_documents("long", &docs).unwrap());
        let tok = Tokenizer::Cl100k;
        let hay = Haystack::prepare(HaystackKind::Corpus, Some(corpus), &tok).unwrap();
        for budget in [300usize, 2500] {
            let mut stream = hay
                .stream(&tok, Rng::from_seed_u64(4, Stream::Haystack), None)
                .unwrap();
            let f = fit(&tok, &frame(), &[], &mut stream, budget).unwrap();
            assert!(
                f.length <= budget && f.length + tolerance(budget) >= budget,
                "{}",
                f.length
            );
        }
    }
}
