//! Python's `difflib.SequenceMatcher(None, a, b).ratio()`, reproduced to the last bit.
//!
//! MRCR's score is this ratio, and its quirks change the number, so they are kept:
//!
//! - **Elements** are Unicode code points (Python `str` indexing), not bytes or graphemes.
//! - **Autojunk**: when `b` has at least 200 elements, every element occurring more than
//!   `len(b) / 100 + 1` times in `b` (integer division) is *popular* and never starts a match.
//!   Only `b` is examined, so the ratio is asymmetric: `ratio(a, b)` and `ratio(b, a)` differ.
//! - **Longest match** in `a[alo..ahi]` × `b[blo..bhi]`: among the longest runs of equal
//!   non-popular elements, the one starting earliest in `a`, then earliest in `b`; the run is
//!   then widened over equal elements on both sides (popular ones included). With no junk
//!   predicate, that widening is all the junk handling there is.
//! - **Matching blocks**: the longest match splits the ranges into the parts before and after
//!   it, each searched again (a stack, the part after the match popped first, as difflib's
//!   list), until a range holds no match.
//! - **Ratio** `2·M / (len(a) + len(b))` with `M` the matched elements, computed in the same
//!   floating-point steps as Python; `1.0` when both are empty.
//!
//! Cost: building the index is linear in `b`. One longest-match search over `a`-range `A` and
//! `b`-range `B` visits, for every element of `A`, its occurrences in `B`: at most
//! `len(b) / 100 + 1` each once `b` reaches 200 elements (autojunk), `len(B)` before. The
//! ranges of one recursion depth are disjoint, so a depth costs at most one full search, and
//! the depth is the nesting of matches (logarithmic for ordinary text, at worst the number of
//! blocks). Memory is a few words per element of `a` and `b`.

/// A matching block: `a[a..a + size] == b[b..b + size]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Block {
    /// Where it starts in `a`.
    pub a: usize,
    /// Where it starts in `b`.
    pub b: usize,
    /// Its length.
    pub size: usize,
}

/// `difflib.SequenceMatcher(None, a, b).ratio()` over the code points of `a` and `b`.
pub fn ratio(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    ratio_of(&a, &b)
}

/// `ratio` over any sequences of comparable elements.
pub fn ratio_of<T: Ord>(a: &[T], b: &[T]) -> f64 {
    let length = a.len() + b.len();
    if length == 0 {
        return 1.0;
    }
    let matched: usize = Matcher::new(a, b).raw_blocks().iter().map(|m| m.size).sum();
    2.0 * matched as f64 / length as f64
}

/// `difflib.SequenceMatcher(None, a, b).get_matching_blocks()` over code points: the blocks in
/// ascending order, adjacent ones merged, ending with the sentinel `(len(a), len(b), 0)`.
pub fn matching_blocks(a: &str, b: &str) -> Vec<Block> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut raw = Matcher::new(&a, &b).raw_blocks();
    raw.sort();
    let mut merged: Vec<Block> = Vec::with_capacity(raw.len() + 1);
    for m in raw {
        match merged.last_mut() {
            Some(last) if last.a + last.size == m.a && last.b + last.size == m.b => {
                last.size += m.size;
            }
            _ => merged.push(m),
        }
    }
    merged.push(Block {
        a: a.len(),
        b: b.len(),
        size: 0,
    });
    merged
}

/// Marks an element of `a` that does not occur in `b`.
const ABSENT: u32 = u32::MAX;

/// The two sequences as dense ids (equal elements, equal ids), `b`'s index, and the scratch
/// rows of the longest-match search.
struct Matcher {
    a: Vec<u32>,
    b: Vec<u32>,
    /// For each id, where it occurs in `b` (ascending); empty for popular elements.
    b2j: Vec<Vec<usize>>,
    /// Length of the match ending at `b[j]` in the previous row, valid where the stamp is the
    /// previous row's number; the current row writes the other pair.
    prev_len: Vec<usize>,
    prev_stamp: Vec<u64>,
    cur_len: Vec<usize>,
    cur_stamp: Vec<u64>,
    row: u64,
}

impl Matcher {
    fn new<T: Ord>(a: &[T], b: &[T]) -> Matcher {
        // Ids by rank among `b`'s distinct elements: no hashing, so no order dependence.
        let mut distinct: Vec<&T> = b.iter().collect();
        distinct.sort();
        distinct.dedup();
        let id = |x: &T| distinct.binary_search(&x).map(|i| i as u32);
        let b_ids: Vec<u32> = b.iter().map(|x| id(x).unwrap_or(ABSENT)).collect();
        let a_ids: Vec<u32> = a.iter().map(|x| id(x).unwrap_or(ABSENT)).collect();
        let mut b2j: Vec<Vec<usize>> = vec![Vec::new(); distinct.len()];
        for (j, &e) in b_ids.iter().enumerate() {
            b2j[e as usize].push(j);
        }
        let n = b.len();
        if n >= 200 {
            let limit = n / 100 + 1;
            for js in &mut b2j {
                if js.len() > limit {
                    js.clear();
                }
            }
        }
        Matcher {
            a: a_ids,
            b: b_ids,
            b2j,
            prev_len: vec![0; n],
            prev_stamp: vec![0; n],
            cur_len: vec![0; n],
            cur_stamp: vec![0; n],
            row: 0,
        }
    }

    /// Every block the recursion finds, in the order found.
    fn raw_blocks(&mut self) -> Vec<Block> {
        let mut found = Vec::new();
        let mut stack = vec![(0, self.a.len(), 0, self.b.len())];
        while let Some((alo, ahi, blo, bhi)) = stack.pop() {
            let m = self.longest_match(alo, ahi, blo, bhi);
            if m.size == 0 {
                continue;
            }
            found.push(m);
            if alo < m.a && blo < m.b {
                stack.push((alo, m.a, blo, m.b));
            }
            if m.a + m.size < ahi && m.b + m.size < bhi {
                stack.push((m.a + m.size, ahi, m.b + m.size, bhi));
            }
        }
        found
    }

    /// The longest match in `a[alo..ahi]` × `b[blo..bhi]`, ties to the earliest in `a` then
    /// `b`, widened over equal neighbours; `(alo, blo, 0)` when there is none.
    fn longest_match(&mut self, alo: usize, ahi: usize, blo: usize, bhi: usize) -> Block {
        let (mut best_i, mut best_j, mut best) = (alo, blo, 0usize);
        // Skip a row number, so no entry of an earlier search reads as the previous row.
        self.row += 1;
        for i in alo..ahi {
            self.row += 1;
            let row = self.row;
            std::mem::swap(&mut self.prev_len, &mut self.cur_len);
            std::mem::swap(&mut self.prev_stamp, &mut self.cur_stamp);
            let e = self.a[i];
            if e == ABSENT {
                continue;
            }
            let js = &self.b2j[e as usize];
            let from = js.partition_point(|&j| j < blo);
            for &j in &js[from..] {
                if j >= bhi {
                    break;
                }
                let before = if j > 0 && self.prev_stamp[j - 1] == row - 1 {
                    self.prev_len[j - 1]
                } else {
                    0
                };
                let k = before + 1;
                self.cur_len[j] = k;
                self.cur_stamp[j] = row;
                if k > best {
                    (best_i, best_j, best) = (i + 1 - k, j + 1 - k, k);
                }
            }
        }
        while best_i > alo && best_j > blo && self.a[best_i - 1] == self.b[best_j - 1] {
            (best_i, best_j, best) = (best_i - 1, best_j - 1, best + 1);
        }
        while best_i + best < ahi
            && best_j + best < bhi
            && self.a[best_i + best] == self.b[best_j + best]
        {
            best += 1;
        }
        Block {
            a: best_i,
            b: best_j,
            size: best,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(a: &str, b: &str) -> Vec<(usize, usize, usize)> {
        matching_blocks(a, b)
            .into_iter()
            .map(|m| (m.a, m.b, m.size))
            .collect()
    }

    #[test]
    fn the_documented_examples() {
        // Values printed by CPython 3.11 for these calls.
        assert_eq!(ratio("abcd", "bcde"), 0.75);
        assert_eq!(blocks("abxcd", "abcd"), [(0, 0, 2), (3, 2, 2), (5, 4, 0)]);
        assert_eq!(
            ratio(
                "private Thread currentThread;",
                "private volatile Thread currentThread;"
            ),
            0.8656716417910447
        );
        // Of the longest matches, the earliest in `a`, then in `b`.
        assert_eq!(blocks(" abcd", "abcd abcd"), [(0, 4, 5), (5, 9, 0)]);
        assert_eq!(blocks("ab", "c"), [(2, 1, 0)]);
    }

    #[test]
    fn empty_sides() {
        assert_eq!(ratio("", ""), 1.0);
        assert_eq!(ratio("", "abc"), 0.0);
        assert_eq!(ratio("abc", ""), 0.0);
        assert_eq!(blocks("", ""), [(0, 0, 0)]);
    }

    #[test]
    fn code_points_not_bytes() {
        // "é" is two bytes; as code points the strings share three of four elements.
        assert_eq!(ratio("café", "cafe"), 0.75);
        // A combining accent is an element of its own.
        assert_eq!(ratio("cafe\u{301}", "cafe"), 2.0 * 4.0 / 9.0);
        assert_eq!(ratio("🙂🙂x", "🙂x"), 0.8);
    }

    #[test]
    fn autojunk_starts_at_200_and_makes_the_ratio_asymmetric() {
        // In a `b` of 200 `a`s every `a` is popular (200 > 200 / 100 + 1): nothing can start
        // a match, but widening still runs from the first element when both begin alike.
        let long = "a".repeat(200);
        assert_eq!(ratio("b", &long), 0.0);
        assert_eq!(ratio(&long, "a"), 2.0 / 201.0);
        // One element shorter, nothing is popular: the whole of the shorter side matches.
        let short = "a".repeat(199);
        assert_eq!(ratio("xa", &short), 2.0 / 201.0);
        // With `b` long, "xa" finds no start for its `a` and nothing to widen from.
        assert_eq!(ratio("xa", &long), 0.0);
        assert_eq!(ratio(&long, "xa"), 2.0 / 202.0);
        // Exactly at the limit an element stays: 3 = 200 / 100 + 1 occurrences are allowed.
        let b = format!("{}{}", "xyz".repeat(3), "-".repeat(191));
        assert_eq!(b.chars().count(), 200);
        assert_eq!(ratio("xyz", &b), 6.0 / 203.0);
    }

    #[test]
    fn widening_crosses_popular_elements() {
        // `b` is 300 long: spaces are popular, so the core match is "bc", widened over the
        // equal spaces around it.
        let b = format!("{} bc {}", "q".repeat(100), " ".repeat(196));
        assert_eq!(b.chars().count(), 300);
        assert_eq!(blocks(" bc ", &b)[0], (0, 100, 4));
    }

    #[test]
    fn identical_long_texts_score_one() {
        let text = "The quick brown fox jumps over the lazy dog. ".repeat(40);
        assert_eq!(ratio(&text, &text), 1.0);
        assert!(ratio(&format!("{text}!"), &text) < 1.0);
    }

    #[test]
    fn matches_in_the_same_order_as_the_recursion() {
        // Blocks sorted and merged; sizes sum to what ratio counts.
        let (a, b) = ("qabxcdzef", "abycdwef");
        let got = blocks(a, b);
        assert_eq!(got, [(1, 0, 2), (4, 3, 2), (7, 6, 2), (9, 8, 0)]);
        let m: usize = got.iter().map(|x| x.2).sum();
        assert_eq!(ratio(a, b), 2.0 * m as f64 / 17.0);
    }
}
