//! MRCR's two graders, both built on [`difflib::ratio`](super::difflib::ratio).
//!
//! - [`mrcr_score`] is OpenAI MRCR's `grade` (the function on the `openai/mrcr` dataset card,
//!   which NeMo-Skills' `eval_mrcr` also quotes): the response must *start* with the random
//!   string, byte for byte, untrimmed; then that prefix comes off the response, and off the
//!   answer if the answer starts with it, and the score is
//!   `SequenceMatcher(None, response_rest, answer_rest).ratio()` — the response is `a`, so
//!   autojunk looks at the answer.
//! - [`mrcr_v2_score`] is DeepMind MRCR v2's `mrcr_v2_metric(prediction, target)`
//!   (`eval_hub/mrcr_v2/run_evaluation.py`): the string is not passed in but read off the
//!   target, as its first 12 characters after stripping; the prediction may carry it anywhere,
//!   and only what follows its *last* occurrence counts. The target's rest is `a` and the
//!   prediction's rest is `b`, the opposite order to OpenAI's, so autojunk looks at the
//!   prediction. (Its docstring says the string must open the output; its code, followed here,
//!   searches the whole output.)

use super::difflib::ratio;
use super::pystr::strip;

/// The random string's length MRCR v2 assumes when it reads it off the target.
pub const MRCR_V2_STRING_CHARS: usize = 12;

/// OpenAI MRCR's grade of `response` against `answer` (the random string followed by the
/// reply): 0 unless `response` starts with `random_string`; else the difflib ratio of
/// (`response` without it, `answer` without it when it starts with it).
pub fn mrcr_score(response: &str, answer: &str, random_string: &str) -> f64 {
    let Some(response_rest) = response.strip_prefix(random_string) else {
        return 0.0;
    };
    let answer_rest = answer.strip_prefix(random_string).unwrap_or(answer);
    ratio(response_rest, answer_rest)
}

/// DeepMind MRCR v2's score of `prediction` against `target` (the random string followed by
/// the reply). Both are stripped of surrounding whitespace (Python's `str.strip`); the target's
/// first 12 characters are the string, the rest (stripped again) the reference; 0 when the
/// prediction is empty, the target shorter than 12 characters, or the string absent from the
/// prediction; else the difflib ratio of (reference, the stripped text after the string's last
/// occurrence in the prediction).
pub fn mrcr_v2_score(prediction: &str, target: &str) -> f64 {
    if prediction.is_empty() {
        return 0.0;
    }
    let target = strip(target);
    if target.chars().count() < MRCR_V2_STRING_CHARS {
        return 0.0;
    }
    let cut = target
        .char_indices()
        .nth(MRCR_V2_STRING_CHARS)
        .map_or(target.len(), |(at, _)| at);
    let (string, reference) = target.split_at(cut);
    let prediction = strip(prediction);
    match prediction.rfind(string) {
        Some(at) => ratio(strip(reference), strip(&prediction[at + string.len()..])),
        None => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: &str = "aB3dE6gH9jK2";

    #[test]
    fn openai_requires_the_string_first_and_scores_the_rest() {
        let answer = format!("{S}The sea was calm that night.");
        assert_eq!(mrcr_score(&answer, &answer, S), 1.0);
        // Not first, not exact, or missing: zero, however good the rest.
        assert_eq!(mrcr_score(&format!(" {answer}"), &answer, S), 0.0);
        assert_eq!(mrcr_score(&answer.to_lowercase(), &answer, S), 0.0);
        assert_eq!(mrcr_score("The sea was calm that night.", &answer, S), 0.0);
        assert_eq!(mrcr_score("", &answer, S), 0.0);
        // Untrimmed: a trailing newline costs a little.
        let with_newline = mrcr_score(&format!("{answer}\n"), &answer, S);
        assert_eq!(
            with_newline,
            ratio(
                "The sea was calm that night.\n",
                "The sea was calm that night."
            )
        );
        assert!(with_newline < 1.0);
        // The string alone against a non-empty reply matches nothing; against an empty one,
        // both rests are empty.
        assert_eq!(mrcr_score(S, &answer, S), 0.0);
        assert_eq!(mrcr_score(S, S, S), 1.0);
        // Only one copy comes off: a doubled string leaves the second in the response.
        let doubled = mrcr_score(&format!("{S}{answer}"), &answer, S);
        assert_eq!(doubled, ratio(&answer, "The sea was calm that night."));
        // An answer without the string is compared whole.
        assert_eq!(mrcr_score(&format!("{S}x"), "x", S), 1.0);
    }

    #[test]
    fn openai_order_is_response_then_answer() {
        // A long answer makes its frequent characters popular; swapping the sides changes
        // the number, and the grade uses (response, answer).
        let reply = "ab".repeat(150);
        let answer = format!("{S}{reply}");
        let response = format!("{S}b{}", "a".repeat(10));
        let got = mrcr_score(&response, &answer, S);
        assert_eq!(got, ratio(&response[S.len()..], &reply));
        assert_ne!(got, ratio(&reply, &response[S.len()..]));
    }

    #[test]
    fn v2_takes_the_last_occurrence_anywhere_and_strips() {
        let target = format!("  {S}  The sea was calm.\n");
        assert_eq!(
            mrcr_v2_score(&format!("{S}The sea was calm."), &target),
            1.0
        );
        // Anywhere, after stripping whitespace (Python's, so U+001F and U+3000 too).
        assert_eq!(
            mrcr_v2_score(
                &format!("\u{1f}Sure: {S}\u{3000}The sea was calm.\u{3000}"),
                &target
            ),
            1.0
        );
        // The last occurrence counts: copying a wrong reply first costs nothing.
        let twice = format!("{S}A wrong reply.\n\n{S}The sea was calm.");
        assert_eq!(mrcr_v2_score(&twice, &target), 1.0);
        let wrong_last = format!("{S}The sea was calm.\n\n{S}A wrong reply.");
        assert_eq!(
            mrcr_v2_score(&wrong_last, &target),
            ratio("The sea was calm.", "A wrong reply.")
        );
        assert_eq!(mrcr_v2_score("The sea was calm.", &target), 0.0);
        assert_eq!(mrcr_v2_score("", &target), 0.0);
        assert_eq!(mrcr_v2_score("   ", &target), 0.0);
    }

    #[test]
    fn v2_reads_the_string_off_the_target() {
        // Fewer than 12 characters: no string, zero.
        assert_eq!(mrcr_v2_score("short", "short"), 0.0);
        // Exactly 12: the reference is empty.
        assert_eq!(mrcr_v2_score(&format!("x {S}"), S), 1.0);
        assert_eq!(mrcr_v2_score(&format!("{S} more"), S), 0.0);
        // Twelve characters, not bytes.
        let wide = "éééééééééééé";
        assert_eq!(
            mrcr_v2_score(&format!("{wide}ok"), &format!("{wide}ok")),
            1.0
        );
        assert_eq!(
            mrcr_v2_score(&format!("{wide}ab"), &format!("{wide}xy")),
            0.0
        );
    }

    #[test]
    fn v2_order_is_reference_then_prediction() {
        let reply = "ab".repeat(150);
        let target = format!("{S}b{}", "a".repeat(10));
        let got = mrcr_v2_score(&format!("{S}{reply}"), &target);
        assert_eq!(got, ratio(&target[S.len()..], &reply));
        assert_ne!(got, ratio(&reply, &target[S.len()..]));
    }
}
