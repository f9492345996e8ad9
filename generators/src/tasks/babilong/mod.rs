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

pub mod puzzles;
pub mod world;

#[cfg(test)]
mod fingerprint;

use serde_json::{json, Value};

use crate::fit::{fit_placed, render_facts, NeedleSpec, Placement};
use crate::rng::{Coordinates, Rng, Stream};
use crate::template::{vars, Vars};
use crate::{canonical_json, Cell, GenError, Instance, Metric, Run, Task};
use world::{Action, Event, Mix, Sizes, World};

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

const COUNTS: [&str; 11] = [
    "none", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
];
const DIRECTIONS: [&str; 4] = ["north", "east", "south", "west"];

/// Which names a story uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VocabKind {
    /// bAbI's six places, three objects and four actors.
    Babi,
    /// Names drawn per instance from our larger lists.
    Fresh,
}

impl VocabKind {
    fn as_str(self) -> &'static str {
        match self {
            VocabKind::Babi => "babi",
            VocabKind::Fresh => "fresh",
        }
    }
}

/// The names of one story's world.
#[derive(Debug, Clone)]
pub struct Vocab {
    /// Actor names with whether the story calls them "he" (else "she").
    pub actors: Vec<(String, bool)>,
    pub places: Vec<String>,
    pub objects: Vec<String>,
}

/// A story with its question, ready to render.
#[derive(Debug, Clone)]
pub struct Story {
    pub vocab: Vocab,
    /// Facts as data (actor and object tasks).
    pub events: Vec<Event>,
    /// qa4's facts: (place, direction, of place).
    pub relations: Vec<(usize, usize, usize)>,
    /// qa14-qa20: the facts as data, under their `params` key.
    pub data: Vec<(String, Value)>,
    /// qa14-qa20: the closed answer set, when it is not the task's usual one.
    pub labels: Option<Vec<String>>,
    /// The fact sentences, in story order.
    pub facts: Vec<String>,
    /// The question as data.
    pub query: Value,
    pub question: String,
    /// Gold items (one label, or the items of a list).
    pub answers: Vec<String>,
    /// Indices of the supporting facts, ascending.
    pub supporting: Vec<usize>,
}

/// What the question of a story turned out to be.
struct Asked {
    query: Value,
    question: String,
    answers: Vec<String>,
    supporting: Vec<usize>,
}

/// Validated babilong parameters for one bAbI task.
#[derive(Debug, Clone)]
pub struct Babilong {
    /// bAbI task number.
    pub qa: u8,
    pub vocab: VocabKind,
    /// Story sizes (facts), inclusive.
    pub facts: (u32, u32),
    /// Depth window (percent) the facts stay in.
    pub window: (f64, f64),
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

/// bAbI's story sizes per task (facts), from its test set where known.
pub fn default_facts(qa: u8) -> (u32, u32) {
    match qa {
        1 => (2, 10),
        2 => (2, 88),
        3 => (4, 228),
        4 => (2, 2),
        5 => (4, 60),
        6 => (2, 26),
        7 | 8 => (4, 40),
        _ => (2, 10),
    }
}

impl Babilong {
    /// Check and build. `qa` is the number in `qaN`; `facts` overrides bAbI's story sizes.
    pub fn new(
        qa: u8,
        vocab: &str,
        facts: Option<(u32, u32)>,
        window: (f64, f64),
    ) -> Result<Self, GenError> {
        if !TASKS.contains(&qa) {
            return Err(GenError::BadParams(format!(
                "invalid --task qa{qa}: expected qa1 to qa{}",
                TASKS.len()
            )));
        }
        let vocab = match vocab {
            "babi" => VocabKind::Babi,
            "fresh" => VocabKind::Fresh,
            v => {
                return Err(GenError::BadParams(format!(
                    "invalid --vocab '{v}': expected babi or fresh"
                )))
            }
        };
        let min = Self::min_facts(qa);
        let facts = match facts {
            None => default_facts(qa),
            Some(_) if qa == 4 || qa >= 14 => {
                return Err(GenError::BadParams(format!(
                    "--facts does not apply to qa{qa}: its stories have a fixed shape (--facts sizes qa1-qa3 and qa5-qa13)"
                )))
            }
            Some((a, b)) if a < min || b < a || b > MAX_FACTS => {
                return Err(GenError::BadParams(format!(
                    "invalid --facts {a}..{b}: qa{qa} needs a range within {min}..{MAX_FACTS}"
                )))
            }
            Some(r) => r,
        };
        let (lo, hi) = window;
        if !(0.0..=100.0).contains(&lo) || !(0.0..=100.0).contains(&hi) || hi - lo < 1.0 {
            return Err(GenError::BadParams(format!(
                "invalid --fact-window {lo}..{hi}: expected two percents 0-100, the second at least 1 above the first"
            )));
        }
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
            facts,
            window,
            fresh_actors,
            fresh_places: word_list(FRESH_PLACES),
            fresh_objects: word_list(FRESH_OBJECTS),
        })
    }

    fn min_facts(qa: u8) -> u32 {
        match qa {
            3 => 3,
            5 | 7 | 8 => 2,
            _ => 1,
        }
    }

    fn content_params(&self) -> Value {
        json!({
            "task": format!("qa{}", self.qa),
            "vocab": self.vocab.as_str(),
            "facts": [self.facts.0, self.facts.1],
            "fact_window": [self.window.0, self.window.1],
        })
    }

    /// The closed answer set of this task for `vocab`.
    fn labels(&self, vocab: &Vocab) -> Vec<String> {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        match self.qa {
            5 => vocab
                .actors
                .iter()
                .map(|(n, _)| n.clone())
                .chain(vocab.objects.iter().cloned())
                .collect(),
            6 | 9 => own(&["yes", "no"]),
            10 => own(&["yes", "no", "maybe"]),
            7 => own(&COUNTS[..=vocab.objects.len()]),
            8 => vocab
                .objects
                .iter()
                .cloned()
                .chain(std::iter::once("nothing".to_string()))
                .collect(),
            _ => vocab.places.clone(),
        }
    }

    fn instruction(&self) -> &'static str {
        match self.qa {
            15 => "Answer with one word: an animal.",
            16 => "Answer with one word: a colour.",
            17 | 18 => "Answer yes or no.",
            19 => "Answer with the two directions, n, s, e or w, separated by a comma, like n,e.",
            20 => "Answer with one word.",
            5 => "Answer with one word: a name or an object.",
            6 | 9 => "Answer yes or no.",
            10 => "Answer yes, no or maybe.",
            7 => "Answer with a number written as a word: none, one, two or three.",
            8 => "Answer with the objects separated by commas, or with nothing.",
            _ => "Answer with one word: the name of a place.",
        }
    }

    fn vocab(&self, rng: &mut Rng) -> Vocab {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        match self.vocab {
            VocabKind::Babi => Vocab {
                actors: if self.qa == 5 {
                    CLASSIC_GIVERS.to_vec()
                } else {
                    CLASSIC_ACTORS.to_vec()
                }
                .into_iter()
                .map(|(n, he)| (n.to_string(), he))
                .collect(),
                places: own(&CLASSIC_PLACES),
                objects: own(&CLASSIC_OBJECTS),
            },
            VocabKind::Fresh => {
                // Two of each pronoun, so coreference stories have both.
                let he: Vec<_> = self.fresh_actors.iter().filter(|a| a.1).collect();
                let she: Vec<_> = self.fresh_actors.iter().filter(|a| !a.1).collect();
                let mut actors: Vec<(String, bool)> = Vec::new();
                for i in rng.sample_indices(he.len(), 2) {
                    actors.push((he[i].0.to_string(), true));
                }
                for i in rng.sample_indices(she.len(), 2) {
                    actors.push((she[i].0.to_string(), false));
                }
                rng.shuffle(&mut actors);
                let pick = |list: &[&'static str], k: usize, rng: &mut Rng| -> Vec<String> {
                    rng.sample_indices(list.len(), k)
                        .into_iter()
                        .map(|i| list[i].to_string())
                        .collect()
                };
                Vocab {
                    actors,
                    places: pick(&self.fresh_places, CLASSIC_PLACES.len(), rng),
                    objects: pick(&self.fresh_objects, CLASSIC_OBJECTS.len(), rng),
                }
            }
        }
    }

    /// The story of `sample`: it depends on the sample alone, so every length shows the same
    /// story and question.
    pub fn story(&self, seed: u64, sample: u64) -> Result<Story, GenError> {
        let params = canonical_json(&self.content_params());
        let coords = Coordinates {
            task: "babilong",
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
        // More weight on short stories, as in bAbI (the minimum of two uniform draws).
        let span = u64::from(hi - lo) + 1;
        let n = (u64::from(lo) + rng.below(span).min(rng.below(span))) as usize;
        let sizes = Sizes {
            actors: vocab.actors.len(),
            places: vocab.places.len(),
            objects: vocab.objects.len(),
        };
        let names = puzzles::Names {
            fresh: self.vocab == VocabKind::Fresh,
            vocab: &vocab,
        };
        let puzzle = match self.qa {
            4 => Some(self.relations_story(vocab.clone(), &mut rng)),
            14 => Some(puzzles::time_reasoning(&names, &mut rng)),
            15 => Some(puzzles::deduction(&names, &mut rng)),
            16 => Some(puzzles::induction(&names, &mut rng)),
            17 => Some(puzzles::positions(&names, &mut rng)),
            18 => Some(puzzles::sizes(&names, &mut rng)),
            19 => Some(puzzles::path_finding(&names, &mut rng)),
            20 => Some(puzzles::motivations(&names, &mut rng)),
            _ => None,
        };
        if let Some(story) = puzzle {
            return Ok(story);
        }
        // Grow the story to n facts, then until a question can be asked about it.
        let mut world = World::new(sizes, &mut rng);
        let mut knowledge: Vec<Option<Known>> = vec![None; sizes.actors];
        for _ in 0..(n * 8 + 64) {
            if world.events.len() >= n {
                if let Some(asked) = self.ask(&world, &knowledge, &vocab, &mut rng) {
                    let facts = world
                        .events
                        .iter()
                        .map(|e| render_event(e, &vocab))
                        .collect();
                    return Ok(Story {
                        vocab,
                        events: world.events,
                        relations: Vec::new(),
                        data: Vec::new(),
                        labels: None,
                        facts,
                        query: asked.query,
                        question: asked.question,
                        answers: asked.answers,
                        supporting: asked.supporting,
                    });
                }
            }
            let e = self.next_event(&world, &knowledge, &mut rng);
            for a in std::iter::once(e.actor).chain(e.conj) {
                if e.action == Action::Move {
                    knowledge[a] = Some(match (e.negated, e.either) {
                        (true, _) => Known::Not(e.location.unwrap_or_default()),
                        (false, Some(b)) => Known::Either(e.location.unwrap_or_default(), b),
                        (false, None) => Known::At(e.location.unwrap_or_default()),
                    });
                }
            }
            world.apply(e);
        }
        Err(GenError::BadParams(format!(
            "qa{}: no answerable story of {n} facts after many tries; widen --facts",
            self.qa
        )))
    }

    /// The next fact of a story of this task.
    fn next_event(&self, world: &World, knowledge: &[Option<Known>], rng: &mut Rng) -> Event {
        let mix = |moves, gets, drops, gives| Mix {
            moves,
            gets,
            drops,
            gives,
        };
        let actors = world.actor_at.len();
        let last = world.events.last();
        match self.qa {
            2 | 3 => world.random_event(mix(5, 3, 2, 0), rng),
            5 => world.random_event(mix(4, 3, 1, 4), rng),
            6 => world.random_event(mix(6, 2, 1, 0), rng),
            7 | 8 => world.random_event(mix(4, 4, 2, 2), rng),
            9 | 10 => {
                let a = rng.index(actors);
                let form = rng.next_u64();
                let mut e = Event::new(a, Action::Move);
                e.form = form;
                let at = match knowledge[a] {
                    Some(Known::At(p)) => Some(p),
                    _ => None,
                };
                if rng.chance(1, 2) {
                    e.location = Some(world.other_place(at, rng));
                } else if self.qa == 9 {
                    e.negated = true;
                    // "No longer" where the reader last saw the actor, else "not" elsewhere.
                    e.location = Some(match at {
                        Some(p) if rng.chance(1, 2) => p,
                        _ => rng.index(world.places()),
                    });
                    e.form = u64::from(at == e.location);
                } else {
                    let first = rng.index(world.places());
                    let second = world.other_place(Some(first), rng);
                    e.location = Some(first);
                    e.either = Some(second);
                }
                e
            }
            11 => {
                let mut e = match last {
                    Some(prev) if !prev.coref && rng.chance(1, 2) => {
                        let mut e = Event::new(prev.actor, Action::Move);
                        e.coref = true;
                        e
                    }
                    _ => Event::new(rng.index(actors), Action::Move),
                };
                e.location = Some(world.other_place(world.actor_at[e.actor], rng));
                e.form = rng.next_u64();
                e
            }
            12 | 13 => {
                let mut e = match last {
                    Some(prev)
                        if self.qa == 13
                            && prev.conj.is_some()
                            && !prev.coref
                            && rng.chance(1, 2) =>
                    {
                        let mut e = Event::new(prev.actor, Action::Move);
                        e.conj = prev.conj;
                        e.coref = true;
                        e
                    }
                    _ => {
                        let a = rng.index(actors);
                        let mut e = Event::new(a, Action::Move);
                        if rng.chance(2, 3) {
                            e.conj = Some((a + 1 + rng.index(actors - 1)) % actors);
                        }
                        e
                    }
                };
                // A place neither of them is in.
                let here: Vec<usize> = std::iter::once(e.actor)
                    .chain(e.conj)
                    .filter_map(|a| world.actor_at[a])
                    .collect();
                let free: Vec<usize> = (0..world.places()).filter(|p| !here.contains(p)).collect();
                e.location = Some(*rng.choose(&free));
                e.form = rng.next_u64();
                e
            }
            _ => world.random_event(mix(1, 0, 0, 0), rng),
        }
    }

    /// A question the story so far answers, if there is one.
    fn ask(
        &self,
        world: &World,
        knowledge: &[Option<Known>],
        vocab: &Vocab,
        rng: &mut Rng,
    ) -> Option<Asked> {
        let actor = |a: usize| vocab.actors[a].0.clone();
        let place = |p: usize| vocab.places[p].clone();
        let object = |o: usize| vocab.objects[o].clone();
        let actors = world.actor_at.len();
        let objects = world.holder.len();
        match self.qa {
            1 | 11 | 12 | 13 => {
                let a = world.random_moved_actor(rng)?;
                let last = world.last_move[a]?;
                let mut supporting = vec![last];
                if world.events[last].coref && last > 0 {
                    supporting.insert(0, last - 1);
                }
                Some(Asked {
                    query: json!({"kind": "where_is", "actor": actor(a)}),
                    question: format!("Where is {}?", actor(a)),
                    answers: vec![place(world.actor_at[a]?)],
                    supporting,
                })
            }
            2 => {
                let known: Vec<usize> = (0..objects)
                    .filter(|&o| world.object_place(o).is_some())
                    .collect();
                if known.is_empty() {
                    return None;
                }
                let o = *rng.choose(&known);
                let (p, supporting) = world.object_place(o)?;
                Some(Asked {
                    query: json!({"kind": "where_is_object", "object": object(o)}),
                    question: format!("Where is the {}?", object(o)),
                    answers: vec![place(p)],
                    supporting,
                })
            }
            3 => {
                // "Before the place" means before the object's latest arrival there, so the
                // (object, visit) pairs asked about are each place's last visit.
                let mut options = Vec::new();
                for o in 0..objects {
                    let v = &world.visits[o];
                    for i in 1..v.len() {
                        if v[i + 1..].iter().all(|x| x.place != v[i].place) {
                            options.push((o, i));
                        }
                    }
                }
                if options.is_empty() {
                    return None;
                }
                let (o, i) = *rng.choose(&options);
                let v = &world.visits[o];
                let mut supporting: Vec<usize> = [Some(v[i - 1].fact), Some(v[i].fact), v[i].carry]
                    .into_iter()
                    .flatten()
                    .collect();
                supporting.sort_unstable();
                supporting.dedup();
                Some(Asked {
                    query: json!({"kind": "where_was_before", "object": object(o), "location": place(v[i].place)}),
                    question: format!(
                        "Where was the {} before the {}?",
                        object(o),
                        place(v[i].place)
                    ),
                    answers: vec![place(v[i - 1].place)],
                    supporting,
                })
            }
            5 => {
                let gives: Vec<usize> = (0..world.events.len())
                    .filter(|&i| world.events[i].action == Action::Give)
                    .collect();
                if gives.is_empty() {
                    return None;
                }
                let g = &world.events[*rng.choose(&gives)];
                let (giver, obj, to) = (g.actor, g.object?, g.recipient?);
                let latest = |f: &dyn Fn(&Event) -> bool| {
                    gives.iter().rev().copied().find(|&i| f(&world.events[i]))
                };
                let form = rng.index(5);
                let (query, question, found) = match form {
                    0 => (
                        json!({"kind": "who_gave", "object": object(obj), "recipient": actor(to)}),
                        format!("Who gave the {} to {}?", object(obj), actor(to)),
                        latest(&|e| e.object == Some(obj) && e.recipient == Some(to)),
                    ),
                    1 => (
                        json!({"kind": "who_received", "object": object(obj)}),
                        format!("Who received the {}?", object(obj)),
                        latest(&|e| e.object == Some(obj)),
                    ),
                    2 => (
                        json!({"kind": "what_given", "actor": actor(giver), "recipient": actor(to)}),
                        format!("What did {} give to {}?", actor(giver), actor(to)),
                        latest(&|e| e.actor == giver && e.recipient == Some(to)),
                    ),
                    3 => (
                        json!({"kind": "given_to", "actor": actor(giver), "object": object(obj)}),
                        format!("Who did {} give the {} to?", actor(giver), object(obj)),
                        latest(&|e| e.actor == giver && e.object == Some(obj)),
                    ),
                    _ => (
                        json!({"kind": "who_gave_object", "object": object(obj)}),
                        format!("Who gave the {}?", object(obj)),
                        latest(&|e| e.object == Some(obj)),
                    ),
                };
                let i = found?;
                let e = &world.events[i];
                let answer = match form {
                    0 | 4 => actor(e.actor),
                    1 | 3 => actor(e.recipient?),
                    _ => object(e.object?),
                };
                Some(Asked {
                    query,
                    question,
                    answers: vec![answer],
                    supporting: vec![i],
                })
            }
            6 => {
                let a = world.random_moved_actor(rng)?;
                let at = world.actor_at[a]?;
                let yes = rng.chance(1, 2);
                let p = if yes {
                    at
                } else {
                    world.other_place(Some(at), rng)
                };
                Some(Asked {
                    query: json!({"kind": "is_in", "actor": actor(a), "location": place(p)}),
                    question: format!("Is {} in the {}?", actor(a), place(p)),
                    answers: vec![if yes { "yes" } else { "no" }.to_string()],
                    supporting: vec![world.last_move[a]?],
                })
            }
            7 | 8 => {
                let involved: Vec<usize> = (0..actors)
                    .filter(|&a| world.holding_fact[a].iter().any(Option::is_some))
                    .collect();
                if involved.is_empty() {
                    return None;
                }
                let a = *rng.choose(&involved);
                let mut supporting: Vec<usize> =
                    world.holding_fact[a].iter().flatten().copied().collect();
                supporting.sort_unstable();
                let held = &world.carrying[a];
                let (query, question, answers) = if self.qa == 7 {
                    (
                        json!({"kind": "count_carrying", "actor": actor(a)}),
                        format!("How many objects is {} carrying?", actor(a)),
                        vec![COUNTS[held.len()].to_string()],
                    )
                } else {
                    (
                        json!({"kind": "list_carrying", "actor": actor(a)}),
                        format!("What is {} carrying?", actor(a)),
                        if held.is_empty() {
                            vec!["nothing".to_string()]
                        } else {
                            held.iter().map(|&o| object(o)).collect()
                        },
                    )
                };
                Some(Asked {
                    query,
                    question,
                    answers,
                    supporting,
                })
            }
            9 | 10 => {
                let known: Vec<usize> = (0..actors).filter(|&a| knowledge[a].is_some()).collect();
                if known.is_empty() {
                    return None;
                }
                let a = *rng.choose(&known);
                let n_places = vocab.places.len();
                let elsewhere = |rng: &mut Rng, not: &[usize]| -> usize {
                    let free: Vec<usize> = (0..n_places).filter(|p| !not.contains(p)).collect();
                    *rng.choose(&free)
                };
                let (p, answer) = match knowledge[a]? {
                    Known::At(p) => {
                        if rng.chance(1, 2) {
                            (p, "yes")
                        } else {
                            (elsewhere(rng, &[p]), "no")
                        }
                    }
                    Known::Not(p) => (p, "no"),
                    Known::Either(p, q) => {
                        if rng.chance(2, 3) {
                            (if rng.chance(1, 2) { p } else { q }, "maybe")
                        } else {
                            (elsewhere(rng, &[p, q]), "no")
                        }
                    }
                };
                let last = (0..world.events.len())
                    .rev()
                    .find(|&i| world.events[i].actor == a)?;
                Some(Asked {
                    query: json!({"kind": "is_in", "actor": actor(a), "location": place(p)}),
                    question: format!("Is {} in the {}?", actor(a), place(p)),
                    answers: vec![answer.to_string()],
                    supporting: vec![last],
                })
            }
            _ => None,
        }
    }

    /// qa4: three places related by two compass facts; the question reads one fact forwards or
    /// backwards. The second direction is never the opposite of the first, which would put two
    /// places in one spot.
    fn relations_story(&self, vocab: Vocab, rng: &mut Rng) -> Story {
        let idx = rng.sample_indices(vocab.places.len(), 3);
        let (x, y, z) = (idx[0], idx[1], idx[2]);
        let d1 = rng.index(4);
        let d2 = (d1 + 3 + rng.index(3)) % 4; // any but (d1 + 2) % 4
        let mut relations = vec![(y, d1, x), (z, d2, y)];
        if rng.chance(1, 2) {
            relations.swap(0, 1);
        }
        let asked = rng.index(2);
        let (a, d, b) = relations[asked];
        let place = |p: usize| vocab.places[p].clone();
        let (query, question, answer) = if rng.chance(1, 2) {
            (
                json!({"kind": "what_is_dir_of", "direction": DIRECTIONS[d], "location": place(b)}),
                format!("What is {} of the {}?", DIRECTIONS[d], place(b)),
                place(a),
            )
        } else {
            (
                json!({"kind": "what_is_location_dir_of", "location": place(a), "direction": DIRECTIONS[d]}),
                format!("What is the {} {} of?", place(a), DIRECTIONS[d]),
                place(b),
            )
        };
        let facts = relations
            .iter()
            .map(|&(a, d, b)| {
                let verb = if rng.chance(1, 2) { "is" } else { "lies" };
                format!(
                    "The {} {verb} {} of the {}.",
                    place(a),
                    DIRECTIONS[d],
                    place(b)
                )
            })
            .collect();
        Story {
            vocab,
            events: Vec::new(),
            relations,
            data: Vec::new(),
            labels: None,
            facts,
            query,
            question,
            answers: vec![answer],
            supporting: vec![asked],
        }
    }

    fn story_frame(
        &self,
        run: &Run,
        story: &Story,
        filler: bool,
    ) -> Result<crate::Frame, GenError> {
        Ok(run.template.frame(&vars([
            ("question", story.question.as_str()),
            ("instruction", self.instruction()),
            ("filler", if filler { "yes" } else { "" }),
        ]))?)
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

/// What a reader knows of an actor's place in qa9 and qa10.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Known {
    At(usize),
    Not(usize),
    Either(usize, usize),
}

/// Our sentence forms for the four actions (several verbs each, picked by a fact's `form`).
const MOVE_VERBS: [&str; 6] = [
    "went to",
    "walked to",
    "travelled to",
    "headed to",
    "moved to",
    "hurried to",
];
const GET_VERBS: [&str; 4] = ["picked up", "took", "grabbed", "got hold of"];
const DROP_VERBS: [&str; 4] = ["put down", "dropped", "set down", "discarded"];
const GIVE_VERBS: [&str; 3] = ["gave", "handed", "passed"];

/// The sentence of one fact.
fn render_event(e: &Event, vocab: &Vocab) -> String {
    let name = |a: usize| vocab.actors[a].0.as_str();
    let place = |p: Option<usize>| vocab.places[p.unwrap_or_default()].as_str();
    let object = |o: Option<usize>| vocab.objects[o.unwrap_or_default()].as_str();
    let subject = if e.coref {
        let lead = ["Then", "After that", "Afterwards", "Later"][(e.form % 4) as usize];
        let pronoun = if e.conj.is_some() {
            "they"
        } else if vocab.actors[e.actor].1 {
            "he"
        } else {
            "she"
        };
        format!("{lead} {pronoun}")
    } else if let Some(b) = e.conj {
        format!("{} and {}", name(e.actor), name(b))
    } else {
        name(e.actor).to_string()
    };
    let f = (e.form / 4) as usize;
    let predicate = match e.action {
        Action::Move if e.negated => {
            if e.form == 1 {
                format!("is no longer in the {}", place(e.location))
            } else {
                format!("is not in the {}", place(e.location))
            }
        }
        Action::Move if e.either.is_some() => {
            let (a, b) = (place(e.location), place(e.either));
            match f % 2 {
                0 => format!("is either in the {a} or the {b}"),
                _ => format!("is in the {a} or else in the {b}"),
            }
        }
        Action::Move => format!("{} the {}", MOVE_VERBS[f % 6], place(e.location)),
        Action::Get => format!("{} the {}", GET_VERBS[f % 4], object(e.object)),
        Action::Drop => format!("{} the {}", DROP_VERBS[f % 4], object(e.object)),
        Action::Give => format!(
            "{} the {} to {}",
            GIVE_VERBS[f % 3],
            object(e.object),
            name(e.recipient.unwrap_or_default())
        ),
    };
    format!("{subject} {predicate}.")
}

/// `params.events`: every fact as data, with names.
fn events_json(story: &Story) -> Vec<Value> {
    let v = &story.vocab;
    story
        .events
        .iter()
        .map(|e| {
            let mut o = serde_json::Map::new();
            o.insert("actor".into(), json!(v.actors[e.actor].0));
            o.insert("action".into(), json!(e.action.as_str()));
            if let Some(p) = e.location {
                o.insert("location".into(), json!(v.places[p]));
            }
            if let Some(x) = e.object {
                o.insert("object".into(), json!(v.objects[x]));
            }
            if let Some(r) = e.recipient {
                o.insert("recipient".into(), json!(v.actors[r].0));
            }
            if e.negated {
                o.insert("negated".into(), json!(true));
            }
            if let Some(p) = e.either {
                o.insert("either".into(), json!(v.places[p]));
            }
            if let Some(b) = e.conj {
                o.insert("conj".into(), json!(v.actors[b].0));
            }
            if e.coref {
                o.insert("coref".into(), json!(true));
            }
            Value::Object(o)
        })
        .collect()
}

impl Task for Babilong {
    fn name(&self) -> &'static str {
        "babilong"
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

    fn max_new_tokens(&self) -> u32 {
        MAX_NEW_TOKENS
    }

    fn example_vars(&self) -> Vars {
        vars([
            ("question", "Where is Ada?"),
            ("instruction", self.instruction()),
            ("filler", "yes"),
        ])
    }

    fn minimum_length(&self, run: &Run) -> Result<u64, GenError> {
        // The longest story of a few samples at the largest size, with a margin for longer
        // ones; its facts must fit inside the fact window with room to spare.
        let mut task = self.clone();
        if self.qa != 4 {
            task.facts = (self.facts.1, self.facts.1);
        }
        let (mut facts, mut frame_tokens) = (0, 0);
        for sample in 0..4 {
            let story = task.story(run.seed, sample)?;
            let frame = self.story_frame(run, &story, true)?;
            let fixed = run
                .tokenizer
                .count(&format!("{}{}", frame.prefix, frame.suffix))?;
            let all = render_facts(&run.tokenizer, &frame, &story.facts)?.length;
            facts = facts.max(all.saturating_sub(fixed));
            frame_tokens = frame_tokens.max(fixed);
        }
        let width = self.window.1 - self.window.0;
        let context = (facts as f64 * 1.25 * 100.0 / width).ceil() as u64;
        Ok(context + frame_tokens as u64 + 32 + run.reserve)
    }

    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
        let tok = &run.tokenizer;
        let story = self.story(run.seed, cell.sample)?;
        let filler = cell.length > 0;
        let frame = self.story_frame(run, &story, filler)?;
        let fitted = if filler {
            let params = canonical_json(&self.content_params());
            let coords = run.coordinates("babilong", &params, cell);
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
            let haystack = run.required_haystack("babilong")?;
            let mut stream =
                haystack.stream(tok, Rng::from_key(coords.key(), Stream::Haystack), None)?;
            let budget = cell.length.saturating_sub(run.reserve) as usize;
            let place = Placement {
                in_order: true,
                window: Some(self.window),
            };
            fit_placed(tok, &frame, &needles, &mut stream, budget, place)?
        } else {
            render_facts(tok, &frame, &story.facts)?
        };
        let mut params = self.content_params();
        if self.qa == 4 {
            params["relations"] = json!(story
                .relations
                .iter()
                .map(|&(a, d, b)| json!({"location": story.vocab.places[a], "direction": DIRECTIONS[d], "of": story.vocab.places[b]}))
                .collect::<Vec<_>>());
        } else if !story.data.is_empty() {
            for (key, value) in &story.data {
                params[key.as_str()] = value.clone();
            }
        } else {
            params["events"] = json!(events_json(&story));
        }
        params["query"] = story.query.clone();
        params["supporting"] = json!(story.supporting);
        params["fact_count"] = json!(story.facts.len());
        params["actors"] = json!(story.vocab.actors.iter().map(|a| &a.0).collect::<Vec<_>>());
        params["places"] = json!(story.vocab.places);
        params["objects"] = json!(story.vocab.objects);
        let target = story.answers.join(",");
        Ok(Instance {
            task: "babilong".into(),
            variant: self.variant(),
            input: fitted.input,
            question: story.question.clone(),
            answer_prefix: "Answer:".into(),
            target,
            answers: story.answers.clone(),
            labels: story
                .labels
                .clone()
                .unwrap_or_else(|| self.labels(&story.vocab)),
            metric: Metric::Label,
            max_new_tokens: MAX_NEW_TOKENS,
            target_length: cell.length,
            length: fitted.length as u64,
            tokenizer: tok.id(),
            depth_percent: if filler { cell.depth } else { None },
            needle_offsets: fitted.needle_offsets,
            needle_depths: if filler {
                fitted.needle_depths
            } else {
                Vec::new()
            },
            sample_index: cell.sample,
            params: canonical_json(&params),
        })
    }
}
