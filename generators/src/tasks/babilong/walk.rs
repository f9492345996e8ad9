//! Walk stories (qa1–qa3, qa5–qa13): facts drawn one at a time from the task's event source
//! and applied to the [`World`], until the story has its size and a question of the task's
//! family can be asked about it.

use super::questions::{ask, Asked};
use super::spec::{Events, Question};
use super::world::{Event, Movers, Sizes, Whereabouts, World};
use super::Vocab;
use crate::rng::Rng;
use crate::GenError;

/// A finished walk: the world with its facts, and the question.
pub struct Walked {
    /// The world after the last fact; `world.events` are the story's facts.
    pub world: World,
    /// The question, answer and supporting facts.
    pub asked: Asked,
}

/// Stories drawn before [`walk`] gives up. At the smallest size each task accepts
/// ([`super::spec::TaskSpec::min_facts`]) at least one random story in 200 can be asked about
/// (qa5's four facts are the rarest), so running out has odds below e^-100.
pub const MAX_DRAWS: usize = 20_000;

/// A story of exactly `facts` facts from `events` that a question of family `question` can be
/// asked about. Stories are drawn whole and one the question does not fit is drawn again, so
/// every story size asked for is the size told (growing a story until a question fits would
/// overshoot it) and the last fact is no likelier than any other to be the one asked about.
/// `None` if no story of that size could be asked about in [`MAX_DRAWS`] draws.
pub fn walk(
    events: Events,
    question: Question,
    vocab: &Vocab,
    facts: usize,
    rng: &mut Rng,
) -> Result<Option<Walked>, GenError> {
    let sizes = Sizes {
        actors: vocab.actors.len(),
        places: vocab.places.len(),
        objects: vocab.objects.len(),
    };
    for _ in 0..MAX_DRAWS {
        let mut world = World::new(sizes, rng);
        for _ in 0..facts {
            let event = next_event(events, &world, rng);
            world.apply(event)?;
        }
        if let Some(asked) = ask(question, &world, vocab, rng) {
            return Ok(Some(Walked { world, asked }));
        }
    }
    Ok(None)
}

/// The next fact from `events`, given the story so far.
pub fn next_event(events: Events, world: &World, rng: &mut Rng) -> Event {
    match events {
        Events::Mixed(mix) => world.random_event(mix, rng),
        Events::Negations | Events::Alternatives => hedged(events, world, rng),
        Events::Coreferences => coreference(world, rng),
        Events::Companions { coreference } => companions(coreference, world, rng),
    }
}

/// qa9, qa10: half the facts are plain moves; the others say where an actor is not (qa9,
/// "no longer" where the reader last saw them) or is one of two places (qa10).
fn hedged(events: Events, world: &World, rng: &mut Rng) -> Event {
    let actor = rng.index(world.actors());
    let form = rng.next_u64();
    let at = match world.whereabouts[actor] {
        Some(Whereabouts::At(p)) => Some(p),
        _ => None,
    };
    if rng.chance(1, 2) {
        Event::Move {
            movers: Movers::alone(actor),
            location: world.other_place(at, rng),
            form,
        }
    } else if events == Events::Negations {
        let location = match at {
            Some(p) if rng.chance(1, 2) => p,
            _ => rng.index(world.places()),
        };
        Event::NotIn {
            actor,
            location,
            form: u64::from(at == Some(location)),
        }
    } else {
        let location = rng.index(world.places());
        let alternative = world.other_place(Some(location), rng);
        Event::EitherIn {
            actor,
            location,
            alternative,
            form,
        }
    }
}

/// qa11: a move, half the time by the previous fact's actor named by pronoun (never two
/// pronoun facts in a row, so each refers to a named actor).
fn coreference(world: &World, rng: &mut Rng) -> Event {
    let movers = match world.events.last() {
        Some(prev) if !prev.is_coreference() && rng.chance(1, 2) => Movers {
            coreference: true,
            ..Movers::alone(prev.actor())
        },
        _ => Movers::alone(rng.index(world.actors())),
    };
    let location = world.other_place(world.actor_at[movers.actor], rng);
    Event::Move {
        movers,
        location,
        form: rng.next_u64(),
    }
}

/// qa12, qa13: a move of one actor or (two times in three) of two together, to a place
/// neither is in; with `coreference` (qa13), a named pair's next move may say "they".
fn companions(coreference: bool, world: &World, rng: &mut Rng) -> Event {
    let actors = world.actors();
    let previous_pair = match world.events.last() {
        Some(&Event::Move { movers, .. })
            if coreference && movers.companion.is_some() && !movers.coreference =>
        {
            Some(movers)
        }
        _ => None,
    };
    let movers = match previous_pair {
        Some(pair) if rng.chance(1, 2) => Movers {
            coreference: true,
            ..pair
        },
        _ => {
            let actor = rng.index(actors);
            let companion = rng
                .chance(2, 3)
                .then(|| (actor + 1 + rng.index(actors - 1)) % actors);
            Movers {
                actor,
                companion,
                coreference: false,
            }
        }
    };
    let here: Vec<usize> = movers.all().filter_map(|a| world.actor_at[a]).collect();
    let free: Vec<usize> = (0..world.places()).filter(|p| !here.contains(p)).collect();
    Event::Move {
        movers,
        location: *rng.choose(&free),
        form: rng.next_u64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;
    use crate::tasks::babilong::spec::{Plot, SPECS};

    fn classic() -> Vocab {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Vocab {
            actors: super::super::CLASSIC_ACTORS
                .iter()
                .map(|&(n, he)| (n.to_string(), he))
                .collect(),
            places: own(&super::super::CLASSIC_PLACES),
            objects: own(&super::super::CLASSIC_OBJECTS),
        }
    }

    /// Every walk task tells exactly the size asked for, from its smallest size up; one fact
    /// fewer than the smallest can never be asked about.
    #[test]
    fn stories_have_exactly_the_size_asked_and_the_minimum_is_true() {
        let vocab = classic();
        for spec in &SPECS {
            let Plot::Walk { events, question } = spec.plot else {
                continue;
            };
            let min = spec.min_facts as usize;
            for facts in [min, min + 1, min + 2, 10, 37, 200] {
                for seed in 0..40 {
                    let mut rng = Rng::from_seed_u64(seed, Stream::Content);
                    let walked = walk(events, question, &vocab, facts, &mut rng)
                        .unwrap()
                        .unwrap_or_else(|| panic!("qa{} at {facts} facts", spec.qa));
                    assert_eq!(walked.world.events.len(), facts, "qa{}", spec.qa);
                    assert!(walked.asked.supporting.iter().all(|&f| f < facts));
                }
            }
            let mut rng = Rng::from_seed_u64(7, Stream::Content);
            for _ in 0..3000 {
                let mut world = World::new(
                    Sizes {
                        actors: 4,
                        places: 6,
                        objects: 3,
                    },
                    &mut rng,
                );
                for _ in 0..min - 1 {
                    let event = next_event(events, &world, &mut rng);
                    world.apply(event).unwrap();
                }
                assert!(
                    ask(question, &world, &vocab, &mut rng).is_none(),
                    "qa{} can be asked about {} facts",
                    spec.qa,
                    min - 1
                );
            }
        }
    }

    /// A story of 300 facts from `events`, each checked by `rule` against the world before it.
    fn each_fact(events: Events, rule: impl Fn(&World, &Event)) {
        let sizes = Sizes {
            actors: 4,
            places: 6,
            objects: 3,
        };
        for seed in 0..20 {
            let mut rng = Rng::from_seed_u64(seed, Stream::Content);
            let mut world = World::new(sizes, &mut rng);
            for _ in 0..300 {
                let event = next_event(events, &world, &mut rng);
                rule(&world, &event);
                world.apply(event).unwrap();
            }
        }
    }

    #[test]
    fn negations_say_no_longer_only_where_the_reader_saw_the_actor() {
        each_fact(Events::Negations, |world, event| match *event {
            Event::Move { movers, .. } => assert_eq!(movers, Movers::alone(movers.actor)),
            Event::NotIn {
                actor,
                location,
                form,
            } => {
                let seen_there = world.whereabouts[actor] == Some(Whereabouts::At(location));
                assert_eq!(form == 1, seen_there);
            }
            _ => panic!("qa9 has moves and negations only: {event:?}"),
        });
    }

    #[test]
    fn alternatives_name_two_places() {
        each_fact(Events::Alternatives, |_, event| match *event {
            Event::Move { movers, .. } => assert_eq!(movers, Movers::alone(movers.actor)),
            Event::EitherIn {
                location,
                alternative,
                ..
            } => assert_ne!(location, alternative),
            _ => panic!("qa10 has moves and alternatives only: {event:?}"),
        });
    }

    #[test]
    fn a_pronoun_refers_to_the_named_actor_just_before() {
        each_fact(Events::Coreferences, |world, event| {
            let Event::Move { movers, .. } = *event else {
                panic!("qa11 has moves only");
            };
            assert_eq!(movers.companion, None);
            if movers.coreference {
                let previous = world.events.last().expect("a pronoun has an antecedent");
                assert!(!previous.is_coreference());
                assert_eq!(previous.actor(), movers.actor);
            }
        });
    }

    #[test]
    fn companions_go_where_neither_is() {
        for coreference in [false, true] {
            each_fact(Events::Companions { coreference }, |world, event| {
                let Event::Move {
                    movers, location, ..
                } = *event
                else {
                    panic!("qa12 and qa13 have moves only");
                };
                for a in movers.all() {
                    assert_ne!(world.actor_at[a], Some(location));
                }
                assert!(coreference || !movers.coreference);
                if movers.coreference {
                    let Some(&Event::Move { movers: named, .. }) = world.events.last() else {
                        panic!("a pronoun follows a move");
                    };
                    assert_eq!(
                        named,
                        Movers {
                            coreference: false,
                            ..movers
                        }
                    );
                    assert!(named.companion.is_some());
                }
            });
        }
    }
}
