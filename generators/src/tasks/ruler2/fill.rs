//! Filling a budget with whole units (lines, questions, documents) around the needles.
//!
//! RULER v2 estimates tokens per unit, bisects the unit count and steps down while over; it
//! counts the question alone and can retry forever. Here every unit is counted once as it is
//! drawn, the count is read off their sum, and the whole prompt (chat template included) is
//! counted once per try; the tries are bounded, so a length that cannot be reached is refused.
//!
//! Units are drawn in *pull order* (the first `n` drawn make a context of `n` units, so a
//! context one unit shorter drops the last one drawn) and shown in *context order*, sorted by a
//! random key each unit carries: adding a unit puts it at a random place without moving the
//! others, so settling the count never reshuffles the context.

use crate::rng::Rng;
use crate::tokenizer::Tokenizer;
use crate::GenError;

/// One unit of haystack: its text as shown, its tokens (with the separator before it) and the
/// random key that orders it in the context.
#[derive(Debug, Clone)]
pub(super) struct Piece {
    /// The unit as the context shows it.
    pub text: String,
    /// Tokens of the separator and the text, counted once.
    pub tokens: usize,
    /// Its place in the context, relative to the others.
    pub key: u64,
    /// What the task needs to know of it again (an item's index in its split).
    pub tag: usize,
}

/// Where distractor units come from; `None` when there are no more.
pub(super) trait Source {
    /// The next unit in pull order.
    fn pull(&mut self, tok: &Tokenizer, rng: &mut Rng) -> Result<Option<Piece>, GenError>;
}

/// The units drawn so far, and the source of more.
pub(super) struct Pool<'s> {
    /// Units in pull order.
    pub pieces: Vec<Piece>,
    source: Box<dyn Source + 's>,
    rng: Rng,
    /// Whether the source has run dry.
    pub exhausted: bool,
}

impl<'s> Pool<'s> {
    /// A pool drawing from `source` with `rng` (the instance's haystack stream).
    pub fn new(source: Box<dyn Source + 's>, rng: Rng) -> Pool<'s> {
        Pool {
            pieces: Vec::new(),
            source,
            rng,
            exhausted: false,
        }
    }

    /// Draw until `n` units are held; false when the source runs dry first.
    pub fn reach(&mut self, n: usize, tok: &Tokenizer) -> Result<bool, GenError> {
        while self.pieces.len() < n && !self.exhausted {
            match self.source.pull(tok, &mut self.rng)? {
                Some(p) => self.pieces.push(p),
                None => self.exhausted = true,
            }
        }
        Ok(self.pieces.len() >= n)
    }
}

/// One place of the context: a drawn unit (index in pull order) or a needle (its index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    /// A distractor unit.
    Unit(usize),
    /// A needle.
    Needle(usize),
}

/// The context order of the first `n` units with the needles among them. The first needle goes
/// where the distractor tokens before it are nearest `depth` percent of all of theirs, or, with
/// no depth (RULER v2's random placement), at the place its fraction in `spots` picks; the
/// others always at the places their fractions pick.
pub(super) fn arrange(pieces: &[Piece], n: usize, depth: Option<f64>, spots: &[f64]) -> Vec<Slot> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (pieces[i].key, i));
    let at = |f: f64| ((f * (n + 1) as f64) as usize).min(n);
    let mut places: Vec<(usize, usize)> =
        spots.iter().enumerate().map(|(j, &f)| (at(f), j)).collect();
    if let (Some(d), Some(first)) = (depth, places.first_mut()) {
        let total: usize = order.iter().map(|&i| pieces[i].tokens).sum();
        let target = d / 100.0 * total as f64;
        let (mut before, mut best, mut slot) = (0usize, f64::INFINITY, 0usize);
        for k in 0..=n {
            let miss = (before as f64 - target).abs();
            if miss < best {
                (best, slot) = (miss, k);
            }
            if k < n {
                before += pieces[order[k]].tokens;
            }
        }
        first.0 = slot;
    }
    places.sort();
    let mut out = Vec::with_capacity(n + spots.len());
    let mut p = places.iter().peekable();
    let mut needles_at = |k: usize, out: &mut Vec<Slot>| {
        while let Some(&&(_, j)) = p.peek().filter(|&&&(s, _)| s == k) {
            out.push(Slot::Needle(j));
            p.next();
        }
    };
    for (k, &unit) in order.iter().enumerate() {
        needles_at(k, &mut out);
        out.push(Slot::Unit(unit));
    }
    needles_at(n, &mut out);
    out
}

/// Tries of the aimed search before it bisects.
const AIMED_TRIES: usize = 8;
/// Tries in all: a count is found within them or the length is refused.
const MAX_TRIES: usize = 40;

/// The largest unit count whose prompt (as `render` measures it, in tokens the model reads)
/// fits `budget`, and its rendering. `fixed` estimates the tokens of everything but the units;
/// the first try takes every unit whose counted tokens still fit, later ones move by the units
/// whose counts cover the measured excess or room, and after [`AIMED_TRIES`] the search
/// bisects between the largest count that fitted and the smallest that did not.
///
/// Also returns the tokens one more unit was measured to add, when that count was tried: BPE
/// merges at a join can make it more than the unit's own count.
pub(super) fn settle<T>(
    tok: &Tokenizer,
    pool: &mut Pool<'_>,
    budget: usize,
    fixed: usize,
    mut render: impl FnMut(&Pool<'_>, usize) -> Result<(usize, T), GenError>,
) -> Result<(usize, T, Option<usize>), GenError> {
    let mut n = 0usize;
    let mut sum = fixed;
    loop {
        if !pool.reach(n + 1, tok)? {
            break;
        }
        let t = pool.pieces[n].tokens;
        if sum + t > budget {
            break;
        }
        sum += t;
        n += 1;
    }
    // `lo`: the largest count known to fit, with its rendering; `hi`: the smallest known not to.
    let mut lo: Option<(usize, T)> = None;
    let mut hi: Option<usize> = None;
    // Every try's measured length, by count.
    let mut lengths = std::collections::BTreeMap::new();
    let mut smallest_over = usize::MAX;
    for tries in 0..MAX_TRIES {
        let (len, made) = render(pool, n)?;
        lengths.insert(n, len);
        if len > budget {
            smallest_over = smallest_over.min(len);
            hi = Some(hi.map_or(n, |h| h.min(n)));
            if n == 0 {
                return Err(GenError::TooShort {
                    budget,
                    needed: len,
                });
            }
        } else {
            lo = Some((n, made));
        }
        let lo_n = lo.as_ref().map(|l| l.0);
        let floor = lo_n.map_or(0, |l| l + 1);
        let ceiling = match hi {
            Some(0) => break,
            Some(h) => h - 1,
            None => usize::MAX,
        };
        if lo_n.is_some() && lo_n.map(|l| l + 1) == hi {
            break;
        }
        let next = if len > budget {
            let mut k = n;
            let mut dropped = 0;
            while k > 0 && dropped < len - budget {
                k -= 1;
                dropped += pool.pieces[k].tokens;
            }
            if tries >= AIMED_TRIES {
                (floor.min(n) + n) / 2
            } else {
                k.clamp(lo_n.unwrap_or(0).min(n - 1), n - 1)
            }
        } else {
            let room = budget - len;
            if !pool.reach(n + 1, tok)? {
                break;
            }
            if pool.pieces[n].tokens > room && hi.is_none() {
                // The next unit does not fit by its own count: the row stops here.
                break;
            }
            let mut k = n;
            let mut added = 0;
            while pool.reach(k + 1, tok)? && added + pool.pieces[k].tokens <= room {
                added += pool.pieces[k].tokens;
                k += 1;
            }
            let k = k.max(n + 1);
            if tries >= AIMED_TRIES {
                match hi {
                    Some(h) => (n + h) / 2,
                    None => k,
                }
            } else {
                k
            }
        };
        let next = next.clamp(floor.min(ceiling), ceiling);
        if next == n {
            break;
        }
        n = next;
    }
    match lo {
        Some((n, made)) => {
            let added = match (lengths.get(&n), lengths.get(&(n + 1))) {
                (Some(a), Some(b)) => Some(b.saturating_sub(*a)),
                _ => None,
            };
            Ok((n, made, added))
        }
        None => Err(GenError::TooShort {
            budget,
            needed: smallest_over,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    struct Words(usize);
    impl Source for Words {
        fn pull(&mut self, tok: &Tokenizer, rng: &mut Rng) -> Result<Option<Piece>, GenError> {
            if self.0 == 0 {
                return Ok(None);
            }
            self.0 -= 1;
            let text = format!("line {} of words", rng.below(1000));
            Ok(Some(Piece {
                tokens: tok.count(&format!("\n{text}"))?,
                text,
                key: rng.next_u64(),
                tag: 0,
            }))
        }
    }

    fn measure(tok: &Tokenizer, pool: &Pool<'_>, n: usize) -> usize {
        let order = arrange(&pool.pieces, n, None, &[0.5]);
        let text: Vec<&str> = order
            .iter()
            .map(|s| match s {
                Slot::Unit(i) => pool.pieces[*i].text.as_str(),
                Slot::Needle(_) => "the needle line",
            })
            .collect();
        tok.count(&format!("Header.\n{}\nQuestion?", text.join("\n")))
            .unwrap()
    }

    /// The count found is the largest that fits: one more unit (if any) does not.
    #[test]
    fn settles_on_the_largest_fitting_count() {
        let tok = Tokenizer::O200k;
        for (budget, supply) in [(40, 1000), (300, 1000), (2000, 1000), (5000, 100), (9, 5)] {
            let mut pool = Pool::new(
                Box::new(Words(supply)),
                Rng::from_seed_u64(1, Stream::Haystack),
            );
            let got = settle(&tok, &mut pool, budget, 8, |p, n| {
                Ok((measure(&tok, p, n), ()))
            });
            match got {
                Ok((n, (), _)) => {
                    assert!(measure(&tok, &pool, n) <= budget);
                    if pool.reach(n + 1, &tok).unwrap() {
                        // The next unit does not fit, or by its own count it would not.
                        let short = budget - measure(&tok, &pool, n);
                        assert!(
                            measure(&tok, &pool, n + 1) > budget || short < pool.pieces[n].tokens,
                            "{budget}: {n}"
                        );
                    } else {
                        assert_eq!(n, supply);
                    }
                }
                Err(GenError::TooShort { .. }) => assert!(measure(&tok, &pool, 0) > budget),
                Err(e) => panic!("{e}"),
            }
        }
    }

    /// Adding a unit keeps the others in their order; the first needle lands at its depth.
    #[test]
    fn units_keep_their_order_and_the_needle_its_depth() {
        let tok = Tokenizer::O200k;
        let mut pool = Pool::new(
            Box::new(Words(400)),
            Rng::from_seed_u64(2, Stream::Haystack),
        );
        pool.reach(400, &tok).unwrap();
        let units = |o: &[Slot]| -> Vec<usize> {
            o.iter()
                .filter_map(|s| match s {
                    Slot::Unit(i) => Some(*i),
                    _ => None,
                })
                .collect()
        };
        let a = units(&arrange(&pool.pieces, 300, None, &[0.3]));
        let b = units(&arrange(&pool.pieces, 301, None, &[0.3]));
        let b_without: Vec<usize> = b.into_iter().filter(|&i| i != 300).collect();
        assert_eq!(a, b_without);
        for depth in [0.0, 25.0, 50.0, 100.0] {
            let o = arrange(&pool.pieces, 400, Some(depth), &[0.9, 0.1]);
            let at = o.iter().position(|s| *s == Slot::Needle(0)).unwrap();
            let before: usize = o[..at]
                .iter()
                .map(|s| match s {
                    Slot::Unit(i) => pool.pieces[*i].tokens,
                    Slot::Needle(_) => 0,
                })
                .sum();
            let total: usize = pool.pieces.iter().map(|p| p.tokens).sum();
            let share = 100.0 * before as f64 / total as f64;
            assert!((share - depth).abs() < 1.0, "{depth}: {share}");
            assert_eq!(o.len(), 402);
        }
    }
}
