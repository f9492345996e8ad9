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

const CLOSERS: &[char] = &['"', '\'', '”', '’', ')', ']', '»', '」', '』', '）'];

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
