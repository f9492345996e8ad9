//! Searches over discrete sizes: the largest chain, list or sequence that fits a budget.

use crate::GenError;

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

/// The measure of one list-size search (sort, cwe, fwe): what a list of `n` items takes, the
/// prompt as the model reads it plus the answer budget. Counting a list from its items' own
/// counts is cheap where a rule proves it exact ([`crate::fit::lists`]); elsewhere the list is
/// rendered and counted whole.
pub trait ListLength {
    /// The tokens of the list of `n` items, counted from its items, or `None` where no rule
    /// proves that count equal to a whole count.
    fn counted(&mut self, n: usize) -> Result<Option<usize>, GenError>;
    /// The tokens of the list of `n` items, rendered and counted whole.
    fn rendered(&mut self, n: usize) -> Result<usize, GenError>;
    /// Whether the length never falls as the list grows; the search then aims at the size
    /// ([`largest_fitting_monotone`]) instead of bracketing and bisecting.
    fn never_falls(&self) -> bool {
        false
    }
}

/// The largest list size in `min..=max` whose length fits `budget`, each try measured by
/// `list` (counted from the items where proven, else whole).
pub fn largest_list(
    min: usize,
    max: usize,
    budget: usize,
    list: &mut impl ListLength,
) -> Result<usize, GenError> {
    let never_falls = list.never_falls();
    let mut length = |n: usize| match list.counted(n)? {
        Some(tokens) => Ok(tokens),
        None => list.rendered(n),
    };
    if never_falls {
        largest_fitting_monotone(min, max, budget, length)
    } else {
        Ok(largest_fitting(min, max, budget, |n| Ok(((), length(n)?)))?.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, Stream};

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
}
