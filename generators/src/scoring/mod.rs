//! The metrics a row can name, applied to a model's output.
//!
//! Every row stores its metric so any harness can score it without knowing the task. The same
//! rules are written in Python for the harness exports (`python/needlework/metrics.py`); CI
//! checks that both score the same predictions the same way.
//!
//! - `all`: every gold item occurs in the output (case-insensitive).
//! - `any`: at least one gold item occurs in the output.
//! - `exact`: the output equals the target after trimming, dropping a repeated answer prefix
//!   and one trailing period, collapsing runs of blanks, and lowercasing.
//! - `set`: the output's items (split at commas and blanks) are the target's, as sets.
//! - `label` (BABILong's rule, without its bug): lowercase, cut at the first period, collect
//!   the labels of the closed set that occur as whole words (so `one` is not found in `none`),
//!   ignoring labels that occur in the question unless they are gold; correct when the labels
//!   found are exactly the gold items.
//!
//! Before any metric, one rule judges the answer rather than the prompt: a prediction longer
//! than [`echo_limit`] characters is an echo and is wrong, whatever the metric. The limit is
//! `min(8 × max_new_tokens, input / 2) + 2 × target`, lengths in characters (Unicode scalar
//! values):
//!
//! - `8 × max_new_tokens`: a harness that honours the row's answer budget cannot produce
//!   more (8 characters per token is about twice what English text averages);
//! - `input / 2`: nor is anything half as long as the prompt an answer to it; so the echo of
//!   the whole input is wrong whenever the input is longer than 4 × the target (every niah,
//!   needlechain and babilong row);
//! - `2 × target`: room for the gold answer and a lead-in sentence whatever the tokenizer
//!   counted (a 200-digit product is one `words` token).
//!
//! The reference benchmarks' metrics score between 0 and 1 ([`Metric::graded`]), each by its
//! source's rule: `mrcr` and `mrcr_v2` ([`mrcr`]), `f1` and `flexible_f1` ([`graph_f1`]),
//! `soft_all`, `soft_part` and `soft_2steps` ([`soft_match`]); `letter` is right or wrong
//! ([`soft_match::multiple_choice_letter`]). [`score`] gives every row its number.
//!
//! Beside the row's own verdict, [`ruler_credit`] gives RULER's partial credit for `all` and
//! `any` rows (the fraction of gold items present), so numbers can be set beside RULER's.

pub mod difflib;
pub mod graph_f1;
pub mod mrcr;
pub mod pystr;
pub mod soft_match;

use crate::Metric;

/// Characters allowed per token of the answer budget before an output is judged an echo.
pub const ECHO_CHARS_PER_TOKEN: usize = 8;

/// What a row needs for scoring.
#[derive(Debug, Clone, Copy)]
pub struct Gold<'a> {
    /// Which rule applies.
    pub metric: Metric,
    /// The canonical answer (`exact`).
    pub target: &'a str,
    /// The gold items (`all`, `any`, `set`, `label`).
    pub answers: &'a [String],
    /// The closed label set (`label`).
    pub labels: &'a [String],
    /// The question: labels it mentions are ignored in the output unless gold (`label`).
    pub question: &'a str,
    /// A repeated answer prefix is dropped from the output before comparing (`exact`).
    pub answer_prefix: &'a str,
    /// The row's answer budget: it bounds how long an answer can be ([`echo_limit`]).
    pub max_new_tokens: u32,
    /// Characters of the row's `input` (the prompt): half of it bounds an answer too.
    pub input_chars: usize,
}

/// The most characters (Unicode scalar values) a prediction may have before it is judged an
/// echo: `min(8 × max_new_tokens, input_chars / 2) + 2 × the target's length`.
pub fn echo_limit(gold: &Gold<'_>) -> usize {
    let budget = ECHO_CHARS_PER_TOKEN * gold.max_new_tokens as usize;
    budget.min(gold.input_chars / 2) + 2 * gold.target.chars().count()
}

/// Whether `prediction` is too long to be an answer to `gold` (see [`echo_limit`]).
pub fn is_echo(gold: &Gold<'_>, prediction: &str) -> bool {
    prediction.chars().count() > echo_limit(gold)
}

/// Whether `prediction` is right for `gold`: not an echo, and accepted by the row's metric.
pub fn is_correct(gold: &Gold<'_>, prediction: &str) -> bool {
    if is_echo(gold, prediction) {
        return false;
    }
    let pred = prediction.to_lowercase();
    match gold.metric {
        Metric::All => {
            !gold.answers.is_empty()
                && gold
                    .answers
                    .iter()
                    .all(|a| pred.contains(&a.to_lowercase()))
        }
        Metric::Any => gold
            .answers
            .iter()
            .any(|a| pred.contains(&a.to_lowercase())),
        Metric::Exact => {
            clean(prediction, gold.answer_prefix) == clean(gold.target, gold.answer_prefix)
        }
        Metric::OneOf => {
            let said = clean(prediction, gold.answer_prefix);
            gold.answers
                .iter()
                .any(|a| said == clean(a, gold.answer_prefix))
        }
        Metric::Set => {
            let items = |s: &str| -> std::collections::BTreeSet<String> {
                s.to_lowercase()
                    .split(|c: char| c == ',' || c.is_whitespace())
                    .map(|x| x.trim_end_matches('.'))
                    .filter(|x| !x.is_empty())
                    .map(str::to_string)
                    .collect()
            };
            let want = items(gold.target);
            !want.is_empty() && items(prediction) == want
        }
        Metric::Letter => {
            let want = gold.target.trim();
            soft_match::multiple_choice_letter(prediction)
                .is_some_and(|l| want.len() == 1 && want.starts_with(l))
        }
        // The graded metrics are right when they give full marks.
        Metric::Mrcr
        | Metric::MrcrV2
        | Metric::F1
        | Metric::FlexibleF1
        | Metric::SoftAll
        | Metric::SoftPart
        | Metric::Soft2Steps => score(gold, prediction) == 1.0,
        Metric::Label => {
            let cut = pred.split('.').next().unwrap_or("");
            let question = gold.question.to_lowercase();
            let gold_items: std::collections::BTreeSet<String> =
                gold.answers.iter().map(|a| a.to_lowercase()).collect();
            let found: std::collections::BTreeSet<String> = gold
                .labels
                .iter()
                .map(|l| l.to_lowercase())
                .filter(|l| gold_items.contains(l) || !occurs_as_word(l, &question))
                .filter(|l| occurs_as_word(l, cut))
                .collect();
            !gold_items.is_empty() && found == gold_items
        }
    }
}

/// The row's score for `prediction`, 0 to 1: 1 or 0 for the metrics that judge right or wrong
/// ([`is_correct`]), the source's number for the graded ones; 0 for an echo whatever the
/// metric.
pub fn score(gold: &Gold<'_>, prediction: &str) -> f64 {
    use soft_match::{ruler2_soft_match, SoftMatchMode};
    if !gold.metric.graded() {
        return f64::from(u8::from(is_correct(gold, prediction)));
    }
    if is_echo(gold, prediction) {
        return 0.0;
    }
    match gold.metric {
        Metric::Mrcr => {
            let string: String = gold
                .target
                .chars()
                .take(mrcr::MRCR_V2_STRING_CHARS)
                .collect();
            mrcr::mrcr_score(prediction, gold.target, &string)
        }
        Metric::MrcrV2 => mrcr::mrcr_v2_score(prediction, gold.target),
        Metric::F1 => graph_f1::graph_f1(prediction, gold.answers),
        Metric::FlexibleF1 => graph_f1::graph_flexible_f1(prediction, gold.answers),
        Metric::SoftAll => ruler2_soft_match(prediction, gold.answers, SoftMatchMode::All),
        Metric::SoftPart => ruler2_soft_match(prediction, gold.answers, SoftMatchMode::Part),
        Metric::Soft2Steps => ruler2_soft_match(prediction, gold.answers, SoftMatchMode::TwoSteps),
        _ => 0.0,
    }
}

/// RULER's partial credit for `prediction`: for rows whose metric is `all`, the fraction of
/// gold items that occur in it (RULER's `string_match_all`); for `any`, 1 when one does
/// (`string_match_part`); `None` for the other metrics, and for a row without gold items.
///
/// The rule is RULER's, not ours: the prediction is first cleaned as RULER's evaluation cleans
/// it (trimmed, each control character U+0000–U+001F turned into a newline, trimmed again),
/// then every item is looked for case-insensitively as a substring. No echo rule applies, so
/// pasting the prompt back earns full credit here exactly as it does in RULER's numbers.
pub fn ruler_credit(gold: &Gold<'_>, prediction: &str) -> Option<f64> {
    if gold.answers.is_empty() || !matches!(gold.metric, Metric::All | Metric::Any) {
        return None;
    }
    let cleaned: String = prediction
        .trim()
        .chars()
        .map(|c| if (c as u32) < 0x20 { '\n' } else { c })
        .collect();
    let pred = cleaned.trim().to_lowercase();
    let found = gold
        .answers
        .iter()
        .filter(|a| pred.contains(&a.to_lowercase()))
        .count();
    Some(match gold.metric {
        Metric::All => found as f64 / gold.answers.len() as f64,
        _ => f64::from(u8::from(found > 0)),
    })
}

/// The text compared by `exact`.
fn clean(s: &str, answer_prefix: &str) -> String {
    let mut t = s.trim().to_lowercase();
    let prefix = answer_prefix.trim().to_lowercase();
    if !prefix.is_empty() {
        if let Some(rest) = t.strip_prefix(&prefix) {
            t = rest.trim().to_string();
        }
    }
    let t = t.strip_suffix('.').unwrap_or(&t).trim();
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `needle` occurs in `text` with no letter or digit directly on either side.
pub fn occurs_as_word(needle: &str, text: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(i) = text[from..].find(needle) {
        let start = from + i;
        let end = start + needle.len();
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        if !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric) {
            return true;
        }
        from = start + needle.chars().next().map_or(1, char::len_utf8);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn check(
        metric: Metric,
        target: &str,
        answers: &[&str],
        labels: &[&str],
        q: &str,
        pred: &str,
    ) -> bool {
        let (answers, labels) = (s(answers), s(labels));
        is_correct(
            &Gold {
                metric,
                target,
                answers: &answers,
                labels: &labels,
                question: q,
                answer_prefix: "Answer:",
                max_new_tokens: 16,
                input_chars: 10_000,
            },
            pred,
        )
    }

    /// Every row gets its number: the graded metrics their sources' (here hand-checked values
    /// of each rule), the others 1 or 0, an echo 0 whatever the metric.
    #[test]
    fn every_metric_scores_between_zero_and_one() {
        let gold = |metric, target: &'static str, answers: &'static [String]| Gold {
            metric,
            target,
            answers,
            labels: &[],
            question: "",
            answer_prefix: "",
            max_new_tokens: 200,
            input_chars: 100_000,
        };
        let none: &'static [String] = &[];
        let target = "AbCdEf123456The reply.";
        assert_eq!(score(&gold(Metric::Mrcr, target, none), target), 1.0);
        assert_eq!(score(&gold(Metric::Mrcr, target, none), "The reply."), 0.0);
        let partial = score(&gold(Metric::Mrcr, target, none), "AbCdEf123456The rep");
        assert!(partial > 0.5 && partial < 1.0, "{partial}");
        assert_eq!(
            score(
                &gold(Metric::MrcrV2, target, none),
                "x AbCdEf123456The reply."
            ),
            1.0
        );
        let nodes: &'static [String] = Box::leak(Box::new(s(&["a1", "b2"])));
        let f1 = score(&gold(Metric::F1, "", nodes), "Final Answer: [a1, c3]");
        assert_eq!(f1, 0.5);
        assert_eq!(
            score(&gold(Metric::F1, "", nodes), "Final Answer: [b2, a1]"),
            1.0
        );
        let flexible = "Final Answer: [a1, b2]\nthat is all";
        assert_eq!(score(&gold(Metric::F1, "", nodes), flexible), 0.0);
        assert_eq!(score(&gold(Metric::FlexibleF1, "", nodes), flexible), 1.0);
        let refs: &'static [String] = Box::leak(Box::new(s(&["the red fox"])));
        assert_eq!(
            score(&gold(Metric::SoftAll, "", refs), "It is the red fox."),
            1.0
        );
        let soft = score(&gold(Metric::SoftAll, "", refs), "the red dog");
        assert!((soft - 2.0 / 3.0).abs() < 1e-12, "{soft}");
        assert_eq!(
            score(&gold(Metric::Letter, "C", none), "The answer is \\boxed{C}"),
            1.0
        );
        assert_eq!(score(&gold(Metric::Letter, "C", none), "Answer: B"), 0.0);
        let echo = "AbCdEf123456".to_string() + &"x".repeat(5000);
        assert_eq!(score(&gold(Metric::Mrcr, target, none), &echo), 0.0);
        assert!(!Metric::All.graded() && Metric::F1.graded());
    }

    #[test]
    fn an_echo_is_wrong_whatever_the_metric() {
        let a = s(&["4821937"]);
        let prompt = format!(
            "{} One of the access codes is 4821937. {} What is the access code?",
            "Filler text. ".repeat(20),
            "More filler. ".repeat(20)
        );
        let g = |metric, target| Gold {
            metric,
            target,
            answers: &a,
            labels: &a,
            question: "What is the access code?",
            answer_prefix: "",
            max_new_tokens: 16,
            input_chars: 10_000,
        };
        let all = g(Metric::All, "4821937");
        assert_eq!(echo_limit(&all), 8 * 16 + 2 * 7);
        // Half the prompt bounds an answer when the budget is wider than that.
        let short = Gold {
            max_new_tokens: 128,
            input_chars: prompt.chars().count(),
            ..all
        };
        assert_eq!(echo_limit(&short), prompt.chars().count() / 2 + 14);
        assert!(!is_correct(&short, &prompt));
        assert!(is_correct(&short, "The access code is 4821937."));
        assert!(is_echo(&all, &prompt) && !is_correct(&all, &prompt));
        for metric in [Metric::All, Metric::Any, Metric::Label, Metric::Set] {
            let gold = g(metric, "4821937");
            assert!(is_correct(&gold, "4821937"), "{metric:?}");
            assert!(
                !is_correct(&gold, &format!("{prompt} 4821937")),
                "{metric:?}"
            );
        }
        // Right at the limit is still an answer (counted in characters, not bytes).
        let at_limit = format!("4821937{}", "é".repeat(echo_limit(&all) - 7));
        assert!(is_correct(&all, &at_limit));
        assert!(!is_correct(&all, &format!("{at_limit}é")));
        // A long gold answer fits whatever the budget counted (2 × the target).
        let long = "9".repeat(400);
        let exact = Gold {
            max_new_tokens: 17,
            ..g(Metric::Exact, &long)
        };
        assert!(is_correct(&exact, &long));
        assert!(!is_echo(
            &exact,
            &format!("The product of the two numbers is {long}.")
        ));
    }

    #[test]
    fn all_and_any() {
        let a = ["4821937", "1102938"];
        assert!(check(
            Metric::All,
            "",
            &a,
            &[],
            "",
            "They are 1102938 and 4821937."
        ));
        assert!(!check(Metric::All, "", &a, &[], "", "Just 4821937."));
        assert!(check(Metric::Any, "", &a, &[], "", "Just 4821937."));
        assert!(!check(Metric::Any, "", &a, &[], "", ""));
        assert!(check(Metric::All, "", &["Amber Fox"], &[], "", "amber fox"));
    }

    #[test]
    fn one_of_is_exact_match_against_any_gold_spelling() {
        let a = ["the Melith", "Melith"];
        assert!(check(Metric::OneOf, "the Melith", &a, &[], "", "Melith."));
        assert!(check(
            Metric::OneOf,
            "the Melith",
            &a,
            &[],
            "",
            "Answer: The  Melith"
        ));
        // Containing an answer is not matching one.
        assert!(!check(
            Metric::OneOf,
            "the Melith",
            &a,
            &[],
            "",
            "It is the Melith river"
        ));
        assert!(!check(
            Metric::OneOf,
            "the Melith",
            &[],
            &[],
            "",
            "the Melith"
        ));
        assert_eq!(Metric::OneOf.as_str(), "one_of");
    }

    #[test]
    fn exact_forgives_only_formatting() {
        assert!(check(
            Metric::Exact,
            "3 7 19",
            &[],
            &[],
            "",
            " Answer: 3  7 19.\n"
        ));
        assert!(check(Metric::Exact, "none", &[], &[], "", "None"));
        assert!(!check(Metric::Exact, "3 7 19", &[], &[], "", "3 7 19 20"));
        assert!(!check(
            Metric::Exact,
            "120",
            &[],
            &[],
            "",
            "The answer is 120"
        ));
    }

    #[test]
    fn set_ignores_order() {
        assert!(check(Metric::Set, "a,b,c", &[], &[], "", "c, b, a"));
        assert!(!check(Metric::Set, "a,b,c", &[], &[], "", "a, b"));
    }

    #[test]
    fn label_follows_babilong_without_the_none_bug() {
        let counts = ["none", "one", "two", "three"];
        let q = "How many objects is Mary carrying?";
        assert!(check(Metric::Label, "none", &["none"], &counts, q, "None."));
        assert!(!check(Metric::Label, "one", &["one"], &counts, q, "none"));
        assert!(check(
            Metric::Label,
            "one",
            &["one"],
            &counts,
            q,
            "She carries one. Not two."
        ));
        assert!(!check(
            Metric::Label,
            "one",
            &["one"],
            &counts,
            q,
            "one or two"
        ));
        let rooms = ["kitchen", "garden", "office"];
        let q = "Where was the milk before the kitchen?";
        // A label named by the question is ignored, so echoing it costs nothing.
        assert!(check(
            Metric::Label,
            "garden",
            &["garden"],
            &rooms,
            q,
            "before the kitchen it was in the garden"
        ));
        assert!(!check(
            Metric::Label,
            "garden",
            &["garden"],
            &rooms,
            q,
            "the office"
        ));
        let objects = ["apple", "milk", "football", "nothing"];
        let q = "What is John carrying?";
        assert!(check(
            Metric::Label,
            "apple,milk",
            &["apple", "milk"],
            &objects,
            q,
            "milk, apple"
        ));
        assert!(!check(
            Metric::Label,
            "apple,milk",
            &["apple", "milk"],
            &objects,
            q,
            "milk"
        ));
        assert!(check(
            Metric::Label,
            "s,e",
            &["s,e"],
            &["s,e", "e,s", "n,e"],
            "",
            "s,e"
        ));
    }

    #[test]
    fn ruler_credit_is_the_fraction_of_items_found() {
        let answers = s(&["4821937", "1102938", "Amber Fox", "7730011"]);
        let gold = |metric| Gold {
            metric,
            target: "",
            answers: &answers,
            labels: &[],
            question: "",
            answer_prefix: "",
            max_new_tokens: 16,
            input_chars: 100,
        };
        let all = gold(Metric::All);
        assert_eq!(ruler_credit(&all, "4821937 and amber fox"), Some(0.5));
        assert_eq!(ruler_credit(&all, ""), Some(0.0));
        assert_eq!(
            ruler_credit(&all, "4821937 1102938 AMBER FOX 7730011"),
            Some(1.0)
        );
        // RULER's cleaning: a control character inside an item breaks it (it becomes a
        // newline), and no echo rule: a long answer holding every item gets full credit.
        assert_eq!(ruler_credit(&all, "amber\u{7}fox 7730011"), Some(0.25));
        assert_eq!(
            ruler_credit(&all, &format!("{} 4821937", "x".repeat(10_000))),
            Some(0.25)
        );
        assert_eq!(ruler_credit(&gold(Metric::Any), "7730011"), Some(1.0));
        assert_eq!(ruler_credit(&gold(Metric::Any), "none"), Some(0.0));
        for metric in [Metric::Exact, Metric::Set, Metric::Label] {
            assert_eq!(ruler_credit(&gold(metric), "4821937"), None);
        }
        let none: Vec<String> = Vec::new();
        let empty = Gold {
            answers: &none,
            ..all
        };
        assert_eq!(ruler_credit(&empty, "x"), None);
    }

    #[test]
    fn whole_words_only() {
        assert!(occurs_as_word("one", "only one left"));
        assert!(!occurs_as_word("one", "none left"));
        assert!(!occurs_as_word("one", "someone"));
        assert!(occurs_as_word("s,e", "go s,e"));
    }
}
