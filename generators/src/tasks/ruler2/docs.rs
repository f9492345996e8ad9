//! The four qa variants over a HotpotQA file: paragraphs labelled `Document <7-digit id>:`,
//! separated by blank lines. The needles are a question's supporting paragraphs; its own
//! distractor paragraphs come first among the others, then any of the file, in a random order;
//! a paragraph that mentions a gold answer is left out, so the gold ones alone state it.

use std::collections::BTreeSet;

use serde_json::json;

use super::fill::{Piece, Pool, Source};
use super::{fresh_id, needle_places, Answer, Ruler2, Ruler2Variant, Skeleton};
use crate::haystack::documents::{DocFormat, DocQuestion, Documents};
use crate::haystack::Screen;
use crate::rng::{Rng, Stream};
use crate::tasks::qa::LazyShuffle;
use crate::template::Frame;
use crate::tokenizer::Tokenizer;
use crate::{canonical_json, Cell, GenError, Instance, Metric, Run};

/// The run's HotpotQA file.
pub(super) fn documents(run: &Run) -> Result<&Documents, GenError> {
    let docs = run.required_haystack(super::NAME)?.documents().ok_or_else(|| {
        GenError::BadParams(
            "ruler2's qa variants read their documents from a HotpotQA file, not from a text haystack"
                .into(),
        )
    })?;
    if docs.format != DocFormat::Hotpotqa {
        return Err(GenError::BadParams(format!(
            "ruler2's qa variants read HotpotQA, but the QA data is {} JSON",
            docs.format.as_str()
        )));
    }
    Ok(docs)
}

/// A paragraph as one block: blank lines inside it closed up, so a copied document ends at
/// the first blank line after its header (how RULER v2's scorer cuts copies out).
fn body(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.trim().lines() {
        if line.trim().is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(line);
    }
    out
}

fn unit(id: u64, text: &str) -> String {
    format!("Document {id}:\n{}", body(text))
}

/// The row's question and the ids of its supporting paragraphs (in the file's order).
struct Needle<'a> {
    question: &'a DocQuestion,
    ids: Vec<u64>,
}

fn needle<'a>(
    task: &Ruler2,
    run: &Run,
    cell: &Cell,
    docs: &'a Documents,
) -> Result<Needle<'a>, GenError> {
    let q = task.pool_draw(
        run,
        "HotpotQA data's answerable questions",
        docs.questions.len(),
        cell.slot,
        1,
    )?[0];
    let question = &docs.questions[q];
    if question.gold.is_empty() {
        return Err(GenError::BadCorpus(format!(
            "HotpotQA question '{}' names no supporting paragraph: ruler2's qa variants place its supporting documents",
            question.id
        )));
    }
    let params = canonical_json(&task.content_params());
    let mut rng = run
        .coordinates(super::NAME, &params, cell)
        .rng(Stream::Content);
    let mut used = BTreeSet::new();
    let ids = question
        .gold
        .iter()
        .map(|_| fresh_id(&mut rng, &mut used))
        .collect();
    Ok(Needle { question, ids })
}

/// Distractor paragraphs: the question's own first (shuffled), then the file's.
struct Paragraphs<'a> {
    docs: &'a Documents,
    related: Vec<usize>,
    others: LazyShuffle,
    skip: BTreeSet<usize>,
    screen: Screen,
    used_ids: BTreeSet<u64>,
    screened: std::rc::Rc<std::cell::Cell<usize>>,
}

impl Source for Paragraphs<'_> {
    fn pull(&mut self, tok: &Tokenizer, rng: &mut Rng) -> Result<Option<Piece>, GenError> {
        loop {
            let d = match self.related.pop() {
                Some(d) => d,
                None => match self.others.draw(rng) {
                    Some(d) if self.skip.contains(&d) => continue,
                    Some(d) => d,
                    None => return Ok(None),
                },
            };
            if self.screen.conflicts(&self.docs.docs[d]) {
                self.screened.set(self.screened.get() + 1);
                continue;
            }
            let id = fresh_id(rng, &mut self.used_ids);
            let text = unit(id, &self.docs.docs[d]);
            return Ok(Some(Piece {
                tokens: tok.count(&format!("\n\n{text}"))?,
                text,
                key: rng.next_u64(),
                tag: d,
            }));
        }
    }
}

const INSTRUCTION: &str =
    "Below are documents, each headed by its document number. A request about them follows.";

fn request(task: &Ruler2, docs: &Documents, n: &Needle<'_>) -> String {
    let q = &n.question.question;
    match task.params.variant {
        Ruler2Variant::QaBasic => format!(
            "Here is the text of one of the documents above:\n\n{}\n\nWhich document is it? Give its document number alone.",
            body(&docs.docs[n.question.gold[0]])
        ),
        Ruler2Variant::QaEasy => format!(
            "Question: {q}\n\nWhich of the documents above holds something needed to answer this question? Give its document number alone."
        ),
        Ruler2Variant::QaMedium => format!(
            "Question: {q}\n\nFirst copy out, word for word and with their headers, the documents above that are needed to answer the question. Then answer it in a few words after \"Answer: \"."
        ),
        _ => format!(
            "Answer the question below from the documents above, in a few words, after \"Answer: \".\n\nQuestion: {q}"
        ),
    }
}

fn skeleton_of(task: &Ruler2, docs: &Documents, n: &Needle<'_>) -> Skeleton {
    let needles: Vec<String> = n
        .question
        .gold
        .iter()
        .zip(&n.ids)
        .map(|(&g, &id)| unit(id, &docs.docs[g]))
        .collect();
    let answer = n.question.answers[0].clone();
    let answer_text = match task.params.variant {
        Ruler2Variant::QaBasic | Ruler2Variant::QaEasy => n.ids[0].to_string(),
        Ruler2Variant::QaMedium => format!("{}\n\nAnswer: {answer}", needles.join("\n\n")),
        _ => format!("Answer: {answer}"),
    };
    Skeleton {
        needles,
        answer_text,
        min_units: 0,
    }
}

/// The needles and the frame, for the minimum length.
pub(super) fn skeleton(
    task: &Ruler2,
    run: &Run,
    cell: &Cell,
) -> Result<(Skeleton, Frame), GenError> {
    let docs = documents(run)?;
    let n = needle(task, run, cell, docs)?;
    let frame = Ruler2::frame(run, INSTRUCTION, &request(task, docs, &n))?;
    Ok((skeleton_of(task, docs, &n), frame))
}

pub(super) fn generate(task: &Ruler2, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
    let docs = documents(run)?;
    let n = needle(task, run, cell, docs)?;
    let skeleton = skeleton_of(task, docs, &n);
    let q = n.question;
    let params = canonical_json(&task.content_params());
    let mut rng = run
        .coordinates(super::NAME, &params, cell)
        .rng(Stream::Haystack);
    let mut related: Vec<usize> = q.related.clone();
    rng.shuffle(&mut related);
    related.reverse();
    let screened = std::rc::Rc::new(std::cell::Cell::new(0));
    let source = Paragraphs {
        docs,
        related,
        others: LazyShuffle::new(docs.docs.len()),
        skip: q.gold.iter().chain(&q.related).copied().collect(),
        screen: super::super::qa::answer_screen(q),
        used_ids: n.ids.iter().copied().collect(),
        screened: screened.clone(),
    };
    let mut pool = Pool::new(Box::new(source), rng);
    let frame = Ruler2::frame(run, INSTRUCTION, &request(task, docs, &n))?;
    let filled = task.fill(run, cell, &skeleton, &mut pool, "\n\n", &|_, _| {
        Ok(frame.clone())
    })?;
    let (places, _) = needle_places(&filled.order, skeleton.needles.len());
    let ids: Vec<String> = n.ids.iter().map(u64::to_string).collect();
    let (target, answers) = match task.params.variant {
        Ruler2Variant::QaBasic => (ids[0].clone(), vec![ids[0].clone()]),
        Ruler2Variant::QaEasy => (ids[0].clone(), ids.clone()),
        _ => (q.answers[0].clone(), q.answers.clone()),
    };
    let mut facts = json!({
        "question_id": q.id,
        "documents": filled.units + skeleton.needles.len(),
        "gold_documents": places,
        "gold_ids": ids,
        "screened_documents": screened.get(),
    });
    if task.params.variant == Ruler2Variant::QaBasic {
        facts["shown_document"] = json!(places[0]);
    }
    let question = request(task, docs, &n);
    Ok(task.row(
        run,
        cell,
        filled,
        Answer {
            question,
            target,
            answers,
            metric: Metric::SoftPart,
            facts,
        },
    ))
}
