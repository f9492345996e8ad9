//! Length fitting: fill a token budget with haystack units and needles, exactly.
//!
//! Each unit is tokenized once (by the haystack), the number of whole units that fits is read
//! off prefix sums, a partial sentence tops up the last few tokens word by word, and the final
//! prompt is counted once, reusing each whole unit's count where the tokenizer proves counts
//! add (`Tokenizer::count_assembled`). BPE counts are not additive at every join, so when that
//! count misses the window the goal is corrected by the measured error and the prompt counted
//! again; this converges in one or two extra counts.

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

/// The largest size in `min..=max` whose rendering fits `budget`, for tasks whose size is
/// discrete (a chain, a list). `render(n)` builds the instance of size n and returns it with its
/// measured length, or only measures it (sort, cwe and fwe count a try from its items' counts,
/// then render the size found once). The search keeps "lo fits, hi does not", so the result is
/// within one item of the budget even where length is not perfectly monotone in n; the sizes it
/// tries depend only on the lengths measured, so an exact measure finds the same size.
pub fn largest_fitting<T>(
    min: usize,
    max: usize,
    budget: usize,
    mut render: impl FnMut(usize) -> Result<(T, usize), GenError>,
) -> Result<(usize, T), GenError> {
    let (first, first_len) = render(min)?;
    if first_len > budget {
        return Err(GenError::TooShort {
            budget,
            needed: first_len,
        });
    }
    let mut lo = min;
    let mut lo_item = first;
    // Estimate tokens per item from a probe, then bracket and bisect.
    let probe = (min + 16).min(max);
    let mut hi;
    if probe > min {
        let (item, len) = render(probe)?;
        if len > budget {
            hi = probe;
        } else {
            let per_item = ((len - first_len) as f64 / (probe - min) as f64).max(0.5);
            lo = probe;
            lo_item = item;
            hi = ((probe as f64 + (budget - len) as f64 / per_item).ceil() as usize + 2)
                .min(max + 1);
        }
    } else {
        hi = max + 1;
    }
    while hi <= max {
        let (item, len) = render(hi)?;
        if len > budget {
            break;
        }
        lo = hi;
        lo_item = item;
        hi = (hi * 2).min(max + 1);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let (item, len) = render(mid)?;
        if len <= budget {
            lo = mid;
            lo_item = item;
        } else {
            hi = mid;
        }
    }
    Ok((lo, lo_item))
}

/// [`largest_fitting`] for lengths that never fall as the size grows (sort's numbers, counted
/// from their items). Such a length has one largest size that fits, which every search that
/// keeps "lo fits, hi does not" finds; this one aims at it by the tokens per item measured
/// between its tries (the secant), so it tries, and makes, fewer and smaller sizes than
/// doubling and bisecting do. After 12 aimed tries it bisects, so it always ends.
pub fn largest_fitting_monotone(
    min: usize,
    max: usize,
    budget: usize,
    mut length: impl FnMut(usize) -> Result<usize, GenError>,
) -> Result<usize, GenError> {
    let first = length(min)?;
    if first > budget {
        return Err(GenError::TooShort {
            budget,
            needed: first,
        });
    }
    // `lo` fits; `hi`, once tried, does not; `before` is the size that fitted before `lo`.
    let mut lo = (min, first);
    let mut hi: Option<(usize, usize)> = None;
    let mut before: Option<(usize, usize)> = None;
    for tries in 0.. {
        let top = hi.map_or(max.saturating_add(1), |(n, _)| n);
        if top.saturating_sub(lo.0) <= 1 {
            break;
        }
        let aim = |(n, len): (usize, usize)| {
            // The line through `lo` and another try, at the budget.
            let per_item = (len.abs_diff(lo.1) as f64 / n.abs_diff(lo.0) as f64).max(0.5);
            lo.0.saturating_add(((budget - lo.1) as f64 / per_item) as usize)
        };
        let n = match (hi, before) {
            _ if tries >= 12 => lo.0 + (top - lo.0) / 2,
            (Some(h), _) => aim(h),
            (None, Some(b)) => aim(b),
            (None, None) => lo.0 + 16,
        };
        let n = n.clamp(lo.0 + 1, top - 1);
        let len = length(n)?;
        if len <= budget {
            before = Some(lo);
            lo = (n, len);
        } else {
            hi = Some((n, len));
        }
    }
    Ok(lo.0)
}

/// Render a context made only of `facts` (no haystack), one per line, and count it once.
/// Offsets and depths are reported as [`fit`] does.
pub fn render_facts(tok: &Tokenizer, frame: &Frame, facts: &[String]) -> Result<Fitted, GenError> {
    let all: Vec<usize> = (0..facts.len()).collect();
    render_joined(tok, frame, facts, "\n", &all)
}

/// Render a context of whole `parts` joined by `sep` (documents, facts) and count it once;
/// the parts listed in `marked` are reported as needles, in that order, as [`fit`] does.
pub fn render_joined<S: AsRef<str>>(
    tok: &Tokenizer,
    frame: &Frame,
    parts: &[S],
    sep: &str,
    marked: &[usize],
) -> Result<Fitted, GenError> {
    render_joined_known(tok, frame, parts, sep, marked, None)
}

/// [`render_joined`] with nothing marked, for a context whose count alone (`context_tokens`)
/// the caller has already added up from its parts (see [`crate::lists`]): a search over list
/// sizes then tokenizes only the context's edges and the frame per try, not the whole list.
/// The count must be exact; the tests hold these renderings equal to [`render_joined`].
pub fn render_joined_counted<S: AsRef<str>>(
    tok: &Tokenizer,
    frame: &Frame,
    parts: &[S],
    sep: &str,
    context_tokens: usize,
) -> Result<Fitted, GenError> {
    render_joined_known(tok, frame, parts, sep, &[], Some(context_tokens))
}

fn render_joined_known<S: AsRef<str>>(
    tok: &Tokenizer,
    frame: &Frame,
    parts: &[S],
    sep: &str,
    marked: &[usize],
    context_tokens: Option<usize>,
) -> Result<Fitted, GenError> {
    let mut input = String::with_capacity(
        frame.prefix.len()
            + frame.suffix.len()
            + parts
                .iter()
                .map(|f| f.as_ref().len() + sep.len())
                .sum::<usize>(),
    );
    input.push_str(&frame.prefix);
    let ctx_start = input.len();
    let mut spans = Vec::with_capacity(marked.len().min(parts.len()));
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            input.push_str(sep);
        }
        let start = input.len();
        input.push_str(part.as_ref());
        if !marked.is_empty() {
            spans.push((start, input.len()));
        }
    }
    let ctx_end = input.len();
    input.push_str(&frame.suffix);
    let marks: Vec<(usize, usize)> = marked
        .iter()
        .filter_map(|&i| spans.get(i).copied())
        .collect();
    let known = context_tokens.map(|tokens| Known {
        start: ctx_start,
        end: ctx_end,
        tokens,
    });
    measure(
        tok,
        frame,
        input,
        (ctx_start, ctx_end),
        &marks,
        known.as_slice(),
    )
}

/// Count `input` (reusing the counts of the `known` ranges) and turn byte spans into token
/// offsets and depths; count what the model reads around it when that is more than `input`.
fn measure(
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

    /// The aimed search finds what doubling and bisecting find on every length that never
    /// falls (flat runs, jumps, sizes that all fit, none that fit), in fewer tries.
    #[test]
    fn aimed_searches_find_the_largest_fitting_size() {
        let mut d = Rng::from_seed_u64(11, Stream::Content);
        let (mut aimed_tries, mut bisect_tries) = (0, 0);
        for case in 0..3000 {
            let max = 1 + d.index([20, 500, 20_000][case % 3]);
            let mut lengths = vec![d.index(50)];
            for _ in 1..max {
                let step = match d.index(10) {
                    0 => 0,
                    1 => d.index(40),
                    _ => 1 + d.index(4),
                };
                lengths.push(lengths.last().copied().unwrap_or(0) + step);
            }
            let top = lengths[max - 1];
            let budget = d.index(top + top / 10 + 2);
            let min = 1 + d.index(max.min(3));
            let length = |n: usize| lengths[n - 1];
            let mut tries = 0;
            let aimed = largest_fitting_monotone(min, max, budget, |n| {
                tries += 1;
                Ok(length(n))
            });
            aimed_tries += tries;
            let mut tries = 0;
            let bisected = largest_fitting(min, max, budget, |n| {
                tries += 1;
                Ok(((), length(n)))
            });
            bisect_tries += tries;
            match (aimed, bisected) {
                (Ok(a), Ok((b, ()))) => assert_eq!(a, b, "case {case}: budget {budget}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "case {case}"),
                (a, b) => panic!("case {case}: {a:?} against {:?}", b.map(|(n, ())| n)),
            }
        }
        assert!(
            aimed_tries * 4 < bisect_tries * 3,
            "{aimed_tries} against {bisect_tries}"
        );
        // A range empty past its first size gives that size, without wrapping around.
        assert_eq!(largest_fitting_monotone(5, 3, 100, Ok).unwrap(), 5);
    }

    fn frame() -> Frame {
        Frame {
            prefix: "Read this:\n<doc>\n".into(),
            suffix: "\n</doc>\nWhat is the code?".into(),
            answer_prefix: String::new(),
            reader: Default::default(),
        }
    }

    /// A list counted from its items' counts renders exactly as the same list counted whole,
    /// with the frame's edges, an answer prefix or a chat template around it.
    #[test]
    fn lists_counted_from_their_items_render_as_counted_whole() {
        use crate::chat::{ChatTemplate, Reader};
        use crate::lists::{list_tokens, spaced_word, NumberedList};
        let chat = Arc::new(
            ChatTemplate::from_bytes(
                include_bytes!("../../tests/fixtures/chat/tokenizer_config.json"),
                "tokenizer_config.json",
            )
            .unwrap(),
        );
        let bits = [
            "7",
            "1234567",
            "word",
            "Zed",
            "'s",
            "...",
            ",",
            "-",
            "/",
            "\n",
            "é",
            "日本",
            "😀",
            "#",
            "<|endoftext|>",
            "1.",
            "x y",
            "a\tb",
        ];
        let mut d = Rng::from_seed_u64(3, Stream::Content);
        let mut spaced = 0;
        for round in 0..600 {
            let tok = [Tokenizer::O200k, Tokenizer::Cl100k][round % 2].clone();
            let mut frame = frame();
            match round % 4 {
                0 => {}
                1 => frame.answer_prefix = "The answer is:".into(),
                2 => frame.suffix = " and then".into(),
                _ => {
                    frame.answer_prefix = "Answer:".into();
                    frame.reader = Reader {
                        chat: Some(chat.clone()),
                        system: None,
                    };
                }
            }
            if d.index(3) == 0 {
                frame.prefix = ["", " ", "x", "List:"][d.index(4)].into();
            }
            let words: Vec<String> = (0..1 + d.index(40))
                .map(|_| {
                    (0..1 + d.index(3))
                        .map(|_| bits[d.index(bits.len())])
                        .collect()
                })
                .collect();
            let counts: Vec<_> = words
                .iter()
                .map(|w| spaced_word(&tok, w).unwrap())
                .collect();
            if let Some(tokens) = list_tokens(counts) {
                let whole = render_joined(&tok, &frame, &words, " ", &[]).unwrap();
                let counted = render_joined_counted(&tok, &frame, &words, " ", tokens).unwrap();
                assert_eq!(counted, whole, "{words:?}");
                spaced += 1;
            }
            let order: Vec<usize> = (0..words.len()).rev().collect();
            let text = [NumberedList::text(&words, &order)];
            let tokens = NumberedList::default()
                .tokens(&tok, &words, &order)
                .unwrap();
            let whole = render_joined(&tok, &frame, &text, "\n", &[]).unwrap();
            let counted = render_joined_counted(&tok, &frame, &text, "\n", tokens.unwrap());
            assert_eq!(counted.unwrap(), whole, "{text:?}");
        }
        assert!(spaced > 150, "{spaced}");
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
