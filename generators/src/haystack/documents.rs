//! Question-answering documents read from a user's file: SQuAD JSON (v1.1 or v2.0) or
//! HotpotQA JSON, the sources of RULER's two QA tasks.
//!
//! The file's paragraphs are the haystack of `qa`: each question's gold paragraph(s) are placed
//! among distractor paragraphs of the same file. Nothing is downloaded; the caller reads the
//! bytes and this module only parses them, once per run.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::GenError;

/// Which of the two supported layouts a file has; detected from its first byte (SQuAD is an
/// object with `data`, HotpotQA a list of questions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DocFormat {
    /// SQuAD v1.1/v2.0: articles of paragraphs, each with questions and answer spans.
    Squad,
    /// HotpotQA: questions, each with its ten titled paragraphs and supporting titles.
    Hotpotqa,
}

impl DocFormat {
    /// The name recipes and rows record.
    pub fn as_str(self) -> &'static str {
        match self {
            DocFormat::Squad => "squad",
            DocFormat::Hotpotqa => "hotpotqa",
        }
    }

    /// The format of a file from its leading bytes: `{` is SQuAD, `[` is HotpotQA.
    pub fn detect(bytes: &[u8]) -> Option<DocFormat> {
        let first = bytes
            .strip_prefix(b"\xEF\xBB\xBF")
            .unwrap_or(bytes)
            .iter()
            .find(|b| !b.is_ascii_whitespace())?;
        match first {
            b'{' => Some(DocFormat::Squad),
            b'[' => Some(DocFormat::Hotpotqa),
            _ => None,
        }
    }
}

/// One answerable question of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct DocQuestion {
    /// The file's id for it (SQuAD `id`, HotpotQA `_id`), recorded per row.
    pub id: String,
    /// The question as the file words it.
    pub question: String,
    /// Accepted answers, distinct, in the file's order (SQuAD lists every annotator's span).
    pub answers: Vec<String>,
    /// Indices into [`Documents::docs`] of the paragraphs the answer rests on.
    pub gold: Vec<usize>,
    /// Paragraphs of the same article (SQuAD) or the question's own distractors (HotpotQA):
    /// RULER takes distractors from these first.
    pub related: Vec<usize>,
}

/// A parsed QA file.
#[derive(Debug)]
pub struct Documents {
    /// The file's layout.
    pub format: DocFormat,
    /// Every distinct paragraph, sorted by text (an order that does not depend on where in
    /// the file a repeated paragraph first stands).
    pub docs: Vec<String>,
    /// Answerable questions in file order (SQuAD's impossible ones and questions without an
    /// answer are left out).
    pub questions: Vec<DocQuestion>,
    /// xxh3-128 of the file's bytes: the identity recorded in provenance and the manifest.
    pub content_hash: String,
    /// Questions left out because no row could be made of them that its paragraphs answer.
    pub skipped: Skipped,
}

/// Questions of a file left out (and answers dropped), by reason: every row's gold answers
/// stand in its gold paragraphs, and every question id names one question.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Questions none of whose answers occurs in their gold paragraphs.
    pub absent_answer: usize,
    /// Answers dropped from questions kept (they occur in no gold paragraph; others do).
    pub dropped_answers: usize,
    /// Questions whose id an earlier question of the file already has (the first is kept:
    /// `--disjoint-from` keys on ids).
    pub duplicate_id: usize,
    /// HotpotQA questions whose `supporting_facts` name a title none of their paragraphs has.
    pub unknown_support: usize,
}

impl Skipped {
    /// Whether anything was left out.
    pub fn any(&self) -> bool {
        *self != Skipped::default()
    }

    /// One line saying what was left out and why, for the user.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (n, why) in [
            (
                self.absent_answer,
                "whose answer is in none of their gold paragraphs",
            ),
            (self.duplicate_id, "whose id an earlier question has"),
            (
                self.unknown_support,
                "whose supporting_facts name a title their paragraphs lack",
            ),
        ] {
            if n > 0 {
                parts.push(format!(
                    "{n} question{} {why}",
                    if n == 1 { "" } else { "s" }
                ));
            }
        }
        let mut line = format!("skipped {}", parts.join(", "));
        if parts.is_empty() {
            line = "skipped no question".into();
        }
        if self.dropped_answers > 0 {
            line.push_str(&format!(
                "; dropped {} answer{} found in no gold paragraph",
                self.dropped_answers,
                if self.dropped_answers == 1 { "" } else { "s" }
            ));
        }
        line
    }
}

/// `answers` that occur in `gold` (or are HotpotQA's yes/no, which comparison questions give
/// and no paragraph spells), and how many were dropped.
fn answered(answers: Vec<String>, gold: &[&str], yes_no: bool) -> (Vec<String>, usize) {
    let before = answers.len();
    let kept: Vec<String> = answers
        .into_iter()
        .filter(|a| {
            (yes_no && matches!(a.to_lowercase().as_str(), "yes" | "no"))
                || gold.iter().any(|g| g.contains(a.as_str()))
        })
        .collect();
    let dropped = before - kept.len();
    (kept, dropped)
}

#[derive(Deserialize)]
struct SquadFile {
    data: Vec<SquadArticle>,
}

#[derive(Deserialize)]
struct SquadArticle {
    paragraphs: Vec<SquadParagraph>,
}

#[derive(Deserialize)]
struct SquadParagraph {
    context: String,
    qas: Vec<SquadQa>,
}

#[derive(Deserialize)]
struct SquadQa {
    #[serde(default)]
    id: String,
    question: String,
    #[serde(default)]
    answers: Vec<SquadAnswer>,
    #[serde(default)]
    is_impossible: bool,
}

#[derive(Deserialize)]
struct SquadAnswer {
    text: String,
}

#[derive(Deserialize)]
struct HotpotItem {
    #[serde(default, rename = "_id")]
    id: String,
    question: String,
    #[serde(default)]
    answer: Option<String>,
    #[serde(default)]
    supporting_facts: Vec<(String, serde_json::Value)>,
    context: Vec<(String, Vec<String>)>,
}

/// Distinct non-empty answers, trimmed, in order.
fn distinct(answers: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in answers {
        let a = a.trim().to_string();
        if !a.is_empty() && !out.contains(&a) {
            out.push(a);
        }
    }
    out
}

/// Paragraph texts → sorted distinct list and each text's index.
fn index_docs(texts: Vec<String>) -> (Vec<String>, BTreeMap<String, usize>) {
    let mut docs = texts;
    docs.sort();
    docs.dedup();
    let index = docs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.clone(), i))
        .collect();
    (docs, index)
}

impl Documents {
    /// Parse a SQuAD or HotpotQA file; `name` words the errors.
    pub fn parse(name: &str, bytes: &[u8]) -> Result<Documents, GenError> {
        let bad = |why: String| GenError::BadCorpus(format!("QA data '{name}': {why}"));
        let format = DocFormat::detect(bytes).ok_or_else(|| {
            bad("expected SQuAD JSON (an object with \"data\") or HotpotQA JSON (a list of questions)".into())
        })?;
        let content_hash = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes));
        let text = std::str::from_utf8(bytes)
            .map_err(|e| bad(format!("not UTF-8 ({e})")))?
            .trim_start_matches('\u{feff}');
        let parsed = match format {
            DocFormat::Squad => {
                let file: SquadFile = serde_json::from_str(text).map_err(|e| {
                    bad(format!("not SQuAD JSON ({e}); expected {{\"data\": [{{\"paragraphs\": [{{\"context\", \"qas\"}}]}}]}}"))
                })?;
                Self::squad(file)
            }
            DocFormat::Hotpotqa => {
                let items: Vec<HotpotItem> = serde_json::from_str(text).map_err(|e| {
                    bad(format!("not HotpotQA JSON ({e}); expected [{{\"question\", \"answer\", \"supporting_facts\", \"context\"}}]"))
                })?;
                Self::hotpot(items)
            }
        };
        let (docs, candidates, mut skipped) = parsed;
        let mut seen = std::collections::BTreeSet::new();
        let mut questions = Vec::with_capacity(candidates.len());
        for q in candidates {
            if !q.id.is_empty() && !seen.insert(q.id.clone()) {
                skipped.duplicate_id += 1;
                continue;
            }
            questions.push(q);
        }
        if questions.is_empty() {
            return Err(bad(
                "no answerable question (every question is impossible or has no answer)".into(),
            ));
        }
        Ok(Documents {
            format,
            docs,
            questions,
            content_hash,
            skipped,
        })
    }

    fn squad(file: SquadFile) -> (Vec<String>, Vec<DocQuestion>, Skipped) {
        let mut skipped = Skipped::default();
        let texts = file
            .data
            .iter()
            .flat_map(|a| a.paragraphs.iter().map(|p| p.context.clone()))
            .filter(|c| !c.trim().is_empty())
            .collect();
        let (docs, index) = index_docs(texts);
        let mut questions = Vec::new();
        for article in file.data {
            let mine: Vec<usize> = article
                .paragraphs
                .iter()
                .filter_map(|p| index.get(&p.context).copied())
                .collect();
            for p in article.paragraphs {
                let Some(&gold) = index.get(&p.context) else {
                    continue;
                };
                for qa in p.qas {
                    let answers = distinct(qa.answers.into_iter().map(|a| a.text));
                    if qa.is_impossible || answers.is_empty() || qa.question.trim().is_empty() {
                        continue;
                    }
                    let (answers, dropped) = answered(answers, &[p.context.as_str()], false);
                    if answers.is_empty() {
                        skipped.absent_answer += 1;
                        continue;
                    }
                    skipped.dropped_answers += dropped;
                    let mut related: Vec<usize> =
                        mine.iter().copied().filter(|&d| d != gold).collect();
                    related.sort_unstable();
                    related.dedup();
                    questions.push(DocQuestion {
                        id: qa.id,
                        question: qa.question.trim().to_string(),
                        answers,
                        gold: vec![gold],
                        related,
                    });
                }
            }
        }
        (docs, questions, skipped)
    }

    fn hotpot(items: Vec<HotpotItem>) -> (Vec<String>, Vec<DocQuestion>, Skipped) {
        let mut skipped = Skipped::default();
        let text_of =
            |title: &str, sentences: &[String]| format!("{title}\n{}", sentences.concat());
        let texts = items
            .iter()
            .flat_map(|it| it.context.iter().map(|(t, s)| text_of(t, s)))
            .collect();
        let (docs, index) = index_docs(texts);
        let mut questions = Vec::new();
        for it in items {
            let answers = distinct(it.answer);
            if answers.is_empty() || it.question.trim().is_empty() {
                continue;
            }
            let supporting: Vec<&str> = it.supporting_facts.iter().map(|f| f.0.as_str()).collect();
            if supporting
                .iter()
                .any(|s| !it.context.iter().any(|(title, _)| title == s))
            {
                skipped.unknown_support += 1;
                continue;
            }
            let mut gold = Vec::new();
            let mut related = Vec::new();
            for (title, sentences) in &it.context {
                let d = index[&text_of(title, sentences)];
                let list = if supporting.contains(&title.as_str()) {
                    &mut gold
                } else {
                    &mut related
                };
                if !list.contains(&d) {
                    list.push(d);
                }
            }
            // Without supporting facts every paragraph of the question may hold the answer.
            if gold.is_empty() {
                gold = std::mem::take(&mut related);
            }
            related.retain(|d| !gold.contains(d));
            if gold.is_empty() {
                continue;
            }
            let texts: Vec<&str> = gold.iter().map(|&d| docs[d].as_str()).collect();
            let (answers, dropped) = answered(answers, &texts, true);
            if answers.is_empty() {
                skipped.absent_answer += 1;
                continue;
            }
            skipped.dropped_answers += dropped;
            questions.push(DocQuestion {
                id: it.id,
                question: it.question.trim().to_string(),
                answers,
                gold,
                related,
            });
        }
        (docs, questions, skipped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SQUAD: &str = r#"{"version": "v2.0", "data": [
      {"title": "A", "paragraphs": [
        {"context": "Alpha town sits by a lake.", "qas": [
          {"id": "q1", "question": "Where is Alpha?", "answers": [{"text": "by a lake", "answer_start": 15}, {"text": "by a lake", "answer_start": 15}, {"text": "lake", "answer_start": 20}], "is_impossible": false},
          {"id": "q2", "question": "Who?", "answers": [], "plausible_answers": [{"text": "x"}], "is_impossible": true}]},
        {"context": "Beta has a mill.", "qas": []}]},
      {"title": "B", "paragraphs": [
        {"context": "Alpha town sits by a lake.", "qas": [
          {"id": "q3", "question": "What sits by a lake?", "answers": [{"text": "Alpha town"}]}]}]}]}"#;

    #[test]
    fn squad_keeps_answerable_questions_and_distinct_paragraphs() {
        let d = Documents::parse("s.json", SQUAD.as_bytes()).unwrap();
        assert_eq!(d.format, DocFormat::Squad);
        assert_eq!(d.docs, ["Alpha town sits by a lake.", "Beta has a mill."]);
        let ids: Vec<&str> = d.questions.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["q1", "q3"]);
        assert_eq!(d.questions[0].answers, ["by a lake", "lake"]);
        assert_eq!(d.questions[0].gold, [0]);
        assert_eq!(d.questions[0].related, [1]);
        assert!(d.questions[1].related.is_empty());
    }

    #[test]
    fn hotpot_gold_is_the_supporting_paragraphs() {
        let text = r#"[{"_id": "h1", "question": "Q?", "answer": "yes", "type": "comparison",
            "supporting_facts": [["T2", 0], ["T3", 1]],
            "context": [["T1", ["One. ", "Two."]], ["T2", ["Three."]], ["T3", ["Four.", " Five."]]]},
            {"_id": "h2", "question": "No answer?", "context": [["T1", ["One. ", "Two."]]]}]"#;
        let d = Documents::parse("h.json", text.as_bytes()).unwrap();
        assert_eq!(d.format, DocFormat::Hotpotqa);
        assert_eq!(d.docs, ["T1\nOne. Two.", "T2\nThree.", "T3\nFour. Five."]);
        assert_eq!(d.questions.len(), 1);
        assert_eq!(d.questions[0].gold, [1, 2]);
        assert_eq!(d.questions[0].related, [0]);
    }

    #[test]
    fn other_files_are_refused_with_a_reason() {
        for (text, says) in [
            ("hello", "expected SQuAD JSON"),
            ("{\"x\": 1}", "not SQuAD JSON"),
            ("[1, 2]", "not HotpotQA JSON"),
            ("{\"data\": []}", "no answerable question"),
            ("", "expected SQuAD JSON"),
        ] {
            let e = Documents::parse("f.json", text.as_bytes()).unwrap_err();
            assert!(e.to_string().contains(says), "{text}: {e}");
            assert!(e.to_string().contains("f.json"));
        }
    }

    /// No question is kept whose answer its gold paragraphs do not hold; a repeated id keeps
    /// its first question; supporting facts must name the question's own titles. Each reason
    /// is counted.
    #[test]
    fn unanswerable_and_duplicate_questions_are_skipped_and_counted() {
        let squad = r#"{"data": [{"paragraphs": [
            {"context": "Gamma lies on a river.", "qas": [
              {"id": "a", "question": "Where?", "answers": [{"text": "on a river"}]},
              {"id": "b", "question": "Absent?", "answers": [{"text": "in a desert"}]},
              {"id": "c", "question": "Half?", "answers": [{"text": "in the hills"}, {"text": "river"}]},
              {"id": "a", "question": "Again?", "answers": [{"text": "Gamma"}]}]}]}]}"#;
        let d = Documents::parse("s.json", squad.as_bytes()).unwrap();
        let ids: Vec<&str> = d.questions.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["a", "c"]);
        assert_eq!(d.questions[1].answers, ["river"]);
        let want = Skipped {
            absent_answer: 1,
            dropped_answers: 1,
            duplicate_id: 1,
            unknown_support: 0,
        };
        assert_eq!(d.skipped, want);
        assert!(
            d.skipped.describe().contains("1 question whose answer"),
            "{}",
            d.skipped.describe()
        );

        let hotpot = r#"[
            {"_id": "h1", "question": "Which?", "answer": "Four", "supporting_facts": [["T3", 0]],
             "context": [["T1", ["One."]], ["T3", ["Four."]]]},
            {"_id": "h2", "question": "Absent?", "answer": "Seven", "supporting_facts": [["T3", 0]],
             "context": [["T1", ["Seven."]], ["T3", ["Four."]]]},
            {"_id": "h3", "question": "Unknown title?", "answer": "One", "supporting_facts": [["T9", 0]],
             "context": [["T1", ["One."]], ["T3", ["Four."]]]},
            {"_id": "h4", "question": "Compare?", "answer": "no", "supporting_facts": [["T1", 0], ["T3", 0]],
             "context": [["T1", ["One."]], ["T3", ["Four."]]]},
            {"_id": "h1", "question": "Twice?", "answer": "One", "supporting_facts": [["T1", 0]],
             "context": [["T1", ["One."]], ["T3", ["Four."]]]}]"#;
        let d = Documents::parse("h.json", hotpot.as_bytes()).unwrap();
        let ids: Vec<&str> = d.questions.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["h1", "h4"]);
        assert_eq!(
            d.skipped,
            Skipped {
                absent_answer: 1,
                dropped_answers: 0,
                duplicate_id: 1,
                unknown_support: 1,
            }
        );
        // Every kept question's answers stand in its gold paragraphs (yes/no aside).
        for q in &d.questions {
            for a in &q.answers {
                assert!(a == "no" || q.gold.iter().any(|&g| d.docs[g].contains(a.as_str())));
            }
        }
        // A file of nothing but unanswerable questions is refused.
        let none = r#"{"data": [{"paragraphs": [{"context": "X.", "qas": [
            {"id": "z", "question": "Y?", "answers": [{"text": "not here"}]}]}]}]}"#;
        assert!(Documents::parse("n.json", none.as_bytes()).is_err());
    }
}
