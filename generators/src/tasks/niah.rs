//! `niah`: needle in a haystack, following the structure of RULER's NIAH configurations.
//!
//! K keys each get V values, one needle sentence per (key, value); Q keys are asked. The
//! haystack can be our prose, noise, a user corpus, or distractor needles. The `none` variant
//! asks about a key that is not in the text.

use std::collections::BTreeSet;

use serde_json::json;

use crate::fit::{fit, NeedleSpec};
use crate::haystack::{DistractorMaker, Screen};
use crate::rng::{Coordinates, Rng, Stream};
use crate::template::{vars, Vars};
use crate::{canonical_json, Cell, GenError, Instance, Metric, ParamError, Run, Task};
use serde::{Deserialize, Serialize};

const KEY_ADJECTIVES: &str = include_str!("../../haystacks/vocab/key_adjectives.txt");
const KEY_NOUNS: &str = include_str!("../../haystacks/vocab/key_nouns.txt");

/// RULER's answer budget for NIAH.
pub const MAX_NEW_TOKENS: u32 = 128;

/// Draws in a row that may all be taken before a space of keys or values counts as used up.
const MAX_DRAWS: usize = 4096;

choice! {
    /// What keys or values are made of.
    pub enum ItemType {
        /// Adjective-noun pairs from our own lists, e.g. `cobalt-heron`.
        Words = "words",
        /// 7-digit numbers.
        Numbers = "numbers",
        /// Version-4 UUIDs.
        Uuids = "uuids",
    }
}

choice! {
    /// Where needles after the first go.
    pub enum Spread {
        /// Uniformly random distinct depths.
        Random = "random",
        /// Evenly spaced through the depth range left after the first.
        Even = "even",
    }
}

choice! {
    /// Named shortcuts for RULER's NIAH structures; each fixes keys, values, queries and
    /// absence, which explicit parameters may then override.
    pub enum NiahVariant {
        /// One key, one value, asked.
        Single = "single",
        /// Four keys, one asked.
        Multikey = "multikey",
        /// One key with four values.
        Multivalue = "multivalue",
        /// Four keys, all asked.
        Multiquery = "multiquery",
        /// The asked key is absent: the answer is `none`.
        None = "none",
    }
}

/// Named variants: (name, keys, values, queries, absent).
pub const VARIANTS: &[(&str, u32, u32, u32, bool)] = &[
    ("single", 1, 1, 1, false),
    ("multikey", 4, 1, 1, false),
    ("multivalue", 1, 4, 1, false),
    ("multiquery", 4, 1, 4, false),
    ("none", 1, 1, 1, true),
];

/// niah's parameters, spelled as manifests and `params` record them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NiahParams {
    /// Keys inserted.
    pub keys: u32,
    /// Values per key.
    pub values: u32,
    /// Keys asked about.
    pub queries: u32,
    /// What keys are made of.
    pub key_type: ItemType,
    /// What values are made of.
    pub value_type: ItemType,
    /// Ask about a key that is not in the text.
    pub absent: bool,
    /// Placement of needles after the first.
    pub spread: Spread,
}

impl NiahParams {
    /// The parameters of a named variant, with word keys and number values (RULER's default).
    pub fn variant(variant: NiahVariant) -> Self {
        let &(_, keys, values, queries, absent) = VARIANTS
            .iter()
            .find(|x| x.0 == variant.as_str())
            .unwrap_or(&VARIANTS[0]);
        NiahParams {
            keys,
            values,
            queries,
            key_type: ItemType::Words,
            value_type: ItemType::Numbers,
            absent,
            spread: Spread::Random,
        }
    }

    /// Check every parameter and make the task.
    pub fn build(&self) -> Result<Niah, ParamError> {
        let (keys, values, queries) = (self.keys, self.values, self.queries);
        if keys == 0 || keys > 1000 {
            return Err(ParamError::new("keys", keys, "1 to 1000"));
        }
        if values == 0 || values > 100 {
            return Err(ParamError::new("values", values, "1 to 100"));
        }
        if queries == 0 || queries > keys {
            return Err(ParamError::new(
                "queries",
                queries,
                format!("1 to the number of keys ({keys})"),
            ));
        }
        if self.absent && queries != 1 {
            return Err(ParamError::new(
                "queries",
                queries,
                "1 when the asked key is absent (the none variant asks about one key)",
            ));
        }
        let words = |s: &'static str| -> Vec<&'static str> {
            s.lines().map(str::trim).filter(|l| !l.is_empty()).collect()
        };
        Ok(Niah {
            params: self.clone(),
            vocab: Vocab {
                adjectives: words(KEY_ADJECTIVES),
                nouns: words(KEY_NOUNS),
            },
        })
    }
}

/// Validated NIAH parameters with the word lists they draw from.
#[derive(Debug, Clone)]
pub struct Niah {
    /// The checked parameters.
    pub params: NiahParams,
    vocab: Vocab,
}

#[derive(Debug, Clone)]
struct Vocab {
    adjectives: Vec<&'static str>,
    nouns: Vec<&'static str>,
}

impl Niah {
    fn item(&self, kind: ItemType, rng: &mut Rng) -> String {
        match kind {
            ItemType::Numbers => rng.range_inclusive(1_000_000, 9_999_999).to_string(),
            ItemType::Words => format!(
                "{}-{}",
                rng.choose(&self.vocab.adjectives),
                rng.choose(&self.vocab.nouns)
            ),
            ItemType::Uuids => {
                let hi = rng.next_u64();
                let lo = rng.next_u64();
                crate::hash::uuid_v4(hi, lo)
            }
        }
    }

    /// A fresh item not yet in `used` (which it joins), or `None` when [`MAX_DRAWS`] draws in
    /// a row were all taken.
    fn fresh(&self, kind: ItemType, rng: &mut Rng, used: &mut BTreeSet<String>) -> Option<String> {
        // Bounded: a space that is (nearly) used up (3,599 word pairs) ends the search
        // instead of looping forever.
        for _ in 0..MAX_DRAWS {
            let s = self.item(kind, rng);
            if used.insert(s.clone()) {
                return Some(s);
            }
        }
        None
    }

    /// [`Niah::fresh`] for the distractors of a `needles` haystack, which may use up the 3,599
    /// word pairs: a pair once found taken is remembered by its indices in `taken`, so a draw
    /// of it costs two random numbers instead of a string and a set lookup. The same draws are
    /// made and the same item is returned as by `fresh` (`taken` only ever marks pairs `used`
    /// holds), so the rows do not change; only a used-up space stops costing seconds.
    fn fresh_distractor(
        &self,
        kind: ItemType,
        rng: &mut Rng,
        used: &mut BTreeSet<String>,
        taken: &mut Vec<bool>,
    ) -> Option<String> {
        if kind != ItemType::Words {
            return self.fresh(kind, rng, used);
        }
        let (adjectives, nouns) = (&self.vocab.adjectives, &self.vocab.nouns);
        taken.resize(adjectives.len() * nouns.len(), false);
        for _ in 0..MAX_DRAWS {
            // As `item` draws a word pair: the adjective, then the noun.
            let a = rng.index(adjectives.len());
            let n = rng.index(nouns.len());
            let at = a * nouns.len() + n;
            if taken[at] {
                continue;
            }
            let s = format!("{}-{}", adjectives[a], nouns[n]);
            taken[at] = true;
            if used.insert(s.clone()) {
                return Some(s);
            }
        }
        None
    }

    /// What a haystack sentence must not mention: every key (the asked one too, even when
    /// absent), every value, and the needles' own phrase.
    fn screen(c: &Content) -> Screen {
        let mut screen = Screen::new(
            c.keys
                .iter()
                .chain(&c.asked)
                .chain(c.values.iter().flatten()),
        );
        screen.add("access code");
        screen.add("access codes");
        screen
    }

    fn needle_sentence(key: &str, value: &str) -> String {
        format!("One of the access codes assigned to {key} is {value}.")
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

    fn content_params(&self) -> serde_json::Value {
        json!({
            "keys": self.params.keys,
            "values": self.params.values,
            "queries": self.params.queries,
            "key_type": self.params.key_type.as_str(),
            "value_type": self.params.value_type.as_str(),
            "absent": self.params.absent,
            "spread": self.params.spread.as_str(),
        })
    }

    /// Depths for every needle: the first at `depth`, the rest random or evenly spread.
    fn depths(&self, depth: f64, count: usize, rng: &mut Rng) -> Vec<f64> {
        let mut out = vec![depth];
        if count <= 1 {
            return out;
        }
        match self.params.spread {
            Spread::Random => {
                // Distinct depths on a 0.1 % grid, avoiding the first.
                let first = (depth * 10.0).round() as usize;
                let mut grid: Vec<usize> = rng
                    .sample_indices(1000, count)
                    .into_iter()
                    .map(|g| if g >= first { g + 1 } else { g })
                    .collect();
                grid.truncate(count - 1);
                out.extend(grid.into_iter().map(|g| g as f64 / 10.0));
            }
            Spread::Even => {
                // Through whichever side of the first needle has more room.
                let (lo, hi) = if 100.0 - depth >= depth {
                    (depth, 100.0)
                } else {
                    (depth, 0.0)
                };
                let m = count as f64;
                out.extend((1..count).map(|i| lo + (hi - lo) * i as f64 / m));
            }
        }
        out
    }

    /// Content of one instance: needles in record order, asked keys, gold values.
    fn content(&self, cell: &Cell, seed: crate::rng::Seed) -> Result<Content, GenError> {
        let params = canonical_json(&self.content_params());
        let coords = Coordinates {
            task: "niah",
            params: &params,
            seed,
            length: cell.length,
            depth: cell.depth,
            sample: cell.sample,
        };
        let mut rng = coords.rng(Stream::Content);
        let mut used = BTreeSet::new();
        let exhausted = || {
            GenError::BadParams(format!(
                "niah cannot draw {} distinct keys with {} values each: the {} and {} spaces are used up (words give 3,599 pairs; use a number or uuid key or value type, or fewer keys and values)",
                self.params.keys, self.params.values, self.params.key_type, self.params.value_type
            ))
        };
        let keys: Vec<String> = (0..self.params.keys)
            .map(|_| {
                self.fresh(self.params.key_type, &mut rng, &mut used)
                    .ok_or_else(exhausted)
            })
            .collect::<Result<_, _>>()?;
        let values: Vec<Vec<String>> = keys
            .iter()
            .map(|_| {
                (0..self.params.values)
                    .map(|_| {
                        self.fresh(self.params.value_type, &mut rng, &mut used)
                            .ok_or_else(exhausted)
                    })
                    .collect::<Result<_, _>>()
            })
            .collect::<Result<_, _>>()?;
        let asked: Vec<String> = if self.params.absent {
            vec![self
                .fresh(self.params.key_type, &mut rng, &mut used)
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
        let mut placement = coords.rng(Stream::Placement);
        let depths = self.depths(cell.depth.unwrap_or(50.0), needles.len(), &mut placement);
        Ok(Content {
            keys,
            values,
            asked,
            needles,
            depths,
            used,
            coords_key: coords.key(),
        })
    }
}

struct Content {
    keys: Vec<String>,
    values: Vec<Vec<String>>,
    asked: Vec<String>,
    needles: Vec<(String, String)>,
    depths: Vec<f64>,
    used: BTreeSet<String>,
    coords_key: [u8; 32],
}

impl Task for Niah {
    /// Every key–value pair and every value: a split that reuses either shares a needle.
    fn identity(&self, instance: &Instance) -> Vec<String> {
        let params: serde_json::Value = serde_json::from_str(&instance.params).unwrap_or_default();
        let mut keys = Vec::new();
        for needle in params["needles"].as_array().into_iter().flatten() {
            let (k, v) = (&needle["key"], &needle["value"]);
            keys.push(format!("pair:{k}={v}"));
            keys.push(format!("value:{v}"));
        }
        keys
    }

    fn name(&self) -> &'static str {
        "niah"
    }

    fn variant(&self) -> String {
        VARIANTS
            .iter()
            .find(|&&(_, k, v, q, a)| {
                (k, v, q, a)
                    == (
                        self.params.keys,
                        self.params.values,
                        self.params.queries,
                        self.params.absent,
                    )
            })
            .map_or_else(|| "custom".to_string(), |v| v.0.to_string())
    }

    fn params(&self) -> serde_json::Value {
        self.content_params()
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
        vars([("question", "What is the access code assigned to x?")])
    }

    fn minimum_length(&self, run: &Run) -> Result<u64, GenError> {
        let cell = Cell {
            length: 0,
            depth: Some(50.0),
            sample: 0,
            slot: 0,
        };
        let c = self.content(&cell, run.seed)?;
        let (question, answer_prefix) = self.question(&c.asked);
        let frame = run.frame(&vars([("question", &question)]), &answer_prefix)?;
        let tok = &run.tokenizer;
        let mut need = frame.fixed_tokens(tok)?;
        for (k, v) in &c.needles {
            need += tok.count(&format!(" {}", Self::needle_sentence(k, v)))?;
        }
        // Other instances draw other keys and values: leave room for longer ones, and for a
        // few sentences of haystack.
        Ok((need as u64 * 11).div_ceil(10) + 32 + run.reserve)
    }

    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
        let c = self.content(cell, run.seed)?;
        let (question, answer_prefix) = self.question(&c.asked);
        let frame = run.frame(&vars([("question", &question)]), &answer_prefix)?;
        let needle_specs: Vec<NeedleSpec> = c
            .needles
            .iter()
            .zip(&c.depths)
            .map(|((k, v), &depth)| NeedleSpec {
                text: Self::needle_sentence(k, v),
                depth,
            })
            .collect();
        let budget = cell.length.saturating_sub(run.reserve) as usize;
        let hay_rng = Rng::from_key(c.coords_key, Stream::Haystack);
        let haystack = run.required_haystack("niah")?;
        let distractor: Option<DistractorMaker<'_>> = if haystack.is_needles() {
            let mut used = c.used.clone();
            let (mut made, mut again) = (Vec::new(), 0usize);
            let mut taken = Vec::new();
            Some(Box::new(move |rng: &mut Rng| {
                let k = self.fresh_distractor(self.params.key_type, rng, &mut used, &mut taken);
                let v = self.fresh_distractor(self.params.value_type, rng, &mut used, &mut taken);
                match (k, v) {
                    (Some(k), Some(v)) => {
                        let sentence = Self::needle_sentence(&k, &v);
                        made.push(sentence.clone());
                        sentence
                    }
                    // Keys or values used up: earlier distractors come round again (never a
                    // needle's key, so the gold answer stays the only one).
                    _ if !made.is_empty() => {
                        again += 1;
                        made[(again - 1) % made.len()].clone()
                    }
                    _ => "Nothing else about access codes is noted here.".to_string(),
                }
            }))
        } else {
            None
        };
        let mut stream = haystack
            .stream(&run.tokenizer, hay_rng, distractor)?
            .with_screen(Self::screen(&c));
        let fitted = fit(&run.tokenizer, &frame, &needle_specs, &mut stream, budget)?;

        let (target, answers, metric) = if self.params.absent {
            ("none".to_string(), vec!["none".to_string()], Metric::Exact)
        } else {
            let answers: Vec<String> = c
                .keys
                .iter()
                .zip(&c.values)
                .filter(|(k, _)| c.asked.contains(k))
                .flat_map(|(_, vals)| vals.iter().cloned())
                .collect();
            (answers.join(", "), answers, Metric::All)
        };
        let mut params = self.content_params();
        params["needles"] = json!(c
            .needles
            .iter()
            .map(|(k, v)| json!({"key": k, "value": v}))
            .collect::<Vec<_>>());
        params["asked"] = json!(c.asked);
        params["screened_units"] = json!(stream.screened_units());
        Ok(Instance {
            input: fitted.input,
            question,
            answer_prefix,
            target,
            answers,
            metric,
            length: fitted.length as u64,
            prompt_tokens: fitted.prompt_tokens as u64,
            needle_offsets: fitted.needle_offsets,
            needle_depths: fitted.needle_depths,
            params: canonical_json(&params),
            ..Instance::at(self, run, cell)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::haystack::{Haystack, HaystackKind};
    use crate::{templates, Template, Tokenizer};

    fn run(kind: HaystackKind) -> Run {
        let tok = Tokenizer::O200k;
        Run {
            haystack: Some(Haystack::prepare(kind, None, &tok).unwrap()),
            tokenizer: tok,
            template: Template::compile(
                "default.j2",
                templates::builtin("niah", "default").unwrap(),
            )
            .unwrap(),
            seed: 7.into(),
            reserve: 128,
            reader: Default::default(),
        }
    }

    fn niah(variant: &str) -> Niah {
        NiahParams::variant(variant.parse().unwrap())
            .build()
            .unwrap()
    }

    #[test]
    fn distractor_draws_are_freshs_draws_even_when_the_space_runs_out() {
        let task = niah("multikey");
        for seed in 0..2u64 {
            let mut a = Rng::from_seed_u64(seed, Stream::Haystack);
            // Some pairs taken before (as an instance's own keys are), then far more draws
            // than the 3,599 pairs: the tail is all refusals.
            let mut used_a: BTreeSet<String> = BTreeSet::new();
            for _ in 0..(seed * 40) {
                used_a.insert(task.item(ItemType::Words, &mut a));
            }
            let mut used_b = used_a.clone();
            let mut b = a.clone();
            let mut taken = Vec::new();
            let mut refused = 0;
            for i in 0..7000 {
                let kind = if i % 3 == 0 {
                    ItemType::Numbers
                } else {
                    ItemType::Words
                };
                let x = task.fresh(kind, &mut a, &mut used_a);
                let y = task.fresh_distractor(kind, &mut b, &mut used_b, &mut taken);
                assert_eq!(x, y, "seed {seed}, draw {i}");
                refused += usize::from(x.is_none());
                if i % 500 == 0 {
                    assert_eq!(a.next_u64(), b.next_u64(), "the streams stay in step");
                }
            }
            assert!(refused > 0, "the word pairs ran out");
            assert_eq!(used_a, used_b);
        }
    }

    #[test]
    fn every_variant_places_its_needles_and_answers() {
        let run = run(HaystackKind::Generated);
        for (name, k, v, q, absent) in VARIANTS {
            let task = niah(name);
            assert_eq!(task.variant(), *name);
            let cell = Cell {
                length: 4096,
                depth: Some(30.0),
                sample: 2,
                slot: 2,
            };
            let inst = task.generate(&run, &cell).unwrap();
            assert_eq!(
                inst.length as usize,
                run.tokenizer.count(&inst.input).unwrap()
            );
            // What the model reads (the prompt and the answer prefix) fills the budget.
            assert!(
                inst.prompt_tokens <= 4096 - 128 && inst.prompt_tokens + 16 >= 4096 - 128,
                "{}",
                inst.prompt_tokens
            );
            assert!(inst.length < inst.prompt_tokens);
            assert_eq!(inst.needle_offsets.len(), (k * v) as usize);
            assert!(
                (inst.needle_depths[0] - 30.0).abs() < 2.0,
                "{:?}",
                inst.needle_depths
            );
            if *absent {
                assert_eq!(inst.target, "none");
                assert_eq!(inst.metric, Metric::Exact);
            } else {
                assert_eq!(inst.answers.len(), (q * v) as usize);
                for a in &inst.answers {
                    assert!(inst.input.contains(a));
                }
            }
            assert_eq!(inst, task.generate(&run, &cell).unwrap(), "deterministic");
        }
    }

    #[test]
    fn needles_haystack_is_distractors_not_answers() {
        let run = run(HaystackKind::Needles);
        let task = niah("single");
        let inst = task
            .generate(
                &run,
                &Cell {
                    length: 2048,
                    depth: Some(50.0),
                    sample: 0,
                    slot: 0,
                },
            )
            .unwrap();
        let mentions = inst.input.matches("One of the access codes").count();
        assert!(mentions > 20, "{mentions}");
        assert_eq!(inst.input.matches(&inst.answers[0]).count(), 1);
        let key = serde_json::from_str::<serde_json::Value>(&inst.params).unwrap()["asked"][0]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(inst.input.matches(&format!("to {key} is")).count(), 1);
    }

    #[test]
    fn uuids_are_version_4() {
        let task = NiahParams {
            key_type: ItemType::Uuids,
            value_type: ItemType::Uuids,
            spread: Spread::Even,
            ..NiahParams::variant(NiahVariant::Single)
        }
        .build()
        .unwrap();
        let mut rng = Rng::from_seed_u64(1, Stream::Content);
        for _ in 0..100 {
            let u = task.item(ItemType::Uuids, &mut rng);
            assert_eq!(u.len(), 36);
            assert_eq!(&u[14..15], "4");
            assert!("89ab".contains(&u[19..20]), "{u}");
        }
    }

    #[test]
    fn bad_parameters_are_rejected() {
        let single = NiahParams::variant(NiahVariant::Single);
        let e = NiahParams {
            keys: 2,
            queries: 3,
            ..single.clone()
        }
        .build()
        .unwrap_err();
        assert_eq!(e.param, "queries");
        assert!("nope".parse::<NiahVariant>().is_err());
        let e = NiahParams {
            keys: 0,
            ..single.clone()
        }
        .build()
        .unwrap_err();
        assert_eq!((e.param, e.value.as_str()), ("keys", "0"));
        let e = NiahParams {
            absent: true,
            keys: 4,
            queries: 2,
            ..single
        }
        .build()
        .unwrap_err();
        assert_eq!(e.param, "queries");
    }

    #[test]
    fn even_spread_is_distinct() {
        let task = NiahParams {
            spread: Spread::Even,
            ..NiahParams::variant(NiahVariant::Multikey)
        }
        .build()
        .unwrap();
        let mut rng = Rng::from_seed_u64(1, Stream::Placement);
        assert_eq!(task.depths(20.0, 4, &mut rng), vec![20.0, 40.0, 60.0, 80.0]);
        assert_eq!(task.depths(100.0, 3, &mut rng).len(), 3);
    }
}
