//! `niah`: needle in a haystack, following the structure of RULER's NIAH configurations.
//!
//! K keys each get V values, one needle sentence per (key, value); Q keys are asked. The
//! haystack can be our prose, noise, a user corpus, or distractor needles. The `none` variant
//! asks about a key that is not in the text. Confusers (`confusers.rs`) add near-miss facts;
//! latent needles (`latent.rs`) share no word with their question.

pub mod confusers;
pub mod latent;
mod plan;

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::fit::fit;
use crate::rng::{Rng, Stream};
use crate::tasks::Params;
use crate::template::{vars, Vars};
use crate::{canonical_json, Cell, GenError, Instance, ParamError, Run, Task};
use serde::{Deserialize, Serialize};

/// The task's name: its command, its manifests' tag and the key of its random streams.
pub const NAME: &str = "niah";
/// One line saying what the task is.
pub const ABOUT: &str =
    "needle in a haystack: find the values of keys hidden in long text (RULER's NIAH family)";
/// The task's built-in templates, (name, source), the first its default.
pub const TEMPLATES: &[(&str, &str)] = &[
    (
        "default",
        include_str!("../../../templates/niah/default.j2"),
    ),
    ("plain", include_str!("../../../templates/niah/plain.j2")),
    ("latent", include_str!("../../../templates/niah/latent.j2")),
];

const KEY_ADJECTIVES: &str = include_str!("../../../haystacks/vocab/key_adjectives.txt");
const KEY_NOUNS: &str = include_str!("../../../haystacks/vocab/key_nouns.txt");

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
    /// What the needles are.
    #[derive(Default)]
    pub enum NeedleKind {
        /// "One of the access codes assigned to KEY is VALUE.": found by matching the question.
        #[default]
        Code = "code",
        /// A person beside a thing; the question names only where the thing leads, so finding
        /// the needle takes one associative hop (NoLiMa's idea).
        Latent = "latent",
    }
}

impl NeedleKind {
    /// Whether these are the default (access code) needles, which recipes leave unwritten.
    pub fn is_code(&self) -> bool {
        *self == NeedleKind::Code
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
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
    /// Near-miss facts per instance (see [`confusers`]); 0, the default, is left unwritten so
    /// recipes without them keep their bytes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub confusers: u32,
    /// What the needles are; `code`, the default, is left unwritten.
    #[serde(default, skip_serializing_if = "NeedleKind::is_code")]
    pub needle: NeedleKind,
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
            confusers: 0,
            needle: NeedleKind::Code,
        }
    }

    /// What latent needles accept: one person asked, a few others, no confusers; key and value
    /// types do not apply (the tables hold the keys) and stay at their defaults.
    fn check_latent(&self) -> Result<(), ParamError> {
        let why = |value: &str, reason: &str| format!("{value} for latent needles ({reason})");
        if self.confusers > 0 {
            return Err(ParamError::new(
                "confusers",
                self.confusers,
                why("0", "near misses are defined for access codes"),
            ));
        }
        if self.keys > latent::MAX_PEOPLE {
            return Err(ParamError::new(
                "keys",
                self.keys,
                why(&format!("1 to {}", latent::MAX_PEOPLE), "each is a person"),
            ));
        }
        if self.values != 1 {
            return Err(ParamError::new(
                "values",
                self.values,
                why("1", "each needle names one person"),
            ));
        }
        if self.queries != 1 {
            return Err(ParamError::new(
                "queries",
                self.queries,
                why("1", "the question asks about one place or family"),
            ));
        }
        if self.absent {
            return Err(ParamError::new(
                "absent",
                "true",
                why("false", "every latent question has its person"),
            ));
        }
        if self.key_type != ItemType::Words || self.value_type != ItemType::Numbers {
            let (param, value, default) = if self.key_type != ItemType::Words {
                ("key_type", self.key_type, ItemType::Words)
            } else {
                ("value_type", self.value_type, ItemType::Numbers)
            };
            return Err(ParamError::new(
                param,
                value,
                why(
                    &format!("{default}, the default,"),
                    "the tables give the keys and people the values",
                ),
            ));
        }
        Ok(())
    }
}

impl Params for NiahParams {
    type Built = Niah;

    /// Check every parameter and make the task.
    fn build(&self) -> Result<Niah, ParamError> {
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
        if self.confusers > confusers::MAX_CONFUSERS {
            return Err(ParamError::new(
                "confusers",
                self.confusers,
                format!("0 to {}", confusers::MAX_CONFUSERS),
            ));
        }
        if self.needle == NeedleKind::Latent {
            self.check_latent()?;
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
            latent: (self.needle == NeedleKind::Latent).then(latent::Latent::new),
        })
    }
}

/// Validated NIAH parameters with the word lists they draw from.
#[derive(Debug, Clone)]
pub struct Niah {
    /// The checked parameters.
    pub params: NiahParams,
    vocab: Vocab,
    latent: Option<latent::Latent>,
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

    /// The access-code needle sentence.
    fn needle_sentence(key: &str, value: &str) -> String {
        format!("One of the access codes assigned to {key} is {value}.")
    }

    /// The parameters that shape content; confusers and latent needles are named only when
    /// asked for, so every other instance keeps its random streams and its bytes.
    fn content_params(&self) -> Value {
        let mut p = json!({
            "keys": self.params.keys,
            "values": self.params.values,
            "queries": self.params.queries,
            "key_type": self.params.key_type.as_str(),
            "value_type": self.params.value_type.as_str(),
            "absent": self.params.absent,
            "spread": self.params.spread.as_str(),
        });
        if self.params.confusers > 0 {
            p["confusers"] = json!(self.params.confusers);
        }
        if !self.params.needle.is_code() {
            p["needle"] = json!(self.params.needle.as_str());
        }
        p
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
}

impl Task for Niah {
    /// Every key–value pair and every value: a split that reuses either shares a needle. A
    /// latent needle's person beside its thing is its pair; names alone are too few to keep
    /// apart.
    fn identity(&self, instance: &Instance) -> Vec<String> {
        let params: Value = serde_json::from_str(&instance.params).unwrap_or_default();
        let latent = params["needle"] == NeedleKind::Latent.as_str();
        let mut keys = Vec::new();
        for needle in params["needles"].as_array().into_iter().flatten() {
            let (k, v) = (&needle["key"], &needle["value"]);
            keys.push(format!("pair:{k}={v}"));
            if !latent {
                keys.push(format!("value:{v}"));
            }
        }
        keys
    }

    fn name(&self) -> &'static str {
        NAME
    }

    /// The named variant (`single`, …, or `custom`), prefixed `latent_` for latent needles.
    fn variant(&self) -> String {
        let shape = VARIANTS
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
            .map_or("custom", |v| v.0);
        match self.params.needle {
            NeedleKind::Code => shape.to_string(),
            NeedleKind::Latent => format!("latent_{shape}"),
        }
    }

    fn params(&self) -> Value {
        self.content_params()
    }

    fn takes_needle_haystack(&self) -> bool {
        true
    }

    /// RULER's eight NIAH configurations differ in haystack, key and value types and the
    /// numbers of keys, values and queries (its multiquery asks 4 of 4 keys); it has no absent
    /// key, near-miss facts or latent needles.
    fn ruler_task(&self, haystack: crate::tasks::RulerHaystack) -> Option<&'static str> {
        use crate::tasks::RulerHaystack::{Essay, Needle, Noise};
        use ItemType::{Numbers, Uuids, Words};
        let p = &self.params;
        if p.absent || p.confusers > 0 || p.needle != NeedleKind::Code {
            return None;
        }
        Some(
            match (
                p.keys,
                p.values,
                p.queries,
                p.key_type,
                p.value_type,
                haystack,
            ) {
                (1, 1, 1, Words, Numbers, Noise) => "niah_single_1",
                (1, 1, 1, Words, Numbers, Essay) => "niah_single_2",
                (1, 1, 1, Words, Uuids, Essay) => "niah_single_3",
                (4, 1, 1, Words, Numbers, Essay) => "niah_multikey_1",
                (1, 1, 1, Words, Numbers, Needle) => "niah_multikey_2",
                (1, 1, 1, Uuids, Uuids, Needle) => "niah_multikey_3",
                (1, 4, 1, Words, Numbers, Essay) => "niah_multivalue",
                (4, 1, 4, Words, Numbers, Essay) => "niah_multiquery",
                _ => return None,
            },
        )
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

    fn default_template(&self) -> &'static str {
        self.params.needle.template()
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
        let need = self.fixed_tokens(run, &self.plan(&cell, run.seed)?)?;
        // Other instances draw other keys and values: leave room for longer ones, and for a
        // few sentences of haystack.
        Ok((need as u64 * 11).div_ceil(10) + 32 + run.reserve)
    }

    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
        let plan = self.plan(cell, run.seed)?;
        let frame = run.frame(&vars([("question", &plan.question)]), &plan.answer_prefix)?;
        let budget = cell.length.saturating_sub(run.reserve) as usize;
        let hay_rng = Rng::from_key(plan.coords_key, Stream::Haystack);
        let haystack = run.required_haystack(NAME)?;
        let distractor = haystack.is_needles().then(|| self.distractors(&plan));
        let mut stream = haystack
            .stream(&run.tokenizer, hay_rng, distractor)?
            .with_screen(plan.screen.clone());
        let mut fitted = fit(&run.tokenizer, &frame, &plan.specs, &mut stream, budget)?;
        let mut params = self.content_params();
        for (key, value) in &plan.facts {
            params[*key] = value.clone();
        }
        let n = plan.needles;
        if !plan.confusers.is_empty() {
            params["confusers"] = json!(plan
                .confusers
                .iter()
                .zip(
                    fitted.needle_offsets[n..]
                        .iter()
                        .zip(&fitted.needle_depths[n..])
                )
                .map(|(x, (offset, depth))| json!({
                    "kind": x.kind.as_str(),
                    "key": x.key,
                    "value": x.value,
                    "sentence": x.sentence,
                    "offset": offset,
                    "depth": depth,
                }))
                .collect::<Vec<_>>());
        }
        params["screened_units"] = json!(stream.screened_units());
        drop(stream);
        fitted.needle_offsets.truncate(n);
        fitted.needle_depths.truncate(n);
        Ok(Instance {
            question: plan.question,
            answer_prefix: plan.answer_prefix,
            target: plan.target,
            answers: plan.answers,
            labels: plan.labels,
            metric: plan.metric,
            params: canonical_json(&params),
            ..Instance::fitted(self, run, cell, fitted)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::haystack::{Haystack, HaystackKind};
    use crate::Metric;
    use crate::{Template, Tokenizer};

    fn run(kind: HaystackKind) -> Run {
        let tok = Tokenizer::O200k;
        Run {
            haystack: Some(Haystack::prepare(kind, None, &tok).unwrap()),
            tokenizer: tok,
            template: Template::compile(
                "default.j2",
                crate::tasks::builtin_template(NAME, "default").unwrap(),
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
