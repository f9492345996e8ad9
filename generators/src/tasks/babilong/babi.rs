//! bAbI's own story procedures for the walk tasks (qa1–qa3, qa5–qa13), followed rule by rule:
//! the world starts where bAbI's world puts everyone (actors' start places hidden from the
//! reader, so an actor may pick something up before any move), facts are drawn the way bAbI
//! draws them (a random actor, action and arguments, tried until one is valid), questions come
//! when bAbI asks them, and a reader's knowledge follows bAbI's knowledge rules.
//!
//! bAbI tells five (or more) questions per story; BABILong turns each question into one sample
//! holding every fact told before it. A story here is one such sample: the question drawn
//! uniformly among the story's questions, and the facts up to it.
//!
//! One departure, on purpose: in qa5 bAbI never applies the facts it tells between a give and
//! the question about it (its world forgets them), so later facts can contradict them. Here
//! every told fact happens.

use super::babi_words::{word, Q};
use super::questions::Asked;
use super::world::{Event, Movers};
use super::Vocab;
use crate::rng::Rng;

/// Where bAbI's world starts each of the four actors (indices into the places
/// bathroom, bedroom, garden, hallway, kitchen, office): kitchen, bedroom, garden, hallway.
pub const ACTOR_START: [usize; 4] = [4, 1, 2, 3];
/// Where bAbI's world puts the objects apple, milk, football: kitchen, kitchen, garden.
pub const OBJECT_START: [usize; 3] = [4, 4, 2];
/// Questions per bAbI story of the walk tasks (qa7, qa8 also ask five).
pub const QUESTIONS: usize = 5;
/// Tries bAbI gives a random clause before drawing a new kind of action.
const TRIES: usize = 100;

/// Where an object is: held by an actor or lying in a place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    Actor(usize),
    Place(usize),
}

/// Union of two supports, ascending.
fn union(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut v: Vec<usize> = a.iter().chain(b).copied().collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// A reader's knowledge of one actor's place with truth values, as bAbI keeps it for qa9 and
/// qa10 (places are exclusive: being in one means not being in the others).
#[derive(Debug, Clone, Default)]
pub struct Belief(Vec<(usize, bool, Vec<usize>)>);

impl Belief {
    fn set(&mut self, place: usize, truth: bool, support: Vec<usize>) {
        self.0 = vec![(place, truth, support)];
    }

    fn add(&mut self, place: usize, truth: bool, support: Vec<usize>) {
        self.0.retain(|e| e.0 != place && !(truth && e.1));
        self.0.push((place, truth, support));
    }

    /// Whether the actor is in `place` (`None`: unknown), with the facts that say so.
    pub fn truth(&self, place: usize) -> Option<(bool, Vec<usize>)> {
        let is_true = self.0.iter().find(|e| e.0 == place && e.1);
        let is_false = self
            .0
            .iter()
            .rev()
            .find(|e| (e.0 == place && !e.1) || (e.0 != place && e.1));
        match (is_true, is_false) {
            (None, None) => None,
            (t, f) => {
                let s = union(
                    t.map_or(&[][..], |e| &e.2[..]),
                    f.map_or(&[][..], |e| &e.2[..]),
                );
                Some((t.is_some(), s))
            }
        }
    }
}

/// bAbI's basic world: four actors, six places, three objects, and what a reader knows.
pub struct Basic {
    /// True place of each actor.
    pub actor_at: Vec<usize>,
    obj: Vec<At>,
    /// What a reader knows of each actor's place, and the facts that say so.
    pub actor_known: Vec<Option<(usize, Vec<usize>)>>,
    obj_known: Vec<Option<(At, Vec<usize>)>>,
    /// Each object's known places over the story, with the facts that first showed each.
    history: Vec<Vec<(usize, Vec<usize>)>>,
    /// qa9, qa10: beliefs with truth values.
    pub belief: Vec<Belief>,
    /// The facts told.
    pub events: Vec<Event>,
    places: usize,
}

impl Basic {
    /// bAbI's start: everyone where its world file puts them, nothing known.
    pub fn new(vocab: &Vocab) -> Self {
        let actors = vocab.actors.len();
        Basic {
            actor_at: (0..actors).map(|a| ACTOR_START[a % 4]).collect(),
            obj: (0..vocab.objects.len())
                .map(|o| At::Place(OBJECT_START[o % 3]))
                .collect(),
            actor_known: vec![None; actors],
            obj_known: vec![None; vocab.objects.len()],
            history: vec![Vec::new(); vocab.objects.len()],
            belief: vec![Belief::default(); actors],
            events: Vec::new(),
            places: vocab.places.len(),
        }
    }

    fn actors(&self) -> usize {
        self.actor_at.len()
    }

    fn objects(&self) -> usize {
        self.obj.len()
    }

    /// Where a reader knows object `o` to be, with the supporting facts.
    fn object_known(&self, o: usize) -> Option<(usize, Vec<usize>)> {
        match self.obj_known[o].as_ref()? {
            (At::Place(p), s) => Some((*p, s.clone())),
            (At::Actor(a), s) => {
                let (p, sa) = self.actor_known[*a].as_ref()?;
                Some((*p, union(s, sa)))
            }
        }
    }

    /// Tell and apply one fact.
    pub fn apply(&mut self, event: Event) {
        let i = self.events.len();
        match event {
            Event::Move {
                movers, location, ..
            } => {
                for a in movers.all() {
                    self.actor_at[a] = location;
                    self.actor_known[a] = Some((location, vec![i]));
                    self.belief[a].set(location, true, vec![i]);
                }
            }
            Event::IsIn {
                actor, location, ..
            } => {
                self.actor_known[actor] = Some((location, vec![i]));
                self.belief[actor].set(location, true, vec![i]);
            }
            Event::NotIn {
                actor, location, ..
            } => {
                self.actor_known[actor] = None;
                self.belief[actor].set(location, false, vec![i]);
            }
            Event::EitherIn {
                actor,
                location,
                alternative,
                ..
            } => {
                self.actor_known[actor] = None;
                let pair = [location, alternative];
                let b = &mut self.belief[actor];
                for k in 0..2 {
                    if let Some((t, s)) = b.truth(pair[k]) {
                        b.add(pair[1 - k], !t, union(&[i], &s));
                    }
                }
                for p in (0..self.places).filter(|p| !pair.contains(p)) {
                    b.add(p, false, vec![i]);
                }
            }
            Event::Get { actor, object, .. } => {
                self.obj[object] = At::Actor(actor);
                self.obj_known[object] = Some((At::Actor(actor), vec![i]));
            }
            Event::Drop { actor, object, .. } => {
                self.obj[object] = At::Place(self.actor_at[actor]);
                self.obj_known[object] = self.actor_known[actor]
                    .as_ref()
                    .map(|(p, s)| (At::Place(*p), union(s, &[i])));
            }
            Event::Give {
                actor,
                object,
                recipient,
                ..
            } => {
                self.obj[object] = At::Actor(recipient);
                // bAbI records who holds it but no supporting fact for that.
                self.obj_known[object] = Some((At::Actor(recipient), Vec::new()));
                // Giver and recipient are in one place: each learns the other's.
                let (ka, kr) = (
                    self.actor_known[actor].clone(),
                    self.actor_known[recipient].clone(),
                );
                if ka.is_none() {
                    self.actor_known[actor] = kr.as_ref().map(|(p, s)| (*p, union(s, &[i])));
                }
                if kr.is_none() {
                    self.actor_known[recipient] = ka.map(|(p, s)| (p, union(&s, &[i])));
                }
            }
        }
        self.events.push(event);
        for o in 0..self.objects() {
            if let Some((p, s)) = self.object_known(o) {
                if self.history[o].last().map(|h| h.0) != Some(p) {
                    self.history[o].push((p, s));
                }
            }
        }
    }

    /// A random valid move, bAbI's way: any actor, any place but where they are.
    fn teleport(&self, rng: &mut Rng, actors: Option<usize>) -> Option<Event> {
        (0..TRIES).find_map(|_| {
            let actor = actors.unwrap_or_else(|| rng.index(self.actors()));
            let location = rng.index(self.places);
            let form = rng.next_u64();
            (location != self.actor_at[actor]).then_some(Event::Move {
                movers: Movers::alone(actor),
                location,
                form,
            })
        })
    }

    /// A random valid get (or, with `drops`, get or drop) of an object.
    fn get_or_drop(&self, rng: &mut Rng, drops: bool) -> Option<Event> {
        (0..TRIES).find_map(|_| {
            let actor = rng.index(self.actors());
            let drop = drops && rng.chance(1, 2);
            let object = rng.index(self.objects());
            let form = rng.next_u64();
            if drop {
                (self.obj[object] == At::Actor(actor)).then_some(Event::Drop {
                    actor,
                    object,
                    form,
                })
            } else {
                (self.obj[object] == At::Place(self.actor_at[actor])).then_some(Event::Get {
                    actor,
                    object,
                    form,
                })
            }
        })
    }

    /// A random valid give: giver holds it, recipient someone else in the same place.
    fn give(&self, rng: &mut Rng) -> Option<Event> {
        (0..TRIES).find_map(|_| {
            let actor = rng.index(self.actors());
            let object = rng.index(self.objects());
            let recipient = rng.index(self.actors());
            let form = rng.next_u64();
            (actor != recipient
                && self.actor_at[actor] == self.actor_at[recipient]
                && self.obj[object] == At::Actor(actor))
            .then_some(Event::Give {
                actor,
                object,
                recipient,
                form,
            })
        })
    }
}

/// The story and question of one bAbI sample of walk task `qa`: the question drawn among the
/// story's questions, the facts told before it.
pub fn story(qa: u8, vocab: &Vocab, rng: &mut Rng) -> (Vec<Event>, Asked) {
    let k = rng.index(QUESTIONS);
    let mut w = Basic::new(vocab);
    let q = match qa {
        1 | 6 | 11 => rounds(&mut w, k, qa, rng),
        9 | 10 => hedged(&mut w, k, qa == 10, rng),
        12 | 13 => pairs(&mut w, k, qa == 13, rng),
        2 | 3 => objects(&mut w, k, qa == 3, rng),
        5 => giving(&mut w, k, rng),
        _ => counting(&mut w, k, rng),
    };
    let asked = word(q, qa, &w.events, vocab, rng);
    (w.events, asked)
}

/// qa1, qa6, qa11: two moves, then a question, five times (qa11: a move, then the same actor
/// moves again, named by pronoun). Question `k` ends the story.
fn rounds(w: &mut Basic, k: usize, qa: u8, rng: &mut Rng) -> Q {
    for _ in 0..=k {
        let first = w.teleport(rng, None).expect("every actor can move");
        w.apply(first);
        let second = if qa == 11 {
            let a = first.actor();
            match w.teleport(rng, Some(a)).expect("every actor can move") {
                Event::Move { location, form, .. } => Event::Move {
                    movers: Movers {
                        coreference: true,
                        ..Movers::alone(a)
                    },
                    location,
                    form,
                },
                other => other,
            }
        } else {
            w.teleport(rng, None).expect("every actor can move")
        };
        w.apply(second);
    }
    let i = w.events.len() - 1;
    let a = if qa == 11 {
        w.events[i].actor()
    } else {
        let known: Vec<usize> = (0..w.actors())
            .filter(|&a| w.actor_known[a].is_some())
            .collect();
        *rng.choose(&known)
    };
    let (p, mut support) = w.actor_known[a].clone().expect("a moved actor");
    if qa == 11 {
        support = vec![i - 1, i];
    }
    if qa == 6 {
        let yes = rng.chance(1, 2);
        let asked = if yes {
            p
        } else {
            (p + 1 + rng.index(w.places - 1)) % w.places
        };
        return Q::IsIn(a, asked, if yes { "yes" } else { "no" }, support);
    }
    Q::WhereIs(a, p, support)
}

/// qa9, qa10: two facts, a question, five times. A fact is a move, or states where an actor
/// truly is (qa9: or is not; qa10: or names two places the actor is in one of).
fn hedged(w: &mut Basic, k: usize, either: bool, rng: &mut Rng) -> Q {
    let mut known: Vec<usize> = Vec::new();
    let mut maybe: Vec<Option<usize>> = vec![None; w.actors()];
    for _ in 0..=k {
        for _ in 0..2 {
            let kinds = if either { 3 } else { 2 };
            let event = loop {
                let form = rng.next_u64();
                match rng.index(kinds) {
                    0 => {
                        if let Some(e) = w.teleport(rng, None) {
                            break e;
                        }
                    }
                    1 if either => {
                        let actor = rng.index(w.actors());
                        break Event::IsIn {
                            actor,
                            location: w.actor_at[actor],
                            form,
                        };
                    }
                    1 => {
                        let actor = rng.index(w.actors());
                        let at = w.actor_at[actor];
                        if rng.chance(1, 2) {
                            break Event::IsIn {
                                actor,
                                location: at,
                                form,
                            };
                        }
                        let location = (at + 1 + rng.index(w.places - 1)) % w.places;
                        // "no longer" where the reader last saw them there.
                        let seen = w.actor_known[actor].as_ref().map(|x| x.0) == Some(location);
                        break Event::NotIn {
                            actor,
                            location,
                            form: u64::from(seen),
                        };
                    }
                    _ => {
                        let actor = rng.index(w.actors());
                        let location = rng.index(w.places);
                        let alternative = (location + 1 + rng.index(w.places - 1)) % w.places;
                        break Event::EitherIn {
                            actor,
                            location,
                            alternative,
                            form,
                        };
                    }
                }
            };
            let a = event.actor();
            if !known.contains(&a) {
                known.push(a);
            }
            if matches!(event, Event::EitherIn { .. }) {
                maybe[a] = Some(w.events.len());
            }
            w.apply(event);
        }
    }
    let a = *rng.choose(&known);
    if either {
        let p = rng.index(w.places);
        return match w.belief[a].truth(p) {
            Some((t, s)) => Q::IsIn(a, p, if t { "yes" } else { "no" }, s),
            None => Q::IsIn(a, p, "maybe", maybe[a].into_iter().collect()),
        };
    }
    let (p, t, s) = w.belief[a].0[0].clone();
    if t && rng.chance(1, 2) {
        let other = (p + 1 + rng.index(w.places - 1)) % w.places;
        return Q::IsIn(a, other, "no", s);
    }
    Q::IsIn(a, p, if t { "yes" } else { "no" }, s)
}

/// qa12, qa13: two pairs go to two places (qa13: one pair goes to one place, then "they" go
/// on to another), then a question, five times. bAbI does not check these moves.
fn pairs(w: &mut Basic, k: usize, coreference: bool, rng: &mut Rng) -> Q {
    let mut asked = Vec::new();
    for _ in 0..=k {
        let first = rng.sample_indices(w.actors(), 2);
        let second = if coreference {
            first.clone()
        } else {
            rng.sample_indices(w.actors(), 2)
        };
        let places = rng.sample_indices(w.places, 2);
        for (j, (pair, place)) in [(&first, places[0]), (&second, places[1])]
            .into_iter()
            .enumerate()
        {
            let movers = Movers {
                actor: pair[0],
                companion: Some(pair[1]),
                coreference: coreference && j == 1,
            };
            let form = rng.next_u64();
            w.apply(Event::Move {
                movers,
                location: place,
                form,
            });
        }
        asked = first.into_iter().chain(second).collect();
    }
    let a = asked[rng.index(if coreference { 2 } else { 4 })];
    let (p, mut support) = w.actor_known[a].clone().expect("a moved actor");
    if coreference {
        let i = w.events.len() - 1;
        support = vec![i - 1, i];
    }
    Q::WhereIs(a, p, support)
}

/// qa2, qa3: a move, get or drop at a time; after the third fact since the last question, a
/// question half the time, when one can be asked.
fn objects(w: &mut Basic, k: usize, before: bool, rng: &mut Rng) -> Q {
    let mut questions = 0;
    let mut since = 0;
    loop {
        let event = loop {
            let e = if rng.index(3) == 0 {
                w.teleport(rng, None)
            } else {
                w.get_or_drop(rng, true)
            };
            if let Some(e) = e {
                break e;
            }
        };
        w.apply(event);
        since += 1;
        if since > 2 && rng.chance(1, 2) {
            let q = if before {
                let known: Vec<usize> = (0..w.objects())
                    .filter(|&o| w.history[o].len() > 1)
                    .collect();
                (!known.is_empty()).then(|| {
                    let o = *rng.choose(&known);
                    let h = &w.history[o];
                    let (last, prev) = (&h[h.len() - 1], &h[h.len() - 2]);
                    Q::WhereWas(o, last.0, prev.0, union(&last.1, &prev.1))
                })
            } else {
                let known: Vec<usize> = (0..w.objects())
                    .filter(|&o| match w.obj[o] {
                        At::Actor(a) => w.actor_known[a].is_some() && w.obj_known[o].is_some(),
                        At::Place(_) => false,
                    })
                    .collect();
                (!known.is_empty()).then(|| {
                    let o = *rng.choose(&known);
                    let (p, s) = w.object_known(o).expect("a located object");
                    Q::WhereObject(o, p, s)
                })
            };
            if let Some(q) = q {
                if questions == k {
                    return q;
                }
                questions += 1;
                since = 0;
            }
        }
    }
}

/// A qa5 fact: a move, a get or a give.
fn giving_fact(w: &Basic, rng: &mut Rng) -> Event {
    loop {
        let e = match rng.index(3) {
            0 => w.teleport(rng, None),
            1 => w.get_or_drop(rng, false),
            _ => w.give(rng),
        };
        if let Some(e) = e {
            return e;
        }
    }
}

/// qa5: facts until a give (not the first fact since the last question), then zero to five
/// facts that say nothing more of that object and no other give between the same two, then
/// the question about the give.
fn giving(w: &mut Basic, k: usize, rng: &mut Rng) -> Q {
    let mut questions = 0;
    let mut since = 0;
    loop {
        let event = giving_fact(w, rng);
        w.apply(event);
        since += 1;
        let Event::Give {
            actor,
            object,
            recipient,
            ..
        } = event
        else {
            continue;
        };
        if since < 2 {
            continue;
        }
        let fact = w.events.len() - 1;
        for _ in 1..=rng.index(6) {
            let extra = loop {
                let e = giving_fact(w, rng);
                let names_object = match e {
                    Event::Get { object: o, .. } | Event::Give { object: o, .. } => o == object,
                    _ => false,
                };
                let same_pair = matches!(e, Event::Give { actor: a, recipient: r, .. }
                    if a == actor && r == recipient);
                if !names_object && !same_pair {
                    break e;
                }
            };
            w.apply(extra);
        }
        if questions == k {
            return Q::Gave(fact);
        }
        questions += 1;
        since = 0;
    }
}

/// qa7, qa8: a move, a get or drop, or (as likely as both) a give; the first question once
/// someone has handled an object (from the second fact on), then one every second fact.
fn counting(w: &mut Basic, k: usize, rng: &mut Rng) -> Q {
    let mut known: Vec<usize> = Vec::new();
    let mut support: Vec<Vec<usize>> = vec![Vec::new(); w.actors()];
    let mut first: Option<usize> = None;
    let mut questions = 0;
    loop {
        let event = loop {
            let e = match rng.index(4) {
                0 => w.teleport(rng, None),
                1 => w.get_or_drop(rng, true),
                _ => w.give(rng),
            };
            if let Some(e) = e {
                break e;
            }
        };
        let i = w.events.len();
        if !matches!(event, Event::Move { .. }) {
            let a = event.actor();
            if !known.contains(&a) {
                known.push(a);
            }
            support[a].push(i);
        }
        w.apply(event);
        let n = i + 1;
        let due = match first {
            None => n > 1 && !known.is_empty(),
            Some(f) => (n - f).is_multiple_of(2),
        };
        if due {
            first.get_or_insert(n);
            let a = *rng.choose(&known);
            if questions == k {
                let mut held: Vec<usize> = (0..w.objects())
                    .filter(|&o| matches!(w.obj_known[o], Some((At::Actor(x), _)) if x == a))
                    .collect();
                // In the order they came to the actor.
                let came = |o: usize| {
                    w.events.iter().rposition(|e| match *e {
                        Event::Get { actor, object, .. } => actor == a && object == o,
                        Event::Give {
                            object, recipient, ..
                        } => recipient == a && object == o,
                        _ => false,
                    })
                };
                held.sort_by_key(|&o| came(o));
                return Q::Carrying(a, held, support[a].clone());
            }
            questions += 1;
        }
    }
}
