//! Counting long lists from their items' own counts.
//!
//! sort, fwe and cwe search for the largest list that fits the length, and each try used to
//! tokenize the whole list again. Their lists are joined where the OpenAI encodings provably
//! split (a space after a character that is not whitespace, a line feed before a digit: see
//! [`Tokenizer::counts_add_at`]), so a list's count is the sum of its items' counts, each
//! tokenized once. Where no such rule is proven (other tokenizers, an item ending in
//! whitespace) these functions return `None` and the caller counts the text whole.

use std::fmt::Write;

use crate::tokenizer::Tokenizer;
use crate::GenError;

/// An item's tokens alone (first in its list) and after the separator that joins it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemTokens {
    /// Tokens of the item first in the list, with nothing before it.
    pub alone: usize,
    /// Tokens of the separator and the item, as every later item is read.
    pub joined: usize,
}

/// `word`'s tokens in a list of words joined by single spaces, if such a list counts as the
/// sum of its words' [`ItemTokens`]: the tokenizer splits before a space that follows the
/// word's last character.
pub fn spaced_word(tok: &Tokenizer, word: &str) -> Result<Option<ItemTokens>, GenError> {
    if !word
        .chars()
        .next_back()
        .is_some_and(|last| splits_before_space_after(tok, last))
    {
        return Ok(None);
    }
    let alone = tok.count(word)?;
    // Numbers (sort's items) are joined by a space that is a token of its own.
    if word.as_bytes()[0].is_ascii_digit() && tok.space_splits_before_digit() {
        return Ok(Some(ItemTokens {
            alone,
            joined: alone + 1,
        }));
    }
    let mut joined = String::with_capacity(word.len() + 1);
    joined.push(' ');
    joined.push_str(word);
    Ok(Some(ItemTokens {
        alone,
        joined: tok.count(&joined)?,
    }))
}

/// Whether the tokenizer provably splits before a space that follows `last`, whatever comes
/// before or after: then a list of space-joined items ending in such characters counts as the
/// sum of its items' counts, and so as at least a token per item.
pub fn splits_before_space_after(tok: &Tokenizer, last: char) -> bool {
    // The rule looks at that character alone: ask it of the character, a space and a letter.
    let mut probe = [0u8; 6];
    let at = last.encode_utf8(&mut probe).len();
    probe[at] = b' ';
    probe[at + 1] = b'x';
    std::str::from_utf8(&probe[..at + 2]).is_ok_and(|probe| tok.counts_add_at(probe, at))
}

/// Tokens of a list of items given in order, when every item has its [`ItemTokens`]: the first
/// item alone and the others joined.
pub fn list_tokens(items: impl IntoIterator<Item = Option<ItemTokens>>) -> Option<usize> {
    let mut items = items.into_iter();
    let mut total = match items.next() {
        None => return Some(0),
        Some(first) => first?.alone,
    };
    for item in items {
        total += item?.joined;
    }
    Some(total)
}

/// Counts for numbered lists whose line k reads `"{k}. {word}"`, lines joined by line feeds
/// (cwe's list). Such a list counts as the sum of `"1."`, `" a\n"`, `"2."`, `" b"`, … when the
/// tokenizer splits after a line feed before a digit and before a space after a full stop;
/// each line number and each word is counted once, as longer lists are asked for.
#[derive(Debug, Default)]
pub struct NumberedList {
    /// Tokens of `"{k}."` at index k − 1.
    numbers: Vec<usize>,
    /// Per word (by index): tokens of `" {word}\n"` and of `" {word}"`.
    words: Vec<(usize, usize)>,
}

impl NumberedList {
    /// The list's text: line k (from 1) holds `words[order[k - 1]]`.
    pub fn text(words: &[String], order: &[usize]) -> String {
        let mut text = String::with_capacity(order.len() * 12);
        for (k, &i) in order.iter().enumerate() {
            if k > 0 {
                text.push('\n');
            }
            let _ = write!(text, "{}. {}", k + 1, words[i]);
        }
        text
    }

    /// Tokens of [`NumberedList::text`], from the counts of its numbers and words; `None` when
    /// the tokenizer gives no such rule. The words are remembered by index: between calls
    /// `words` may only grow.
    pub fn tokens(
        &mut self,
        tok: &Tokenizer,
        words: &[String],
        order: &[usize],
    ) -> Result<Option<usize>, GenError> {
        let sample = "1. a\n2. b";
        if ![2, 5, 7].iter().all(|&at| tok.counts_add_at(sample, at)) {
            return Ok(None);
        }
        for w in &words[self.words.len()..] {
            let line = (tok.count(&format!(" {w}\n"))?, tok.count(&format!(" {w}"))?);
            self.words.push(line);
        }
        while self.numbers.len() < order.len() {
            let k = self.numbers.len() + 1;
            self.numbers.push(tok.count(&format!("{k}."))?);
        }
        let mut total = 0;
        for (k, &i) in order.iter().enumerate() {
            let (followed, last) = self.words[i];
            total += self.numbers[k] + if k + 1 == order.len() { last } else { followed };
        }
        Ok(Some(total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, Stream};

    /// Pieces that stress the pre-tokenizers' joins: digits in runs longer than three,
    /// contractions, punctuation runs, whitespace and line breaks inside items, other scripts,
    /// emoji, and the separator's own characters.
    const BITS: &[&str] = &[
        "7", "12", "345", "6789", "a", "word", "Ab", "'s", "'LL", "...", ",", ".", "-", "/", "\n",
        " ", "  ", "\t", "é", "日本", "😀", "x\u{a0}", "Ω", "#", "1.", "\r\n", "'",
    ];

    fn item(d: &mut Rng) -> String {
        (0..1 + d.index(4))
            .map(|_| BITS[d.index(BITS.len())])
            .collect()
    }

    #[test]
    fn spaced_lists_count_as_the_sum_of_their_words() {
        let mut d = Rng::from_seed_u64(11, Stream::Content);
        for tok in [Tokenizer::O200k, Tokenizer::Cl100k] {
            let mut checked = 0;
            for _ in 0..3000 {
                let words: Vec<String> = (0..1 + d.index(6)).map(|_| item(&mut d)).collect();
                let counts: Vec<Option<ItemTokens>> = words
                    .iter()
                    .map(|w| spaced_word(&tok, w).unwrap())
                    .collect();
                // A word gets counts exactly when it does not end in whitespace, so lists of
                // such words are always counted from their items.
                for (w, c) in words.iter().zip(&counts) {
                    let ends_in_space = w.chars().next_back().is_some_and(char::is_whitespace);
                    assert_eq!(c.is_some(), !ends_in_space, "{w:?}");
                }
                if let Some(sum) = list_tokens(counts) {
                    assert_eq!(sum, tok.count(&words.join(" ")).unwrap(), "{words:?}");
                    checked += 1;
                }
            }
            assert!(checked > 1000, "{checked}");
        }
    }

    /// A space before a text that starts with a digit is a token of its own, for any text
    /// after the digit (the adversarial pieces), by bpe-openai's own pre-tokenizer, which
    /// shares no code with ours; and numbers' joined counts take that rule.
    #[test]
    fn a_space_before_a_digit_is_a_token_of_its_own() {
        let mut d = Rng::from_seed_u64(13, Stream::Content);
        for (tok, reference) in [
            (Tokenizer::O200k, bpe_openai::o200k_base()),
            (Tokenizer::Cl100k, bpe_openai::cl100k_base()),
        ] {
            assert!(tok.space_splits_before_digit());
            for _ in 0..5000 {
                let text = format!("{}{}", d.index(10), item(&mut d));
                let spaced = format!(" {text}");
                assert_eq!(
                    reference.count(&spaced),
                    1 + reference.count(&text),
                    "{text:?}"
                );
                if let Some(counts) = spaced_word(&tok, &text).unwrap() {
                    assert_eq!(counts.joined, reference.count(&spaced), "{text:?}");
                    assert_eq!(counts.alone, reference.count(&text), "{text:?}");
                }
            }
        }
        assert!(!Tokenizer::Gpt2.space_splits_before_digit());
        assert!(!Tokenizer::Words.space_splits_before_digit());
    }

    #[test]
    fn words_ending_in_whitespace_and_other_tokenizers_get_no_counts() {
        assert_eq!(spaced_word(&Tokenizer::O200k, "a ").unwrap(), None);
        assert_eq!(spaced_word(&Tokenizer::O200k, "a\n").unwrap(), None);
        assert_eq!(spaced_word(&Tokenizer::O200k, "").unwrap(), None);
        assert_eq!(spaced_word(&Tokenizer::Chars, "a").unwrap(), None);
        assert_eq!(
            spaced_word(&Tokenizer::Cl100k, "hello").unwrap(),
            Some(ItemTokens {
                alone: 1,
                joined: 1
            })
        );
    }

    #[test]
    fn numbered_lists_count_as_the_sum_of_numbers_and_words() {
        let mut d = Rng::from_seed_u64(5, Stream::Content);
        for tok in [Tokenizer::O200k, Tokenizer::Cl100k] {
            for _ in 0..300 {
                // One list's words grow between calls, as a search asks for longer lists.
                let mut list = NumberedList::default();
                let mut words: Vec<String> = Vec::new();
                for _ in 0..4 {
                    let most = if d.index(10) == 0 { 1200 } else { 12 };
                    let grow = d.index(most);
                    words.extend((0..grow).map(|_| item(&mut d)));
                    if words.is_empty() {
                        continue;
                    }
                    let mut order: Vec<usize> = (0..1 + d.index(2 * words.len()))
                        .map(|_| d.index(words.len()))
                        .collect();
                    d.shuffle(&mut order);
                    let text = NumberedList::text(&words, &order);
                    let got = list.tokens(&tok, &words, &order).unwrap();
                    assert_eq!(got, Some(tok.count(&text).unwrap()), "{text:?}");
                }
            }
        }
        let words = ["a".to_string()];
        let none = NumberedList::default().tokens(&Tokenizer::Words, &words, &[0]);
        assert_eq!(none.unwrap(), None);
    }
}
