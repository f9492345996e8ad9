//! `ruler2`: RULER v2's twelve tasks ({mk_niah, mv_niah, qa} × {basic, easy, medium, hard}),
//! made reproducibly from the seed, at exact lengths under the run's tokenizer and chat
//! template, with the needle at a chosen depth or (RULER v2's layout) at a random place whose
//! depth is recorded.
//!
//! - basic: the context is nothing but needle-shaped lines (word keys, 10-digit values); in
//!   `mv` every key has `per_id` lines, the asked one too ([`basic`]);
//! - easy, medium, hard of `mk`/`mv`: multiple-choice questions of the user's MMLU copy, one
//!   per line, each labelled with a 7-digit id; the needles are test questions, the rest
//!   auxiliary_train ones; `mv` labels `per_id` questions with each id ([`mc`]);
//! - qa: HotpotQA paragraphs labelled `Document <id>` ([`docs`]).
//!
//! The structures, knobs and answers follow RULER v2 (see `docs/ruler2.md`); the sentences are
//! our own.

mod basic;
mod docs;
mod fill;
mod mc;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::fit::render::render_joined;
use crate::fit::{tolerance, Fitted};
use crate::rng::{Coordinates, Rng, Stream};
use crate::tasks::qa::LazyShuffle;
use crate::tasks::Params;
use crate::template::{Frame, Vars};
use crate::{canonical_json, Cell, GenError, Instance, Metric, ParamError, Run, Task};
use fill::{Pool, Slot};

/// The task's name: its command, its manifests' tag and the key of its random streams.
pub const NAME: &str = "ruler2";
/// One line saying what the task is.
pub const ABOUT: &str = "RULER v2's twelve tasks: key lines, MMLU questions or HotpotQA documents labelled by ids, to copy, copy then solve, or solve";
/// The task's built-in templates, (name, source), the first its default.
pub const TEMPLATES: &[(&str, &str)] = &[(
    "default",
    include_str!("../../../templates/ruler2/default.j2"),
)];

/// Most items one id may label (`per_id`).
const MAX_PER_ID: u32 = 16;
/// Most worked examples (`shots`).
const MAX_SHOTS: u32 = 16;

choice! {
    /// Which of RULER v2's twelve tasks, named as RULER v2 names them.
    pub enum Ruler2Variant {
        /// One key's value among lines of other keys.
        MkNiahBasic = "mk_niah_basic",
        /// Copy the question carrying an id.
        MkNiahEasy = "mk_niah_easy",
        /// Copy it, then answer it (A-D), after worked examples.
        MkNiahMedium = "mk_niah_medium",
        /// Answer it directly (A-D), after worked examples.
        MkNiahHard = "mk_niah_hard",
        /// All values of one key, every key having as many lines.
        MvNiahBasic = "mv_niah_basic",
        /// Copy every question labelled with an id, in context order.
        MvNiahEasy = "mv_niah_easy",
        /// Copy them all, then the k-th alone.
        MvNiahMedium = "mv_niah_medium",
        /// Copy the k-th directly.
        MvNiahHard = "mv_niah_hard",
        /// Give the id of a document whose text is shown.
        QaBasic = "qa_basic",
        /// Give the id of a document relevant to a question.
        QaEasy = "qa_easy",
        /// Copy the relevant documents, then answer.
        QaMedium = "qa_medium",
        /// Answer the question.
        QaHard = "qa_hard",
    }
}

/// What a variant's haystack is made of: what the front end must load for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ruler2Data {
    /// Nothing: the task writes its key lines itself.
    None,
    /// The user's MMLU copy.
    Mmlu,
    /// A HotpotQA file.
    HotpotQa,
}

impl Ruler2Variant {
    /// What the variant's haystack is made of.
    pub fn data(self) -> Ruler2Data {
        use Ruler2Variant::*;
        match self {
            MkNiahBasic | MvNiahBasic => Ruler2Data::None,
            QaBasic | QaEasy | QaMedium | QaHard => Ruler2Data::HotpotQa,
            _ => Ruler2Data::Mmlu,
        }
    }

    /// Whether ids (keys) label several items (`mv_*`).
    fn multi(self) -> bool {
        self.as_str().starts_with("mv_")
    }
}

/// ruler2's parameters, spelled as manifests and `params` record them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ruler2Params {
    /// Which of the twelve tasks.
    pub variant: Ruler2Variant,
    /// In `mv` variants, the lines a key has (basic) or the questions an id labels (RULER v2's
    /// `num_order`, 4).
    pub per_id: u32,
    /// Worked examples of `mk_niah_medium` and `mk_niah_hard`, drawn from the context (5).
    pub shots: u32,
}

impl Ruler2Params {
    /// RULER v2's settings for `variant`.
    pub fn of(variant: Ruler2Variant) -> Ruler2Params {
        Ruler2Params {
            variant,
            per_id: 4,
            shots: 5,
        }
    }
}

impl Params for Ruler2Params {
    type Built = Ruler2;

    fn build(&self) -> Result<Ruler2, ParamError> {
        if !(2..=MAX_PER_ID).contains(&self.per_id) {
            return Err(ParamError::new(
                "per_id",
                self.per_id,
                format!("an item count from 2 to {MAX_PER_ID}"),
            ));
        }
        if self.shots > MAX_SHOTS {
            return Err(ParamError::new(
                "shots",
                self.shots,
                format!("a number of worked examples from 0 to {MAX_SHOTS}"),
            ));
        }
        Ok(Ruler2 {
            params: self.clone(),
            keys: basic::Keys::builtin(),
        })
    }
}

/// Validated ruler2 parameters with the word lists basic keys draw from.
#[derive(Debug, Clone)]
pub struct Ruler2 {
    /// The checked parameters.
    pub params: Ruler2Params,
    keys: basic::Keys,
}

/// What one family of variants decides before the context is filled: the needles, the answer
/// budget, and how the text around the context reads for a given context.
struct Skeleton {
    /// The needle units as the context shows them.
    needles: Vec<String>,
    /// Tokens a complete answer takes (copies included): the answer budget's base.
    answer_text: String,
    /// Units a row needs at least (worked examples come from the context).
    min_units: usize,
}

/// Makes the text around a context from its units and their order (worked examples are
/// taken from the context).
type FrameFor<'a> = dyn Fn(&Pool<'_>, &[Slot]) -> Result<Frame, GenError> + 'a;

/// A finished fill: the prompt, the context order and the counts around it.
struct Filled {
    /// The row's answer budget.
    max_new_tokens: u32,
    fitted: Fitted,
    order: Vec<Slot>,
    units: usize,
    next_unit_tokens: usize,
}

impl Ruler2 {
    /// The content parameters (they key the random streams and go into every row).
    fn content_params(&self) -> serde_json::Value {
        json!({
            "variant": self.params.variant.as_str(),
            "per_id": self.params.per_id,
            "shots": self.params.shots,
        })
    }

    /// Needles of the row: one for `mk`, `per_id` for `mv`.
    fn needle_count(&self) -> usize {
        if self.params.variant.multi() {
            self.params.per_id as usize
        } else {
            1
        }
    }

    /// Indices `slot * take .. (slot + 1) * take` of a seed-wide shuffle of `0..n`: every
    /// length draws the same items for a slot, and no two slots of a length share one.
    fn pool_draw(
        &self,
        run: &Run,
        what: &str,
        n: usize,
        slot: u64,
        take: usize,
    ) -> Result<Vec<usize>, GenError> {
        let need = (slot + 1).saturating_mul(take as u64);
        if need > n as u64 {
            return Err(GenError::BadCorpus(format!(
                "the {what} hold {n} items and every instance of a length takes {take} of its own: instance {} needs {need}",
                slot + 1
            )));
        }
        let params = canonical_json(&self.content_params());
        let key = format!("{NAME}-{what}");
        let mut rng = Coordinates {
            task: &key,
            params: &params,
            seed: run.seed,
            length: 0,
            depth: None,
            sample: 0,
        }
        .rng(Stream::Content);
        let mut order = LazyShuffle::new(n);
        let mut out = Vec::with_capacity(take);
        for i in 0..need {
            let d = order.draw(&mut rng).unwrap_or(0);
            if i >= slot * take as u64 {
                out.push(d);
            }
        }
        Ok(out)
    }

    /// The answer budget: `--reserve`, else a complete answer's tokens with slack.
    fn answer_budget(&self, run: &Run, skeleton: &Skeleton) -> Result<u32, GenError> {
        run.answer_tokens(&skeleton.answer_text)
    }

    /// Fill the budget of `cell` with units from `pool` around the skeleton's needles, the
    /// frame made by `frame_for` from the context's order.
    fn fill(
        &self,
        run: &Run,
        cell: &Cell,
        skeleton: &Skeleton,
        pool: &mut Pool<'_>,
        sep: &str,
        frame_for: &FrameFor<'_>,
    ) -> Result<Filled, GenError> {
        let tok = &run.tokenizer;
        let max_new = self.answer_budget(run, skeleton)?;
        let budget = cell.length.saturating_sub(u64::from(max_new)) as usize;
        let mut spots_rng = run
            .coordinates(NAME, &canonical_json(&self.content_params()), cell)
            .rng(Stream::Placement);
        let spots: Vec<f64> = skeleton
            .needles
            .iter()
            .map(|_| spots_rng.unit_f64())
            .collect();
        let needle_tokens: usize = skeleton
            .needles
            .iter()
            .map(|n| Ok(tok.count(n)? + 1))
            .sum::<Result<usize, GenError>>()?;
        let empty: Vec<Slot> = (0..skeleton.needles.len()).map(Slot::Needle).collect();
        let fixed = frame_for(pool, &empty)?.fixed_tokens(tok)? + needle_tokens;
        let render =
            |pool: &Pool<'_>, n: usize| -> Result<(usize, (Fitted, Vec<Slot>)), GenError> {
                let order = fill::arrange(&pool.pieces, n, cell.depth, &spots);
                let frame = frame_for(pool, &order)?;
                let mut marked = vec![0usize; skeleton.needles.len()];
                let texts: Vec<&str> = order
                    .iter()
                    .enumerate()
                    .map(|(at, s)| match *s {
                        Slot::Unit(i) => pool.pieces[i].text.as_str(),
                        Slot::Needle(j) => {
                            marked[j] = at;
                            skeleton.needles[j].as_str()
                        }
                    })
                    .collect();
                let fitted = render_joined(tok, &frame, &texts, sep, &marked)?;
                Ok((fitted.prompt_tokens, (fitted, order)))
            };
        let (n, (fitted, order), added) = fill::settle(tok, pool, budget, fixed, render)?;
        if n < skeleton.min_units {
            return Err(GenError::TooShort {
                budget,
                needed: fitted.prompt_tokens + (skeleton.min_units - n) * 64,
            });
        }
        // What the next unit adds: its own count, or what it was measured to add.
        let next_unit_tokens = if pool.reach(n + 1, tok)? {
            pool.pieces[n].tokens.max(added.unwrap_or(0))
        } else {
            0
        };
        let shortfall = budget.saturating_sub(fitted.prompt_tokens);
        if next_unit_tokens == 0 && shortfall > tolerance(budget) {
            return Err(GenError::BadCorpus(format!(
                "the {} run out: the {n} units there are fill {} of the {budget} tokens this length needs",
                self.source_name(),
                fitted.prompt_tokens
            )));
        }
        Ok(Filled {
            max_new_tokens: max_new,
            fitted,
            order,
            units: n,
            next_unit_tokens,
        })
    }

    /// What the haystack units come from, for messages.
    fn source_name(&self) -> &'static str {
        match self.params.variant.data() {
            Ruler2Data::None => "key names",
            Ruler2Data::Mmlu => "MMLU data's auxiliary_train questions",
            Ruler2Data::HotpotQa => "HotpotQA data's paragraphs",
        }
    }

    /// The frame of a prompt: our instruction before the context, the request after it.
    fn frame(run: &Run, instruction: &str, question: &str) -> Result<Frame, GenError> {
        run.frame(
            &crate::template::vars([("instruction", instruction), ("question", question)]),
            "",
        )
    }

    /// The row: the fitted prompt with the family's answers and facts, and what every variant
    /// records (the placement, the counts, RULER v2's own measure).
    fn row(&self, run: &Run, cell: &Cell, filled: Filled, answer: Answer) -> Instance {
        let Answer {
            question,
            target,
            answers,
            metric,
            facts,
        } = answer;
        let mut p = self.content_params();
        if let (Some(map), serde_json::Value::Object(facts)) = (p.as_object_mut(), facts) {
            map.extend(facts);
            map.insert("units".into(), json!(filled.order.len()));
            map.insert("next_unit_tokens".into(), json!(filled.next_unit_tokens));
            map.insert(
                "placement".into(),
                json!(if cell.depth.is_some() {
                    "depth"
                } else {
                    "random"
                }),
            );
            // RULER v2 counts the prompt text alone: no chat template, no answer budget.
            map.insert("raw_question_tokens".into(), json!(filled.fitted.length));
        }
        Instance {
            question,
            target,
            answers,
            metric,
            max_new_tokens: filled.max_new_tokens,
            params: canonical_json(&p),
            ..Instance::fitted(self, run, cell, filled.fitted)
        }
    }
}

/// What a family decides once the context is laid out: the request, the gold and the facts
/// only this family records.
struct Answer {
    question: String,
    target: String,
    answers: Vec<String>,
    metric: Metric,
    facts: serde_json::Value,
}

/// A 7-digit id no other item of the context has.
fn fresh_id(rng: &mut Rng, used: &mut BTreeSet<u64>) -> u64 {
    loop {
        let id = rng.range_inclusive(1_000_000, 9_999_999);
        if used.insert(id) {
            return id;
        }
    }
}

/// `1st`, `2nd`, `3rd`, `4th`, … `11th`, `12th`, `13th`, `21st`.
pub fn ordinal(k: usize) -> String {
    let suffix = match (k % 10, k % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{k}{suffix}")
}

/// The needles' places in context order (1-based, counting every unit), in needle order, and
/// the needle indices in context order.
fn needle_places(order: &[Slot], needles: usize) -> (Vec<usize>, Vec<usize>) {
    let mut places = vec![0usize; needles];
    let mut in_order = Vec::with_capacity(needles);
    for (at, s) in order.iter().enumerate() {
        if let Slot::Needle(j) = *s {
            places[j] = at + 1;
            in_order.push(j);
        }
    }
    (places, in_order)
}

impl Task for Ruler2 {
    fn name(&self) -> &'static str {
        NAME
    }

    fn variant(&self) -> String {
        self.params.variant.as_str().to_string()
    }

    fn params(&self) -> serde_json::Value {
        self.content_params()
    }

    fn reads_documents(&self) -> bool {
        self.params.variant.data() == Ruler2Data::HotpotQa
    }

    fn reads_mmlu(&self) -> bool {
        self.params.variant.data() == Ruler2Data::Mmlu
    }

    fn uses_haystack(&self) -> bool {
        true
    }

    fn requires_haystack(&self) -> bool {
        self.params.variant.data() != Ruler2Data::None
    }

    /// RULER v2 puts the needle at a random place; `--depths` chooses one instead.
    fn default_depths(&self) -> Option<Vec<f64>> {
        None
    }

    /// Each row's answer budget is its own complete answer (copies included) with slack.
    fn default_reserve(&self) -> u32 {
        0
    }

    fn example_vars(&self) -> Vars {
        crate::template::vars([
            ("instruction", "Below is a list of labelled items."),
            ("question", "Copy out the item labelled 1234567."),
        ])
    }

    fn minimum_length(&self, run: &Run) -> Result<u64, GenError> {
        self.minimum_length_for(run, 1)
    }

    fn minimum_length_for(&self, run: &Run, samples: u64) -> Result<u64, GenError> {
        let mut need = 0u64;
        for s in 0..samples.clamp(1, 64) {
            let cell = Cell {
                length: 0,
                depth: None,
                sample: s,
                slot: s,
            };
            let (skeleton, frame) = match self.params.variant.data() {
                Ruler2Data::None => basic::skeleton(self, run, &cell)?,
                Ruler2Data::Mmlu => mc::skeleton(self, run, &cell)?,
                Ruler2Data::HotpotQa => docs::skeleton(self, run, &cell)?,
            };
            let tok = &run.tokenizer;
            let mut n = frame.fixed_tokens(tok)? as u64;
            for needle in &skeleton.needles {
                n += tok.count(needle)? as u64 + 2;
            }
            // Worked examples take units of about a question's size.
            n += skeleton.min_units as u64 * 160;
            let answer = u64::from(self.answer_budget(run, &skeleton)?);
            need = need.max((n * 11).div_ceil(10) + 16 + answer);
        }
        Ok(need)
    }

    fn check_instances(&self, run: &Run, per_length: u64) -> Result<(), GenError> {
        let (have, what, take) = match self.params.variant.data() {
            Ruler2Data::None => return Ok(()),
            Ruler2Data::Mmlu => (
                mc::bank(run)?.test.len() as u64,
                "MMLU data's test questions",
                self.needle_count() as u64,
            ),
            Ruler2Data::HotpotQa => (
                docs::documents(run)?.questions.len() as u64,
                "HotpotQA data's answerable questions",
                1,
            ),
        };
        if per_length.saturating_mul(take) > have {
            return Err(GenError::BadParams(format!(
                "the {what} number {have}, fewer than the {} that {per_length} instances per length (depths × samples) take at {take} each: each instance of a length asks its own",
                per_length.saturating_mul(take)
            )));
        }
        Ok(())
    }

    fn maximum_length(&self, run: &Run, _wanted: u64) -> Result<Option<(u64, String)>, GenError> {
        // A token is at least one byte, so the units' bytes bound any prompt of them.
        Ok(match self.params.variant.data() {
            Ruler2Data::None => None,
            Ruler2Data::Mmlu => {
                let bank = mc::bank(run)?;
                let bytes: usize = bank.aux.iter().map(|q| q.line().len() + 20).sum();
                Some((
                    bytes as u64 + 8192 + run.reserve,
                    format!(
                        "the MMLU data's {} auxiliary_train questions hold {bytes} bytes",
                        bank.aux.len()
                    ),
                ))
            }
            Ruler2Data::HotpotQa => {
                let d = docs::documents(run)?;
                let bytes: usize = d.docs.iter().map(|t| t.len() + 20).sum();
                Some((
                    bytes as u64 + 8192 + run.reserve,
                    format!(
                        "the HotpotQA data's {} paragraphs hold {bytes} bytes",
                        d.docs.len()
                    ),
                ))
            }
        })
    }

    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
        match self.params.variant.data() {
            Ruler2Data::None => basic::generate(self, run, cell),
            Ruler2Data::Mmlu => mc::generate(self, run, cell),
            Ruler2Data::HotpotQa => docs::generate(self, run, cell),
        }
    }

    fn identity(&self, instance: &Instance) -> Vec<String> {
        let p: serde_json::Value = serde_json::from_str(&instance.params).unwrap_or_default();
        match self.params.variant.data() {
            // A key is the instance: its values are drawn anew each time.
            Ruler2Data::None => crate::identity::fact_key(instance, "key", "key"),
            // The needle questions, by their text: the same test question is the same instance.
            Ruler2Data::Mmlu => p
                .get("needle_hashes")
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str())
                        .map(|h| format!("mmlu:{h}"))
                        .collect()
                })
                .unwrap_or_default(),
            Ruler2Data::HotpotQa => crate::identity::fact_key(instance, "question", "question_id"),
        }
    }
}

#[cfg(test)]
mod tests;
