//! Turning an expanded rule into finished text: articles, capitals and spacing, then the
//! register of a style (contractions for informal writing, older forms for archaic).

use super::lexicon;

choice! {
    /// The register a piece is written in.
    pub enum Style {
        /// No contractions; "furthermore", "with regard to", "Yours sincerely".
        Formal = "formal",
        /// Contractions and chat: "honestly", "turns out", "Cheers".
        Informal = "informal",
        /// Asides, absurd comparisons and mock despair.
        Humorous = "humorous",
        /// Quantities, tolerances, procedures and data.
        Technical = "technical",
        /// "Thou art", "hath", "ere", "verily".
        Archaic = "archaic",
    }
}

/// Marks resolved when a sentence is finished.
pub const ARTICLE_MARK: char = '\u{1}';
/// Capitalise the next letter.
pub const CAP_MARK: char = '\u{2}';

/// Append a literal of the grammar to a sentence being expanded, keeping its spaces tidy as it
/// grows: no space at the start, none doubled (an empty expansion between two spaces) and none
/// before punctuation. A capital mark at the end of `out` is looked past, as it vanishes when
/// the sentence is finished (an article mark stands for a word).
pub fn push_literal(out: &mut String, literal: &str) {
    let bytes = out.as_bytes();
    let mut end = bytes.len();
    while end > 0 && bytes[end - 1] == CAP_MARK as u8 {
        end -= 1;
    }
    let last = if end == 0 { None } else { Some(bytes[end - 1]) };
    let mut literal = literal;
    if matches!(last, None | Some(b' ')) {
        literal = literal.trim_start_matches(' ');
    }
    if last == Some(b' ')
        && end == bytes.len()
        && literal.starts_with([',', '.', ';', ':', '?', '!', ')'])
    {
        out.pop();
    }
    out.push_str(literal);
}

/// Resolve article and capital marks and capitalise the first letter; with `terminate`, make
/// sure the text ends with punctuation. Spaces were kept tidy while the text was expanded
/// ([`push_literal`]); a space left at either end is dropped.
///
/// It runs once per sentence of every haystack, so it looks only for the marks (a byte search)
/// and copies the text between them whole.
pub fn finish(raw: &str, terminate: bool) -> String {
    let raw = raw.trim_matches(' ');
    let bytes = raw.as_bytes();
    let mut out = String::with_capacity(raw.len() + 4);
    let mut capital = true;
    let mut pos = 0usize;
    while pos <= bytes.len() {
        let mark = memchr::memchr2(ARTICLE_MARK as u8, CAP_MARK as u8, &bytes[pos..])
            .map_or(bytes.len(), |k| pos + k);
        let mut segment = &raw[pos..mark];
        if capital {
            // Up to the first letter or digit nothing changes; a letter is capitalised.
            if let Some((k, c)) = segment.char_indices().find(|(_, c)| c.is_alphanumeric()) {
                capital = false;
                if c.is_alphabetic() {
                    out.push_str(segment[..k].trim_start_matches(' '));
                    out.extend(c.to_uppercase());
                    segment = &segment[k + c.len_utf8()..];
                }
            }
        }
        if out.is_empty() {
            segment = segment.trim_start_matches(' ');
        }
        out.push_str(segment);
        if mark == bytes.len() {
            break;
        }
        if bytes[mark] == ARTICLE_MARK as u8 {
            let next_word = raw[mark + 1..]
                .trim_start_matches([' ', CAP_MARK, ARTICLE_MARK])
                .split([' ', ',', '.'])
                .next()
                .unwrap_or("");
            out.push_str(match (capital, lexicon::takes_an(next_word)) {
                (true, true) => "An",
                (true, false) => "A",
                (false, true) => "an",
                (false, false) => "a",
            });
            capital = false;
        } else {
            capital = true;
        }
        pos = mark + 1;
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

    /// Expand literals and marks as the engine does, then finish.
    fn built(parts: &[&str]) -> String {
        let mut raw = String::new();
        for p in parts {
            match *p {
                "{a}" => raw.push(ARTICLE_MARK),
                "{^}" => raw.push(CAP_MARK),
                lit => push_literal(&mut raw, lit),
            }
        }
        finish(&raw, true)
    }

    #[test]
    fn finishing_resolves_marks_and_spaces() {
        assert_eq!(
            built(&[
                "{a}",
                " orchard",
                " ",
                "",
                " , then ",
                "{a}",
                " 8-mile road",
                " ",
                "."
            ]),
            "An orchard, then an 8-mile road."
        );
        assert_eq!(
            built(&[
                "\"",
                "{^}",
                "{a}",
                " house",
                " ",
                "",
                "stood",
                " ",
                "",
                ",\" said Ann",
                "."
            ]),
            "\"A house stood,\" said Ann."
        );
        assert_eq!(
            built(&[" ", "{^}", " in ", "{a}", " hour", " ", "?"]),
            "In an hour?"
        );
        assert_eq!(
            built(&["élan", " ", "", " is ", "{a}", " ", "ice"]),
            "Élan is an ice."
        );
        assert_eq!(finish("the quiet lane", false), "The quiet lane");
        assert_eq!(finish("the quiet lane ", true), "The quiet lane.");
        assert_eq!(finish("12 boats", true), "12 boats.");
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
