//! The size search of chains: the largest chain that fits a budget, in few renderings.

use crate::GenError;

/// The largest size in `min..=max` whose rendering fits `budget`, for renderings that grow
/// about linearly with size (a chain: each fact adds a line and a name). `render(n)` returns
/// the rendering of size n and its length. Guesses interpolate between a size that fits and
/// one that does not (extrapolating before one overflows; bisecting after eight guesses, for
/// lengths far from linear), so a chain of millions of facts costs a handful of renderings
/// where bisection costs twenty. "lo fits, hi does not" holds throughout, and the two end one apart, so the
/// answer is the largest fitting size wherever length never falls as size grows — which the
/// prefix-stable chains make true.
pub(super) fn largest_fitting_size<T>(
    min: usize,
    max: usize,
    budget: usize,
    mut render: impl FnMut(usize) -> Result<(T, usize), GenError>,
) -> Result<(usize, T, usize), GenError> {
    let (first, first_len) = render(min)?;
    if first_len > budget {
        return Err(GenError::TooShort {
            budget,
            needed: first_len,
        });
    }
    let (mut lo, mut lo_item, mut lo_len) = (min, first, first_len);
    let mut before: Option<(usize, usize)> = None;
    let mut hi: Option<(usize, usize)> = None;
    // Interpolation lands in a few steps on lengths that are nearly linear in size; past this
    // many guesses the length is not, and bisection bounds the rest.
    let mut guesses = 0;
    loop {
        let hi_n = hi.map_or(max + 1, |h| h.0);
        if hi_n - lo <= 1 {
            break;
        }
        let room = (budget - lo_len) as f64;
        let guess = if guesses >= 8 {
            lo + (hi_n - lo) / 2
        } else {
            let per_item = match (hi, before) {
                (Some((n, len)), _) => (len - lo_len) as f64 / (n - lo) as f64,
                (None, Some((n, len))) => (lo_len as f64 - len as f64) / (lo - n) as f64,
                (None, None) => 0.0,
            };
            if per_item > 0.0 {
                lo.saturating_add((room / per_item).floor() as usize)
            } else {
                lo + 16
            }
        }
        .clamp(lo + 1, hi_n - 1);
        guesses += 1;
        let (item, len) = render(guess)?;
        if len <= budget {
            before = Some((lo, lo_len));
            (lo, lo_item, lo_len) = (guess, item, len);
        } else {
            hi = Some((guess, len));
        }
    }
    Ok((lo, lo_item, lo_len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::needlechain::MAX_CHAIN;

    /// The size search gives the largest fitting size, in a handful of renderings, also where
    /// the cost per fact changes (as when names gain initials) or jumps.
    #[test]
    fn size_search_is_exact_and_quick() {
        // (shape, length at size n, most renderings: eight guesses, then bisection's share)
        type Length = fn(usize) -> usize;
        let shapes: [(&str, Length, usize); 3] = [
            ("linear", |n| 120 + 17 * n + n / 7, 10),
            (
                "kinked",
                |n| 300 + 19 * n + 5 * n.saturating_sub(21_472),
                10,
            ),
            ("jump", |n| 90 + 12 * n + if n > 244 { 1400 } else { 0 }, 34),
        ];
        for (name, len, most) in shapes {
            for budget in [
                len(1),
                len(1) + 40,
                3000,
                3100,
                5000,
                40_000,
                1 << 20,
                64 << 20,
            ] {
                let mut renders = 0;
                let (n, (), got) = largest_fitting_size(1, MAX_CHAIN as usize, budget, |n| {
                    renders += 1;
                    Ok(((), len(n)))
                })
                .unwrap();
                assert_eq!(got, len(n));
                assert!(got <= budget && len(n + 1) > budget, "{name} {budget}: {n}");
                assert!(renders <= most, "{name} {budget}: {renders} renderings");
            }
            assert!(largest_fitting_size(1, 100, len(1) - 1, |n| Ok(((), len(n)))).is_err());
        }
    }
}
