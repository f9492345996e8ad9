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

use crate::haystack::sentences::CLOSERS;
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

/// Further tries bisecting the goal, for texts whose counts jump about as units are added
/// (pieces that merge into one word at their joins).
const MAX_BISECTIONS: usize = 24;

/// Units per sentence end below which a text counts as having none (see the fit's boundaries).
const SPARSE_SENTENCE_ENDS: usize = 16;

/// Bytes of a run without spaces after which the partial top-up may cut inside it.
const LONG_RUN_BYTES: usize = 16;

/// Characters that belong to the character before them (combining marks, variation selectors,
/// emoji modifiers and tags): a cut before one would split what a reader sees as one letter.
fn extends(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F | 0x0483..=0x0489 | 0x0591..=0x05BD | 0x0610..=0x061A | 0x064B..=0x065F
        | 0x0670 | 0x06D6..=0x06DC | 0x06DF..=0x06E4 | 0x0900..=0x0903 | 0x093A..=0x094F
        | 0x0951..=0x0957 | 0x0962..=0x0963 | 0x0981..=0x0983 | 0x09BC..=0x09D7
        | 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF
        | 0x200C..=0x200D | 0x20D0..=0x20FF | 0x302A..=0x302F | 0x3099..=0x309A
        | 0xFE00..=0xFE0F | 0xFE20..=0xFE2F | 0x1F3FB..=0x1F3FF | 0xE0020..=0xE007F
        | 0xE0100..=0xE01EF)
}

/// A zero-width joiner binds the characters on both sides (emoji sequences).
fn joins(c: char) -> bool {
    c == '\u{200D}'
}

/// Whether a needle may stand after this unit: its text ends a sentence (a terminator, then
/// perhaps closing quotes or brackets).
fn closes_sentence(text: &str) -> bool {
    let trimmed = text
        .trim_end()
        .trim_end_matches(|c| CLOSERS.contains(&c) || c == '*');
    trimmed.ends_with([
        '.', '!', '?', '。', '！', '？', '…', '‼', '⁇', '⁈', '⁉', '؟', '۔', '।', '॥', '።',
    ])
}

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
        let mut i = unit.sep_len.min(text.len());
        // Cuts at word ends, and inside a long run without spaces (a script written without
        // them, emoji, a long token) at every character that does not belong to the one before
        // it, so a unit of hundreds of tokens can still be taken in part and the fill reaches
        // its window in any script. Inside such a run, pieces counted alone overstate (a
        // prefix space, a broken merge): the prefix so far is counted whole instead.
        while i < text.len() {
            let run_len = text[i..]
                .find(char::is_whitespace)
                .unwrap_or(text.len() - i);
            if run_len == 0 {
                i += text[i..].chars().next().map_or(1, char::len_utf8);
                continue;
            }
            let run_end = i + run_len;
            if run_len < LONG_RUN_BYTES {
                total += tok.count(&text[word_start..run_end])?;
                cuts.push((run_end, total));
            } else {
                let mut prev: Option<char> = None;
                for (k, c) in text[i..run_end].char_indices() {
                    let at = i + k;
                    if k > 0 && !extends(c) && !prev.is_some_and(joins) {
                        total = total.max(tok.count(&text[..at])?);
                        cuts.push((at, total));
                    }
                    prev = Some(c);
                }
                total = total.max(tok.count(&text[..run_end])?);
                cuts.push((run_end, total));
            }
            word_start = run_end;
            i = run_end;
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

    // The largest goal seen to fit the budget and the smallest seen to exceed it: when
    // corrections alone do not land in the window, the goal is bisected between them.
    let (mut under, mut over): (Option<usize>, Option<usize>) = (None, None);
    for attempt in 0..MAX_ATTEMPTS + MAX_BISECTIONS {
        if attempt >= MAX_ATTEMPTS {
            match (under, over) {
                (Some(lo), Some(hi)) if hi > lo + 1 => goal = ((lo + hi) / 2) as i64,
                _ => break,
            }
        }
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

        // The boundaries a needle may take, with the haystack tokens before each: the context's
        // start, after a unit that ends a sentence, before a unit that opens a line, and the
        // end. The partial tail is set before the last whole unit, so no needle follows a cut
        // sentence, and the context ends on a whole unit. A text with almost no sentence ends
        // (fewer than one in [`SPARSE_SENTENCE_ENDS`] units: a script written without
        // terminators, one long line) offers every unit boundary, so depths still spread.
        let tail_at = n.saturating_sub(1);
        let pos_of = |b: usize| if b == n { hay_total } else { sums[b] };
        let mut boundaries: Vec<usize> = (0..=n)
            .filter(|&b| {
                b == 0
                    || (n > 0 && closes_sentence(&units[b - 1].text))
                    || (b < n && units[b].text[..units[b].sep_len].contains('\n'))
            })
            .collect();
        if n == 0 {
            boundaries = vec![0];
        } else if n >= SPARSE_SENTENCE_ENDS && (boundaries.len() - 1) * SPARSE_SENTENCE_ENDS < n {
            boundaries = (0..=n).collect();
        }
        let positions: Vec<usize> = boundaries.iter().map(|&b| pos_of(b)).collect();
        let mut boundary_of = Vec::with_capacity(needles.len());
        for (i, needle) in needles.iter().enumerate() {
            let context = (hay_total + needle_tokens - own_tokens[i]) as f64;
            let want = (needle.depth.clamp(0.0, 100.0) / 100.0 * context - before_tokens[i] as f64)
                .clamp(0.0, hay_total as f64);
            // Binary search the nearest position, then compare neighbours.
            let k = positions.partition_point(|&s| (s as f64) < want);
            let mut best_k = k.min(positions.len() - 1);
            if k > 0
                && (positions[k - 1] as f64 - want).abs() <= (positions[best_k] as f64 - want).abs()
            {
                best_k = k - 1;
            }
            if let Some((lo, hi)) = placement.window {
                // The boundaries whose measured depth lies inside the window, with a few tokens
                // of margin for joins: clamp into them.
                let margin = 4.0;
                let first = (lo / 100.0 * context - before_tokens[i] as f64 + margin).max(0.0);
                let last = hi / 100.0 * context - before_tokens[i] as f64 - margin;
                let k_lo = positions.partition_point(|&s| (s as f64) < first);
                let k_hi = positions.partition_point(|&s| (s as f64) <= last);
                if k_lo < k_hi {
                    best_k = best_k.clamp(k_lo, k_hi - 1);
                }
            }
            if placement.in_order {
                if let Some(&prev) = boundary_of.last() {
                    best_k = best_k.max(prev);
                }
            }
            boundary_of.push(best_k);
        }
        let boundary_of: Vec<usize> = boundary_of.into_iter().map(|k| boundaries[k]).collect();

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
        #[allow(clippy::needless_range_loop)] // b also names the boundary after the last unit
        for b in 0..=n {
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
            if b == tail_at && tail_bytes > 0 {
                push(&mut input, &tail.unit.text[..tail_bytes], tail.unit.sep_len);
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
        if length <= budget {
            under = Some(under.map_or(goal_u, |u| u.max(goal_u)));
        } else {
            over = Some(over.map_or(goal_u, |o| o.min(goal_u)));
        }
        if length <= budget && best.as_ref().is_none_or(|b| b.prompt_tokens < length) {
            best = Some(fitted);
        }
        // Correct the goal by the measured error; past the first tries, lean low so an
        // overshoot cannot repeat.
        // Where units merge at their joins (pieces of a word cut apart, a script without
        // spaces under a word count), counts summed overstate the text by a large factor: the
        // error is then scaled by it, or the fill would creep up a little at each try.
        let summed = goal_u.max(1) as f64;
        let measured = length.saturating_sub(minimum).max(1) as f64;
        let scale = summed / measured;
        if scale > 1.5 {
            goal += ((aim as f64 - length as f64) * scale.min(1e6)).round() as i64;
        } else {
            goal += aim as i64 - length as i64;
        }
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
                    // A context shorter than one whole sentence has no sentence end for the
                    // needle to follow: it opens the context.
                    let context =
                        &f.input[frame().prefix.len()..f.input.len() - frame().suffix.len()];
                    let whole = context.replace(&needles[0].text, "");
                    let expected = if whole.contains(". ") || whole.trim_end().ends_with('.') {
                        depth
                    } else {
                        0.0
                    };
                    assert!(
                        (f.needle_depths[0] - expected).abs() <= slack,
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

    /// Whether the text before byte `at` ends a sentence or a line (or the context starts).
    fn after_sentence_end(input: &str, at: usize, ctx_start: usize) -> bool {
        let before = &input[ctx_start..at];
        let trimmed = before.trim_end_matches([' ']);
        trimmed.is_empty() || trimmed.ends_with('\n') || closes_sentence(trimmed)
    }

    #[test]
    fn needles_follow_sentence_ends_at_every_depth_and_tokenizer() {
        // Drawn budgets, depths (100 and 0 often), needle counts and haystacks.
        let mut rng = Rng::from_seed_u64(77, Stream::Placement);
        let docs: Vec<String> = vec![
            "The mill stood by the river. Its wheel turned all day! Did the miller sleep? \
             He did, at night.\n\nA new paragraph opens here. It has two sentences."
                .into(),
            "Short one. Another short one. And a third, longer sentence with a comma, and more."
                .into(),
        ];
        let corpus = Arc::new(Corpus::from_documents("mill", &docs).unwrap());
        for case in 0..60 {
            let tok = [Tokenizer::O200k, Tokenizer::Cl100k, Tokenizer::Gpt2][case % 3].clone();
            let (kind, source) = match (case / 3) % 3 {
                0 => (HaystackKind::Generated, None),
                1 => (HaystackKind::Noise, None),
                _ => (HaystackKind::Corpus, Some(corpus.clone())),
            };
            let label = format!("{kind:?}");
            let hay = Haystack::prepare(kind, source, &tok).unwrap();
            let budget = 300 + rng.below(6000) as usize;
            let count = 1 + rng.below(4) as usize;
            let needles: Vec<NeedleSpec> = (0..count)
                .map(|k| NeedleSpec {
                    text: format!(
                        "Marker {case}-{k} holds the number {}.",
                        1000 + rng.below(9000)
                    ),
                    depth: match rng.below(4) {
                        0 => 100.0,
                        1 => 0.0,
                        _ => 100.0 * rng.unit_f64(),
                    },
                })
                .collect();
            let mut stream = hay
                .stream(
                    &tok,
                    Rng::from_seed_u64(case as u64, Stream::Haystack),
                    None,
                )
                .unwrap();
            let f = fit(&tok, &frame(), &needles, &mut stream, budget).unwrap();
            let ctx_start = frame().prefix.len();
            for n in &needles {
                let at = f.input.find(&n.text).unwrap();
                assert!(
                    after_sentence_end(&f.input, at, ctx_start),
                    "{label} {} budget {budget} depth {}: {:?}",
                    tok.id(),
                    n.depth,
                    &f.input[at.saturating_sub(80)..at]
                );
            }
            assert!(f.length <= budget && f.length + tolerance(budget) >= budget);
        }
    }

    #[test]
    fn a_script_without_spaces_is_topped_up_inside_its_pieces() {
        // One long line of CJK without marks: pieces of hundreds of tokens, cut by the tail.
        let text: String =
            "山川水火木金土日月星雲雨風花草竹石田村町道橋海空光音色心手足目耳口人子女男"
                .chars()
                .cycle()
                .take(20_000)
                .collect();
        let corpus = Arc::new(Corpus::from_documents("cjk", &[text]).unwrap());
        for tok in [Tokenizer::Gpt2, Tokenizer::O200k, Tokenizer::Chars] {
            let hay = Haystack::prepare(HaystackKind::Corpus, Some(corpus.clone()), &tok).unwrap();
            for budget in [700usize, 2048, 5000] {
                let mut stream = hay
                    .stream(&tok, Rng::from_seed_u64(3, Stream::Haystack), None)
                    .unwrap();
                let f = fit(&tok, &frame(), &[], &mut stream, budget).unwrap();
                assert!(
                    f.length <= budget && f.length + tolerance(budget) >= budget,
                    "{} budget {budget}: {}",
                    tok.id(),
                    f.length
                );
            }
        }
    }

    #[test]
    fn cuts_inside_long_runs_keep_marks_with_their_letters() {
        assert!(extends('\u{0301}') && extends('\u{FE0F}') && extends('\u{1F3FD}'));
        assert!(!extends('a') && !extends('山') && !extends('🌲'));
        assert!(closes_sentence("It ended.\u{201D}") && closes_sentence("终わり。"));
        assert!(!closes_sentence("a cut piece, then") && !closes_sentence("no mark"));
    }
}
