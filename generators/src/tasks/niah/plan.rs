//! What one niah instance puts in its prompt: needles (access codes or latent), confusers, the
//! question and its answer, and what the haystack must not mention, drawn from the instance's
//! own streams.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::confusers::{self, Confuser};
use super::latent::{Drawn, Latent};
use super::{NeedleKind, Niah};
use crate::fit::NeedleSpec;
use crate::haystack::{DistractorMaker, Screen};
use crate::rng::{Coordinates, Rng, Seed, Stream};
use crate::{canonical_json, Cell, GenError, Metric, Run};

/// One instance's content, whatever its needles are.
pub(super) struct Plan {
    /// Needles in record order (the first asked first), then confusers.
    pub specs: Vec<NeedleSpec>,
    /// How many of `specs` are needles; the rest are confusers.
    pub needles: usize,
    pub question: String,
    pub answer_prefix: String,
    pub target: String,
    pub answers: Vec<String>,
    /// The closed label set of metric `label` (latent needles), else empty.
    pub labels: Vec<String>,
    pub metric: Metric,
    /// Terms no haystack unit may mention.
    pub screen: Screen,
    /// Facts recorded in `params` beside the parameters.
    pub facts: Vec<(&'static str, Value)>,
    pub confusers: Vec<Confuser>,
    /// What distractor needles are drawn against.
    source: Source,
    /// The instance's key, for its haystack stream.
    pub coords_key: [u8; 32],
}

enum Source {
    /// Keys and values taken by the instance.
    Code(BTreeSet<String>),
    /// The latent draw.
    Latent(Drawn),
}

/// Access-code content: needles in record order, asked keys, gold values.
struct Content {
    keys: Vec<String>,
    values: Vec<Vec<String>>,
    asked: Vec<String>,
    needles: Vec<(String, String)>,
    used: BTreeSet<String>,
}

impl Niah {
    /// The plan of the instance at `cell`.
    pub(super) fn plan(&self, cell: &Cell, seed: Seed) -> Result<Plan, GenError> {
        let params = canonical_json(&self.content_params());
        let coords = Coordinates {
            task: super::NAME,
            params: &params,
            seed,
            length: cell.length,
            depth: cell.depth,
            sample: cell.sample,
        };
        let mut rng = coords.rng(Stream::Content);
        let mut placement = coords.rng(Stream::Placement);
        let depth = cell.depth.unwrap_or(50.0);
        match &self.latent {
            Some(latent) => self.latent_plan(latent, depth, &mut rng, &mut placement),
            None => self.code_plan(depth, &mut rng, &mut placement),
        }
        .map(|plan| Plan {
            coords_key: coords.key(),
            ..plan
        })
    }

    /// Keys, values and asked keys, drawn in this order (the order every dataset has).
    fn content(&self, rng: &mut Rng) -> Result<Content, GenError> {
        let mut used = BTreeSet::new();
        let exhausted = || {
            GenError::BadParams(format!(
                "niah cannot draw {} distinct keys with {} values each: the {} and {} spaces are used up (words give 3,599 pairs; use a number or uuid key or value type, or fewer keys and values)",
                self.params.keys, self.params.values, self.params.key_type, self.params.value_type
            ))
        };
        let keys: Vec<String> = (0..self.params.keys)
            .map(|_| {
                self.fresh(self.params.key_type, rng, &mut used)
                    .ok_or_else(exhausted)
            })
            .collect::<Result<_, _>>()?;
        let values: Vec<Vec<String>> = keys
            .iter()
            .map(|_| {
                (0..self.params.values)
                    .map(|_| {
                        self.fresh(self.params.value_type, rng, &mut used)
                            .ok_or_else(exhausted)
                    })
                    .collect::<Result<_, _>>()
            })
            .collect::<Result<_, _>>()?;
        let asked: Vec<String> = if self.params.absent {
            vec![self
                .fresh(self.params.key_type, rng, &mut used)
                .ok_or_else(exhausted)?]
        } else {
            keys[..self.params.queries as usize].to_vec()
        };
        // Needles in record order: the asked keys' values first, the first asked needle first.
        let mut needles = Vec::new();
        for (k, vals) in keys.iter().zip(&values) {
            for v in vals {
                needles.push((k.clone(), v.clone()));
            }
        }
        Ok(Content {
            keys,
            values,
            asked,
            needles,
            used,
        })
    }

    fn question(&self, asked: &[String]) -> (String, String) {
        let multi_values = self.params.values > 1;
        let (q, prefix) = match asked {
            [k] if multi_values => (
                format!("What are all of the access codes assigned to {k}?"),
                format!("The access codes assigned to {k} are"),
            ),
            [k] => (
                format!("What is the access code assigned to {k}?"),
                format!("The access code assigned to {k} is"),
            ),
            many => {
                let (last, rest) = many.split_last().unwrap_or((&many[0], &[]));
                let list = format!("{} and {last}", rest.join(", "));
                (
                    format!("What are the access codes assigned to {list}?"),
                    format!("The access codes assigned to {list} are"),
                )
            }
        };
        (
            format!("{q} If the document gives no code for it, answer none."),
            prefix,
        )
    }

    /// Access-code needles, then confusers drawn after everything else (so an instance without
    /// confusers draws what it always did).
    fn code_plan(&self, depth: f64, rng: &mut Rng, placement: &mut Rng) -> Result<Plan, GenError> {
        let mut c = self.content(rng)?;
        let mut specs: Vec<NeedleSpec> = c
            .needles
            .iter()
            .zip(self.depths(depth, c.needles.len(), placement))
            .map(|((k, v), depth)| NeedleSpec {
                text: Self::needle_sentence(k, v),
                depth,
            })
            .collect();
        let gold: Vec<String> = if self.params.absent {
            Vec::new()
        } else {
            c.keys
                .iter()
                .zip(&c.values)
                .filter(|(k, _)| c.asked.contains(k))
                .flat_map(|(_, vals)| vals.iter().cloned())
                .collect()
        };
        let confusers = self.confusers(&c.asked, &gold, rng, &mut c.used)?;
        // Confusers go anywhere, each at its own depth on the needles' 0.1 % grid.
        specs.extend(confusers.iter().map(|x| NeedleSpec {
            text: x.sentence.clone(),
            depth: placement.below(1001) as f64 / 10.0,
        }));
        // What a haystack sentence must not mention: every key (the asked one too, even when
        // absent), every value, the needles' own phrase, and every confuser's key and value.
        let mut screen = Screen::new(
            c.keys
                .iter()
                .chain(&c.asked)
                .chain(c.values.iter().flatten()),
        );
        screen.add("access code");
        screen.add("access codes");
        for x in &confusers {
            screen.add(&x.key);
            screen.add(&x.value);
        }
        let (question, answer_prefix) = self.question(&c.asked);
        let (target, answers, metric) = if self.params.absent {
            ("none".to_string(), vec!["none".to_string()], Metric::Exact)
        } else {
            (gold.join(", "), gold, Metric::All)
        };
        let facts = vec![
            (
                "needles",
                json!(c
                    .needles
                    .iter()
                    .map(|(k, v)| json!({"key": k, "value": v}))
                    .collect::<Vec<_>>()),
            ),
            ("asked", json!(c.asked)),
        ];
        Ok(Plan {
            needles: c.needles.len(),
            specs,
            question,
            answer_prefix,
            target,
            answers,
            labels: Vec::new(),
            metric,
            screen,
            facts,
            confusers,
            source: Source::Code(c.used),
            coords_key: [0; 32],
        })
    }

    /// Latent needles: people beside things of one table; the first person is the answer.
    fn latent_plan(
        &self,
        latent: &Latent,
        depth: f64,
        rng: &mut Rng,
        placement: &mut Rng,
    ) -> Result<Plan, GenError> {
        let drawn = latent.draw(self.params.keys as usize, rng)?;
        let table = &latent.tables[drawn.table];
        let specs: Vec<NeedleSpec> = drawn
            .people
            .iter()
            .zip(self.depths(depth, drawn.people.len(), placement))
            .map(|(p, depth)| NeedleSpec {
                text: p.sentence.clone(),
                depth,
            })
            .collect();
        let gold = &drawn.people[0];
        let hop = &table.entries[gold.entry];
        let facts = vec![
            (
                "needles",
                json!(drawn
                    .people
                    .iter()
                    .map(|p| {
                        let e = &table.entries[p.entry];
                        json!({"key": e.from, "value": p.name, "to": e.to})
                    })
                    .collect::<Vec<_>>()),
            ),
            ("asked", json!([hop.to])),
            (
                "hop",
                json!({"table": table.name, "from": hop.from, "to": hop.to}),
            ),
            (
                "needle_sentences",
                json!(drawn.people.iter().map(|p| &p.sentence).collect::<Vec<_>>()),
            ),
        ];
        Ok(Plan {
            needles: specs.len(),
            specs,
            question: drawn.question.clone(),
            answer_prefix: drawn.prefix.clone(),
            target: gold.name.to_string(),
            answers: vec![gold.name.to_string()],
            labels: latent.labels.iter().map(|l| l.to_string()).collect(),
            metric: Metric::Label,
            screen: latent.screen(&drawn),
            facts,
            confusers: Vec::new(),
            source: Source::Latent(drawn),
            coords_key: [0; 32],
        })
    }

    /// Distractor needles for a haystack of needles, of the same form as the instance's own:
    /// fresh keys and values (access codes), or other people beside things that lead elsewhere
    /// (latent). When fresh ones run out, earlier distractors come round again (never a
    /// needle's key or person, so the gold answer stays the only one).
    pub(super) fn distractors<'a>(&'a self, plan: &'a Plan) -> DistractorMaker<'a> {
        let (mut made, mut again) = (Vec::<String>::new(), 0usize);
        let mut recycle = move |fresh: Option<String>, empty: &str| match fresh {
            Some(sentence) => {
                made.push(sentence.clone());
                sentence
            }
            None if !made.is_empty() => {
                again += 1;
                made[(again - 1) % made.len()].clone()
            }
            None => empty.to_string(),
        };
        if let (Source::Latent(drawn), Some(latent)) = (&plan.source, &self.latent) {
            let mut used: BTreeSet<&'static str> = drawn.people.iter().map(|p| p.name).collect();
            return Box::new(move |rng: &mut Rng| {
                let fresh = latent.distractor(drawn, &mut used, rng);
                recycle(fresh, "Nothing more is noted here.")
            });
        }
        let mut used = match &plan.source {
            Source::Code(used) => used.clone(),
            Source::Latent(_) => BTreeSet::new(),
        };
        let mut taken = Vec::new();
        Box::new(move |rng: &mut Rng| {
            let k = self.fresh_distractor(self.params.key_type, rng, &mut used, &mut taken);
            let v = self.fresh_distractor(self.params.value_type, rng, &mut used, &mut taken);
            let fresh = match (k, v) {
                (Some(k), Some(v)) => Some(Self::needle_sentence(&k, &v)),
                _ => None,
            };
            recycle(fresh, "Nothing else about access codes is noted here.")
        })
    }

    /// Tokens the instance's fixed text needs: its frame and every needle and confuser. A
    /// confuser counts as its longest form and latent needles as the longest question and
    /// sentences their table can give, so other instances fit too.
    pub(super) fn fixed_tokens(&self, run: &Run, plan: &Plan) -> Result<usize, GenError> {
        let tok = &run.tokenizer;
        let frame = |q: &str, prefix: &str| -> Result<usize, GenError> {
            run.frame(&crate::template::vars([("question", q)]), prefix)?
                .fixed_tokens(tok)
        };
        let count = |s: &str| tok.count(&format!(" {s}")).map_err(GenError::from);
        if let (Some(latent), Source::Latent(_)) = (&self.latent, &plan.source) {
            let name = latent.names.iter().max_by_key(|n| n.len()).unwrap_or(&"");
            let mut most = 0;
            for t in &latent.tables {
                let (mut question, mut needle) = (0, 0);
                for e in &t.entries {
                    question = question.max(frame(&t.question(e), &t.prefix(e))?);
                    for k in 0..t.needles.len() {
                        needle = needle.max(count(&t.sentence(k, name, e))?);
                    }
                }
                most = most.max(question + needle * plan.needles);
            }
            return Ok(most);
        }
        let mut need = frame(&plan.question, &plan.answer_prefix)?;
        for s in &plan.specs[..plan.needles] {
            need += count(&s.text)?;
        }
        for x in &plan.confusers {
            let mut longest = 0;
            for kind in confusers::ConfuserKind::ALL {
                longest = longest.max(count(&confusers::sentence(*kind, &x.key, &x.value))?);
            }
            need += longest;
        }
        Ok(need)
    }
}

impl NeedleKind {
    /// The built-in template that frames these needles when none is named.
    pub fn template(self) -> &'static str {
        match self {
            NeedleKind::Code => "default",
            NeedleKind::Latent => "latent",
        }
    }
}
