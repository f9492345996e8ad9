//! bAbI's story procedures as its Lua tells them (facebookarchive/bAbI-tasks,
//! `lua/babi/tasks/*.lua`, `worlds/world_basic.txt`), written again here for the distribution
//! test, apart from the generator (`babi.rs`) and with their own random numbers. Each returns
//! one BABILong-style sample: a question drawn among the story's questions, with the number of
//! facts told before it and the answer.

use std::collections::BTreeMap;

use super::spec::COUNTS;
use super::{CLASSIC_GIVERS, CLASSIC_OBJECTS, CLASSIC_PLACES};

/// SplitMix64: the reference draws its own numbers, unrelated to the generator's streams.
pub(super) struct Draws(pub(super) u64);

impl Draws {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Lua's `math.random(n)`, less one.
    fn below(&mut self, n: usize) -> usize {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64 * n as f64) as usize
    }

    fn coin(&mut self) -> bool {
        self.below(2) == 0
    }

    /// `utilities.choice(list, k)`: k different indices below `n`, in random order.
    fn choice(&mut self, n: usize, k: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        for i in 0..k {
            let j = i + self.below(n - i);
            v.swap(i, j);
        }
        v.truncate(k);
        v
    }
}

/// `world_basic.txt`: where an object is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum In {
    Place(usize),
    Actor(usize),
}

/// A fact of the basic world.
#[derive(Debug, Clone, Copy)]
enum Clause {
    Teleport(usize, usize),
    Get(usize, usize),
    Drop(usize, usize),
    Give(usize, usize, usize),
}

/// `world_basic.txt` (places bathroom, bedroom, garden, hallway, kitchen, office) with what a
/// reader knows: John in the kitchen, Mary the bedroom, Sandra the garden, Daniel the hallway;
/// apple and milk in the kitchen, football in the garden.
struct World {
    at: [usize; 4],
    obj: [In; 3],
    knows: [Option<usize>; 4],
    obj_knows: [Option<In>; 3],
    history: [Vec<usize>; 3],
}

impl World {
    fn new() -> Self {
        World {
            at: [4, 1, 2, 3],
            obj: [In::Place(4), In::Place(4), In::Place(2)],
            knows: [None; 4],
            obj_knows: [None; 3],
            history: Default::default(),
        }
    }

    /// `Clause.sample_valid`: up to 100 random tries.
    fn sample(&self, d: &mut Draws, kind: usize, actor: Option<usize>) -> Option<Clause> {
        (0..100).find_map(|_| {
            let a = actor.unwrap_or_else(|| d.below(4));
            match kind {
                0 => {
                    let p = d.below(6);
                    (p != self.at[a]).then_some(Clause::Teleport(a, p))
                }
                1 | 2 => {
                    let drop = kind == 2 && d.coin();
                    let o = d.below(3);
                    if drop {
                        (self.obj[o] == In::Actor(a)).then_some(Clause::Drop(a, o))
                    } else {
                        (self.obj[o] == In::Place(self.at[a])).then_some(Clause::Get(a, o))
                    }
                }
                _ => {
                    let (o, r) = (d.below(3), d.below(4));
                    let ok = self.at[a] == self.at[r] && a != r && self.obj[o] == In::Actor(a);
                    ok.then_some(Clause::Give(a, o, r))
                }
            }
        })
    }

    fn known_place(&self, o: usize) -> Option<usize> {
        match self.obj_knows[o]? {
            In::Place(p) => Some(p),
            In::Actor(a) => self.knows[a],
        }
    }

    /// `perform` and `Knowledge:update`.
    fn perform(&mut self, c: Clause) {
        match c {
            Clause::Teleport(a, p) => {
                self.at[a] = p;
                self.knows[a] = Some(p);
            }
            Clause::Get(a, o) => {
                self.obj[o] = In::Actor(a);
                self.obj_knows[o] = Some(In::Actor(a));
            }
            Clause::Drop(a, o) => {
                self.obj[o] = In::Place(self.at[a]);
                self.obj_knows[o] = self.knows[a].map(In::Place);
            }
            Clause::Give(a, o, r) => {
                self.obj[o] = In::Actor(r);
                self.obj_knows[o] = Some(In::Actor(r));
                let (ka, kr) = (self.knows[a], self.knows[r]);
                self.knows[a] = ka.or(kr);
                self.knows[r] = kr.or(ka);
            }
        }
        for o in 0..3 {
            if let Some(p) = self.known_place(o) {
                if self.history[o].last() != Some(&p) {
                    self.history[o].push(p);
                }
            }
        }
    }
}

/// One sample per story: the question drawn among the story's questions.
fn pick(questions: Vec<(usize, String)>, d: &mut Draws) -> (usize, String) {
    let k = d.below(questions.len());
    questions[k].clone()
}

fn place(p: usize) -> String {
    CLASSIC_PLACES[p].to_string()
}

/// WhereIsActor (qa1), IsActorThere (qa6), BasicCoreference (qa11): two moves, a question,
/// five times.
pub(super) fn rounds(qa: u8, d: &mut Draws) -> (usize, String) {
    let mut w = World::new();
    let mut questions = Vec::new();
    for round in 1..=5 {
        let first = w.sample(d, 0, None).unwrap();
        w.perform(first);
        let Clause::Teleport(a, _) = first else {
            unreachable!()
        };
        let second = w.sample(d, 0, (qa == 11).then_some(a)).unwrap();
        w.perform(second);
        let answer = match (qa, second) {
            (11, Clause::Teleport(_, p)) => place(p),
            (6, _) => (if d.coin() { "yes" } else { "no" }).to_string(),
            _ => {
                let known: Vec<usize> = (0..4).filter(|&a| w.knows[a].is_some()).collect();
                place(w.knows[known[d.below(known.len())]].unwrap())
            }
        };
        questions.push((2 * round, answer));
    }
    pick(questions, d)
}

/// Conjunction (qa12) and CompoundCoreference (qa13): pairs move together (unchecked), a
/// question, five times; a pair's move is one sentence.
pub(super) fn pairs(qa: u8, d: &mut Draws) -> (usize, String) {
    let mut at = [4usize, 1, 2, 3];
    let mut questions = Vec::new();
    for round in 1..=5 {
        let mut movers = d.choice(4, 2);
        if qa == 12 {
            movers.extend(d.choice(4, 2));
        } else {
            movers.extend(movers.clone());
        }
        let places = d.choice(6, 2);
        for (i, &a) in movers.iter().enumerate() {
            at[a] = places[i / 2];
        }
        let asked = movers[d.below(if qa == 12 { 4 } else { 2 })];
        questions.push((2 * round, place(at[asked])));
    }
    pick(questions, d)
}

/// WhereIsObject (qa2), WhereWasObject (qa3): a move, get or drop at a time; after the third
/// fact since the last question, a question half the time when one can be asked; five.
pub(super) fn objects(qa: u8, d: &mut Draws) -> (usize, String) {
    let mut w = World::new();
    let (mut facts, mut since) = (0, 0);
    let mut questions = Vec::new();
    while questions.len() < 5 {
        let c = loop {
            let kind = if d.below(3) == 0 { 0 } else { 2 };
            if let Some(c) = w.sample(d, kind, None) {
                break c;
            }
        };
        w.perform(c);
        facts += 1;
        since += 1;
        if since > 2 && d.coin() {
            let answer = if qa == 2 {
                // Objects whose holder's place a reader knows.
                let known: Vec<usize> = (0..3)
                    .filter(|&o| matches!(w.obj[o], In::Actor(a) if w.knows[a].is_some()))
                    .collect();
                (!known.is_empty()).then(|| match w.obj[known[d.below(known.len())]] {
                    In::Actor(a) => place(w.at[a]),
                    In::Place(_) => unreachable!(),
                })
            } else {
                let known: Vec<usize> = (0..3).filter(|&o| w.history[o].len() > 1).collect();
                (!known.is_empty()).then(|| {
                    let h = &w.history[known[d.below(known.len())]];
                    place(h[h.len() - 2])
                })
            };
            if let Some(answer) = answer {
                questions.push((facts, answer));
                since = 0;
            }
        }
    }
    pick(questions, d)
}

/// WhoWhatGave (qa5): facts until a give (not the first since the last question), zero to
/// five more facts about neither its object nor the same giver and recipient, a question;
/// five times. The five question forms of bAbI's released data (its Lua renders three).
/// `apply_extras`: whether those extra facts happen (bAbI's Lua only tells them).
pub(super) fn giving(d: &mut Draws, apply_extras: bool) -> (usize, String) {
    let mut w = World::new();
    // A get (no drops in qa5), a give or a move.
    let sample = |w: &World, d: &mut Draws| loop {
        let kind = [1, 3, 0][d.below(3)];
        if let Some(c) = w.sample(d, kind, None) {
            return c;
        }
    };
    let (mut facts, mut since) = (0, 0);
    let mut questions = Vec::new();
    while questions.len() < 5 {
        let c = sample(&w, d);
        w.perform(c);
        facts += 1;
        since += 1;
        let Clause::Give(a, o, r) = c else { continue };
        if since < 2 {
            continue;
        }
        for _ in 0..d.below(6) {
            let extra = loop {
                let e = sample(&w, d);
                let bad = match e {
                    Clause::Get(_, x) => x == o,
                    Clause::Give(x, y, z) => y == o || (x == a && z == r),
                    _ => false,
                };
                if !bad {
                    break e;
                }
            };
            if apply_extras {
                w.perform(extra);
            }
            facts += 1;
        }
        let name = |x: usize| CLASSIC_GIVERS[x].0.to_string();
        let answer = match d.below(5) {
            0 | 4 => name(a),
            1 | 3 => name(r),
            _ => CLASSIC_OBJECTS[o].to_string(),
        };
        questions.push((facts, answer));
        since = 0;
    }
    pick(questions, d)
}

/// Counting (qa7) and Listing (qa8): a move (1/4), a get or drop (1/4) or a give (1/2); the
/// first question once someone has handled an object (from the second fact), then one every
/// second fact, five in all; about someone who handled an object.
pub(super) fn counting(qa: u8, d: &mut Draws) -> (usize, String) {
    let mut w = World::new();
    let mut handled = [false; 4];
    let mut first: Option<usize> = None;
    let mut questions = Vec::new();
    let mut i = 0;
    while first.is_none_or(|f| i - f < 8) {
        let c = loop {
            let kind = [1, 3, 0, 3][d.below(4)];
            if let Some(c) = w.sample(d, if kind == 1 { 2 } else { kind }, None) {
                if kind != 0 {
                    let (Clause::Get(a, _) | Clause::Drop(a, _) | Clause::Give(a, _, _)) = c else {
                        unreachable!()
                    };
                    handled[a] = true;
                }
                break c;
            }
        };
        i += 1;
        w.perform(c);
        let due = match first {
            None => i > 1 && handled.iter().any(|&h| h),
            Some(f) => (i - f) % 2 == 0,
        };
        if due {
            first.get_or_insert(i);
            let known: Vec<usize> = (0..4).filter(|&a| handled[a]).collect();
            let a = known[d.below(known.len())];
            let held: Vec<&str> = (0..3)
                .filter(|&o| w.obj[o] == In::Actor(a))
                .map(|o| CLASSIC_OBJECTS[o])
                .collect();
            questions.push((i, answer_key(qa, held)));
        }
    }
    pick(questions, d)
}

/// qa7's number word, or qa8's items as a sorted set.
pub(super) fn answer_key(qa: u8, held: Vec<&str>) -> String {
    if qa == 7 {
        return COUNTS[held.len()].to_string();
    }
    let mut held = held;
    held.sort_unstable();
    if held.is_empty() {
        "nothing".into()
    } else {
        held.join(",")
    }
}

/// A reader's knowledge of one actor's place in qa9 and qa10, bAbI's way: entries (place,
/// truth), places exclusive.
#[derive(Default, Clone)]
struct Beliefs(Vec<(usize, bool)>);

impl Beliefs {
    /// `add`, removing while iterating as bAbI's Lua does (the entry after a removed one is
    /// not looked at).
    fn add(&mut self, p: usize, t: bool) {
        let mut i = 0;
        while i < self.0.len() {
            if self.0[i].0 == p || (t && self.0[i].1) {
                self.0.remove(i);
            }
            i += 1;
        }
        self.0.push((p, t));
    }

    fn truth(&self, p: usize) -> Option<bool> {
        if self.0.iter().any(|e| e.0 == p && e.1) {
            Some(true)
        } else if self.0.iter().any(|e| (e.0 == p) != e.1) {
            Some(false)
        } else {
            None
        }
    }
}

/// Negation (qa9) and Indefinite (qa10): two facts and a question, five times. A fact is a
/// move, or says where an actor truly is (qa9: or is not, half the time; qa10: or that they
/// are in one of two places drawn at random, the either rule).
pub(super) fn hedged(qa: u8, d: &mut Draws) -> (usize, String) {
    let mut at = [4usize, 1, 2, 3];
    let mut beliefs: [Beliefs; 4] = Default::default();
    let mut known: Vec<usize> = Vec::new();
    let mut questions = Vec::new();
    for round in 1..=5 {
        for _ in 0..2 {
            let a = match d.below(if qa == 9 { 2 } else { 3 }) {
                0 => {
                    let (a, p) = loop {
                        let (a, p) = (d.below(4), d.below(6));
                        if p != at[a] {
                            break (a, p);
                        }
                    };
                    at[a] = p;
                    beliefs[a] = Beliefs(vec![(p, true)]);
                    a
                }
                1 if qa == 9 => {
                    let yes = d.coin();
                    let a = d.below(4);
                    let p = if yes {
                        at[a]
                    } else {
                        (at[a] + 1 + d.below(5)) % 6
                    };
                    beliefs[a] = Beliefs(vec![(p, yes)]);
                    a
                }
                1 => {
                    let a = d.below(4);
                    beliefs[a] = Beliefs(vec![(at[a], true)]);
                    a
                }
                _ => {
                    let a = d.below(4);
                    let two = d.choice(6, 2);
                    let b = &mut beliefs[a];
                    for j in 0..2 {
                        if let Some(t) = b.truth(two[j]) {
                            b.add(two[1 - j], !t);
                        }
                    }
                    for p in (0..6).filter(|p| !two.contains(p)) {
                        b.add(p, false);
                    }
                    a
                }
            };
            if !known.contains(&a) {
                known.push(a);
            }
        }
        let a = known[d.below(known.len())];
        let answer = if qa == 9 {
            // A true place is asked about half the time, another place otherwise.
            let (_, t) = beliefs[a].0[d.below(beliefs[a].0.len())];
            if t && d.coin() {
                "yes"
            } else {
                "no"
            }
        } else {
            match beliefs[a].truth(d.below(6)) {
                Some(true) => "yes",
                Some(false) => "no",
                None => "maybe",
            }
        };
        questions.push((2 * round, answer.to_string()));
    }
    pick(questions, d)
}

/// Size (qa18): six things in size order; a two-step chain, then two to seven comparisons,
/// each kept only if some pair is still exactly two steps apart (a hundred tries). Returns
/// the story's size and its number of questions (those pairs).
pub(super) fn size_story(d: &mut Draws) -> (usize, usize) {
    let mut chain = d.choice(6, 3);
    chain.sort_unstable();
    let mut edges = vec![(chain[0], chain[1]), (chain[1], chain[2])];
    for _ in 0..2 + d.below(6) {
        let mut n = 0;
        loop {
            n += 1;
            let mut pair = d.choice(6, 2);
            pair.sort_unstable();
            let e = (pair[0], pair[1]);
            if edges.contains(&e) {
                continue;
            }
            edges.push(e);
            if two_apart(&edges) > 0 {
                break;
            }
            edges.pop();
            if n > 100 {
                break;
            }
        }
    }
    (edges.len(), two_apart(&edges))
}

/// Pairs whose shortest chain of comparisons has two steps.
pub(super) fn two_apart(edges: &[(usize, usize)]) -> usize {
    let mut count = 0;
    for x in 0..6 {
        let mut dist = [usize::MAX; 6];
        dist[x] = 0;
        // Edges go from bigger (lower index) to smaller: one pass in index order.
        for u in x..6 {
            if dist[u] == usize::MAX {
                continue;
            }
            for &(a, b) in edges {
                if a == u {
                    dist[b] = dist[b].min(dist[u] + 1);
                }
            }
        }
        count += dist.iter().filter(|&&v| v == 2).count();
    }
    count
}

/// qa20, exactly: the chance that the n-th statement (n = 1..12) is its teller's first, when
/// four people tell three statements each, the teller drawn among those with some left.
pub(super) fn first_statement_odds() -> Vec<f64> {
    let mut states: BTreeMap<[usize; 4], f64> = BTreeMap::from([([4, 0, 0, 0], 1.0)]);
    let mut out = Vec::new();
    for _ in 0..12 {
        let mut next: BTreeMap<[usize; 4], f64> = BTreeMap::new();
        let mut first = 0.0;
        for (s, p) in states {
            let open = (s[0] + s[1] + s[2]) as f64;
            for j in (0..3).filter(|&j| s[j] > 0) {
                let q = p * s[j] as f64 / open;
                if j == 0 {
                    first += q;
                }
                let mut t = s;
                t[j] -= 1;
                t[j + 1] += 1;
                *next.entry(t).or_default() += q;
            }
        }
        out.push(first);
        states = next;
    }
    out
}
