//! The parts of Python's `str` and `re` the reference scorers are written in, so a port reads
//! text exactly as the Python it mirrors.
//!
//! Three character classes differ between Rust and Python:
//!
//! - whitespace (`str.isspace`, `str.split()`, `str.strip()`, `re`'s `\s`): Rust's
//!   `char::is_whitespace` plus the four separators U+001C–U+001F, which Python counts and
//!   Unicode's `White_Space` does not;
//! - word characters (`re`'s `\w` and `\b`): `str.isalnum()` or `_`; Rust's `is_alphanumeric`
//!   also counts combining vowel signs (`Other_Alphabetic`), so Python's ranges are tabled;
//! - decimal digits (`re`'s `\d`): `str.isdecimal()` (category Nd), tabled likewise.
//!
//! Lowercasing uses Rust's `str::to_lowercase`, which agrees with Python's `str.lower()`
//! (final sigma included) for every character Python's Unicode version assigns; the
//! reference test checks that character by character.

mod tables;

pub use tables::UNICODE_VERSION;

/// Whether Python's `str.isspace()` holds for `c`.
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Whether Python's `str.isalnum()` holds for `c`.
pub fn is_alnum(c: char) -> bool {
    c.is_ascii_alphanumeric() || (!c.is_ascii() && in_ranges(tables::ALNUM, c))
}

/// Whether `c` is a word character for Python's `re` (`\w`): alphanumeric or `_`.
pub fn is_word(c: char) -> bool {
    c == '_' || is_alnum(c)
}

/// Whether Python's `str.isdecimal()` holds for `c` (what `re`'s `\d` matches).
pub fn is_decimal(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && in_ranges(tables::DECIMAL, c))
}

/// Python's `s.strip()`: `s` without leading and trailing whitespace.
pub fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// Python's `s.split()`: the runs of non-whitespace characters.
pub fn split_whitespace(s: &str) -> impl Iterator<Item = &str> {
    s.split(is_space).filter(|w| !w.is_empty())
}

/// Python's `s.split(sep)[-1]`: what follows the last occurrence of `sep`, found left to right
/// without overlaps (so `"a\n\n\nb"` split at `"\n\n"` ends with `"\nb"`), or all of `s`.
pub fn last_piece<'s>(s: &'s str, sep: &str) -> &'s str {
    s.split(sep).last().unwrap_or(s)
}

/// Whether `c` lies in one of the inclusive `[first, last]` pairs of `table`.
fn in_ranges(table: &[u32], c: char) -> bool {
    let cp = c as u32;
    // The pairs are ascending and disjoint: the last pair starting at or before `cp` decides.
    let (mut lo, mut hi) = (0, table.len() / 2);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if table[2 * mid] <= cp {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo > 0 && cp <= table[2 * lo - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_is_pythons() {
        for c in [
            '\t', '\n', '\u{b}', '\u{c}', '\r', ' ', '\u{85}', '\u{a0}', '\u{3000}',
        ] {
            assert!(is_space(c), "{c:?}");
        }
        // Python counts the information separators; Unicode's White_Space does not.
        for c in ['\u{1c}', '\u{1d}', '\u{1e}', '\u{1f}'] {
            assert!(is_space(c) && !c.is_whitespace(), "{c:?}");
        }
        for c in ['\u{200b}', '\u{180e}', '\u{feff}', 'a', '\u{0}'] {
            assert!(!is_space(c), "{c:?}");
        }
        assert_eq!(strip("\u{1f} a b\u{3000}\r\n"), "a b");
        assert_eq!(strip("\u{200b}x\u{200b}"), "\u{200b}x\u{200b}");
        assert_eq!(
            split_whitespace(" a\u{1c}b\t\tc\u{a0}").collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        assert_eq!(split_whitespace("").count(), 0);
    }

    #[test]
    fn word_characters_are_pythons() {
        for c in ['a', 'Z', '0', 'é', 'ß', 'Ж', '中', '٣', '²', '½', 'Ⅻ'] {
            assert!(is_word(c), "{c:?}");
        }
        assert!(is_word('_') && !is_alnum('_'));
        // Combining marks are not word characters for Python, even those Unicode calls
        // alphabetic (U+0345, the Devanagari vowel sign U+093F).
        for c in ['\u{301}', '\u{345}', '\u{93f}', '-', ' ', '🙂', '\u{200d}'] {
            assert!(!is_word(c), "{c:?}");
        }
        assert!('\u{93f}'.is_alphabetic());
    }

    #[test]
    fn decimal_digits_are_category_nd() {
        for c in ['0', '9', '٣', '৭', '０', '𝟗'] {
            assert!(is_decimal(c), "{c:?}");
        }
        for c in ['²', '½', 'Ⅻ', 'a', '٫'] {
            assert!(!is_decimal(c), "{c:?}");
        }
    }

    #[test]
    fn last_piece_splits_left_to_right() {
        assert_eq!(last_piece("a\n\n\nb", "\n\n"), "\nb");
        assert_eq!(last_piece("a\n\n\n\nb", "\n\n"), "b");
        assert_eq!(last_piece("no separator", "</think>"), "no separator");
        assert_eq!(last_piece("x</think>", "</think>"), "");
        assert_eq!(last_piece("", "Answer:"), "");
    }
}
