//! Turning an expanded rule into finished text: articles, capitals and spacing, then the
//! register of a style (contractions for informal writing, older forms for archaic).

use super::lexicon;
use super::writings::Style;

/// Marks resolved when a sentence is finished.
pub const ARTICLE_MARK: char = '\u{1}';
/// Capitalise the next letter.
pub const CAP_MARK: char = '\u{2}';

/// Resolve article and capital marks, tidy spaces (none doubled, none before punctuation) and
/// capitalise the first letter; with `terminate`, make sure the text ends with punctuation.
pub fn finish(raw: &str, terminate: bool) -> String {
    let mut out = String::with_capacity(raw.len() + 4);
    let mut capital = true;
    let mut i = 0usize;
    while let Some(c) = raw[i..].chars().next() {
        let after = i + c.len_utf8();
        match c {
            ARTICLE_MARK => {
                let next_word = raw[after..]
                    .trim_start_matches([' ', CAP_MARK, ARTICLE_MARK])
                    .split([' ', ',', '.'])
                    .next()
                    .unwrap_or("");
                let article = if lexicon::takes_an(next_word) {
                    "an"
                } else {
                    "a"
                };
                if capital {
                    out.push_str(if article == "an" { "An" } else { "A" });
                    capital = false;
                } else {
                    out.push_str(article);
                }
            }
            CAP_MARK => capital = true,
            ' ' => {
                let next = raw[after..].chars().next();
                let skip = out.is_empty()
                    || out.ends_with([' ', '\n'])
                    || out.ends_with('"') && out.matches('"').count() % 2 == 1
                    || matches!(
                        next,
                        None | Some(' ' | ',' | '.' | ';' | ':' | '?' | '!' | ')' | '\n')
                    )
                    || next == Some('"') && out.matches('"').count() % 2 == 1;
                if !skip {
                    out.push(' ');
                }
            }
            _ if capital && c.is_alphabetic() => {
                out.extend(c.to_uppercase());
                capital = false;
            }
            _ if !capital => {
                // Up to the next space or mark nothing changes state (a character is copied
                // as it is): copy the run whole. The three are ASCII, so a byte search finds
                // a character boundary.
                let run = raw.as_bytes()[i..]
                    .iter()
                    .position(|&b| b == b' ' || b == ARTICLE_MARK as u8 || b == CAP_MARK as u8)
                    .unwrap_or(raw.len() - i);
                out.push_str(&raw[i..i + run]);
                i += run;
                continue;
            }
            _ => {
                if c.is_alphanumeric() {
                    capital = false;
                }
                out.push(c);
            }
        }
        i = after;
    }
    if terminate && !out.ends_with(['.', '?', '!', '"', ':']) {
        out.push('.');
    }
    out
}

/// Informal contractions: (written out, contracted). Longest first where one contains another.
const CONTRACTIONS: &[(&str, &str)] = &[
    ("do not", "don't"),
    ("does not", "doesn't"),
    ("did not", "didn't"),
    ("is not", "isn't"),
    ("are not", "aren't"),
    ("was not", "wasn't"),
    ("were not", "weren't"),
    ("have not", "haven't"),
    ("has not", "hasn't"),
    ("had not", "hadn't"),
    ("cannot", "can't"),
    ("will not", "won't"),
    ("would not", "wouldn't"),
    ("should not", "shouldn't"),
    ("could not", "couldn't"),
    ("I am", "I'm"),
    ("I have", "I've"),
    ("I will", "I'll"),
    ("I would", "I'd"),
    ("it is", "it's"),
    ("It is", "It's"),
    ("that is", "that's"),
    ("That is", "That's"),
    ("there is", "there's"),
    ("There is", "There's"),
    ("we are", "we're"),
    ("We are", "We're"),
    ("they are", "they're"),
    ("They are", "They're"),
    ("you are", "you're"),
    ("You are", "You're"),
    ("we have", "we've"),
    ("they have", "they've"),
    ("you have", "you've"),
    ("what is", "what's"),
    ("What is", "What's"),
    ("let us", "let's"),
    ("Let us", "Let's"),
];

/// Archaic forms: (modern, archaic).
const ARCHAIC: &[(&str, &str)] = &[
    ("you are", "thou art"),
    ("You are", "Thou art"),
    ("you were", "thou wert"),
    ("you have", "thou hast"),
    ("You have", "Thou hast"),
    ("you can", "thou canst"),
    ("You can", "Thou canst"),
    ("you will", "thou wilt"),
    ("Do you", "Dost thou"),
    ("do you", "dost thou"),
    ("Have you", "Hast thou"),
    ("Can you", "Canst thou"),
    ("your", "thy"),
    ("Your", "Thy"),
    ("has", "hath"),
    ("does", "doth"),
    ("often", "oft"),
    ("before", "ere"),
    ("Before", "Ere"),
    ("between", "betwixt"),
    ("among", "amongst"),
    ("while", "whilst"),
    ("While", "Whilst"),
    ("perhaps", "perchance"),
    ("Perhaps", "Perchance"),
    ("Yes", "Aye"),
    ("nothing", "naught"),
    ("Nothing", "Naught"),
    ("over", "o'er"),
    ("soon", "anon"),
];

/// `text` in the register of `style`: informal writing contracts ("don't", "it's"), archaic
/// writing takes older forms ("thou art", "hath", "ere"); other styles are left as they are.
pub fn restyle(text: &str, style: Option<Style>) -> String {
    match style {
        Some(Style::Informal) => replace_words(text, CONTRACTIONS),
        Some(Style::Archaic) => replace_words(text, ARCHAIC),
        _ => text.to_string(),
    }
}

/// Replace whole-word occurrences of each pair's first element (a word sequence) by its second.
fn replace_words(text: &str, pairs: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    'scan: while i < text.len() {
        let at_word_start = i == 0 || !is_word_byte(bytes[i - 1]);
        if at_word_start {
            for (from, to) in pairs {
                if text[i..].starts_with(from) {
                    let end = i + from.len();
                    if end == text.len() || !is_word_byte(bytes[end]) {
                        out.push_str(to);
                        i = end;
                        continue 'scan;
                    }
                }
            }
        }
        let c = text[i..].chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'\'' || b >= 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finishing_resolves_marks_and_spaces() {
        let raw = format!("{ARTICLE_MARK} orchard  , then {ARTICLE_MARK} 8-mile road .");
        assert_eq!(finish(&raw, true), "An orchard, then an 8-mile road.");
        let raw = format!("\"{CAP_MARK}{ARTICLE_MARK} house  stood \", said Ann .");
        assert_eq!(finish(&raw, true), "\"A house stood\", said Ann.");
        assert_eq!(finish("the quiet lane", false), "The quiet lane");
        assert_eq!(finish("the quiet lane", true), "The quiet lane.");
    }

    #[test]
    fn styles_change_register_on_whole_words_only() {
        let s = "I am sure it is late, and you are right: the hasp does not shut.";
        assert_eq!(
            restyle(s, Some(Style::Informal)),
            "I'm sure it's late, and you're right: the hasp doesn't shut."
        );
        assert_eq!(
            restyle(
                "Your boat has sailed before dawn, and you are glad.",
                Some(Style::Archaic)
            ),
            "Thy boat hath sailed ere dawn, and thou art glad."
        );
        // "has" inside "chase", "over" inside "clover" stay.
        assert_eq!(
            restyle("the chase over clover", Some(Style::Archaic)),
            "the chase o'er clover"
        );
        assert_eq!(restyle(s, Some(Style::Formal)), s);
        assert_eq!(restyle(s, None), s);
    }
}
