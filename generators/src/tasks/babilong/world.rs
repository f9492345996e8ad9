//! The bAbI world: actors move between places and get, drop and give objects under bAbI's
//! validity rules, while a knowledge tracker records what a reader of the story can know and
//! which facts support it.
//!
//! Entities are indices into the instance's vocabulary ([`super::Vocab`]); sentences are made
//! elsewhere, so the simulator is about the world alone.

use crate::rng::Rng;

/// What a fact does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The actor goes to a place (or, with `negated`/`either`, is said not to be / to be in one
    /// of two places).
    Move,
    /// The actor picks up an object where both are.
    Get,
    /// The actor puts down an object it holds; it stays where the actor is.
    Drop,
    /// The actor hands an object it holds to another actor in the same place.
    Give,
}

impl Action {
    /// The name stored in `params.events`.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Move => "move",
            Action::Get => "get",
            Action::Drop => "drop",
            Action::Give => "give",
        }
    }
}

/// One fact of a story, as data.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub actor: usize,
    pub action: Action,
    pub location: Option<usize>,
    pub object: Option<usize>,
    pub recipient: Option<usize>,
    /// qa9: the actor is *not* in `location`.
    pub negated: bool,
    /// qa10: the actor is in `location` or in this place.
    pub either: Option<usize>,
    /// qa12, qa13: a second actor who moves along.
    pub conj: Option<usize>,
    /// qa11, qa13: the sentence names its actor(s) by pronoun, referring to the previous fact.
    pub coref: bool,
    /// Picks the sentence form.
    pub form: u64,
}

impl Event {
    /// A plain fact with no modifiers.
    pub fn new(actor: usize, action: Action) -> Self {
        Event {
            actor,
            action,
            location: None,
            object: None,
            recipient: None,
            negated: false,
            either: None,
            conj: None,
            coref: false,
            form: 0,
        }
    }
}

/// Sizes of the world.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    pub actors: usize,
    pub places: usize,
    pub objects: usize,
}

/// Relative frequencies of the four actions in a story.
#[derive(Debug, Clone, Copy)]
pub struct Mix {
    pub moves: u64,
    pub gets: u64,
    pub drops: u64,
    pub gives: u64,
}

/// Where an object has been, as far as a reader can tell: each entry is a place, the fact that
/// put the object there (or revealed it), and the fact that made its current holder hold it.
#[derive(Debug, Clone, PartialEq)]
pub struct Visit {
    pub place: usize,
    pub fact: usize,
    pub carry: Option<usize>,
}

/// The true state of the world, plus what the story so far lets a reader know.
#[derive(Debug, Clone)]
pub struct World {
    sizes: Sizes,
    /// Place of each actor; `None` until the story first moves it (before that an actor does
    /// nothing, so every action happens somewhere the reader knows).
    pub actor_at: Vec<Option<usize>>,
    /// Last fact that moved each actor.
    pub last_move: Vec<Option<usize>>,
    /// Who holds each object.
    pub holder: Vec<Option<usize>>,
    /// Where each object lies when nobody holds it (objects start in hidden places).
    pub lies_at: Vec<usize>,
    /// Whether a reader knows where an unheld object lies, and which facts say so.
    pub lies_known: Vec<Option<Vec<usize>>>,
    /// The fact by which each object's holder got it.
    pub got_by: Vec<Option<usize>>,
    /// For each object, the places a reader can follow it through, in order.
    pub visits: Vec<Vec<Visit>>,
    /// For each actor, the objects it holds in the order it got them.
    pub carrying: Vec<Vec<usize>>,
    /// For each actor and object, the last fact that changed whether it holds the object.
    pub holding_fact: Vec<Vec<Option<usize>>>,
    /// Events applied so far.
    pub events: Vec<Event>,
}

impl World {
    /// A world with objects in hidden random places and no actor placed yet.
    pub fn new(sizes: Sizes, rng: &mut Rng) -> Self {
        World {
            sizes,
            actor_at: vec![None; sizes.actors],
            last_move: vec![None; sizes.actors],
            holder: vec![None; sizes.objects],
            lies_at: (0..sizes.objects)
                .map(|_| rng.index(sizes.places))
                .collect(),
            lies_known: vec![None; sizes.objects],
            got_by: vec![None; sizes.objects],
            visits: vec![Vec::new(); sizes.objects],
            carrying: vec![Vec::new(); sizes.actors],
            holding_fact: vec![vec![None; sizes.objects]; sizes.actors],
            events: Vec::new(),
        }
    }

    /// Where a reader knows object `o` to be, with the supporting facts.
    pub fn object_place(&self, o: usize) -> Option<(usize, Vec<usize>)> {
        match self.holder[o] {
            Some(a) => {
                let place = self.actor_at[a]?;
                let mut support = vec![self.got_by[o]?, self.last_move[a]?];
                support.sort_unstable();
                support.dedup();
                Some((place, support))
            }
            None => self.lies_known[o]
                .as_ref()
                .map(|support| (self.lies_at[o], support.clone())),
        }
    }

    fn visit(&mut self, o: usize, place: usize, fact: usize) {
        let carry = self.got_by[o];
        let v = &mut self.visits[o];
        if v.last().map(|l| l.place) != Some(place) {
            v.push(Visit { place, fact, carry });
        }
    }

    /// Apply a valid event (see [`World::random_event`]); returns its index.
    pub fn apply(&mut self, e: Event) -> usize {
        let i = self.events.len();
        match e.action {
            // "Is not in" and "is either in" say where an actor is not, or might be: no place.
            Action::Move if e.negated || e.either.is_some() => {
                self.last_move[e.actor] = Some(i);
            }
            Action::Move => {
                if let Some(place) = e.location {
                    for a in std::iter::once(e.actor).chain(e.conj) {
                        self.actor_at[a] = Some(place);
                        self.last_move[a] = Some(i);
                        for o in 0..self.sizes.objects {
                            if self.holder[o] == Some(a) {
                                self.visit(o, place, i);
                            }
                        }
                    }
                }
            }
            Action::Get => {
                let o = e.object.unwrap_or_default();
                self.holder[o] = Some(e.actor);
                self.got_by[o] = Some(i);
                self.carrying[e.actor].push(o);
                self.holding_fact[e.actor][o] = Some(i);
                if let Some(place) = self.actor_at[e.actor] {
                    self.visit(o, place, i);
                }
            }
            Action::Drop => {
                let o = e.object.unwrap_or_default();
                let place = self.actor_at[e.actor].unwrap_or_default();
                self.holder[o] = None;
                self.lies_at[o] = place;
                let mut support = vec![i];
                support.extend(self.last_move[e.actor]);
                support.sort_unstable();
                self.lies_known[o] = Some(support);
                self.got_by[o] = None;
                self.carrying[e.actor].retain(|&x| x != o);
                self.holding_fact[e.actor][o] = Some(i);
            }
            Action::Give => {
                let o = e.object.unwrap_or_default();
                let r = e.recipient.unwrap_or_default();
                self.holder[o] = Some(r);
                self.got_by[o] = Some(i);
                self.carrying[e.actor].retain(|&x| x != o);
                self.carrying[r].push(o);
                self.holding_fact[e.actor][o] = Some(i);
                self.holding_fact[r][o] = Some(i);
                if let Some(v) = self.visits[o].last_mut() {
                    // Same place, new holder: later moves follow the recipient.
                    v.carry = Some(i);
                }
            }
        }
        self.events.push(e);
        i
    }

    /// A random valid event drawn with the relative frequencies of `mix`. Actions that are not
    /// possible now (nobody holds anything to drop, nobody to give to) fall back to a move.
    pub fn random_event(&self, mix: Mix, rng: &mut Rng) -> Event {
        let placed: Vec<usize> = (0..self.sizes.actors)
            .filter(|&a| self.actor_at[a].is_some())
            .collect();
        let total = mix.moves + mix.gets + mix.drops + mix.gives;
        let mut pick = rng.below(total.max(1));
        let mut kind = Action::Move;
        for (k, w) in [
            (Action::Move, mix.moves),
            (Action::Get, mix.gets),
            (Action::Drop, mix.drops),
            (Action::Give, mix.gives),
        ] {
            if pick < w {
                kind = k;
                break;
            }
            pick -= w;
        }
        let form = rng.next_u64();
        match kind {
            Action::Get => {
                // An actor gets an object only where both are, and only if nobody holds it.
                let options: Vec<(usize, usize)> = placed
                    .iter()
                    .flat_map(|&a| (0..self.sizes.objects).map(move |o| (a, o)))
                    .filter(|&(a, o)| {
                        self.holder[o].is_none() && self.actor_at[a] == Some(self.lies_at[o])
                    })
                    .collect();
                if !options.is_empty() {
                    let (a, o) = *rng.choose(&options);
                    let mut e = Event::new(a, Action::Get);
                    e.object = Some(o);
                    e.form = form;
                    return e;
                }
            }
            Action::Drop => {
                let options: Vec<(usize, usize)> = (0..self.sizes.objects)
                    .filter_map(|o| self.holder[o].map(|a| (a, o)))
                    .collect();
                if !options.is_empty() {
                    let (a, o) = *rng.choose(&options);
                    let mut e = Event::new(a, Action::Drop);
                    e.object = Some(o);
                    e.form = form;
                    return e;
                }
            }
            Action::Give => {
                // Giver holds the object; recipient is someone else in the same place.
                let mut options = Vec::new();
                for o in 0..self.sizes.objects {
                    if let Some(g) = self.holder[o] {
                        for &r in &placed {
                            if r != g && self.actor_at[r] == self.actor_at[g] {
                                options.push((g, o, r));
                            }
                        }
                    }
                }
                if !options.is_empty() {
                    let (g, o, r) = *rng.choose(&options);
                    let mut e = Event::new(g, Action::Give);
                    e.object = Some(o);
                    e.recipient = Some(r);
                    e.form = form;
                    return e;
                }
            }
            Action::Move => {}
        }
        let a = rng.index(self.sizes.actors);
        let mut e = Event::new(a, Action::Move);
        e.location = Some(self.other_place(self.actor_at[a], rng));
        e.form = form;
        e
    }

    /// One of the actors the story has moved, if any: whom "where is" questions may ask about.
    pub fn random_moved_actor(&self, rng: &mut Rng) -> Option<usize> {
        let moved: Vec<usize> = (0..self.last_move.len())
            .filter(|&a| self.last_move[a].is_some())
            .collect();
        (!moved.is_empty()).then(|| *rng.choose(&moved))
    }

    /// Number of places.
    pub fn places(&self) -> usize {
        self.sizes.places
    }

    /// A place other than `current` (moving to where one already is is not a move).
    pub fn other_place(&self, current: Option<usize>, rng: &mut Rng) -> usize {
        let n = self.sizes.places;
        match current {
            None => rng.index(n),
            Some(c) => (c + 1 + rng.index(n - 1)) % n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    #[test]
    fn random_stories_obey_the_rules() {
        let sizes = Sizes {
            actors: 4,
            places: 6,
            objects: 3,
        };
        let mix = Mix {
            moves: 3,
            gets: 3,
            drops: 2,
            gives: 3,
        };
        for seed in 0..50 {
            let mut rng = Rng::from_seed_u64(seed, Stream::Content);
            let mut w = World::new(sizes, &mut rng);
            for _ in 0..200 {
                let e = w.random_event(mix, &mut rng);
                match e.action {
                    Action::Move => assert_ne!(e.location, w.actor_at[e.actor]),
                    Action::Get => {
                        let o = e.object.unwrap();
                        assert!(w.holder[o].is_none());
                        assert_eq!(w.actor_at[e.actor], Some(w.lies_at[o]));
                    }
                    Action::Drop => assert_eq!(w.holder[e.object.unwrap()], Some(e.actor)),
                    Action::Give => {
                        let r = e.recipient.unwrap();
                        assert_ne!(r, e.actor);
                        assert_eq!(w.holder[e.object.unwrap()], Some(e.actor));
                        assert_eq!(w.actor_at[r], w.actor_at[e.actor]);
                        assert!(w.actor_at[r].is_some());
                    }
                }
                w.apply(e);
                // A held object is wherever its holder is.
                for o in 0..3 {
                    if let (Some(a), Some((place, _))) = (w.holder[o], w.object_place(o)) {
                        assert_eq!(Some(place), w.actor_at[a]);
                    }
                }
            }
        }
    }
}
