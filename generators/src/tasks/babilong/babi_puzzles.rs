//! bAbI's procedures for the puzzle tasks whose rules differ from a free puzzle: qa4 (three
//! places on one line, the question naming the middle one), qa14 (bAbI's time slots and
//! question timing), qa17 (three shapes placed step by step on a grid), qa18 (a size order
//! with bAbI's extra comparisons), qa19 (a two-step path with two decoy places) and qa20
//! (one statement, then a question about it, twelve times).

use serde_json::{json, Value};

use super::puzzles::{
    story, strings, time_reasoning, Names, CLASSIC_THINGS, MOTIVES, SHAPES, SHAPE_COLOURS,
};
use super::render::{relation_json, DIRECTIONS};
use super::Story;
use crate::rng::Rng;

/// qa14's four times of day: key in `params.events`, and how a sentence says it.
pub const TIMES: [(&str, &str); 4] = [
    ("yesterday", "yesterday"),
    ("morning", "this morning"),
    ("afternoon", "this afternoon"),
    ("evening", "this evening"),
];
/// Grid steps for the directions north, east, south, west.
const STEP: [(i32, i32); 4] = [(0, 1), (1, 0), (0, -1), (-1, 0)];
/// qa19's answer letters, in direction order.
const LETTERS: [&str; 4] = ["n", "e", "s", "w"];

/// qa4: three places in a row, north or east; two facts each relating a neighbour pair (in
/// either wording), told in either order; the question names the middle place.
pub fn compass(names: &Names<'_>, rng: &mut Rng) -> Story {
    let v = names.vocab;
    let idx = rng.sample_indices(v.places.len(), 3);
    let (x, y, z) = (idx[0], idx[1], idx[2]);
    let d = rng.index(2); // north or east
    let place = |p: usize| v.places[p].clone();
    // (a, dir, b): a lies dir of b; either wording of each neighbour pair.
    let mut relations: Vec<(usize, usize, usize)> = [(y, x), (z, y)]
        .into_iter()
        .map(|(far, near)| {
            if rng.chance(1, 2) {
                (far, d, near)
            } else {
                (near, d + 2, far)
            }
        })
        .collect();
    if rng.chance(1, 2) {
        relations.swap(0, 1);
    }
    let ask = if rng.chance(1, 2) { d } else { d + 2 };
    let target = if ask == d { z } else { x };
    let asked = relations
        .iter()
        .position(|&(a, _, b)| (a == target || b == target) && (a == y || b == y))
        .expect("one fact relates the middle place and the end");
    let (query, question, answer) = if rng.chance(1, 2) {
        (
            json!({"kind": "what_is_dir_of", "direction": DIRECTIONS[ask], "location": place(y)}),
            format!("What is {} of the {}?", DIRECTIONS[ask], place(y)),
            place(target),
        )
    } else {
        let back = (ask + 2) % 4;
        (
            json!({"kind": "what_is_location_dir_of", "location": place(y), "direction": DIRECTIONS[back]}),
            format!("What is the {} {} of?", place(y), DIRECTIONS[back]),
            place(target),
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

/// qa14: bAbI's time slots for bAbI's story sizes ([`time_slots`]), or moves at four times of
/// day when a story size is asked for.
pub fn time(names: &Names<'_>, rng: &mut Rng) -> Story {
    match names.facts {
        None => time_slots(names, rng),
        Some(n) => time_reasoning(names, n, rng),
    }
}

/// qa14 as bAbI tells it: seventeen slots, a question in slots 5, 8, 11, 14 and 17, the
/// first four slots holding two moves of one actor at two times; every other fact an actor's
/// move at a time of day they have no move at yet, to a place they have not been. The
/// question asks where an actor with two moves was before one of them.
fn time_slots(names: &Names<'_>, rng: &mut Rng) -> Story {
    let v = names.vocab;
    let (actors, places) = (v.actors.len(), v.places.len());
    let k = rng.index(5);
    let last = 5 + 3 * k; // the question's slot
    let mut slots: Vec<Option<(usize, usize, usize)>> = vec![None; last]; // (actor, time, place)
    let mut moves: Vec<[Option<usize>; 4]> = vec![[None; 4]; actors]; // slot per time
    let first = rng.sample_indices(4, 2);
    let where_ = rng.sample_indices(places, 2);
    let who = rng.index(actors);
    let when = rng.sample_indices(4, 2);
    for j in 0..2 {
        slots[first[j]] = Some((who, when[j], where_[j]));
        moves[who][when[j]] = Some(first[j]);
    }
    for i in 0..last - 1 {
        if (i + 1) > 2 && (i + 1 - 2) % 3 == 0 || slots[i].is_some() {
            continue;
        }
        let (a, t, p) = loop {
            let (a, t, p) = (rng.index(actors), rng.index(4), rng.index(places));
            let been = moves[a]
                .iter()
                .flatten()
                .any(|&s| slots[s].map(|x| x.2) == Some(p));
            if moves[a][t].is_none() && !been {
                break (a, t, p);
            }
        };
        slots[i] = Some((a, t, p));
        moves[a][t] = Some(i);
    }
    let (a, m) = loop {
        let a = rng.index(actors);
        let m: Vec<usize> = moves[a].iter().flatten().copied().collect();
        if m.len() > 1 {
            break (a, m);
        }
    };
    let t = rng.index(m.len() - 1);
    // Story order: the slots that hold facts.
    let told: Vec<usize> = (0..last).filter(|&i| slots[i].is_some()).collect();
    let index = |slot: usize| told.iter().position(|&i| i == slot).expect("told");
    let fact = |i: usize| slots[i].expect("a fact");
    let facts = told
        .iter()
        .map(|&i| {
            let (a, t, p) = fact(i);
            let verb = ["went to", "travelled to", "walked to"][rng.index(3)];
            let (name, place) = (&v.actors[a].0, &v.places[p]);
            if rng.chance(1, 2) {
                let when = TIMES[t].1;
                let cap = when[..1].to_uppercase() + &when[1..];
                format!("{cap} {name} {verb} the {place}.")
            } else {
                format!("{name} {verb} the {place} {}.", TIMES[t].1)
            }
        })
        .collect();
    let events: Vec<Value> = told
        .iter()
        .map(|&i| {
            let (a, t, p) = fact(i);
            json!({"actor": v.actors[a].0, "action": "move", "location": v.places[p], "time": TIMES[t].0})
        })
        .collect();
    let (name, now, before) = (&v.actors[a].0, fact(m[t + 1]).2, fact(m[t]).2);
    story(
        v,
        facts,
        ("events", json!(events)),
        (
            json!({"kind": "where_was_before", "actor": name, "location": v.places[now]}),
            format!("Where was {name} before the {}?", v.places[now]),
        ),
        v.places[before].clone(),
        vec![index(m[t]), index(m[t + 1])],
        v.places.clone(),
    )
}

/// The twenty shapes of qa17 (or fresh ones), each with its shape word.
fn shape_pool(names: &Names<'_>) -> Vec<(String, &'static str)> {
    let (colours, shapes): (&[&str], &[&'static str]) = if names.fresh {
        (
            &super::puzzles::FRESH_SHAPE_COLOURS[..4],
            &super::puzzles::FRESH_SHAPES[..4],
        )
    } else {
        (&SHAPE_COLOURS, &SHAPES)
    };
    let mut pool = Vec::new();
    for &s in shapes {
        for &c in colours {
            pool.push((format!("{c} {s}"), s));
        }
        pool.push((s.to_string(), s));
    }
    pool
}

/// The words of a relative direction (north, east, south, west).
const RELATIVE: [&str; 4] = ["above", "right of", "below", "left of"];

/// qa17: three shapes (never a plain shape beside a coloured one of its kind), each placed one
/// step from the last in a random direction on a grid (a line or a bend); two facts; a yes or
/// no question about two of the shapes along an axis where they differ.
pub fn positions(names: &Names<'_>, rng: &mut Rng) -> Story {
    let v = names.vocab;
    let pool = shape_pool(names);
    let mut chosen: Vec<usize> = Vec::new();
    while chosen.len() < 3 {
        let c = rng.index(pool.len());
        let plain = !pool[c].0.contains(' ');
        let clash = plain && chosen.iter().any(|&x| pool[x].1 == pool[c].1);
        if !chosen.contains(&c) && !clash {
            chosen.push(c);
        }
    }
    let name = |i: usize| pool[chosen[i]].0.clone();
    let mut at: Vec<(i32, i32)> = vec![(0, 0)];
    let mut items: Vec<(usize, usize, usize)> = Vec::new(); // (new, dir, previous)
    while at.len() < 3 {
        let d = rng.index(4);
        let prev = at[at.len() - 1];
        let cell = (prev.0 + STEP[d].0, prev.1 + STEP[d].1);
        if !at.contains(&cell) {
            items.push((at.len(), d, at.len() - 1));
            at.push(cell);
        }
    }
    let say = |a: &str, d: usize, b: &str| match d % 2 {
        1 => format!("The {a} is to the {} the {b}.", RELATIVE[d]),
        _ => format!("The {a} is {} the {b}.", RELATIVE[d]),
    };
    let facts: Vec<String> = items
        .iter()
        .map(|&(a, d, b)| say(&name(a), d, &name(b)))
        .collect();
    let statements: Vec<Value> = items
        .iter()
        .map(|&(a, d, b)| json!({"kind": "position", "a": name(a), "relation": RELATIVE[d], "b": name(b)}))
        .collect();
    let pair = rng.sample_indices(3, 2);
    let (p, q) = (pair[0], pair[1]);
    let diff = (at[q].0 - at[p].0, at[q].1 - at[p].1); // where q is from p
    let axes: Vec<usize> = [(0, diff.0), (1, diff.1)]
        .into_iter()
        .filter(|x| x.1 != 0)
        .map(|x| x.0)
        .collect();
    let axis = *rng.choose(&axes);
    let delta = if axis == 0 { diff.0 } else { diff.1 };
    // The true direction of q from p on this axis.
    let truth = match (axis, delta > 0) {
        (0, true) => 1,
        (0, false) => 3,
        (_, true) => 0,
        _ => 2,
    };
    let yes = rng.chance(1, 2);
    let d = if yes { truth } else { (truth + 2) % 4 };
    let r = RELATIVE[d];
    let question = match d % 2 {
        1 => format!("Is the {} to the {r} the {}?", name(q), name(p)),
        _ => format!("Is the {} {r} the {}?", name(q), name(p)),
    };
    story(
        v,
        facts,
        ("statements", json!(statements)),
        (
            json!({"kind": "is_relation", "a": name(q), "relation": r, "b": name(p)}),
            question,
        ),
        if yes { "yes" } else { "no" }.into(),
        vec![0, 1],
        strings(&["yes", "no"]),
    )
}

/// Most questions a qa18 story can have (pairs of six things).
const MAX_SIZE_QUESTIONS: usize = 15;

/// Shortest path lengths from `x` in the "bigger than" order (edges from bigger to smaller).
fn distances(edges: &[(usize, usize, usize)], n: usize, x: usize) -> Vec<Option<usize>> {
    let mut dist = vec![None; n];
    dist[x] = Some(0);
    let mut frontier = vec![x];
    let mut d = 0;
    while !frontier.is_empty() {
        d += 1;
        let mut next = Vec::new();
        for &u in &frontier {
            for &(a, b, _) in edges {
                if a == u && dist[b].is_none() {
                    dist[b] = Some(d);
                    next.push(b);
                }
            }
        }
        frontier = next;
    }
    dist
}

/// Pairs whose shortest chain of comparisons has two steps, with the two facts.
fn two_step(edges: &[(usize, usize, usize)], n: usize) -> Vec<(usize, usize, [usize; 2])> {
    let mut out = Vec::new();
    for x in 0..n {
        let dist = distances(edges, n, x);
        for y in 0..n {
            if dist[y] == Some(2) {
                let (_, m, f1) = *edges
                    .iter()
                    .find(|&&(a, b, _)| {
                        a == x && dist[b] == Some(1) && {
                            edges.iter().any(|&(c, d, _)| c == b && d == y)
                        }
                    })
                    .expect("a two-step chain");
                let f2 = edges
                    .iter()
                    .find(|&&(c, d, _)| c == m && d == y)
                    .expect("its second step")
                    .2;
                out.push((x, y, [f1, f2]));
            }
        }
    }
    out
}

/// qa18: six things in size order (bAbI's: four of random sizes, then the box of chocolates,
/// then the chocolate); a two-step chain of comparisons, then two to seven more that keep
/// some pair two steps apart; shuffled; the question asks about a pair two steps apart.
pub fn sizes(names: &Names<'_>, rng: &mut Rng) -> Story {
    let v = names.vocab;
    loop {
        let things: Vec<String> = if names.fresh {
            let pool: Vec<&str> = super::word_list(super::FRESH_OBJECTS);
            rng.sample_indices(pool.len(), 6)
                .into_iter()
                .map(|i| pool[i].to_string())
                .collect()
        } else {
            let mut big: Vec<String> = strings(&CLASSIC_THINGS[..4]);
            rng.shuffle(&mut big);
            big.extend(strings(&CLASSIC_THINGS[4..]));
            big
        };
        let n = things.len();
        let mut chain = rng.sample_indices(n, 3);
        chain.sort_unstable();
        let mut edges: Vec<(usize, usize, usize)> =
            vec![(chain[0], chain[1], 0), (chain[1], chain[2], 1)];
        for _ in 0..2 + rng.index(6) {
            for tries in 1.. {
                let mut pair = rng.sample_indices(n, 2);
                pair.sort_unstable();
                if edges.iter().any(|e| e.0 == pair[0] && e.1 == pair[1]) {
                    continue;
                }
                edges.push((pair[0], pair[1], edges.len()));
                if !two_step(&edges, n).is_empty() {
                    break;
                }
                edges.pop();
                if tries > 100 {
                    break;
                }
            }
        }
        let questions = two_step(&edges, n);
        let k = rng.index(MAX_SIZE_QUESTIONS);
        if k >= questions.len() || names.facts.is_some_and(|f| f != edges.len()) {
            continue;
        }
        let mut order: Vec<usize> = (0..edges.len()).collect();
        rng.shuffle(&mut order);
        let mut position = vec![0; edges.len()];
        let mut facts = Vec::new();
        let mut statements = Vec::new();
        for (j, &e) in order.iter().enumerate() {
            let (big, small) = (&things[edges[e].0], &things[edges[e].1]);
            position[e] = j;
            if rng.chance(1, 2) {
                facts.push(format!("The {small} fits inside the {big}."));
                statements.push(json!({"kind": "fits", "a": small, "b": big}));
            } else {
                facts.push(format!("The {big} is bigger than the {small}."));
                statements.push(json!({"kind": "bigger", "a": big, "b": small}));
            }
        }
        let (x, y, support) = questions[k];
        let (bx, sy) = (&things[x], &things[y]);
        let (query, question, answer) = match rng.index(4) {
            0 => (
                json!({"kind": "bigger_than", "a": bx, "b": sy}),
                format!("Is the {bx} bigger than the {sy}?"),
                "yes",
            ),
            1 => (
                json!({"kind": "fits_in", "a": bx, "b": sy}),
                format!("Does the {bx} fit in the {sy}?"),
                "no",
            ),
            2 => (
                json!({"kind": "bigger_than", "a": sy, "b": bx}),
                format!("Is the {sy} bigger than the {bx}?"),
                "no",
            ),
            _ => (
                json!({"kind": "fits_in", "a": sy, "b": bx}),
                format!("Does the {sy} fit in the {bx}?"),
                "yes",
            ),
        };
        return story(
            v,
            facts,
            ("statements", json!(statements)),
            (query, question),
            answer.into(),
            support.iter().map(|&f| position[f]).collect(),
            strings(&["yes", "no"]),
        );
    }
}

/// qa19: a path of two steps from a source place (never back), then two decoy places each one
/// step from a place already placed, every new place next to only the one it is told against
/// (so the path is the only way); the four facts shuffled; how to go from source to target.
pub fn path_finding(names: &Names<'_>, rng: &mut Rng) -> Story {
    let v = names.vocab;
    let places = rng.sample_indices(v.places.len(), 5);
    let mut at: Vec<(i32, i32)> = vec![(0, 0)];
    let mut links: Vec<(usize, usize, usize)> = Vec::new(); // (new, dir, from)
    let neighbours = |at: &[(i32, i32)], c: (i32, i32)| {
        at.iter()
            .filter(|p| (p.0 - c.0).abs() + (p.1 - c.1).abs() == 1)
            .count()
    };
    while at.len() < 5 {
        let from = if at.len() < 3 {
            at.len() - 1
        } else {
            rng.index(at.len())
        };
        let d = rng.index(4);
        let cell = (at[from].0 + STEP[d].0, at[from].1 + STEP[d].1);
        if !at.contains(&cell) && neighbours(&at, cell) == 1 {
            links.push((at.len(), d, from));
            at.push(cell);
        }
    }
    let (d1, d2) = (links[0].1, links[1].1);
    let mut order: Vec<usize> = (0..4).collect();
    rng.shuffle(&mut order);
    let name = |i: usize| v.places[places[i]].clone();
    let facts = order
        .iter()
        .map(|&l| {
            let (n, d, o) = links[l];
            format!("The {} is {} of the {}.", name(n), DIRECTIONS[d], name(o))
        })
        .collect();
    let relations: Vec<Value> = order
        .iter()
        .map(|&l| {
            let (n, d, o) = links[l];
            relation_json(&name(n), d, &name(o))
        })
        .collect();
    let supporting = (0..4).filter(|&j| order[j] < 2).collect();
    let labels = (0..4)
        .flat_map(|x| {
            (0..4)
                .filter(move |&y| y != (x + 2) % 4)
                .map(move |y| (x, y))
        })
        .map(|(x, y)| format!("{},{}", LETTERS[x], LETTERS[y]))
        .collect();
    story(
        v,
        facts,
        ("relations", json!(relations)),
        (
            json!({"kind": "path", "from": name(0), "to": name(2)}),
            format!("How do you go from the {} to the {}?", name(0), name(2)),
        ),
        format!("{},{}", LETTERS[d1], LETTERS[d2]),
        supporting,
        labels,
    )
}

/// qa20: four people with four different motives; twelve times one person (among those with
/// something left to tell) tells their next step (feels, goes, gets), and the question asks
/// about that step. A story of `n` facts ends at the n-th question.
pub fn motivations(names: &Names<'_>, rng: &mut Rng) -> Story {
    let v = names.vocab;
    let people = v.actors.len().min(MOTIVES.len());
    let motive = rng.sample_indices(MOTIVES.len(), people);
    let n = names.facts.unwrap_or_else(|| 1 + rng.index(3 * people));
    let mut told = vec![0usize; people];
    let mut feel_fact = vec![0usize; people];
    let mut facts = Vec::new();
    let mut statements = Vec::new();
    let mut last = 0;
    for i in 0..n {
        let open: Vec<usize> = (0..people).filter(|&p| told[p] < 3).collect();
        let p = *rng.choose(&open);
        let name = &v.actors[p].0;
        let (feeling, place, thing) = MOTIVES[motive[p]];
        match told[p] {
            0 => {
                feel_fact[p] = i;
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
        told[p] += 1;
        last = p;
    }
    let name = v.actors[last].0.clone();
    let (feeling, place, thing) = MOTIVES[motive[last]];
    let (query, question, answer) = match told[last] {
        1 => (
            json!({"kind": "where_will_go", "actor": name}),
            format!("Where will {name} go?"),
            place,
        ),
        2 => (
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
        vec![feel_fact[last]],
        labels,
    )
}
