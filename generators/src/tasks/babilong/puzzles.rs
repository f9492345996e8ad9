//! bAbI tasks 14–20, whose stories are small puzzles rather than a walk through the world:
//! time order, deduction, induction, positions, sizes, paths and motivations. Each builds its
//! facts, one question a reader can answer from them, the answer and the supporting facts; the
//! facts as data go into `params` (`events` for qa14, `relations` for qa19, `statements` for
//! the others).

use serde_json::{json, Value};

use super::{split_facts, Story, Vocab};
use crate::rng::Rng;

/// Which names a puzzle draws from: bAbI's, or our fresh lists.
pub struct Names<'a> {
    /// Whether the story uses fresh names, so the puzzle draws its species, colours, shapes
    /// and things from our lists too.
    pub fresh: bool,
    /// The story's actors, places and objects.
    pub vocab: &'a Vocab,
    /// The number of facts the user asked for, within the task's range (puzzles whose size
    /// varies shape themselves to it); `None` for bAbI's own sizes.
    pub facts: Option<usize>,
}

const TIMES: [(&str, &str); 4] = [
    ("yesterday", "Yesterday"),
    ("morning", "This morning"),
    ("afternoon", "This afternoon"),
    ("evening", "This evening"),
];
const CLASSIC_SPECIES_FEAR: [&str; 4] = ["mouse", "sheep", "cat", "wolf"];
const CLASSIC_SPECIES_COLOUR: [&str; 4] = ["swan", "lion", "frog", "rhino"];
const CLASSIC_COLOURS: [&str; 4] = ["white", "yellow", "green", "gray"];
/// bAbI's things of qa18: four of random sizes, then the two smallest in order.
pub const CLASSIC_THINGS: [&str; 6] = [
    "suitcase",
    "container",
    "box",
    "treasure chest",
    "box of chocolates",
    "chocolate",
];
const FRESH_SPECIES: [&str; 12] = [
    "hare", "fox", "owl", "badger", "otter", "heron", "lynx", "ferret", "stoat", "weasel",
    "beaver", "marten",
];
const FRESH_COLOURS: [&str; 10] = [
    "amber", "crimson", "olive", "violet", "teal", "ivory", "maroon", "silver", "indigo", "ochre",
];
/// Fresh colours of qa17 shapes.
pub const FRESH_SHAPE_COLOURS: [&str; 6] = ["green", "orange", "purple", "grey", "brown", "black"];
/// Fresh qa17 shapes.
pub const FRESH_SHAPES: [&str; 6] = ["circle", "star", "hexagon", "diamond", "cube", "pyramid"];
/// qa20: motivation, the place it sends one to, the thing one gets there.
pub const MOTIVES: [(&str, &str, &str); 4] = [
    ("hungry", "kitchen", "apple"),
    ("thirsty", "kitchen", "milk"),
    ("tired", "bedroom", "pajamas"),
    ("bored", "garden", "football"),
];
/// qa17's shape colours and shapes (bAbI's sixteen coloured shapes and four plain ones).
pub const SHAPE_COLOURS: [&str; 4] = ["red", "blue", "pink", "yellow"];
/// qa17's shapes.
pub const SHAPES: [&str; 4] = ["square", "rectangle", "triangle", "sphere"];
/// Every species, colour, shape, thing and motive a puzzle may name: a haystack sentence
/// naming one that a story uses could contradict the story, so such sentences are screened out.
pub const PUZZLE_TERMS: [&[&str]; 10] = [
    &CLASSIC_SPECIES_FEAR,
    &CLASSIC_SPECIES_COLOUR,
    &CLASSIC_COLOURS,
    &SHAPE_COLOURS,
    &SHAPES,
    &CLASSIC_THINGS,
    &FRESH_SPECIES,
    &FRESH_COLOURS,
    &FRESH_SHAPE_COLOURS,
    &FRESH_SHAPES,
];

/// The motives of qa20 and what they lead to, as screen terms.
pub fn motive_terms() -> impl Iterator<Item = &'static str> {
    MOTIVES.iter().flat_map(|&(m, p, t)| [m, p, t])
}

fn pick<'a>(list: &[&'a str], k: usize, rng: &mut Rng) -> Vec<&'a str> {
    rng.sample_indices(list.len(), k)
        .into_iter()
        .map(|i| list[i])
        .collect()
}

pub(super) fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// A puzzle story from its parts.
pub(super) fn story(
    vocab: &Vocab,
    facts: Vec<String>,
    data: (&'static str, Value),
    (query, question): (Value, String),
    answer: String,
    supporting: Vec<usize>,
    labels: Vec<String>,
) -> Story {
    let mut supporting = supporting;
    supporting.sort_unstable();
    supporting.dedup();
    Story {
        vocab: vocab.clone(),
        events: Vec::new(),
        data_key: data.0,
        data: data.1,
        labels,
        facts,
        query,
        question,
        answers: vec![answer],
        supporting,
    }
}

/// qa14: moves at four times of day, told out of order; where was someone before a place.
/// One to three actors move two to four times each, `n` moves in all.
pub fn time_reasoning(names: &Names<'_>, n: usize, rng: &mut Rng) -> Story {
    let v = names.vocab;
    let moves_of = split_facts(n, 1..=v.actors.len().min(3), 2..=TIMES.len(), rng);
    // Each actor's moves in time order, so a move's predecessor is the one listed before it.
    let mut in_time_order: Vec<(usize, usize, usize)> = Vec::new(); // (actor, time, place)
    let actors = rng.sample_indices(v.actors.len(), moves_of.len());
    for (a, slots) in actors.into_iter().zip(moves_of) {
        let places = rng.sample_indices(v.places.len(), slots);
        for (t, p) in places.into_iter().enumerate() {
            in_time_order.push((a, t, p));
        }
    }
    // Told out of order: `told[j]` is the move told j-th, `position[k]` where move k is told.
    let mut told: Vec<usize> = (0..in_time_order.len()).collect();
    rng.shuffle(&mut told);
    let mut position = vec![0; told.len()];
    for (j, &k) in told.iter().enumerate() {
        position[k] = j;
    }
    let moves: Vec<(usize, usize, usize)> = told.iter().map(|&k| in_time_order[k]).collect();
    let asked: Vec<usize> = (0..moves.len()).filter(|&i| moves[i].1 > 0).collect();
    let i = *rng.choose(&asked);
    let (a, _, p) = moves[i];
    let before = position[told[i] - 1];
    let facts = moves
        .iter()
        .map(|&(a, t, p)| {
            let verb = ["went to", "travelled to", "walked to"][rng.index(3)];
            format!(
                "{} {} {verb} the {}.",
                TIMES[t].1, v.actors[a].0, v.places[p]
            )
        })
        .collect();
    let events: Vec<Value> = moves
        .iter()
        .map(|&(a, t, p)| json!({"actor": v.actors[a].0, "action": "move", "location": v.places[p], "time": TIMES[t].0}))
        .collect();
    story(
        v,
        facts,
        ("events", json!(events)),
        (
            json!({"kind": "where_was_before", "actor": v.actors[a].0, "location": v.places[p]}),
            format!("Where was {} before the {}?", v.actors[a].0, v.places[p]),
        ),
        v.places[moves[before].2].clone(),
        vec![before, i],
        v.places.clone(),
    )
}

/// qa15 as bAbI tells it: four people of four different species, each species afraid of
/// another; the eight facts shuffled together; what is one of the people afraid of.
pub fn deduction(names: &Names<'_>, rng: &mut Rng) -> Story {
    let v = names.vocab;
    let species = if names.fresh {
        pick(&FRESH_SPECIES, 4, rng)
    } else {
        CLASSIC_SPECIES_FEAR.to_vec()
    };
    let n = species.len();
    let people = v.actors.len().min(n);
    let kind_of = rng.sample_indices(n, people); // a permutation: one species each
    let afraid_of: Vec<usize> = (0..n).map(|s| (s + 1 + rng.index(n - 1)) % n).collect();
    // Facts 0..people are memberships, then one fear per species; told shuffled.
    let mut order: Vec<usize> = (0..people + n).collect();
    rng.shuffle(&mut order);
    let mut position = vec![0usize; people + n];
    let mut facts = Vec::new();
    let mut statements = Vec::new();
    for (j, &f) in order.iter().enumerate() {
        position[f] = j;
        if f < people {
            let (name, s) = (&v.actors[f].0, species[kind_of[f]]);
            facts.push(format!("{name} is a {s}."));
            statements.push(json!({"kind": "member", "actor": name, "species": s}));
        } else {
            let (s, t) = (species[f - people], species[afraid_of[f - people]]);
            facts.push(if rng.chance(1, 2) {
                format!("Every {s} is afraid of every {t}.")
            } else {
                format!("Each {s} fears any {t}.")
            });
            statements.push(json!({"kind": "fear", "species": s, "afraid_of": t}));
        }
    }
    let m = rng.index(people);
    let s = kind_of[m];
    story(
        v,
        facts,
        ("statements", json!(statements)),
        (
            json!({"kind": "afraid_of", "actor": v.actors[m].0}),
            format!("What is {} afraid of?", v.actors[m].0),
        ),
        species[afraid_of[s]].to_string(),
        vec![position[m], position[people + s]],
        strings(&species),
    )
}

/// qa16 as bAbI tells it: five people, each of a random species (the asked one shares theirs
/// with someone), each species one colour; every membership and every colour but the asked
/// person's, shuffled; what colour is the asked person.
pub fn induction(names: &Names<'_>, rng: &mut Rng) -> Story {
    let v = names.vocab;
    let (species, colours) = if names.fresh {
        (pick(&FRESH_SPECIES, 4, rng), pick(&FRESH_COLOURS, 4, rng))
    } else {
        (CLASSIC_SPECIES_COLOUR.to_vec(), CLASSIC_COLOURS.to_vec())
    };
    let colour_of = rng.sample_indices(colours.len(), species.len());
    let people = v.actors.len();
    let mut kind: Vec<usize> = (0..people).map(|_| rng.index(species.len())).collect();
    let asked = rng.index(people);
    while kind.iter().filter(|&&k| k == kind[asked]).count() < 2 {
        kind[asked] = rng.index(species.len());
    }
    // Fact f < people: person f's species; people + f: person f's colour (not the asked one's).
    let mut told: Vec<usize> = (0..2 * people).filter(|&f| f != people + asked).collect();
    rng.shuffle(&mut told);
    let mut position = vec![0usize; 2 * people];
    let mut facts = Vec::new();
    let mut statements = Vec::new();
    for (j, &f) in told.iter().enumerate() {
        position[f] = j;
        let p = f % people;
        let name = &v.actors[p].0;
        if f < people {
            facts.push(format!("{name} is a {}.", species[kind[p]]));
            statements.push(json!({"kind": "member", "actor": name, "species": species[kind[p]]}));
        } else {
            let c = colours[colour_of[kind[p]]];
            facts.push(format!("{name} is {c}."));
            statements.push(json!({"kind": "colour", "actor": name, "colour": c}));
        }
    }
    let mut supporting = vec![position[asked]];
    for p in (0..people).filter(|&p| p != asked && kind[p] == kind[asked]) {
        supporting.extend([position[p], position[people + p]]);
    }
    let name = &v.actors[asked].0;
    story(
        v,
        facts,
        ("statements", json!(statements)),
        (
            json!({"kind": "colour_of", "actor": name}),
            format!("What colour is {name}?"),
        ),
        colours[colour_of[kind[asked]]].to_string(),
        supporting,
        strings(&colours),
    )
}

#[cfg(test)]
#[path = "puzzles_tests.rs"]
mod tests;
