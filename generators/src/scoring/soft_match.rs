//! RULER v2's scorers, as NeMo-Skills runs them for `nemo_skills/dataset/ruler2`:
//! `eval_ruler2` (`nemo_skills/evaluation/evaluator/ruler.py`, branch `chsieh/ruler2`) for the
//! soft match, and `eval_mcq` (`evaluator/mcq.py` with `math_grader.extract_answer`, its
//! defaults: boxed first, then the regex, "relaxed") for the two tasks scored as multiple choice.
//!
//! **Soft match** of a prediction against one reference:
//! `s = max(1 if ref ⊂ pred else 0, 1 − WER)`, both lower-cased (Python's `str.lower`), with
//! `WER = edit distance between the word lists / number of reference words`, words being
//! Python's `str.split()` (whitespace runs; punctuation stays on its word), the distance
//! Levenshtein's with unit costs (`editdistance.eval`). A reference with no words has
//! `WER = ∞`, so only the substring test can score it. `1 − WER` is not clipped: it can go
//! below zero, where the substring term's 0 wins, so `s` lies in [0, 1].
//!
//! Before scoring, the prediction keeps only what follows the last `</think>`, then only what
//! follows the last `Answer:` (both case-sensitive). The modes:
//!
//! - `all`: the mean of `s` over the references;
//! - `part`: copied documents are deleted first — each `Document <digits>:` with everything
//!   after it up to and including the first blank line (`\n\n`; digits are any Unicode
//!   decimal digits; a block with no blank line after it stays) — then the best `s`;
//! - `2steps`: only the last paragraph (what follows the last `\n\n`, splitting left to
//!   right) is kept, then the mean of `s`.
//!
//! With no references the score is 0 (NeMo Gym's rule; NeMo-Skills divides by zero).
//! NeMo Gym's port (`resources_servers/ruler2/app.py`) skips the `</think>` and `Answer:`
//! cuts and orders the letter extraction differently; NeMo-Skills is followed here.
//!
//! **Multiple-choice letter** ([`multiple_choice_letter`]), in NeMo-Skills' order:
//!
//! 1. the content of the last `\boxed{…}` (from the last `\boxed`, braces counted until they
//!    balance; it must be `\boxed{` exactly), if not empty; else the text after the first
//!    `The final answer is ` on the output's last line (the line before a final `\n` counts
//!    as last);
//! 2. if that is one character, it is the answer, whatever it is; if longer, its last
//!    standalone capital `A`–`Z` (no letter, digit or `_` on either side), if any;
//! 3. failing both, the last `Answer:` in the whole output — case-insensitive, with up to two
//!    `*`/`_` around the word, whitespace before the colon, up to two of whitespace, `*`, `_`
//!    after it, then whitespace — followed by one letter that no letter or digit follows,
//!    upper-cased.

use super::pystr::{is_decimal, is_space, is_word, last_piece, split_whitespace};

/// How the soft match combines several references.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SoftMatchMode {
    /// The mean over references.
    All,
    /// Copied `Document N:` blocks removed, then the best reference.
    Part,
    /// The last paragraph only, then the mean over references.
    TwoSteps,
}

impl SoftMatchMode {
    /// The mode's name in NeMo-Skills (`match_type`).
    pub fn as_str(self) -> &'static str {
        match self {
            SoftMatchMode::All => "all",
            SoftMatchMode::Part => "part",
            SoftMatchMode::TwoSteps => "2steps",
        }
    }

    /// The mode NeMo-Skills names `name`.
    pub fn parse(name: &str) -> Option<SoftMatchMode> {
        [
            SoftMatchMode::All,
            SoftMatchMode::Part,
            SoftMatchMode::TwoSteps,
        ]
        .into_iter()
        .find(|m| m.as_str() == name)
    }
}

/// RULER v2's soft match of `prediction` against `refs` in `mode`, in [0, 1].
pub fn ruler2_soft_match<R: AsRef<str>>(prediction: &str, refs: &[R], mode: SoftMatchMode) -> f64 {
    if refs.is_empty() {
        return 0.0;
    }
    let answer = last_piece(last_piece(prediction, "</think>"), "Answer:");
    let scored = match mode {
        SoftMatchMode::All => answer.to_lowercase(),
        SoftMatchMode::Part => without_documents(answer).to_lowercase(),
        SoftMatchMode::TwoSteps => last_piece(answer, "\n\n").to_lowercase(),
    };
    let each = refs.iter().map(|r| soft_match_one(&scored, r.as_ref()));
    match mode {
        SoftMatchMode::Part => each.fold(f64::NEG_INFINITY, f64::max),
        SoftMatchMode::All | SoftMatchMode::TwoSteps => {
            let total = each.fold(0.0, |sum, s| sum + s);
            total / refs.len() as f64
        }
    }
}

/// `max(1 if ref ⊂ pred else 0, 1 − WER)` for a prediction already lower-cased.
fn soft_match_one(prediction_lower: &str, reference: &str) -> f64 {
    let reference = reference.to_lowercase();
    let contained = if prediction_lower.contains(&reference) {
        1.0
    } else {
        0.0
    };
    let hyp: Vec<&str> = split_whitespace(prediction_lower).collect();
    let refw: Vec<&str> = split_whitespace(&reference).collect();
    let wer = if refw.is_empty() {
        f64::INFINITY
    } else {
        word_edit_distance(&hyp, &refw) as f64 / refw.len() as f64
    };
    f64::max(contained, 1.0 - wer)
}

/// Levenshtein distance between two word lists (insert, delete, substitute: 1 each).
pub fn word_edit_distance(a: &[&str], b: &[&str]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, wa) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, wb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(wa != wb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// `text` with every copied document block removed: `Document <digits>:` through the first
/// blank line after it, matched left to right without overlaps.
fn without_documents(text: &str) -> String {
    const HEAD: &str = "Document ";
    let mut out = String::with_capacity(text.len());
    let (mut kept_to, mut search_from) = (0, 0);
    while let Some(at) = text[search_from..].find(HEAD) {
        let start = search_from + at;
        search_from = start + 1;
        let after_head = &text[start + HEAD.len()..];
        let digits = after_head
            .char_indices()
            .find(|&(_, c)| !is_decimal(c))
            .map_or(after_head.len(), |(i, _)| i);
        if digits == 0 || !after_head[digits..].starts_with(':') {
            continue;
        }
        let body = start + HEAD.len() + digits + 1;
        let Some(blank) = text[body..].find("\n\n") else {
            continue;
        };
        out.push_str(&text[kept_to..start]);
        kept_to = body + blank + 2;
        search_from = kept_to;
    }
    out.push_str(&text[kept_to..]);
    out
}

/// The answer letter NeMo-Skills' multiple-choice evaluator reads from `prediction`, if any.
pub fn multiple_choice_letter(prediction: &str) -> Option<char> {
    let extracted = match last_boxed(prediction) {
        Some(inner) if !inner.is_empty() => Some(inner),
        _ => final_answer_phrase(prediction),
    };
    let from_extracted = extracted.and_then(|e| {
        let mut chars = e.chars();
        match (chars.next(), chars.next()) {
            (Some(only), None) => Some(only),
            _ => last_standalone_capital(e),
        }
    });
    from_extracted.or_else(|| last_answer_colon_letter(prediction))
}

/// The content of the last `\boxed{…}`, braces balanced.
fn last_boxed(text: &str) -> Option<&str> {
    const BOXED: &str = "\\boxed";
    let start = text.rfind(BOXED)?;
    let mut open: i64 = 0;
    for (i, c) in text[start..].char_indices() {
        match c {
            '{' => open += 1,
            '}' => {
                open -= 1;
                if open == 0 {
                    let whole = &text[start..start + i + 1];
                    return whole
                        .strip_prefix("\\boxed{")
                        .and_then(|w| w.strip_suffix('}'));
                }
            }
            _ => {}
        }
    }
    None
}

/// The text after the first `The final answer is ` of the last line, if not empty.
fn final_answer_phrase(text: &str) -> Option<&str> {
    const PHRASE: &str = "The final answer is ";
    let mut from = 0;
    while let Some(at) = text[from..].find(PHRASE) {
        let rest = &text[from + at + PHRASE.len()..];
        let line = rest.strip_suffix('\n').unwrap_or(rest);
        if !line.is_empty() && !line.contains('\n') {
            return Some(line);
        }
        from += at + 1;
    }
    None
}

/// The last capital `A`–`Z` with no word character on either side.
fn last_standalone_capital(text: &str) -> Option<char> {
    let chars: Vec<char> = text.chars().collect();
    (0..chars.len())
        .rev()
        .map(|i| (i, chars[i]))
        .find_map(|(i, c)| {
            let alone = c.is_ascii_uppercase()
                && (i == 0 || !is_word(chars[i - 1]))
                && chars.get(i + 1).is_none_or(|&n| !is_word(n));
            alone.then_some(c)
        })
}

/// Whether `c` matches `[A-Z]` in a case-insensitive Python pattern: ASCII letters and the
/// four characters Unicode case-folds onto them (İ, ı, ſ and the Kelvin sign).
fn is_letter_ignoring_case(c: char) -> bool {
    c.is_ascii_alphabetic() || matches!(c, '\u{130}' | '\u{131}' | '\u{17f}' | '\u{212a}')
}

/// Whether `c` and the pattern letter `p` (lower-case ASCII) are equal ignoring case, as a
/// case-insensitive Python pattern compares them (`s` also matches `ſ`).
fn same_letter_ignoring_case(c: char, p: char) -> bool {
    c.to_ascii_lowercase() == p || (p == 's' && c == '\u{17f}')
}

/// The upper-cased letter of the last `Answer: X` (see the module's rule 3).
fn last_answer_colon_letter(text: &str) -> Option<char> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = None;
    let mut at = 0;
    while at < chars.len() {
        match answer_colon_at(&chars, at) {
            Some((letter, end)) => {
                found = Some(letter);
                at = end;
            }
            None => at += 1,
        }
    }
    found.map(|c| c.to_uppercase().next().unwrap_or(c))
}

/// A match of the `Answer: X` pattern starting exactly at `start`: the letter and the index
/// after it.
fn answer_colon_at(chars: &[char], start: usize) -> Option<(char, usize)> {
    let is_mark = |c: char| c == '*' || c == '_';
    let word_at = |i: usize| {
        "answer".chars().enumerate().all(|(k, p)| {
            chars
                .get(i + k)
                .is_some_and(|&c| same_letter_ignoring_case(c, p))
        })
    };
    // Up to two marks may open the match; the word must follow them directly.
    let marks = chars[start..]
        .iter()
        .take(2)
        .take_while(|&&c| is_mark(c))
        .count();
    let word = (0..=marks).rev().map(|k| start + k).find(|&w| word_at(w))?;
    let mut i = word + "answer".len();
    // Up to two marks, whitespace, then the colon.
    let mut closing = 0;
    while closing < 2 && chars.get(i).is_some_and(|&c| is_mark(c)) {
        (i, closing) = (i + 1, closing + 1);
    }
    while chars.get(i).is_some_and(|&c| is_space(c)) {
        i += 1;
    }
    if chars.get(i) != Some(&':') {
        return None;
    }
    i += 1;
    // Up to two of whitespace and marks, then only whitespace, then the letter.
    let lead = i;
    while chars.get(i).is_some_and(|&c| is_space(c) || is_mark(c)) {
        if i >= lead + 2 && !is_space(chars[i]) {
            return None;
        }
        i += 1;
    }
    let letter = *chars.get(i).filter(|&&c| is_letter_ignoring_case(c))?;
    let next = chars.get(i + 1).copied();
    if next.is_some_and(|n| is_letter_ignoring_case(n) || n.is_ascii_digit()) {
        return None;
    }
    Some((letter, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use SoftMatchMode::{All, Part, TwoSteps};

    fn score(prediction: &str, refs: &[&str], mode: SoftMatchMode) -> f64 {
        ruler2_soft_match(prediction, refs, mode)
    }

    #[test]
    fn substring_or_word_error_rate() {
        let refs = ["1234567890", "9876543210"];
        assert_eq!(
            score("The values are 1234567890 and 9876543210.", &refs, All),
            1.0
        );
        assert_eq!(score("The value is 1234567890.", &refs, All), 0.5);
        assert_eq!(
            score("the quick brown fox", &["The Quick Brown Fox"], All),
            1.0
        );
        // Two of four words substituted.
        assert_eq!(
            score("a quick brown dog", &["the quick brown fox"], All),
            0.5
        );
        // 1 − WER below zero loses to the substring term's 0.
        assert_eq!(
            score(
                "one two three four five six seven eight",
                &["alpha beta"],
                All
            ),
            0.0
        );
        assert_eq!(score("", &["x"], All), 0.0);
        // A reference without words: only the substring test can score it.
        assert_eq!(score("anything", &[""], All), 1.0);
        assert_eq!(score("anything", &["  "], All), 0.0);
        assert_eq!(score("anything", &[] as &[&str], All), 0.0);
    }

    #[test]
    fn lowercasing_is_pythons() {
        // Final sigma: "ΣΟΦΟΣ" lowers to "σοφος", so "σοφοσ" is another word.
        assert_eq!(score("ΣΟΦΟΣ", &["σοφος"], All), 1.0);
        assert_eq!(score("ΣΟΦΟΣ", &["σοφοσ"], All), 0.0);
        // Lowercasing never folds: ß stays ß.
        assert_eq!(score("Straße", &["STRASSE"], All), 0.0);
    }

    #[test]
    fn after_the_last_think_then_the_last_answer() {
        let p = "<think>Answer: 111</think>The answer is Answer: 222";
        assert_eq!(score(p, &["222"], All), 1.0);
        assert_eq!(score(p, &["111"], All), 0.0);
        assert_eq!(score("Answer: 1 Answer: 2", &["1"], All), 0.0);
        assert_eq!(score("answer: 1", &["answer: 1"], All), 1.0);
    }

    #[test]
    fn part_deletes_copied_documents() {
        let p = "Document 1234567:\nParis\nIt is big.\n\nAnswer: Paris";
        assert_eq!(score(p, &["Paris"], Part), 1.0);
        let p = "Document 1234567:\nTitle\nThe river Seine.\n\nThe Seine";
        assert_eq!(score(p, &["the seine", "seine river"], Part), 1.0);
        let p = "Document 1234567:\nTitle\nThe river Seine.\n\nLondon";
        assert_eq!(score(p, &["seine"], Part), 0.0);
        // Any decimal digits label a document.
        assert_eq!(
            score(
                "Document \u{661}\u{662}:\nSeine\n\nLondon",
                &["seine"],
                Part
            ),
            0.0
        );
        // Without a `\n\n` after it (CRLF text, or no blank line) a block stays.
        assert_eq!(
            score("Document 12:\r\nSeine\r\n\r\nLondon", &["seine"], Part),
            1.0
        );
        assert_eq!(score("Document 12: Seine", &["seine"], Part), 1.0);
        assert_eq!(
            without_documents("a Document 1:x\n\nb Document 2:\n\nc"),
            "a b c"
        );
        assert_eq!(
            without_documents("Document :x\n\nDocument 3\n\n"),
            "Document :x\n\nDocument 3\n\n"
        );
    }

    #[test]
    fn two_steps_scores_the_last_paragraph() {
        assert_eq!(
            score("Q1 text\n\nQ2 text\n\nQ2 text", &["q2 text"], TwoSteps),
            1.0
        );
        assert_eq!(
            score("Q1 text\n\nQ2 text\n\n\nQ2 text", &["q2 text"], TwoSteps),
            1.0
        );
        assert_eq!(score("Q1 text\n\nQ9 other", &["q1 text"], TwoSteps), 0.0);
        assert_eq!(score("Q1 text\n\nQ9 other", &["q1 text"], All), 1.0);
    }

    #[test]
    fn word_edit_distance_is_levenshtein() {
        assert_eq!(word_edit_distance(&[], &[]), 0);
        assert_eq!(word_edit_distance(&["a", "b"], &[]), 2);
        assert_eq!(word_edit_distance(&[], &["a"]), 1);
        assert_eq!(word_edit_distance(&["a", "b", "c"], &["a", "c"]), 1);
        assert_eq!(
            word_edit_distance(
                &["k", "i", "t", "t", "e", "n"],
                &["s", "i", "t", "t", "i", "n", "g"]
            ),
            3
        );
    }

    #[test]
    fn mode_names() {
        for m in [All, Part, TwoSteps] {
            assert_eq!(SoftMatchMode::parse(m.as_str()), Some(m));
        }
        assert_eq!(SoftMatchMode::parse("any"), None);
    }

    #[test]
    fn multiple_choice_letters_as_nemo_skills_reads_them() {
        // Expected values printed by the Python rule for each text.
        let cases: &[(&str, Option<char>)] = &[
            ("\\boxed{B}", Some('B')),
            ("so \\boxed{A} then \\boxed{C}", Some('C')),
            ("\\boxed{(D)}", Some('D')),
            ("\\boxed{\\text{B}}", Some('B')),
            ("\\boxed{}\nThe final answer is C", Some('C')),
            ("\\boxed {A}", None),
            ("\\boxed{b}", Some('b')),
            ("\\boxed{x}", Some('x')),
            ("\\boxed{ }", Some(' ')),
            ("\\boxed{unbalanced", None),
            ("\\boxed{A or B_}", Some('A')),
            ("\\boxed{AB}", None),
            ("\\boxed{B\u{301}}", Some('B')),
            ("\\boxed{B\u{93f}}", Some('B')),
            ("The final answer is B.", Some('B')),
            ("The final answer is B\n", Some('B')),
            ("The final answer is B\n\n", None),
            ("The final answer is B\nmore", None),
            ("The final answer is (B) because A", Some('A')),
            ("The final answer is  \n", Some(' ')),
            ("The final answer is The final answer is B", Some('B')),
            ("Answer: C", Some('C')),
            ("**Answer:** d", Some('D')),
            ("answer: c", Some('C')),
            ("Answer: Apple", None),
            ("Answer: A1", None),
            ("Answer: \u{131}", Some('I')),
            ("An\u{17f}wer: B", Some('B')),
            ("Answer:*_ C", Some('C')),
            ("Answer: _* C", None),
            ("Answer: \u{3000} C", Some('C')),
            ("Answer :B", Some('B')),
            ("Answer***: B", None),
            ("__Answer__: B", Some('B')),
            ("***Answer: B", Some('B')),
            ("Answer: Answer: B", Some('B')),
            ("Answer: B and Answer: C", Some('C')),
            ("Answer: B\u{301}", Some('B')),
            ("Answer:B\u{93f}", Some('B')),
            ("Answer: \u{212a}", Some('\u{212a}')),
            ("Answer: \u{130}", Some('\u{130}')),
            ("nothing here", None),
            ("", None),
        ];
        for &(text, want) in cases {
            assert_eq!(multiple_choice_letter(text), want, "{text:?}");
        }
    }
}
