//! `babilong`: bAbI reasoning stories (BABILong's structure) hidden in text of any length.
//!
//! BABILong takes the 20 bAbI tasks and scatters each story's facts, in order, through long
//! filler, so a model must find several facts and reason over them. Its splits stop at fixed
//! lengths, count GPT-2 tokens, use one corpus and one unseeded draw. We simulate the stories
//! ourselves ([`world`]), so any length, tokenizer, corpus and seed works, and `--vocab fresh`
//! makes stories no model has seen.
//!
//! The story of an instance depends on its sample index alone, not on its length or depth, so
//! the accuracy curve over length measures length and nothing else.
//!
//! What differs between tasks is data in [`spec`]; walk stories come from [`walk`] over the
//! [`world`] with their question from [`questions`], the fixed-shape ones from [`puzzles`], and
//! [`render`] words the facts.

pub mod babi;
pub mod babi_puzzles;
mod babi_words;
pub mod params;
pub mod prompt;
pub mod puzzles;
pub mod questions;
pub mod render;
pub mod spec;
pub mod walk;
pub mod world;

#[cfg(test)]
mod babi_reference;
#[cfg(test)]
mod distribution_tests;
#[cfg(test)]
mod fingerprint;
#[cfg(test)]
mod rules_tests;

use serde_json::{json, Value};

use crate::fit::render::render_facts;
use crate::fit::{fit_placed, NeedleSpec, Placement};
use crate::haystack::Screen;
use crate::rng::{Coordinates, Rng, Stream};
use crate::template::{self, Vars};
use crate::{canonical_json, Cell, GenError, Instance, Metric, ParamError, Run, Task};
pub use params::{BabilongParams, Vocabulary};
use render::{events_json, render_event};
use spec::{Plot, TaskSpec};
use world::Event;

/// The task's name: its command, its manifests' tag and the key of its random streams.
pub const NAME: &str = "babilong";
/// One line saying what the task is.
pub const ABOUT: &str = "bAbI reasoning stories (qa1-qa20) simulated afresh and hidden in text of any length (BABILong)";
/// The task's built-in templates, (name, source), the first its default.
pub const TEMPLATES: &[(&str, &str)] = &[
    (
        "default",
        include_str!("../../../templates/babilong/default.j2"),
    ),
    (
        "babilong",
        include_str!("../../../templates/babilong/babilong.j2"),
    ),
];

const FRESH_ACTORS: &str = include_str!("../../../haystacks/vocab/babilong_actors.txt");
const FRESH_PLACES: &str = include_str!("../../../haystacks/vocab/babilong_rooms.txt");
const FRESH_OBJECTS: &str = include_str!("../../../haystacks/vocab/babilong_objects.txt");

/// bAbI's places.
pub const CLASSIC_PLACES: [&str; 6] = [
    "bathroom", "bedroom", "garden", "hallway", "kitchen", "office",
];
/// bAbI's gettable objects.
pub const CLASSIC_OBJECTS: [&str; 3] = ["apple", "milk", "football"];
/// bAbI's actors (name, is "he").
pub const CLASSIC_ACTORS: [(&str, bool); 4] = [
    ("John", true),
    ("Mary", false),
    ("Sandra", false),
    ("Daniel", true),
];
/// bAbI's actors of qa14 (time reasoning).
pub const TIME_ACTORS: [(&str, bool); 4] = [
    ("Bill", true),
    ("Fred", true),
    ("Julie", false),
    ("Mary", false),
];
/// bAbI's places of qa14, which BABILong's scorer expects for its answers.
pub const TIME_PLACES: [&str; 6] = ["bedroom", "cinema", "kitchen", "office", "park", "school"];
/// bAbI's actors of qa5 (three-argument relations).
pub const CLASSIC_GIVERS: [(&str, bool); 4] = [
    ("Bill", true),
    ("Fred", true),
    ("Jeff", true),
    ("Mary", false),
];
/// The tasks, in bAbI's numbering.
pub const TASKS: [u8; 20] = [
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
];
/// Longest story `--facts` may ask for.
pub const MAX_FACTS: u32 = 5000;
/// Answer budget: one word or a short list.
pub const MAX_NEW_TOKENS: u32 = 16;

/// The start of the model's answer, read right after the prompt.
const ANSWER_PREFIX: &str = "Answer:";

/// Validated babilong parameters for one bAbI task.
#[derive(Debug, Clone)]
pub struct Babilong {
    /// bAbI task number.
    pub qa: u8,
    /// Which names stories use.
    pub vocab: Vocabulary,
    /// Story sizes (facts), inclusive.
    pub facts: (u32, u32),
    /// Whether story sizes are bAbI's own (no `facts` asked for): then every story follows
    /// bAbI's procedure for the task, question timing included.
    pub babi_sizes: bool,
    /// Depth window (percent) the facts stay in.
    pub window: (f64, f64),
    /// The rules of task `qa`.
    spec: &'static TaskSpec,
    fresh_actors: Vec<(&'static str, bool)>,
    fresh_places: Vec<&'static str>,
    fresh_objects: Vec<&'static str>,
}

fn word_list(s: &'static str) -> Vec<&'static str> {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// What a haystack sentence must not mention: the story's people, places and objects, and
/// every puzzle species, colour, shape, thing or motive its facts name. One such sentence
/// could move an actor or an object behind the story's back, or contradict a puzzle fact.
fn story_screen(story: &Story) -> Screen {
    let vocab = &story.vocab;
    let mut screen = Screen::new(
        vocab
            .actors
            .iter()
            .map(|a| &a.0)
            .chain(&vocab.places)
            .chain(&vocab.objects),
    );
    let named = |term: &str| story.facts.iter().any(|f| Screen::new([term]).conflicts(f));
    let puzzle_terms = puzzles::PUZZLE_TERMS
        .iter()
        .flat_map(|list| list.iter().copied());
    for term in puzzle_terms.chain(puzzles::motive_terms()) {
        if named(term) {
            screen.add(term);
        }
    }
    screen
}

/// `total` split into parts, their count within `parts` and each part within `sizes`: the
/// count drawn among those that can make `total`, then the parts grown one at a time at random
/// from the smallest size. A total no count can make (never asked for: the task's range is
/// what these ranges make) is brought to the nearest one, so nothing panics; the story's
/// size is checked after it is made.
pub(crate) fn split_facts(
    total: usize,
    parts: std::ops::RangeInclusive<usize>,
    sizes: std::ops::RangeInclusive<usize>,
    rng: &mut Rng,
) -> Vec<usize> {
    let (lo, hi) = (*sizes.start(), *sizes.end());
    let (first, last) = (*parts.start(), *parts.end());
    let total = total.clamp(first * lo, last * hi);
    let counts: Vec<usize> = parts
        .filter(|&k| k * lo <= total && total <= k * hi)
        .collect();
    let k = counts
        .get(rng.index(counts.len()))
        .copied()
        .unwrap_or(first);
    let mut out = vec![lo; k];
    for _ in k * lo..total {
        let open: Vec<usize> = (0..k).filter(|&i| out[i] < hi).collect();
        if open.is_empty() {
            break;
        }
        out[open[rng.index(open.len())]] += 1;
    }
    out
}

/// bAbI's story sizes per task (facts), from its test set where known.
pub fn default_facts(qa: u8) -> (u32, u32) {
    spec::find(qa).map_or((2, 10), |s| s.default_facts)
}

impl Babilong {
    /// The task for bAbI task `qa` from parameters [`BabilongParams::build`] has checked.
    fn checked(
        qa: u8,
        vocab: Vocabulary,
        facts: Option<(u32, u32)>,
        window: (f64, f64),
    ) -> Result<Self, ParamError> {
        let spec = spec::find(qa).ok_or_else(|| {
            ParamError::new(
                "tasks",
                format!("qa{qa}"),
                format!("qa1 to qa{}", TASKS.len()),
            )
        })?;
        let fresh_actors = word_list(FRESH_ACTORS)
            .into_iter()
            .map(|l| {
                let (name, pronoun) = l.split_once(' ').unwrap_or((l, "he"));
                (name, pronoun.trim() == "he")
            })
            .collect();
        Ok(Babilong {
            qa,
            vocab,
            facts: facts.unwrap_or(spec.default_facts),
            babi_sizes: facts.is_none(),
            window,
            spec,
            fresh_actors,
            fresh_places: word_list(FRESH_PLACES),
            fresh_objects: word_list(FRESH_OBJECTS),
        })
    }

    /// Tests build single tasks by name, through the same checks as every front end.
    #[cfg(test)]
    pub(crate) fn new(
        qa: u8,
        vocab: &str,
        facts: Option<(u32, u32)>,
        window: (f64, f64),
    ) -> Result<Self, ParamError> {
        let params = BabilongParams {
            tasks: vec![qa],
            vocab: vocab.parse().map_err(|e: crate::choice::ChoiceError| {
                ParamError::new("vocab", vocab, e.expected)
            })?,
            facts,
            fact_window: window,
        };
        Ok(crate::tasks::Params::build(&params)?.remove(0))
    }
}

/// The names of one story's world.
#[derive(Debug, Clone)]
pub struct Vocab {
    /// Actor names with whether the story calls them "he" (else "she").
    pub actors: Vec<(String, bool)>,
    /// Place names, without "the".
    pub places: Vec<String>,
    /// Gettable object names, without "the".
    pub objects: Vec<String>,
}

impl Vocab {
    /// The name of actor `a`.
    pub fn actor(&self, a: usize) -> &str {
        &self.actors[a].0
    }

    /// The name of place `p`.
    pub fn place(&self, p: usize) -> &str {
        &self.places[p]
    }

    /// The name of object `o`.
    pub fn object(&self, o: usize) -> &str {
        &self.objects[o]
    }
}

/// A story with its question, ready to render.
#[derive(Debug, Clone)]
pub struct Story {
    /// The names the story uses.
    pub vocab: Vocab,
    /// Walk stories: the facts as data (empty for puzzles).
    pub events: Vec<Event>,
    /// The `params` key the facts as data go under: `events`, `relations` or `statements`.
    pub data_key: &'static str,
    /// The facts as data, with names.
    pub data: Value,
    /// The closed answer set.
    pub labels: Vec<String>,
    /// The fact sentences, in story order.
    pub facts: Vec<String>,
    /// The question as data.
    pub query: Value,
    /// The question as the prompt states it.
    pub question: String,
    /// Gold items (one label, or the items of a list).
    pub answers: Vec<String>,
    /// Indices of the supporting facts, ascending.
    pub supporting: Vec<usize>,
}

impl Babilong {
    fn content_params(&self) -> Value {
        json!({
            "task": format!("qa{}", self.qa),
            "vocab": self.vocab.as_str(),
            "facts": if self.babi_sizes { json!("babi") } else { json!([self.facts.0, self.facts.1]) },
            "fact_window": [self.window.0, self.window.1],
        })
    }

    /// Where rows depart from bAbI's rules because the user asked: `facts` (story sizes
    /// chosen, so walk stories come from our own walk rather than bAbI's question timing) and
    /// `vocab` (fresh names in bAbI's roles).
    fn departures(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if !self.babi_sizes {
            out.push("facts");
        }
        if self.vocab == Vocabulary::Fresh {
            out.push("vocab");
        }
        out
    }

    fn vocab(&self, rng: &mut Rng) -> Vocab {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        match self.vocab {
            Vocabulary::Babi => Vocab {
                actors: self
                    .spec
                    .classic_actors
                    .iter()
                    .map(|&(n, he)| (n.to_string(), he))
                    .collect(),
                places: own(self.spec.classic_places),
                objects: own(&CLASSIC_OBJECTS),
            },
            Vocabulary::Fresh => {
                // As many of each pronoun as bAbI's cast of the task, in its order.
                let he: Vec<_> = self.fresh_actors.iter().filter(|a| a.1).collect();
                let she: Vec<_> = self.fresh_actors.iter().filter(|a| !a.1).collect();
                let cast = self.spec.classic_actors;
                let hes = cast.iter().filter(|a| a.1).count();
                let mut his = rng.sample_indices(he.len(), hes).into_iter();
                let mut hers = rng.sample_indices(she.len(), cast.len() - hes).into_iter();
                let actors: Vec<(String, bool)> = cast
                    .iter()
                    .map(|a| {
                        let (list, i) = if a.1 {
                            (&he, his.next())
                        } else {
                            (&she, hers.next())
                        };
                        let name = list[i.expect("one name per cast member")].0;
                        (name.to_string(), a.1)
                    })
                    .collect();
                let pick = |list: &[&'static str], k: usize, rng: &mut Rng| -> Vec<String> {
                    rng.sample_indices(list.len(), k)
                        .into_iter()
                        .map(|i| list[i].to_string())
                        .collect()
                };
                Vocab {
                    actors,
                    places: pick(&self.fresh_places, self.spec.classic_places.len(), rng),
                    objects: pick(&self.fresh_objects, CLASSIC_OBJECTS.len(), rng),
                }
            }
        }
    }

    /// The story of `sample`: it depends on the sample alone, so every length shows the same
    /// story and question. Its size is drawn within the task's story sizes and is exactly the
    /// number of facts told (`fact_count`).
    pub fn story(&self, seed: impl Into<crate::rng::Seed>, sample: u64) -> Result<Story, GenError> {
        let seed = seed.into();
        let params = canonical_json(&self.content_params());
        let coords = Coordinates {
            task: NAME,
            params: &params,
            seed,
            length: 0,
            depth: None,
            sample,
        };
        let mut names = coords.rng(Stream::Names);
        let vocab = self.vocab(&mut names);
        let mut rng = coords.rng(Stream::Content);
        let (lo, hi) = self.facts;
        // Sizes asked for: more weight on short stories (the minimum of two uniform draws).
        let n = (!self.babi_sizes).then(|| {
            let span = u64::from(hi - lo) + 1;
            (u64::from(lo) + rng.below(span).min(rng.below(span))) as usize
        });
        let spec = self.spec;
        let mut story = match spec.plot {
            Plot::Puzzle(make) => {
                let names = puzzles::Names {
                    fresh: self.vocab == Vocabulary::Fresh,
                    vocab: &vocab,
                    facts: n,
                };
                make(&names, &mut rng)
            }
            Plot::Walk { .. } if n.is_none() => {
                let (events, asked) = babi::story(self.qa, &vocab, &mut rng);
                Story {
                    facts: events.iter().map(|e| render_event(e, &vocab)).collect(),
                    data_key: "events",
                    data: events_json(&events, &vocab),
                    events,
                    labels: Vec::new(),
                    query: asked.query,
                    question: asked.question,
                    answers: asked.answers,
                    supporting: asked.supporting,
                    vocab,
                }
            }
            Plot::Walk { events, question } => {
                let n = n.unwrap_or(0);
                let Some(walked) = walk::walk(events, question, &vocab, n, &mut rng)? else {
                    return Err(GenError::Internal(format!(
                        "qa{}: no answerable story of {n} facts in {} draws",
                        self.qa,
                        walk::MAX_DRAWS
                    )));
                };
                let events = walked.world.events;
                Story {
                    facts: events.iter().map(|e| render_event(e, &vocab)).collect(),
                    data_key: "events",
                    data: events_json(&events, &vocab),
                    events,
                    labels: Vec::new(),
                    query: walked.asked.query,
                    question: walked.asked.question,
                    answers: walked.asked.answers,
                    supporting: walked.asked.supporting,
                    vocab,
                }
            }
        };
        if let Some(n) = n.filter(|&n| story.facts.len() != n) {
            return Err(GenError::Internal(format!(
                "qa{}: a story of {} facts where {n} were asked for",
                self.qa,
                story.facts.len()
            )));
        }
        if spec.labels != spec::Labels::FromPuzzle {
            story.labels = spec.labels.resolve(&story.vocab);
        }
        Ok(story)
    }

    fn story_frame(
        &self,
        run: &Run,
        story: &Story,
        filler: bool,
    ) -> Result<crate::Frame, GenError> {
        let mut vars = prompt::vars(self.qa)?;
        vars.extend(template::vars([
            ("question", story.question.as_str()),
            ("instruction", self.spec.instruction),
            ("filler", if filler { "yes" } else { "" }),
        ]));
        run.frame(&vars, ANSWER_PREFIX)
    }

    /// Tokens the instance of `sample` needs below the reserve, at any depth: its frame, and
    /// its facts as the fitter counts them spread over the fact window with a quarter to
    /// spare, plus 32 tokens of haystack for joins and the fitter's tolerance.
    fn needed_length(
        &self,
        run: &Run,
        sample: u64,
        counts: &mut FactCounts,
    ) -> Result<u64, GenError> {
        let tok = &run.tokenizer;
        let story = self.story(run.seed, sample)?;
        let frame = self.story_frame(run, &story, true)?;
        let fixed = frame.fixed_tokens(tok)?;
        let mut facts = 0usize;
        for fact in &story.facts {
            facts += counts.count(tok, fact)?;
        }
        let width = self.window.1 - self.window.0;
        let context = (facts as f64 * 1.25 * 100.0 / width).ceil() as u64;
        Ok(context + fixed as u64 + 32)
    }

    /// Depths of the facts: sorted uniform draws inside the window, or, with a requested depth,
    /// the first supporting fact there and the others drawn before and after it in order.
    fn depths(&self, story: &Story, depth: Option<f64>, rng: &mut Rng) -> Vec<f64> {
        let (lo, hi) = self.window;
        let draw = |n: usize, a: f64, b: f64, rng: &mut Rng| -> Vec<f64> {
            let mut v: Vec<f64> = (0..n).map(|_| a + (b - a) * rng.unit_f64()).collect();
            v.sort_by(f64::total_cmp);
            v
        };
        match depth {
            None => draw(story.facts.len(), lo, hi, rng),
            Some(d) => {
                let d = d.clamp(lo, hi);
                let s = story.supporting.first().copied().unwrap_or(0);
                let mut out = draw(s, lo, d, rng);
                out.push(d);
                out.extend(draw(story.facts.len() - s - 1, d, hi, rng));
                out
            }
        }
    }
}

/// Tokens of fact sentences as the fitter counts them (after a space), remembered across the
/// stories of a run: stories repeat their sentences. Bounded, so a run of fresh names cannot
/// grow it without limit.
#[derive(Default)]
struct FactCounts(std::collections::BTreeMap<String, usize>);

impl FactCounts {
    /// Most sentences remembered at once.
    const CAPACITY: usize = 1 << 16;

    fn count(&mut self, tok: &crate::Tokenizer, fact: &str) -> Result<usize, GenError> {
        if let Some(&n) = self.0.get(fact) {
            return Ok(n);
        }
        let n = tok.count(&format!(" {fact}"))?;
        if self.0.len() >= Self::CAPACITY {
            self.0.clear();
        }
        self.0.insert(fact.to_string(), n);
        Ok(n)
    }
}

impl Task for Babilong {
    fn name(&self) -> &'static str {
        NAME
    }

    fn variant(&self) -> String {
        format!("qa{}", self.qa)
    }

    fn params(&self) -> Value {
        self.content_params()
    }

    fn uses_haystack(&self) -> bool {
        true
    }

    fn requires_haystack(&self) -> bool {
        true
    }

    fn default_depths(&self) -> Option<Vec<f64>> {
        None
    }

    fn default_reserve(&self) -> u32 {
        MAX_NEW_TOKENS
    }

    /// The task's own variables (examples, instruction) as every instance passes them, so a
    /// template is checked against the real ones.
    fn example_vars(&self) -> Vars {
        let mut vars = prompt::vars(self.qa).unwrap_or_default();
        vars.extend(template::vars([
            ("question", "Where is Ada?"),
            ("instruction", self.spec.instruction),
            ("filler", "yes"),
        ]));
        vars
    }

    fn minimum_length(&self, run: &Run) -> Result<u64, GenError> {
        self.minimum_length_for(run, 1)
    }

    /// The largest need over the run's stories: each story is made once more here (stories
    /// depend on the sample alone), so the minimum holds for every instance of the run rather
    /// than for a few probed ones.
    fn minimum_length_for(&self, run: &Run, samples: u64) -> Result<u64, GenError> {
        let mut counts = FactCounts::default();
        let mut needed = 0;
        for sample in 0..samples {
            needed = needed.max(self.needed_length(run, sample, &mut counts)?);
        }
        Ok(needed + run.reserve)
    }

    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
        let tok = &run.tokenizer;
        let story = self.story(run.seed, cell.sample)?;
        let filler = cell.length > 0;
        let frame = self.story_frame(run, &story, filler)?;
        let mut screened = None;
        let mut fitted = if filler {
            let params = canonical_json(&self.content_params());
            let coords = run.coordinates(NAME, &params, cell);
            let mut placement = coords.rng(Stream::Placement);
            let depths = self.depths(&story, cell.depth, &mut placement);
            let needles: Vec<NeedleSpec> = story
                .facts
                .iter()
                .zip(depths)
                .map(|(text, depth)| NeedleSpec {
                    text: text.clone(),
                    depth,
                })
                .collect();
            let haystack = run.required_haystack(NAME)?;
            let mut stream = haystack
                .stream(tok, Rng::from_key(coords.key(), Stream::Haystack), None)?
                .with_screen(story_screen(&story));
            let budget = cell.length.saturating_sub(run.reserve) as usize;
            let place = Placement {
                in_order: true,
                window: Some(self.window),
            };
            let fitted = fit_placed(tok, &frame, &needles, &mut stream, budget, place)?;
            screened = Some(stream.screened_units());
            fitted
        } else {
            render_facts(tok, &frame, &story.facts)?
        };
        let mut params = self.content_params();
        params[story.data_key] = story.data.clone();
        params["query"] = story.query.clone();
        params["supporting"] = json!(story.supporting);
        params["fact_count"] = json!(story.facts.len());
        params["departures"] = json!(self.departures());
        params["actors"] = json!(story.vocab.actors.iter().map(|a| &a.0).collect::<Vec<_>>());
        params["places"] = json!(story.vocab.places);
        params["objects"] = json!(story.vocab.objects);
        if let Some(n) = screened {
            params["screened_units"] = json!(n);
        }
        let target = story.answers.join(",");
        if !filler {
            fitted.needle_depths.clear();
        }
        Ok(Instance {
            question: story.question.clone(),
            answer_prefix: ANSWER_PREFIX.into(),
            target,
            answers: story.answers.clone(),
            labels: story.labels.clone(),
            metric: Metric::Label,
            depth_percent: if filler { cell.depth } else { None },
            params: canonical_json(&params),
            ..Instance::fitted(self, run, cell, fitted)
        })
    }
}
