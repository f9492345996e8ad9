//! Screening haystack units against an instance's needles.
//!
//! A haystack sentence that mentions an asked key, a needle value, a story's actor or any other
//! term the gold answer rests on could compete with the needle (a corpus line "the code for X is
//! 5" beside our needle "the code for X is 7"), so such units are dropped before fitting. Terms
//! are compared as case-insensitive sequences of whole words (runs of letters and digits), so
//! `brave-lantern` also catches "Brave lantern" and `1234567` also catches "1,234,567"; a term
//! never matches inside a longer word ("ant" does not catch "want").

use std::collections::{BTreeMap, BTreeSet};

/// The terms one instance's units must not mention.
#[derive(Debug, Clone, Default)]
pub struct Screen {
    /// One-word terms, lower-cased.
    words: BTreeSet<String>,
    /// Longer terms as word sequences, indexed by their first word.
    phrases: BTreeMap<String, Vec<Vec<String>>>,
    /// Bit [`sketch_bit`] set for each one-word term and phrase first word (from its length,
    /// first and last byte): most words of a unit are rejected before any set lookup.
    sketch: [u64; 4],
}

impl Screen {
    /// A screen for `terms` (keys, values, names …); terms with no letter or digit are ignored.
    pub fn new<I, S>(terms: I) -> Screen
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut screen = Screen::default();
        for term in terms {
            screen.add(term.as_ref());
        }
        screen
    }

    /// Add one more term.
    pub fn add(&mut self, term: &str) {
        let mut words = words_of(term);
        match words.len() {
            0 => {}
            1 => {
                self.mark_sketch(&words[0]);
                self.words.insert(words.remove(0));
            }
            _ => {
                self.mark_sketch(&words[0]);
                let first = words[0].clone();
                self.phrases.entry(first).or_default().push(words);
            }
        }
    }

    fn mark_sketch(&mut self, word: &str) {
        let bit = sketch_bit(word);
        self.sketch[bit / 64] |= 1 << (bit % 64);
    }

    /// Whether `word` (lower-cased, or ASCII in any case) may be a term or a phrase's start.
    fn may_start_term(&self, word: &str) -> bool {
        let bit = sketch_bit(word);
        self.sketch[bit / 64] & (1 << (bit % 64)) != 0
    }

    /// Whether no term is screened.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty() && self.phrases.is_empty()
    }

    /// Whether `text` mentions any term.
    pub fn conflicts(&self, text: &str) -> bool {
        if self.is_empty() {
            return false;
        }
        if !text.is_ascii() {
            return self.conflicts_by_spans(text);
        }
        // ASCII text, nearly every unit: words are runs of ASCII letters and digits, and
        // only words of a screened length are lower-cased and looked up. A digit group or a
        // phrase's first word takes the general path, which settles them.
        let bytes = text.as_bytes();
        let mut lowered = String::new();
        let mut i = 0;
        while i < bytes.len() {
            if !bytes[i].is_ascii_alphanumeric() {
                i += 1;
                continue;
            }
            let end = bytes[i..]
                .iter()
                .position(|c| !c.is_ascii_alphanumeric())
                .map_or(bytes.len(), |n| i + n);
            let grouped = bytes[end - 1].is_ascii_digit()
                && matches!(bytes.get(end), Some(b',' | b'_'))
                && bytes.get(end + 1).is_some_and(u8::is_ascii_digit);
            if grouped {
                return self.conflicts_by_spans(text);
            }
            let word = &text[i..end];
            if self.may_start_term(word) {
                lowered.clear();
                lowered.push_str(word);
                lowered.make_ascii_lowercase();
                if self.words.contains(&lowered) {
                    return true;
                }
                if self.phrases.contains_key(&lowered) {
                    return self.conflicts_by_spans(text);
                }
            }
            i = end;
        }
        false
    }

    /// [`Screen::conflicts`] for any text: every word lower-cased, then looked up.
    fn conflicts_by_spans(&self, text: &str) -> bool {
        // One lower-cased buffer and the word spans in it: no string per word (this runs on
        // every haystack unit of every instance).
        let mut lower = String::with_capacity(text.len());
        let mut spans: Vec<(usize, usize)> = Vec::new();
        word_spans(text, &mut lower, &mut spans);
        let word = |&(a, b): &(usize, usize)| &lower[a..b];
        spans.iter().enumerate().any(|(i, span)| {
            let w = word(span);
            self.may_start_term(w)
                && (self.words.contains(w)
                    || self.phrases.get(w).is_some_and(|list| {
                        list.iter().any(|p| {
                            spans.len() - i >= p.len()
                                && p.iter().zip(&spans[i..]).all(|(pw, s)| word(s) == pw)
                        })
                    }))
        })
    }
}

/// A word's bit in [`Screen::sketch`], from its length and its first and last bytes
/// lower-cased (so an ASCII word and its lower-cased form share it).
fn sketch_bit(word: &str) -> usize {
    let bytes = word.as_bytes();
    let first = bytes.first().map_or(0, u8::to_ascii_lowercase) as u64;
    let last = bytes.last().map_or(0, u8::to_ascii_lowercase) as u64;
    let h = (bytes.len() as u64) | (first << 16) | (last << 32);
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize
}

/// The lower-cased words of `text`: maximal runs of letters and digits, where digit groups
/// joined by a thousands separator (`1,234,567`, `1_234`, `1 234` is two words) count as one.
fn words_of(text: &str) -> Vec<String> {
    let mut lower = String::new();
    let mut spans = Vec::new();
    word_spans(text, &mut lower, &mut spans);
    spans
        .iter()
        .map(|&(a, b)| lower[a..b].to_string())
        .collect()
}

/// [`words_of`] into `lower` (the words, lower-cased, one after another) and `spans` (each
/// word's byte range in `lower`).
fn word_spans(text: &str, lower: &mut String, spans: &mut Vec<(usize, usize)>) {
    let mut start = lower.len();
    let mut last: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        // ASCII, nearly every character of prose: the same test and lower-casing, without the
        // Unicode tables.
        if c.is_ascii_alphanumeric() {
            let lowered = c.to_ascii_lowercase();
            lower.push(lowered);
            last = Some(lowered);
            continue;
        }
        if !c.is_ascii() && c.is_alphanumeric() {
            lower.extend(c.to_lowercase());
            last = lower.chars().next_back();
            continue;
        }
        let digit_group = matches!(c, ',' | '_')
            && lower.len() > start
            && last.is_some_and(|d| d.is_ascii_digit())
            && chars.peek().is_some_and(|d| d.is_ascii_digit());
        if digit_group {
            continue;
        }
        if lower.len() > start {
            spans.push((start, lower.len()));
            start = lower.len();
        }
        last = None;
    }
    if lower.len() > start {
        spans.push((start, lower.len()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ASCII path decides as the general path does, for random screens and texts with
    /// digit groups, phrases, case and other scripts.
    #[test]
    fn ascii_path_agrees_with_the_general_path() {
        let words = [
            "ant",
            "Ant",
            "brave",
            "lantern",
            "1",
            "234",
            "1,234",
            "12_5",
            "x9",
            "Lan",
            "été",
            "ÉTÉ",
            " ",
            " ",
            ", ",
            ".",
            "-",
            "\n",
            "ant-brave",
        ];
        let mut rng = crate::rng::Rng::from_seed_u64(8, crate::rng::Stream::Content);
        let mut decided = [0usize; 2];
        for _ in 0..20_000 {
            let terms: Vec<&str> = (0..rng.index(4))
                .map(|_| words[rng.index(words.len())])
                .collect();
            let screen = Screen::new(&terms);
            let text: String = (0..rng.index(14))
                .map(|_| words[rng.index(words.len())])
                .collect();
            let got = screen.conflicts(&text);
            let want = !screen.is_empty() && screen.conflicts_by_spans(&text);
            assert_eq!(got, want, "{terms:?} in {text:?}");
            decided[usize::from(got)] += 1;
        }
        assert!(decided[0] > 2000 && decided[1] > 1000, "{decided:?}");
    }

    #[test]
    fn whole_words_case_insensitive() {
        let s = Screen::new(["ant", "brave-lantern", "1234567", "Mary"]);
        assert!(s.conflicts("An ant walked by."));
        assert!(!s.conflicts("I want nothing. Antique pants."));
        assert!(s.conflicts("The Brave Lantern is lit."));
        assert!(s.conflicts("A brave-lantern."));
        assert!(!s.conflicts("A brave man with a lantern."));
        assert!(s.conflicts("It cost 1,234,567 coins."));
        assert!(s.conflicts("Code: 1234567."));
        assert!(!s.conflicts("Code: 12345678."));
        assert!(s.conflicts("MARY went home."));
        assert!(!s.conflicts("Maryland is far."));
    }

    #[test]
    fn phrase_at_the_end_and_empty_terms() {
        let s = Screen::new(["access code", "!!"]);
        assert!(s.conflicts("Give me the access code"));
        assert!(!s.conflicts("Give me the access"));
        assert!(!Screen::new(["", "--"]).conflicts("anything at all"));
        assert!(Screen::new(["", "--"]).is_empty());
    }

    /// A second, independent reading of the rule: a term matches when its words, joined by
    /// single spaces, occur in the text's words joined the same way, between spaces.
    fn reference(terms: &[String], text: &str) -> bool {
        let norm = |s: &str| format!(" {} ", words_of(s).join(" "));
        let text = norm(text);
        terms
            .iter()
            .filter(|t| !words_of(t).is_empty())
            .any(|t| text.contains(&norm(t)))
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_the_reference(
            terms in proptest::collection::vec("(ox|Ox|oxen|ant|12|1,2|a-b|B c|é)( (ant|12|ox))?", 0..4),
            text in "((ox|oxen|Ant|want|12|1,2|a|b|c|é|B-C)[ ,.;-]{1,2}){0,12}",
        ) {
            let screen = Screen::new(&terms);
            proptest::prop_assert_eq!(screen.conflicts(&text), reference(&terms, &text));
        }
    }

    #[test]
    fn uuids_match_across_case() {
        let s = Screen::new(["3f2a9c1e-0b7d-4e5f-8a6b-1c2d3e4f5a6b"]);
        assert!(s.conflicts("id 3F2A9C1E-0B7D-4E5F-8A6B-1C2D3E4F5A6B here"));
        assert!(!s.conflicts("id 3f2a9c1e-0b7d-4e5f-8a6b-1c2d3e4f5a6c here"));
    }
}
