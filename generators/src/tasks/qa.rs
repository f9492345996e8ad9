//! `qa`: document question answering over the user's SQuAD or HotpotQA file, following the
//! structure of RULER's two QA tasks.
//!
//! The instance in slot `k` of a length (depth index × samples + sample) asks the `k`-th
//! question of a seed-wide shuffle of the file's answerable questions: every length asks the
//! same questions, and no two instances of a length share one. Its gold paragraph(s) stand
//! among distractor paragraphs of the same file — the question's own article (SQuAD) or its own
//! distractors (HotpotQA) first, as RULER takes them, then any other — each numbered
//! `Document k:` and separated by a blank line. The first gold paragraph is placed at the
//! requested depth, further ones at random places. Paragraphs are whole, so a prompt holds the
//! most documents that fit (RULER's rule); a distractor that mentions a gold answer is left out,
//! so the gold paragraphs are the only ones that state it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::fit::render::render_joined;
use crate::fit::{tolerance, Fitted};
use crate::haystack::documents::{DocFormat, DocQuestion, Documents};
use crate::haystack::Screen;
use crate::rng::{Coordinates, Rng, Stream};
use crate::tasks::Params;
use crate::template::{vars, Vars};
use crate::tokenizer::Tokenizer;
use crate::{canonical_json, Cell, GenError, Instance, Metric, ParamError, Run, Task};

/// The task's name: its command, its manifests' tag and the key of its random streams.
pub const NAME: &str = "qa";
/// One line saying what the task is.
pub const ABOUT: &str = "document QA over your SQuAD or HotpotQA file: gold paragraphs among distractors, at any depth (RULER)";
/// The task's built-in templates, (name, source), the first its default.
pub const TEMPLATES: &[(&str, &str)] =
    &[("default", include_str!("../../templates/qa/default.j2"))];

/// RULER's answer budget for QA.
pub const MAX_NEW_TOKENS: u32 = 32;
/// Separator between two documents.
const SEPARATOR: &str = "\n\n";
/// Full counts allowed while settling the document count (one is the rule).
const MAX_RENDERS: usize = 12;

/// qa's parameters, spelled as manifests and `params` record them. The file itself is the
/// run's haystack (recorded with its hash like any corpus).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QaParams {
    /// The file's layout: `squad` or `hotpotqa` (the command line detects it).
    pub format: QaFormat,
    /// Score by exact match against one of the gold answers instead of "a gold answer occurs
    /// in the output".
    pub exact: bool,
}

/// [`DocFormat`] as parameters spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QaFormat {
    /// SQuAD v1.1/v2.0.
    Squad,
    /// HotpotQA.
    Hotpotqa,
}

impl QaFormat {
    /// The parsed format this names.
    pub fn doc_format(self) -> DocFormat {
        match self {
            QaFormat::Squad => DocFormat::Squad,
            QaFormat::Hotpotqa => DocFormat::Hotpotqa,
        }
    }

    /// The name parameters and configs use.
    pub fn as_str(self) -> &'static str {
        self.doc_format().as_str()
    }

    /// The format of a parsed file.
    pub fn of(format: DocFormat) -> QaFormat {
        match format {
            DocFormat::Squad => QaFormat::Squad,
            DocFormat::Hotpotqa => QaFormat::Hotpotqa,
        }
    }
}

impl std::str::FromStr for QaFormat {
    type Err = ParamError;
    fn from_str(s: &str) -> Result<Self, ParamError> {
        match s {
            "squad" => Ok(QaFormat::Squad),
            "hotpotqa" => Ok(QaFormat::Hotpotqa),
            _ => Err(ParamError::new("format", s, "squad or hotpotqa")),
        }
    }
}

impl Params for QaParams {
    type Built = Qa;

    /// Check every parameter and make the task (the file is checked when the run is prepared).
    fn build(&self) -> Result<Qa, ParamError> {
        Ok(Qa {
            params: self.clone(),
        })
    }
}

/// Validated QA parameters.
#[derive(Debug, Clone)]
pub struct Qa {
    /// The checked parameters.
    pub params: QaParams,
}

/// Draws `0..n` in a random order without building the whole permutation: Fisher–Yates with
/// the swaps kept sparse, so taking k items costs O(k log k) whatever n is.
pub(crate) struct LazyShuffle {
    n: usize,
    next: usize,
    swaps: BTreeMap<usize, usize>,
}

impl LazyShuffle {
    pub(crate) fn new(n: usize) -> Self {
        LazyShuffle {
            n,
            next: 0,
            swaps: BTreeMap::new(),
        }
    }

    pub(crate) fn draw(&mut self, rng: &mut Rng) -> Option<usize> {
        if self.next >= self.n {
            return None;
        }
        let i = self.next;
        let j = i + rng.index(self.n - i);
        let at = |s: &BTreeMap<usize, usize>, k: usize| s.get(&k).copied().unwrap_or(k);
        let (vi, vj) = (at(&self.swaps, i), at(&self.swaps, j));
        self.swaps.insert(j, vi);
        self.swaps.remove(&i);
        self.next += 1;
        Some(vj)
    }
}

/// The document as the prompt shows it, numbered from 1.
pub fn document_text(number: usize, text: &str) -> String {
    format!("Document {number}:\n{text}")
}

/// A fill in progress: distractors drawn so far (in draw order) and their counted tokens.
struct Fill<'a> {
    docs: &'a Documents,
    question: &'a DocQuestion,
    rng: Rng,
    related: Vec<usize>,
    others: LazyShuffle,
    screen: Screen,
    screened: usize,
    drawn: Vec<(usize, usize)>,
}

impl<'a> Fill<'a> {
    /// The next usable distractor and its tokens: the question's own related paragraphs first,
    /// then the rest of the file; any that mentions a gold answer is skipped.
    fn pull(&mut self, tok: &Tokenizer) -> Result<Option<(usize, usize)>, GenError> {
        loop {
            let d = match self.related.pop() {
                Some(d) => d,
                None => match self.others.draw(&mut self.rng) {
                    // The question's own paragraphs were handed out (or are gold) already.
                    Some(d)
                        if self.question.gold.contains(&d)
                            || self.question.related.contains(&d) =>
                    {
                        continue
                    }
                    Some(d) => d,
                    None => return Ok(None),
                },
            };
            if self.screen.conflicts(&self.docs.docs[d]) {
                self.screened += 1;
                continue;
            }
            let t = tok.count(&self.docs.docs[d])?;
            self.drawn.push((d, t));
            return Ok(Some((d, t)));
        }
    }
}

impl Qa {
    fn content_params(&self) -> serde_json::Value {
        json!({"format": self.params.format.as_str(), "exact": self.params.exact})
    }

    fn documents<'r>(&self, run: &'r Run) -> Result<&'r Documents, GenError> {
        let docs = run.required_haystack(NAME)?.documents().ok_or_else(|| {
            GenError::BadParams(
                "qa reads its documents from a SQuAD or HotpotQA file, not from a text haystack"
                    .into(),
            )
        })?;
        if docs.format != self.params.format.doc_format() {
            return Err(GenError::BadParams(format!(
                "the QA data is {} JSON, but the recipe says {}",
                docs.format.as_str(),
                self.params.format.as_str()
            )));
        }
        Ok(docs)
    }

    /// The question of the instance in `slot`: the same at every length.
    fn question_index(&self, run: &Run, docs: &Documents, slot: u64) -> Result<usize, GenError> {
        let params = canonical_json(&self.content_params());
        let mut rng = Coordinates {
            task: "qa-questions",
            params: &params,
            seed: run.seed,
            length: 0,
            depth: None,
            sample: 0,
        }
        .rng(Stream::Content);
        let n = docs.questions.len();
        if slot >= n as u64 {
            return Err(GenError::BadCorpus(format!(
                "the QA data has {n} answerable questions, and every instance of a length asks its own: at most {n} depths × samples (instance {} was asked for)",
                slot + 1
            )));
        }
        let mut order = LazyShuffle::new(n);
        let mut q = 0;
        for _ in 0..=slot {
            q = order.draw(&mut rng).unwrap_or(0);
        }
        Ok(q)
    }

    fn question_text(q: &DocQuestion) -> (String, String) {
        (q.question.clone(), "Answer:".to_string())
    }

    /// What a distractor must not mention: a gold answer (yes/no answers of HotpotQA's
    /// comparison questions are words of any text, and are not screened).
    fn screen(q: &DocQuestion) -> Screen {
        answer_screen(q)
    }
}

/// What a distractor of `q` must not mention: a gold answer (yes/no answers of HotpotQA's
/// comparison questions are words of any text, and are not screened).
pub(crate) fn answer_screen(q: &DocQuestion) -> Screen {
    Screen::new(
        q.answers
            .iter()
            .filter(|a| !matches!(a.to_lowercase().as_str(), "yes" | "no")),
    )
}

/// The documents in prompt order: distractors `drawn[..n]` in draw order with the gold ones
/// inserted, the first where the tokens before it are nearest `depth` percent of the others'.
/// Returns the rendered documents and the positions of the gold ones (first gold first).
fn arrange(
    docs: &Documents,
    gold: &[(usize, usize)],
    drawn: &[(usize, usize)],
    depth: f64,
    extra_slots: &[usize],
) -> (Vec<String>, Vec<usize>) {
    let total: usize = drawn.iter().map(|d| d.1).sum();
    let target = depth / 100.0 * total as f64;
    let mut before = 0usize;
    let mut slot = 0usize;
    let mut best = f64::INFINITY;
    for k in 0..=drawn.len() {
        let miss = (before as f64 - target).abs();
        if miss < best {
            best = miss;
            slot = k;
        }
        if k < drawn.len() {
            before += drawn[k].1;
        }
    }
    // (slot among the distractors, gold index); extra golds in the slots drawn for them.
    let mut placed: Vec<(usize, usize)> = vec![(slot, 0)];
    for (g, &s) in extra_slots.iter().enumerate() {
        placed.push((s.min(drawn.len()), g + 1));
    }
    placed.sort();
    let mut order: Vec<(usize, Option<usize>)> = Vec::with_capacity(drawn.len() + gold.len());
    let mut p = placed.iter().peekable();
    for k in 0..=drawn.len() {
        while let Some(&&(s, g)) = p.peek() {
            if s != k {
                break;
            }
            order.push((gold[g].0, Some(g)));
            p.next();
        }
        if k < drawn.len() {
            order.push((drawn[k].0, None));
        }
    }
    let mut positions = vec![0usize; gold.len()];
    let texts = order
        .iter()
        .enumerate()
        .map(|(i, &(d, g))| {
            if let Some(g) = g {
                positions[g] = i;
            }
            document_text(i + 1, &docs.docs[d])
        })
        .collect();
    (texts, positions)
}

/// Tokens the `Document k:` header and the separator before it add.
fn header_tokens(tok: &Tokenizer, number: usize) -> Result<usize, GenError> {
    Ok(tok.count(&format!("Document {number}:\n"))? + tok.count(SEPARATOR)?)
}

impl Task for Qa {
    fn name(&self) -> &'static str {
        NAME
    }

    fn variant(&self) -> String {
        let f = self.params.format.as_str();
        if self.params.exact {
            format!("{f}_exact")
        } else {
            f.to_string()
        }
    }

    fn params(&self) -> serde_json::Value {
        self.content_params()
    }

    fn reads_documents(&self) -> bool {
        true
    }

    /// RULER's qa_1 (SQuAD) and qa_2 (HotpotQA), scored by "a gold answer occurs": an exact
    /// match config is another task.
    fn ruler_task(&self, _: crate::tasks::RulerHaystack) -> Option<&'static str> {
        match (self.params.exact, self.params.format) {
            (true, _) => None,
            (false, QaFormat::Squad) => Some("qa_1"),
            (false, QaFormat::Hotpotqa) => Some("qa_2"),
        }
    }

    fn uses_haystack(&self) -> bool {
        true
    }

    fn requires_haystack(&self) -> bool {
        true
    }

    fn default_reserve(&self) -> u32 {
        MAX_NEW_TOKENS
    }

    fn example_vars(&self) -> Vars {
        vars([("question", "In what year was the bridge finished?")])
    }

    fn minimum_length(&self, run: &Run) -> Result<u64, GenError> {
        self.minimum_length_for(run, 1)
    }

    fn minimum_length_for(&self, run: &Run, samples: u64) -> Result<u64, GenError> {
        let docs = self.documents(run)?;
        let tok = &run.tokenizer;
        let mut need = 0usize;
        // The first `samples` slots (those of the first depth); a later one whose gold
        // paragraphs do not fit is refused when it is made.
        for s in 0..samples {
            let q = &docs.questions[self.question_index(run, docs, s)?];
            let (question, prefix) = Self::question_text(q);
            let frame = run.frame(&vars([("question", &question)]), &prefix)?;
            let mut n = frame.fixed_tokens(tok)?;
            for (k, &g) in q.gold.iter().enumerate() {
                n += header_tokens(tok, k + 1)? + tok.count(&docs.docs[g])?;
            }
            need = need.max(n);
        }
        Ok((need as u64 * 11).div_ceil(10) + 16 + run.reserve)
    }

    fn check_instances(&self, run: &Run, per_length: u64) -> Result<(), GenError> {
        let n = self.documents(run)?.questions.len() as u64;
        if per_length > n {
            return Err(GenError::BadParams(format!(
                "the QA data has {n} answerable questions, fewer than the {per_length} instances per length asked for (depths × samples): each instance of a length asks its own question"
            )));
        }
        Ok(())
    }

    fn maximum_length(&self, run: &Run, _wanted: u64) -> Result<Option<(u64, String)>, GenError> {
        // A token is at least one byte, so the file's paragraphs with their headers bound the
        // tokens any prompt of them can have.
        let docs = self.documents(run)?;
        let bytes: usize = docs.docs.iter().map(|d| d.len() + 20).sum();
        Ok(Some((
            bytes as u64 + 4096 + run.reserve,
            format!(
                "the QA data's {} paragraphs hold {bytes} bytes",
                docs.docs.len()
            ),
        )))
    }

    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
        let docs = self.documents(run)?;
        let tok = &run.tokenizer;
        let params = canonical_json(&self.content_params());
        let coords = run.coordinates(NAME, &params, cell);
        let q = &docs.questions[self.question_index(run, docs, cell.slot)?];
        let (question, answer_prefix) = Self::question_text(q);
        let frame = run.frame(&vars([("question", &question)]), &answer_prefix)?;
        let budget = cell.length.saturating_sub(run.reserve) as usize;
        let depth = cell.depth.unwrap_or(50.0);

        let mut rng = coords.rng(Stream::Haystack);
        let mut related = q.related.clone();
        rng.shuffle(&mut related);
        related.reverse();
        let mut fill = Fill {
            docs,
            question: q,
            rng,
            related,
            others: LazyShuffle::new(docs.docs.len()),
            screen: Self::screen(q),
            screened: 0,
            drawn: Vec::new(),
        };
        let mut placement = coords.rng(Stream::Placement);
        let extra_slots: Vec<usize> = (1..q.gold.len())
            .map(|_| placement.next_u64() as usize)
            .collect();
        let gold: Vec<(usize, usize)> = q
            .gold
            .iter()
            .map(|&g| Ok((g, tok.count(&docs.docs[g])?)))
            .collect::<Result<_, GenError>>()?;

        // Estimate by counts of the parts, then settle with full counts.
        let fixed = frame.fixed_tokens(tok)?;
        let mut estimate = fixed.saturating_sub(tok.count(SEPARATOR)?);
        for (k, g) in gold.iter().enumerate() {
            estimate += header_tokens(tok, k + 1)? + g.1;
        }
        let mut n = 0usize;
        let mut exhausted = false;
        loop {
            let Some((_, t)) = fill.pull(tok)? else {
                exhausted = true;
                break;
            };
            let add = header_tokens(tok, gold.len() + n + 1)? + t;
            if estimate + add > budget {
                break;
            }
            estimate += add;
            n += 1;
        }
        let render = |drawn: &[(usize, usize)]| -> Result<(Fitted, Vec<usize>), GenError> {
            let slots: Vec<usize> = extra_slots.iter().map(|s| s % (drawn.len() + 1)).collect();
            let (texts, positions) = arrange(docs, &gold, drawn, depth, &slots);
            let fitted = render_joined(tok, &frame, &texts, SEPARATOR, &positions)?;
            Ok((fitted, positions))
        };
        let (mut fitted, mut positions) = render(&fill.drawn[..n])?;
        let mut renders = 1;
        // Too long: drop the last distractor. Room for the next one: take it.
        while fitted.prompt_tokens > budget && n > 0 && renders < MAX_RENDERS {
            n -= 1;
            (fitted, positions) = render(&fill.drawn[..n])?;
            renders += 1;
        }
        if fitted.prompt_tokens > budget {
            return Err(GenError::TooShort {
                budget,
                needed: fitted.prompt_tokens,
            });
        }
        while renders < MAX_RENDERS {
            if n == fill.drawn.len() && fill.pull(tok)?.is_none() {
                exhausted = true;
                break;
            }
            let (bigger, bigger_positions) = render(&fill.drawn[..n + 1])?;
            renders += 1;
            if bigger.prompt_tokens > budget {
                break;
            }
            (fitted, positions, n) = (bigger, bigger_positions, n + 1);
        }
        // What the first document left out would have added: the row's distance to the
        // budget is less than this (or within the haystack tolerance).
        let next_document_tokens = match fill.drawn.get(n) {
            Some(&(_, t)) => header_tokens(tok, gold.len() + n + 1)? + t,
            None => 0,
        };
        let shortfall = budget - fitted.prompt_tokens;
        if exhausted && fill.drawn.len() == n && shortfall > tolerance(budget) {
            return Err(GenError::BadCorpus(format!(
                "the QA data runs out of distractor paragraphs: its usable paragraphs fill {} of the {budget} tokens this length needs",
                fitted.prompt_tokens
            )));
        }
        let answers = q.answers.clone();
        let mut p = self.content_params();
        p["question_id"] = json!(q.id);
        p["documents"] = json!(n + gold.len());
        p["gold_documents"] = json!(positions.iter().map(|i| i + 1).collect::<Vec<_>>());
        p["screened_documents"] = json!(fill.screened);
        p["next_document_tokens"] = json!(next_document_tokens);
        Ok(Instance {
            question,
            answer_prefix,
            target: answers[0].clone(),
            answers,
            metric: if self.params.exact {
                Metric::OneOf
            } else {
                Metric::Any
            },
            params: canonical_json(&p),
            ..Instance::fitted(self, run, cell, fitted)
        })
    }

    fn identity(&self, instance: &Instance) -> Vec<String> {
        // The same question is the same instance, whatever documents surround it.
        let p: serde_json::Value = serde_json::from_str(&instance.params).unwrap_or_default();
        match p.get("question_id").and_then(|v| v.as_str()) {
            Some(id) if !id.is_empty() => vec![format!("question:{id}")],
            _ => vec![format!("question:{}", instance.question)],
        }
    }
}
