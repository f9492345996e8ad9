//! bAbI tasks 14–20, whose stories are small puzzles rather than a walk through the world:
//! time order, deduction, induction, positions, sizes, paths and motivations. Each builds its
//! facts, one question a reader can answer from them, the answer and the supporting facts; the
//! facts as data go into `params` (`events` for qa14, `relations` for qa19, `statements` for
//! the others).

use serde_json::{json, Value};

use super::render::{relation_json, DIRECTIONS};
use super::{split_facts, Story, Vocab};
use crate::rng::Rng;

/// Which names a puzzle draws from: bAbI's, or our fresh lists.
pub struct Names<'a> {
    /// Whether the story uses fresh names, so the puzzle draws its species, colours, shapes
    /// and things from our lists too.
    pub fresh: bool,
    /// The story's actors, places and objects.
    pub vocab: &'a Vocab,
    /// The number of facts the story must have, within the task's range: puzzles whose size
    /// varies (qa14, qa20) shape themselves to it, the others always have it.
    pub facts: usize,
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
const CLASSIC_SHAPES: [&str; 6] = [
    "red square",
    "blue square",
    "red sphere",
    "triangle",
    "pink rectangle",
    "yellow square",
];
const CLASSIC_THINGS: [&str; 6] = [
    "box",
    "chest",
    "chocolate",
    "suitcase",
    "container",
    "box of chocolates",
];
const FRESH_SPECIES: [&str; 12] = [
    "hare", "fox", "owl", "badger", "otter", "heron", "lynx", "ferret", "stoat", "weasel",
    "beaver", "marten",
];
const FRESH_COLOURS: [&str; 10] = [
    "amber", "crimson", "olive", "violet", "teal", "ivory", "maroon", "silver", "indigo", "ochre",
];
const FRESH_SHAPE_COLOURS: [&str; 6] = ["green", "orange", "purple", "grey", "brown", "black"];
const FRESH_SHAPES: [&str; 6] = ["circle", "star", "hexagon", "diamond", "cube", "pyramid"];
/// qa20: motivation, the place it sends one to, the thing one gets there.
const MOTIVES: [(&str, &str, &str); 4] = [
    ("hungry", "kitchen", "apple"),
    ("thirsty", "kitchen", "milk"),
    ("tired", "bedroom", "pajamas"),
    ("bored", "garden", "football"),
];
/// Every species, colour, shape, thing and motive a puzzle may name: a haystack sentence
/// naming one that a story uses could contradict the story, so such sentences are screened out.
pub const PUZZLE_TERMS: [&[&str]; 9] = [
    &CLASSIC_SPECIES_FEAR,
    &CLASSIC_SPECIES_COLOUR,
    &CLASSIC_COLOURS,
    &CLASSIC_SHAPES,
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

/// The four compass letters of qa19's answers.
const LETTERS: [&str; 4] = ["n", "e", "s", "w"];

fn pick<'a>(list: &[&'a str], k: usize, rng: &mut Rng) -> Vec<&'a str> {
    rng.sample_indices(list.len(), k)
        .into_iter()
        .map(|i| list[i])
        .collect()
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn story(
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

/// qa4: three places related by two compass facts; the question reads one fact forwards or
/// backwards. The second direction is never the opposite of the first, which would put two
/// places in one spot.
pub fn compass(names: &Names<'_>, rng: &mut Rng) -> Story {
    let v = names.vocab;
    let idx = rng.sample_indices(v.places.len(), 3);
    let (x, y, z) = (idx[0], idx[1], idx[2]);
    let d1 = rng.index(4);
    let d2 = (d1 + 3 + rng.index(3)) % 4; // any but (d1 + 2) % 4
    let mut relations = [(y, d1, x), (z, d2, y)];
    if rng.chance(1, 2) {
        relations.swap(0, 1);
    }
    let asked = rng.index(2);
    let (a, d, b) = relations[asked];
    let place = |p: usize| v.places[p].clone();
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
    let data: Vec<Value> = relations
        .iter()
        .map(|&(a, d, b)| relation_json(&place(a), d, &place(b)))
        .collect();
    story(
        v,
        facts,
        ("relations", json!(data)),
        (query, question),
        answer,
        vec![asked],
        v.places.clone(),
    )
}

/// qa14: moves at four times of day, told out of order; where was someone before a place.
/// One to three actors move two to four times each, `names.facts` moves in all.
pub fn time_reasoning(names: &Names<'_>, rng: &mut Rng) -> Story {
    let v = names.vocab;
    let moves_of = split_facts(names.facts, 1..=v.actors.len().min(3), 2..=TIMES.len(), rng);
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

/// qa15: which species fears which; someone's species; what does that someone fear.
pub fn deduction(names: &Names<'_>, rng: &mut Rng) -> Story {
    let v = names.vocab;
    let species = if names.fresh {
        pick(&FRESH_SPECIES, 4, rng)
    } else {
        CLASSIC_SPECIES_FEAR.to_vec()
    };
    let n = species.len();
    let mut facts = Vec::new();
    let mut statements = Vec::new();
    let mut fear_fact = vec![0usize; n];
    let mut afraid_of = vec![0usize; n];
    let mut order: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut order);
    for &s in &order {
        let t = (s + 1 + rng.index(n - 1)) % n;
        fear_fact[s] = facts.len();
        afraid_of[s] = t;
        let form = if rng.chance(1, 2) {
            format!("Every {} is afraid of every {}.", species[s], species[t])
        } else {
            format!("Each {} fears any {}.", species[s], species[t])
        };
        facts.push(form);
        statements.push(json!({"kind": "fear", "species": species[s], "afraid_of": species[t]}));
    }
    let members: Vec<usize> = rng.sample_indices(v.actors.len(), 4);
    let mut member_fact = Vec::new();
    for &m in &members {
        let s = rng.index(n);
        member_fact.push((m, s, facts.len()));
        facts.push(format!("{} is a {}.", v.actors[m].0, species[s]));
        statements.push(json!({"kind": "member", "actor": v.actors[m].0, "species": species[s]}));
    }
    let &(m, s, f) = rng.choose(&member_fact);
    let feared = species[afraid_of[s]].to_string();
    story(
        v,
        facts,
        ("statements", json!(statements)),
        (
            json!({"kind": "afraid_of", "actor": v.actors[m].0}),
            format!("What is {} afraid of?", v.actors[m].0),
        ),
        feared,
        vec![f, fear_fact[s]],
        strings(&species),
    )
}

/// qa16: members of species with colours; a new member's colour follows its kind.
pub fn induction(names: &Names<'_>, rng: &mut Rng) -> Story {
    let v = names.vocab;
    let (species, colours) = if names.fresh {
        (pick(&FRESH_SPECIES, 4, rng), pick(&FRESH_COLOURS, 4, rng))
    } else {
        (CLASSIC_SPECIES_COLOUR.to_vec(), CLASSIC_COLOURS.to_vec())
    };
    let mut colour_of: Vec<usize> = (0..colours.len()).collect();
    rng.shuffle(&mut colour_of);
    let people = rng.sample_indices(v.actors.len(), 4);
    let (known, asked) = (&people[..3], people[3]);
    let mut facts = Vec::new();
    let mut statements = Vec::new();
    let mut first_of_species: Vec<Option<(usize, usize)>> = vec![None; species.len()];
    for &p in known {
        let s = rng.index(species.len());
        let name = &v.actors[p].0;
        let at = facts.len();
        facts.push(format!("{name} is a {}.", species[s]));
        facts.push(format!("{name} is {}.", colours[colour_of[s]]));
        statements.push(json!({"kind": "member", "actor": name, "species": species[s]}));
        statements.push(json!({"kind": "colour", "actor": name, "colour": colours[colour_of[s]]}));
        first_of_species[s].get_or_insert((at, at + 1));
    }
    let seen: Vec<(usize, (usize, usize))> = (0..species.len())
        .filter_map(|s| first_of_species[s].map(|facts| (s, facts)))
        .collect();
    let (s, (a, b)) = *rng.choose(&seen);
    let name = &v.actors[asked].0;
    facts.push(format!("{name} is a {}.", species[s]));
    statements.push(json!({"kind": "member", "actor": name, "species": species[s]}));
    story(
        v,
        facts.clone(),
        ("statements", json!(statements)),
        (
            json!({"kind": "colour_of", "actor": name}),
            format!("What colour is {name}?"),
        ),
        colours[colour_of[s]].to_string(),
        vec![a, b, facts.len() - 1],
        strings(&colours),
    )
}

/// qa17: three shapes in a row (or column); is one left of / above another.
pub fn positions(names: &Names<'_>, rng: &mut Rng) -> Story {
    let v = names.vocab;
    let shapes: Vec<String> = if names.fresh {
        let c = pick(&FRESH_SHAPE_COLOURS, 3, rng);
        let s = pick(&FRESH_SHAPES, 3, rng);
        c.iter().zip(s).map(|(c, s)| format!("{c} {s}")).collect()
    } else {
        pick(&CLASSIC_SHAPES, 3, rng)
            .into_iter()
            .map(str::to_string)
            .collect()
    };
    // b, then a one step from b, then c one more step the same way.
    let (horizontal, forward) = (rng.chance(1, 2), rng.chance(1, 2));
    let rel = |forward: bool| match (horizontal, forward) {
        (true, true) => "right of",
        (true, false) => "left of",
        (false, true) => "above",
        (false, false) => "below",
    };
    let (a, b, c) = (&shapes[0], &shapes[1], &shapes[2]);
    let say = |x: &str, r: &str, y: &str| {
        if r.ends_with("of") {
            format!("The {x} is to the {r} the {y}.")
        } else {
            format!("The {x} is {r} the {y}.")
        }
    };
    let mut items = [
        (a.clone(), rel(forward), b.clone()),
        (c.clone(), rel(forward), a.clone()),
    ];
    if rng.chance(1, 2) {
        items.swap(0, 1);
    }
    let facts: Vec<String> = items.iter().map(|(x, r, y)| say(x, r, y)).collect();
    let statements: Vec<Value> = items
        .iter()
        .map(|(x, r, y)| json!({"kind": "position", "a": x, "relation": r, "b": y}))
        .collect();
    // c is two steps `forward` of b: ask c vs b or b vs c, truly or not.
    let (x, y, truth) = if rng.chance(1, 2) {
        (c, b, forward)
    } else {
        (b, c, !forward)
    };
    let asked_forward = rng.chance(1, 2);
    let r = rel(asked_forward);
    let answer = if asked_forward == truth { "yes" } else { "no" };
    let question = if r.ends_with("of") {
        format!("Is the {x} to the {r} the {y}?")
    } else {
        format!("Is the {x} {r} the {y}?")
    };
    story(
        v,
        facts,
        ("statements", json!(statements)),
        (
            json!({"kind": "is_relation", "a": x, "relation": r, "b": y}),
            question,
        ),
        answer.into(),
        vec![0, 1],
        strings(&["yes", "no"]),
    )
}

/// qa18: four things ordered by size through fits-inside / bigger-than facts; does one fit.
pub fn sizes(names: &Names<'_>, rng: &mut Rng) -> Story {
    let v = names.vocab;
    let things: Vec<String> = if names.fresh {
        let pool: Vec<&str> = super::word_list(super::FRESH_OBJECTS);
        pick(&pool, 4, rng)
            .into_iter()
            .map(str::to_string)
            .collect()
    } else {
        pick(&CLASSIC_THINGS, 4, rng)
            .into_iter()
            .map(str::to_string)
            .collect()
    };
    // things[0] is the smallest; facts link neighbours, in random order and form.
    let mut links: Vec<usize> = (0..things.len() - 1).collect();
    rng.shuffle(&mut links);
    let mut facts = Vec::new();
    let mut statements = Vec::new();
    let mut fact_of = vec![0usize; things.len() - 1];
    for &i in &links {
        fact_of[i] = facts.len();
        let (small, big) = (&things[i], &things[i + 1]);
        if rng.chance(1, 2) {
            facts.push(format!("The {small} fits inside the {big}."));
            statements.push(json!({"kind": "fits", "a": small, "b": big}));
        } else {
            facts.push(format!("The {big} is bigger than the {small}."));
            statements.push(json!({"kind": "bigger", "a": big, "b": small}));
        }
    }
    let pair = rng.sample_indices(things.len(), 2);
    let (i, j) = (pair[0].min(pair[1]), pair[0].max(pair[1]));
    let supporting: Vec<usize> = (i..j).map(|k| fact_of[k]).collect();
    let (query, question, answer) = match rng.index(4) {
        0 => (
            json!({"kind": "fits_in", "a": things[i], "b": things[j]}),
            format!("Does the {} fit in the {}?", things[i], things[j]),
            "yes",
        ),
        1 => (
            json!({"kind": "fits_in", "a": things[j], "b": things[i]}),
            format!("Does the {} fit in the {}?", things[j], things[i]),
            "no",
        ),
        2 => (
            json!({"kind": "bigger_than", "a": things[j], "b": things[i]}),
            format!("Is the {} bigger than the {}?", things[j], things[i]),
            "yes",
        ),
        _ => (
            json!({"kind": "bigger_than", "a": things[i], "b": things[j]}),
            format!("Is the {} bigger than the {}?", things[i], things[j]),
            "no",
        ),
    };
    story(
        v,
        facts,
        ("statements", json!(statements)),
        (query, question),
        answer.into(),
        supporting,
        strings(&["yes", "no"]),
    )
}

/// A two-step qa19 route: where from, where to, and each step's direction of travel and the
/// fact that states its link.
#[derive(Clone, Copy)]
struct Route {
    from: usize,
    to: usize,
    directions: [usize; 2],
    facts: [usize; 2],
}

/// qa19: five places on a grid linked by compass facts (a tree, so paths are unique); how to
/// go between two places two steps apart.
pub fn path_finding(names: &Names<'_>, rng: &mut Rng) -> Story {
    let v = names.vocab;
    let places = rng.sample_indices(v.places.len(), 5);
    let step = [(0i32, 1i32), (1, 0), (0, -1), (-1, 0)]; // n, e, s, w
    let mut at: Vec<(i32, i32)> = vec![(0, 0)];
    let mut links: Vec<(usize, usize, usize)> = Vec::new(); // (new, dir from old to new, old)
    while at.len() < places.len() {
        let from = rng.index(at.len());
        let d = rng.index(4);
        let cell = (at[from].0 + step[d].0, at[from].1 + step[d].1);
        if !at.contains(&cell) {
            links.push((at.len(), d, from));
            at.push(cell);
        }
    }
    rng.shuffle(&mut links);
    // Neighbours with the direction of travel.
    let mut routes: Vec<Route> = Vec::new();
    let moves = |x: usize| -> Vec<(usize, usize, usize)> {
        // (neighbour, direction from x to it, fact index)
        links
            .iter()
            .enumerate()
            .filter_map(|(f, &(n, d, o))| {
                if o == x {
                    Some((n, d, f))
                } else if n == x {
                    Some((o, (d + 2) % 4, f))
                } else {
                    None
                }
            })
            .collect()
    };
    for a in 0..places.len() {
        for (b, d1, f1) in moves(a) {
            for (c, d2, f2) in moves(b) {
                if c != a {
                    routes.push(Route {
                        from: a,
                        to: c,
                        directions: [d1, d2],
                        facts: [f1, f2],
                    });
                }
            }
        }
    }
    let Route {
        from: a,
        to: c,
        directions: [d1, d2],
        facts: [f1, f2],
    } = *rng.choose(&routes);
    let name = |i: usize| v.places[places[i]].clone();
    let facts = links
        .iter()
        .map(|&(n, d, o)| format!("The {} is {} of the {}.", name(n), DIRECTIONS[d], name(o)))
        .collect();
    let relations: Vec<Value> = links
        .iter()
        .map(|&(n, d, o)| relation_json(&name(n), d, &name(o)))
        .collect();
    let labels = LETTERS
        .iter()
        .flat_map(|x| LETTERS.iter().map(move |y| format!("{x},{y}")))
        .collect();
    story(
        v,
        facts,
        ("relations", json!(relations)),
        (
            json!({"kind": "path", "from": name(a), "to": name(c)}),
            format!("How do you go from the {} to the {}?", name(a), name(c)),
        ),
        format!("{},{}", LETTERS[d1], LETTERS[d2]),
        vec![f1, f2],
        labels,
    )
}

/// qa20: people feel hungry, thirsty, tired or bored, go where that leads and get what they
/// need; where will someone go, why did they go or get something. Two to four people tell one
/// to three facts each, `names.facts` in all.
pub fn motivations(names: &Names<'_>, rng: &mut Rng) -> Story {
    let v = names.vocab;
    let facts_of = split_facts(names.facts, 2..=v.actors.len().min(4), 1..=3, rng);
    let people = rng.sample_indices(v.actors.len(), facts_of.len());
    // Per person: stage reached (0 feels, 1 went, 2 got), and its facts' indices.
    let mut motive = Vec::new();
    let mut stage = Vec::new();
    for facts in &facts_of {
        motive.push(rng.index(MOTIVES.len()));
        stage.push(facts - 1);
    }
    // Interleave: each person's facts in order, people mixed.
    let mut queue: Vec<usize> = people
        .iter()
        .enumerate()
        .flat_map(|(k, _)| std::iter::repeat_n(k, stage[k] + 1))
        .collect();
    rng.shuffle(&mut queue);
    let mut next = vec![0usize; people.len()];
    let mut fact_index = vec![Vec::new(); people.len()];
    let mut facts = Vec::new();
    let mut statements = Vec::new();
    for k in queue {
        let name = &v.actors[people[k]].0;
        let (feeling, place, thing) = MOTIVES[motive[k]];
        fact_index[k].push(facts.len());
        match next[k] {
            0 => {
                facts.push(format!("{name} is {feeling}."));
                statements.push(json!({"kind": "feels", "actor": name, "motivation": feeling}));
            }
            1 => {
                facts.push(format!("{name} went to the {place}."));
                statements.push(json!({"kind": "move", "actor": name, "location": place}));
            }
            _ => {
                facts.push(format!("{name} picked up the {thing}."));
                statements.push(json!({"kind": "get", "actor": name, "object": thing}));
            }
        }
        next[k] += 1;
    }
    let k = rng.index(people.len());
    let name = v.actors[people[k]].0.clone();
    let (feeling, place, thing) = MOTIVES[motive[k]];
    let (query, question, answer) = match stage[k] {
        0 => (
            json!({"kind": "where_will_go", "actor": name}),
            format!("Where will {name} go?"),
            place,
        ),
        1 => (
            json!({"kind": "why_go", "actor": name, "location": place}),
            format!("Why did {name} go to the {place}?"),
            feeling,
        ),
        _ => (
            json!({"kind": "why_get", "actor": name, "object": thing}),
            format!("Why did {name} pick up the {thing}?"),
            feeling,
        ),
    };
    let mut labels: Vec<String> = MOTIVES.iter().map(|m| m.0.to_string()).collect();
    labels.extend(["kitchen", "bedroom", "garden"].map(String::from));
    story(
        v,
        facts,
        ("statements", json!(statements)),
        (query, question),
        answer.into(),
        fact_index[k].clone(),
        labels,
    )
}

#[cfg(test)]
#[path = "puzzles_tests.rs"]
mod tests;
