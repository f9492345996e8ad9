//! GraphWalks' F1 over node sets, parsed as lm-eval's `graphwalks` task parses
//! (`lm_eval/tasks/graphwalks/utils.py`: `extract_answer_list`, `extract_answer_list_flexible`,
//! `process_results`).
//!
//! **Parsing.** Trailing `\n`s come off the prediction (only `\n`: a final `\r\n\r\n` leaves a
//! last line of `\r`), and it is cut into lines at `\n`. *Strict* ([`graph_f1`]) reads only the
//! last line, which must contain `Final Answer:`; *flexible* ([`graph_flexible_f1`]) takes the
//! lowest line that parses. A line parses when, at the leftmost `Final Answer:` that works,
//! optional whitespace leads to `[`, and a `]` follows somewhere after it; the list is the text
//! between that `[` and the line's *last* `]`. A list that is blank is empty; otherwise it is
//! split at every `,`, blank pieces are dropped, and each piece is stripped of whitespace and
//! then of `'` and `"` at both ends (so `''` is the empty id). A prediction with no parsing
//! line is the empty list. Whitespace is Python's (`\s`, `str.strip`).
//!
//! **Scoring.** Predicted and gold ids are sets (duplicates count once); `P = |P∩G| / |P|`,
//! `R = |P∩G| / |G|` (0 for an empty set), `F1 = 2PR / (P + R)`, 0 when `P + R = 0`, except
//! that an empty prediction for an empty gold set scores 1. There the anchors disagree:
//! lm-eval scores that case 0 (so a correct "no nodes" answer earns nothing), NeMo Gym and
//! openbench 1; we follow the latter. openbench also parses differently (case-insensitive,
//! the list must end the stripped output, no quote stripping).

use std::collections::BTreeSet;

use super::pystr::{is_space, strip};

/// What introduces the answer list.
pub const FINAL_ANSWER: &str = "Final Answer:";

/// The F1 of the ids on the prediction's last line against `gold` (lm-eval's `f1`, with an
/// empty answer to an empty gold set scoring 1).
pub fn graph_f1(prediction: &str, gold: &[String]) -> f64 {
    set_f1(&final_answer_strict(prediction), gold)
}

/// The F1 of the ids on the lowest line holding a `Final Answer: [...]` (lm-eval's
/// `flexible_f1`, with the same rule for empty sets).
pub fn graph_flexible_f1(prediction: &str, gold: &[String]) -> f64 {
    set_f1(&final_answer_flexible(prediction), gold)
}

/// The ids the strict parser reads: from the last line only, empty when it does not parse.
pub fn final_answer_strict(prediction: &str) -> Vec<&str> {
    let last = lines_from_bottom(prediction).next().unwrap_or("");
    if !last.contains(FINAL_ANSWER) {
        return Vec::new();
    }
    bracketed(last).map(list_items).unwrap_or_default()
}

/// The ids the flexible parser reads: from the lowest line that parses, empty when none does.
pub fn final_answer_flexible(prediction: &str) -> Vec<&str> {
    lines_from_bottom(prediction)
        .find_map(bracketed)
        .map(list_items)
        .unwrap_or_default()
}

/// Set F1 of `predicted` against `gold`, with both empty scoring 1.
pub fn set_f1<P: AsRef<str>, G: AsRef<str>>(predicted: &[P], gold: &[G]) -> f64 {
    let predicted: BTreeSet<&str> = predicted.iter().map(AsRef::as_ref).collect();
    let gold: BTreeSet<&str> = gold.iter().map(AsRef::as_ref).collect();
    if predicted.is_empty() && gold.is_empty() {
        return 1.0;
    }
    let overlap = predicted.intersection(&gold).count() as f64;
    let recall = if gold.is_empty() {
        0.0
    } else {
        overlap / gold.len() as f64
    };
    let precision = if predicted.is_empty() {
        0.0
    } else {
        overlap / predicted.len() as f64
    };
    if recall + precision > 0.0 {
        2.0 * (recall * precision) / (recall + precision)
    } else {
        0.0
    }
}

/// The lines of `prediction` without its trailing `\n`s, last first.
fn lines_from_bottom(prediction: &str) -> impl Iterator<Item = &str> {
    prediction.trim_end_matches('\n').rsplit('\n')
}

/// The text between `[` and the last `]` of a line's answer list, if the line has one.
fn bracketed(line: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(at) = line[from..].find(FINAL_ANSWER) {
        let start = from + at;
        let after = line[start + FINAL_ANSWER.len()..].trim_start_matches(is_space);
        if let Some(open) = after.strip_prefix('[') {
            if let Some(close) = open.rfind(']') {
                return Some(&open[..close]);
            }
        }
        // The marker begins with an ASCII letter, so one byte on is the next character.
        from = start + 1;
    }
    None
}

/// The ids of a list's inner text.
fn list_items(inner: &str) -> Vec<&str> {
    if strip(inner).is_empty() {
        return Vec::new();
    }
    inner
        .split(',')
        .map(strip)
        .filter(|item| !item.is_empty())
        .map(|item| item.trim_matches(|c| c == '\'' || c == '"'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn gold_reordered_duplicated_and_quoted_all_score_one() {
        let gold = ids(&["a1b2c3d4e5", "0f9e8d7c6b"]);
        for p in [
            "Final Answer: [a1b2c3d4e5, 0f9e8d7c6b]",
            "Some reasoning.\nFinal Answer: [0f9e8d7c6b, a1b2c3d4e5]\n\n",
            "Final Answer:[ 'a1b2c3d4e5' , \"0f9e8d7c6b\", a1b2c3d4e5 ]",
            "Final Answer: [a1b2c3d4e5, 0f9e8d7c6b,]\r\n",
            "Final Answer:\u{3000}[a1b2c3d4e5,\u{1f}0f9e8d7c6b]",
        ] {
            assert_eq!(graph_f1(p, &gold), 1.0, "{p:?}");
        }
    }

    #[test]
    fn partial_answers_score_f1() {
        let gold = ids(&["a", "b", "c", "d"]);
        // P = 1, R = 1/2.
        assert_eq!(graph_f1("Final Answer: [a, b]", &gold), 2.0 * 0.5 / 1.5);
        // P = 2/3, R = 1/2.
        let (p, r) = (2.0 / 3.0, 0.5);
        assert_eq!(
            graph_f1("Final Answer: [a, b, x]", &gold),
            2.0 * (r * p) / (r + p)
        );
        assert_eq!(graph_f1("Final Answer: [x, y]", &gold), 0.0);
    }

    #[test]
    fn only_the_last_line_counts_for_strict() {
        let gold = ids(&["a"]);
        let p = "Final Answer: [a]\nI hope this helps.";
        assert_eq!(graph_f1(p, &gold), 0.0);
        assert_eq!(graph_flexible_f1(p, &gold), 1.0);
        // CRLF blank lines at the end leave a last line of "\r".
        let crlf = "Final Answer: [a]\r\n\r\n";
        assert_eq!(graph_f1(crlf, &gold), 0.0);
        assert_eq!(graph_flexible_f1(crlf, &gold), 1.0);
        // Flexible takes the lowest parsing line, skipping a marker without a list.
        let p = "Final Answer: [b]\nFinal Answer: [a]\nFinal Answer: none";
        assert_eq!(graph_flexible_f1(p, &gold), 1.0);
        assert_eq!(graph_f1(p, &gold), 0.0);
    }

    #[test]
    fn the_list_runs_to_the_last_bracket() {
        assert_eq!(
            final_answer_strict("Final Answer: [a] and [b]"),
            ["a] and [b"]
        );
        assert_eq!(
            final_answer_strict("Final Answer: x Final Answer: [c]"),
            ["c"]
        );
        assert_eq!(final_answer_strict("Final Answer: [a"), Vec::<&str>::new());
        assert_eq!(final_answer_strict("final answer: [a]"), Vec::<&str>::new());
        assert_eq!(final_answer_strict("Final Answer: [ '' , x]"), ["", "x"]);
        assert_eq!(final_answer_strict("Final Answer: [\"' a '\"]"), [" a "]);
        assert_eq!(
            final_answer_strict("Final Answer: [ , ,]"),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn empty_sets() {
        let none: Vec<String> = Vec::new();
        assert_eq!(graph_f1("Final Answer: []", &none), 1.0);
        assert_eq!(graph_f1("Final Answer: [  ]", &none), 1.0);
        // A prediction that does not parse is the empty list, as lm-eval reads it.
        assert_eq!(graph_f1("I cannot tell.", &none), 1.0);
        assert_eq!(graph_f1("", &none), 1.0);
        assert_eq!(graph_f1("Final Answer: [a]", &none), 0.0);
        assert_eq!(graph_f1("Final Answer: ['']", &none), 0.0);
        assert_eq!(graph_f1("Final Answer: []", &ids(&["a"])), 0.0);
        assert_eq!(graph_f1("Final Answer: [a]", &ids(&["a", "a"])), 1.0);
    }
}
