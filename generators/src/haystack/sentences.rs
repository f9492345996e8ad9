//! Rule-based, Unicode-aware sentence splitting for user corpora.
//!
//! Needles go only between sentences, so a corpus must be cut where a reader would see a
//! sentence end: after `. ! ?` (and closing quotes or brackets) before whitespace, or after the
//! full-width `。！？` anywhere, but not after common abbreviations or initials.

/// Abbreviations (lower-case, without the final period) after which a period does not end a
/// sentence.
const ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "vs", "etc", "e.g", "i.e", "cf", "no",
    "fig", "figs", "vol", "pp", "ch", "inc", "ltd", "co", "corp", "gen", "col", "capt", "lt",
    "sgt", "rev", "hon", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
    "nov", "dec", "approx", "dept", "est", "al", "ed", "eds",
];

/// Closing quotes and brackets that may follow a sentence's terminator.
pub(crate) const CLOSERS: &[char] = &['"', '\'', '”', '’', ')', ']', '»', '」', '』', '）'];

/// Split one paragraph (no blank lines inside) into sentences, whitespace collapsed.
pub fn split_sentences(paragraph: &str) -> Vec<String> {
    let text: String = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = Vec::new();
    let mut start = 0usize;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0usize;
    while i < chars.len() {
        let (pos, c) = chars[i];
        let full_width = matches!(c, '。' | '！' | '？');
        if matches!(c, '.' | '!' | '?') || full_width {
            // Extend over repeated terminators and closing quotes/brackets.
            let mut j = i + 1;
            while j < chars.len()
                && (matches!(chars[j].1, '.' | '!' | '?' | '。' | '！' | '？')
                    || CLOSERS.contains(&chars[j].1))
            {
                j += 1;
            }
            let end = if j < chars.len() {
                chars[j].0
            } else {
                text.len()
            };
            let followed_by_space = j >= chars.len() || chars[j].1 == ' ';
            // A lower-case word after the terminator continues the sentence ("Hi!" she said).
            let next_lower = chars.get(j + 1).is_some_and(|&(_, n)| n.is_lowercase());
            let boundary = if full_width {
                true
            } else {
                followed_by_space
                    && !next_lower
                    && !(c == '.' && is_abbreviation(&text[start..pos]))
            };
            if boundary {
                let sentence = text[start..end].trim();
                if !sentence.is_empty() {
                    out.push(sentence.to_string());
                }
                start = end;
            }
            i = j;
        } else {
            i += 1;
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest.to_string());
    }
    out
}

/// Whether the word just before a period is an abbreviation or an initial.
fn is_abbreviation(before: &str) -> bool {
    let word = before.rsplit(' ').next().unwrap_or("");
    let word = word.trim_start_matches(['(', '"', '\'', '“', '‘']);
    if word.is_empty() {
        return false;
    }
    let mut letters = word.chars();
    let first = letters.next().unwrap_or(' ');
    // A single capital letter: an initial, as in "J. R. Tolkien".
    if first.is_uppercase() && letters.next().is_none() {
        return true;
    }
    let lower = word.to_lowercase();
    ABBREVIATIONS.contains(&lower.as_str())
}

/// Longest unit, in bytes, a corpus sentence is kept as. Needles go only between units, so a
/// depth can miss its request by up to one unit: a 5 MB "sentence" (a log line, a table, a
/// text without full stops) would make depth labels meaningless. Longer sentences are cut at
/// clause boundaries, then at spaces, then (text without spaces) at character boundaries.
pub const MAX_UNIT_BYTES: usize = 500;

/// One piece of a sentence cut by [`split_long`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece<'a> {
    /// The text of the piece, without the space before it.
    pub text: &'a str,
    /// Whether a space stood before it in the sentence (false for the first piece and for a
    /// cut inside a word).
    pub after_space: bool,
}

/// Cut `sentence` (whitespace already collapsed) into pieces of at most `max` bytes: at the
/// last clause boundary (`, ; : —` and the like followed by a space) that fits, else at the
/// last space that fits, else at the last character boundary that fits. Joining the pieces
/// with a space where `after_space` is set gives back the sentence exactly.
pub fn split_long(sentence: &str, max: usize) -> Vec<Piece<'_>> {
    let max = max.max(4);
    let mut pieces = Vec::new();
    let mut rest = sentence;
    let mut after_space = false;
    while rest.len() > max {
        let window = &rest[..floor_char_boundary(rest, max + 1)];
        // A cut at byte `i` means rest[..i] is the piece and rest[i] is a space.
        let clause = window
            .char_indices()
            .rev()
            .find(|&(i, c)| {
                i > 0
                    && c == ' '
                    && i <= max
                    && window[..i].ends_with([',', ';', ':', '—', '–', '、', '，', '；'])
            })
            .map(|(i, _)| i);
        let space = window
            .char_indices()
            .rev()
            .find(|&(i, c)| i > 0 && i <= max && c == ' ')
            .map(|(i, _)| i);
        let (cut, skip) = match clause.or(space) {
            Some(i) => (i, 1),
            None => (floor_char_boundary(rest, max).max(first_char_len(rest)), 0),
        };
        pieces.push(Piece {
            text: &rest[..cut],
            after_space,
        });
        after_space = skip == 1;
        rest = &rest[cut + skip..];
    }
    if !rest.is_empty() || pieces.is_empty() {
        pieces.push(Piece {
            text: rest,
            after_space,
        });
    }
    pieces
}

/// The largest char boundary of `s` at or below `i`.
fn floor_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Bytes of the first character (so a cut always makes progress).
fn first_char_len(s: &str) -> usize {
    s.chars().next().map_or(s.len(), char::len_utf8)
}

/// Split a document into paragraphs (at blank lines) of sentences.
pub fn split_document(doc: &str) -> Vec<Vec<String>> {
    let normalized = doc.replace("\r\n", "\n");
    let mut paragraphs = Vec::new();
    let mut current = String::new();
    for line in normalized.split('\n') {
        if line.trim().is_empty() {
            if !current.trim().is_empty() {
                paragraphs.push(split_sentences(&current));
            }
            current.clear();
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    if !current.trim().is_empty() {
        paragraphs.push(split_sentences(&current));
    }
    paragraphs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_terminators_quotes_and_abbreviations() {
        let s = split_sentences(
            "Mr. Smith went to St. Ives. He said \"Hello!\" and left. Was it J. R. R. Tolkien? Yes.",
        );
        assert_eq!(
            s,
            vec![
                "Mr. Smith went to St. Ives.",
                "He said \"Hello!\" and left.",
                "Was it J. R. R. Tolkien?",
                "Yes."
            ]
        );
    }

    #[test]
    fn splits_full_width_and_keeps_decimals() {
        let s = split_sentences("今日は晴れ。明日は雨！ The value 3.14 is pi. Done");
        assert_eq!(
            s,
            vec![
                "今日は晴れ。",
                "明日は雨！",
                "The value 3.14 is pi.",
                "Done"
            ]
        );
    }

    fn rejoin(pieces: &[Piece<'_>]) -> String {
        pieces
            .iter()
            .map(|p| format!("{}{}", if p.after_space { " " } else { "" }, p.text))
            .collect()
    }

    #[test]
    fn long_sentences_cut_at_clauses_then_spaces_then_characters() {
        let clauses =
            "alpha beta gamma, delta epsilon; zeta eta theta: iota kappa lambda".repeat(3);
        let pieces = split_long(&clauses, 40);
        assert_eq!(rejoin(&pieces), clauses);
        assert!(pieces.iter().all(|p| p.text.len() <= 40), "{pieces:?}");
        assert!(
            pieces[..pieces.len() - 1]
                .iter()
                .all(|p| p.text.ends_with([',', ';', ':'])),
            "{pieces:?}"
        );
        let words = "word ".repeat(30).trim_end().to_string();
        let pieces = split_long(&words, 22);
        assert_eq!(rejoin(&pieces), words);
        assert!(pieces
            .iter()
            .all(|p| p.text.len() <= 22 && !p.text.is_empty()));
        assert!(pieces.iter().skip(1).all(|p| p.after_space));
        let blob = "ünï".repeat(50);
        let pieces = split_long(&blob, 10);
        assert_eq!(rejoin(&pieces), blob);
        assert!(pieces.iter().all(|p| p.text.len() <= 10 && !p.after_space));
        assert_eq!(
            split_long("short", 10),
            vec![Piece {
                text: "short",
                after_space: false
            }]
        );
    }

    #[test]
    fn paragraphs_and_whitespace() {
        let p = split_document("One line\ncontinues here. Two.\r\n\r\n\n  Next para.  ");
        assert_eq!(
            p,
            vec![
                vec!["One line continues here.".to_string(), "Two.".to_string()],
                vec!["Next para.".to_string()]
            ]
        );
        assert!(split_document("  \n\n ").is_empty());
    }
}
