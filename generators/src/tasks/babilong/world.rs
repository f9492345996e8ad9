//! The bAbI world: actors move between places and get, drop and give objects under bAbI's
//! validity rules, while a knowledge tracker records what a reader of the story can know and
//! which facts support it.
//!
//! Entities are indices into the instance's vocabulary ([`super::Vocab`]); sentences are made
//! elsewhere ([`super::render`]), so the simulator is about the world alone.

use crate::rng::Rng;
use crate::GenError;

/// Who a move sentence names: one actor, maybe a second who goes along (qa12, qa13), maybe by
/// pronoun (qa11, qa13). Every combination of the two is a bAbI task, so both are free.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Movers {
    /// The actor the sentence is about.
    pub actor: usize,
    /// qa12, qa13: a second actor who moves along.
    pub companion: Option<usize>,
    /// qa11, qa13: the sentence names its actor(s) by pronoun, referring to the previous fact.
    pub coreference: bool,
}

impl Movers {
    /// One actor, named.
    pub fn alone(actor: usize) -> Self {
        Movers {
            actor,
            companion: None,
            coreference: false,
        }
    }

    /// Everyone who moves: the actor, then the companion.
    pub fn all(self) -> impl Iterator<Item = usize> {
        std::iter::once(self.actor).chain(self.companion)
    }
}

/// One fact of a story, as data. Each variant carries exactly what its sentence states, plus
/// `form`, a random number that picks the sentence's wording (and nothing else).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The movers go to a place.
    Move {
        /// Who goes.
        movers: Movers,
        /// Where to.
        location: usize,
        /// Wording.
        form: u64,
    },
    /// qa9: the actor is not in a place ("no longer" when `form` is 1: the reader last saw
    /// them there). Says nothing of where they are.
    NotIn {
        /// Whom the fact is about.
        actor: usize,
        /// Where they are not.
        location: usize,
        /// Wording.
        form: u64,
    },
    /// qa9, qa10: a statement that the actor is in a place (where they truly are); not a move.
    IsIn {
        /// Whom the fact is about.
        actor: usize,
        /// Where they are.
        location: usize,
        /// Wording.
        form: u64,
    },
    /// qa10: the actor is in one of two places.
    EitherIn {
        /// Whom the fact is about.
        actor: usize,
        /// The first place named.
        location: usize,
        /// The other place named.
        alternative: usize,
        /// Wording.
        form: u64,
    },
    /// The actor picks up an object where both are.
    Get {
        /// Who picks it up.
        actor: usize,
        /// What.
        object: usize,
        /// Wording.
        form: u64,
    },
    /// The actor puts down an object it holds; it stays where the actor is.
    Drop {
        /// Who puts it down.
        actor: usize,
        /// What.
        object: usize,
        /// Wording.
        form: u64,
    },
    /// The actor hands an object it holds to another actor in the same place.
    Give {
        /// The giver.
        actor: usize,
        /// What.
        object: usize,
        /// Who receives it.
        recipient: usize,
        /// Wording.
        form: u64,
    },
}

impl Event {
    /// The actor the sentence is about (the first named, for a move of two).
    pub fn actor(&self) -> usize {
        match *self {
            Event::Move { movers, .. } => movers.actor,
            Event::NotIn { actor, .. }
            | Event::IsIn { actor, .. }
            | Event::EitherIn { actor, .. }
            | Event::Get { actor, .. }
            | Event::Drop { actor, .. }
            | Event::Give { actor, .. } => actor,
        }
    }

    /// The number that picks the sentence's wording.
    pub fn form(&self) -> u64 {
        match *self {
            Event::Move { form, .. }
            | Event::NotIn { form, .. }
            | Event::IsIn { form, .. }
            | Event::EitherIn { form, .. }
            | Event::Get { form, .. }
            | Event::Drop { form, .. }
            | Event::Give { form, .. } => form,
        }
    }

    /// The name of the action stored in `params.events` (the hedged facts are moves there,
    /// marked `negated` or `either`).
    pub fn action(&self) -> &'static str {
        match self {
            Event::Move { .. }
            | Event::NotIn { .. }
            | Event::IsIn { .. }
            | Event::EitherIn { .. } => "move",
            Event::Get { .. } => "get",
            Event::Drop { .. } => "drop",
            Event::Give { .. } => "give",
        }
    }

    /// Whether the sentence names its actors by pronoun.
    pub fn is_coreference(&self) -> bool {
        matches!(self, Event::Move { movers, .. } if movers.coreference)
    }
}

/// Sizes of the world.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    /// Number of actors.
    pub actors: usize,
    /// Number of places.
    pub places: usize,
    /// Number of gettable objects.
    pub objects: usize,
}

/// Relative frequencies of the four actions in a story.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mix {
    /// Weight of moves.
    pub moves: u64,
    /// Weight of gets.
    pub gets: u64,
    /// Weight of drops.
    pub drops: u64,
    /// Weight of gives.
    pub gives: u64,
}

/// Where an object has been, as far as a reader can tell: each entry is a place, the fact that
/// put the object there (or revealed it), and the fact that made its current holder hold it.
#[derive(Debug, Clone, PartialEq)]
pub struct Visit {
    /// The place.
    pub place: usize,
    /// The fact that put the object there, or revealed it there.
    pub fact: usize,
    /// The fact by which the holder that carried it there got it.
    pub carry: Option<usize>,
}

/// What a reader knows of an actor's place in qa9 and qa10, from the actor's latest fact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whereabouts {
    /// In this place.
    At(usize),
    /// Not in this place (and nothing else known).
    Not(usize),
    /// In one of these two places.
    Either(usize, usize),
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
    /// What a reader knows of each actor's place, hedged facts included.
    pub whereabouts: Vec<Option<Whereabouts>>,
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
            whereabouts: vec![None; sizes.actors],
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

    /// Apply an event; returns its index. An event that breaks bAbI's rules (dropping what one
    /// does not hold, or before the story has placed one) is a bug in its maker, reported as
    /// [`GenError::Internal`] rather than guessed around.
    pub fn apply(&mut self, event: Event) -> Result<usize, GenError> {
        let i = self.events.len();
        match event {
            // "Is not in" and "is either in" say where an actor is not, or might be: no place.
            Event::NotIn {
                actor, location, ..
            } => {
                self.last_move[actor] = Some(i);
                self.whereabouts[actor] = Some(Whereabouts::Not(location));
            }
            Event::IsIn {
                actor, location, ..
            } => {
                self.last_move[actor] = Some(i);
                self.whereabouts[actor] = Some(Whereabouts::At(location));
            }
            Event::EitherIn {
                actor,
                location,
                alternative,
                ..
            } => {
                self.last_move[actor] = Some(i);
                self.whereabouts[actor] = Some(Whereabouts::Either(location, alternative));
            }
            Event::Move {
                movers, location, ..
            } => {
                for a in movers.all() {
                    self.actor_at[a] = Some(location);
                    self.last_move[a] = Some(i);
                    self.whereabouts[a] = Some(Whereabouts::At(location));
                    for o in 0..self.sizes.objects {
                        if self.holder[o] == Some(a) {
                            self.visit(o, location, i);
                        }
                    }
                }
            }
            Event::Get { actor, object, .. } => {
                self.holder[object] = Some(actor);
                self.got_by[object] = Some(i);
                self.carrying[actor].push(object);
                self.holding_fact[actor][object] = Some(i);
                if let Some(place) = self.actor_at[actor] {
                    self.visit(object, place, i);
                }
            }
            Event::Drop { actor, object, .. } => {
                let place = self.actor_at[actor].ok_or_else(|| {
                    GenError::Internal(format!("fact {i}: an actor the story never placed drops"))
                })?;
                if self.holder[object] != Some(actor) {
                    return Err(GenError::Internal(format!(
                        "fact {i}: an actor drops an object it does not hold"
                    )));
                }
                self.holder[object] = None;
                self.lies_at[object] = place;
                let mut support = vec![i];
                support.extend(self.last_move[actor]);
                support.sort_unstable();
                self.lies_known[object] = Some(support);
                self.got_by[object] = None;
                self.carrying[actor].retain(|&x| x != object);
                self.holding_fact[actor][object] = Some(i);
            }
            Event::Give {
                actor,
                object,
                recipient,
                ..
            } => {
                self.holder[object] = Some(recipient);
                self.got_by[object] = Some(i);
                self.carrying[actor].retain(|&x| x != object);
                self.carrying[recipient].push(object);
                self.holding_fact[actor][object] = Some(i);
                self.holding_fact[recipient][object] = Some(i);
                if let Some(v) = self.visits[object].last_mut() {
                    // Same place, new holder: later moves follow the recipient.
                    v.carry = Some(i);
                }
            }
        }
        self.events.push(event);
        Ok(i)
    }

    /// A random valid event drawn with the relative frequencies of `mix`. Actions that are not
    /// possible now (nobody holds anything to drop, nobody to give to) fall back to a move.
    pub fn random_event(&self, mix: Mix, rng: &mut Rng) -> Event {
        #[derive(Clone, Copy)]
        enum Kind {
            Move,
            Get,
            Drop,
            Give,
        }
        let placed: Vec<usize> = (0..self.sizes.actors)
            .filter(|&a| self.actor_at[a].is_some())
            .collect();
        let total = mix.moves + mix.gets + mix.drops + mix.gives;
        let mut pick = rng.below(total.max(1));
        let mut kind = Kind::Move;
        for (k, w) in [
            (Kind::Move, mix.moves),
            (Kind::Get, mix.gets),
            (Kind::Drop, mix.drops),
            (Kind::Give, mix.gives),
        ] {
            if pick < w {
                kind = k;
                break;
            }
            pick -= w;
        }
        let form = rng.next_u64();
        match kind {
            Kind::Get => {
                // An actor gets an object only where both are, and only if nobody holds it.
                let options: Vec<(usize, usize)> = placed
                    .iter()
                    .flat_map(|&a| (0..self.sizes.objects).map(move |o| (a, o)))
                    .filter(|&(a, o)| {
                        self.holder[o].is_none() && self.actor_at[a] == Some(self.lies_at[o])
                    })
                    .collect();
                if !options.is_empty() {
                    let (actor, object) = *rng.choose(&options);
                    return Event::Get {
                        actor,
                        object,
                        form,
                    };
                }
            }
            Kind::Drop => {
                let options: Vec<(usize, usize)> = (0..self.sizes.objects)
                    .filter_map(|o| self.holder[o].map(|a| (a, o)))
                    .collect();
                if !options.is_empty() {
                    let (actor, object) = *rng.choose(&options);
                    return Event::Drop {
                        actor,
                        object,
                        form,
                    };
                }
            }
            Kind::Give => {
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
                    let (actor, object, recipient) = *rng.choose(&options);
                    return Event::Give {
                        actor,
                        object,
                        recipient,
                        form,
                    };
                }
            }
            Kind::Move => {}
        }
        let actor = rng.index(self.sizes.actors);
        Event::Move {
            movers: Movers::alone(actor),
            location: self.other_place(self.actor_at[actor], rng),
            form,
        }
    }

    /// One of the actors the story has moved, if any: whom "where is" questions may ask about.
    pub fn random_moved_actor(&self, rng: &mut Rng) -> Option<usize> {
        let moved: Vec<usize> = (0..self.last_move.len())
            .filter(|&a| self.last_move[a].is_some())
            .collect();
        (!moved.is_empty()).then(|| *rng.choose(&moved))
    }

    /// Number of actors.
    pub fn actors(&self) -> usize {
        self.sizes.actors
    }

    /// Number of places.
    pub fn places(&self) -> usize {
        self.sizes.places
    }

    /// Number of objects.
    pub fn objects(&self) -> usize {
        self.sizes.objects
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
                match e {
                    Event::Move {
                        movers, location, ..
                    } => assert_ne!(Some(location), w.actor_at[movers.actor]),
                    Event::Get { actor, object, .. } => {
                        assert!(w.holder[object].is_none());
                        assert_eq!(w.actor_at[actor], Some(w.lies_at[object]));
                    }
                    Event::Drop { actor, object, .. } => {
                        assert_eq!(w.holder[object], Some(actor))
                    }
                    Event::Give {
                        actor,
                        object,
                        recipient,
                        ..
                    } => {
                        assert_ne!(recipient, actor);
                        assert_eq!(w.holder[object], Some(actor));
                        assert_eq!(w.actor_at[recipient], w.actor_at[actor]);
                        assert!(w.actor_at[recipient].is_some());
                    }
                    Event::NotIn { .. } | Event::IsIn { .. } | Event::EitherIn { .. } => {
                        panic!("random_event makes no hedged facts")
                    }
                }
                w.apply(e).unwrap();
                // A held object is wherever its holder is.
                for o in 0..3 {
                    if let (Some(a), Some((place, _))) = (w.holder[o], w.object_place(o)) {
                        assert_eq!(Some(place), w.actor_at[a]);
                    }
                }
            }
        }
    }

    #[test]
    fn a_drop_of_what_one_does_not_hold_is_refused() {
        let sizes = Sizes {
            actors: 2,
            places: 3,
            objects: 1,
        };
        let mut w = World::new(sizes, &mut Rng::from_seed_u64(1, Stream::Content));
        let drop = Event::Drop {
            actor: 0,
            object: 0,
            form: 0,
        };
        assert!(w.apply(drop).is_err());
        let to_kitchen = Event::Move {
            movers: Movers::alone(0),
            location: 1,
            form: 0,
        };
        w.apply(to_kitchen).unwrap();
        assert!(w.apply(drop).is_err());
    }
}
