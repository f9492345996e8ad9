//! The question at the end of a walk story: one function per question family, each picking
//! something the story so far lets a reader answer, with the answer and the facts it rests on.
//! A family returns `None` when the story does not (yet) support its question, and the story
//! grows by another fact.

use serde_json::{json, Value};

use super::spec::{Question, COUNTS};
use super::world::{Event, Whereabouts, World};
use super::Vocab;
use crate::rng::Rng;

/// What the question of a story turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    /// The question as data (`params.query`).
    pub query: Value,
    /// The question as the prompt states it.
    pub question: String,
    /// Gold items (one label, or the items of a list).
    pub answers: Vec<String>,
    /// Indices of the supporting facts, ascending.
    pub supporting: Vec<usize>,
}

/// A question of family `question` that the story so far answers, if there is one.
pub fn ask(question: Question, world: &World, vocab: &Vocab, rng: &mut Rng) -> Option<Asked> {
    match question {
        Question::WhereIsActor => where_is_actor(world, vocab, rng),
        Question::WhereIsObject => where_is_object(world, vocab, rng),
        Question::WhereWasObject => where_was_object(world, vocab, rng),
        Question::Giving => giving(world, vocab, rng),
        Question::IsActorIn => is_actor_in(world, vocab, rng),
        Question::CountCarried => carrying(world, vocab, rng, true),
        Question::ListCarried => carrying(world, vocab, rng, false),
        Question::IsActorMaybeIn => is_actor_maybe_in(world, vocab, rng),
    }
}

/// qa1, qa11–qa13: where is an actor; a pronoun fact rests on the fact before it too.
fn where_is_actor(world: &World, vocab: &Vocab, rng: &mut Rng) -> Option<Asked> {
    let a = world.random_moved_actor(rng)?;
    let last = world.last_move[a]?;
    let mut supporting = vec![last];
    if world.events[last].is_coreference() && last > 0 {
        supporting.insert(0, last - 1);
    }
    let actor = vocab.actor(a);
    Some(Asked {
        query: json!({"kind": "where_is", "actor": actor}),
        question: format!("Where is {actor}?"),
        answers: vec![vocab.place(world.actor_at[a]?).to_string()],
        supporting,
    })
}

/// qa2: where is an object a reader can locate (held by someone placed, or dropped).
fn where_is_object(world: &World, vocab: &Vocab, rng: &mut Rng) -> Option<Asked> {
    let known: Vec<usize> = (0..world.objects())
        .filter(|&o| world.object_place(o).is_some())
        .collect();
    if known.is_empty() {
        return None;
    }
    let o = *rng.choose(&known);
    let (p, supporting) = world.object_place(o)?;
    let object = vocab.object(o);
    Some(Asked {
        query: json!({"kind": "where_is_object", "object": object}),
        question: format!("Where is the {object}?"),
        answers: vec![vocab.place(p).to_string()],
        supporting,
    })
}

/// qa3: where was an object before a place. "Before the place" means before the object's
/// latest arrival there, so the (object, visit) pairs asked about are each place's last visit.
fn where_was_object(world: &World, vocab: &Vocab, rng: &mut Rng) -> Option<Asked> {
    let mut options = Vec::new();
    for o in 0..world.objects() {
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
    let (object, place) = (vocab.object(o), vocab.place(v[i].place));
    Some(Asked {
        query: json!({"kind": "where_was_before", "object": object, "location": place}),
        question: format!("Where was the {object} before the {place}?"),
        answers: vec![vocab.place(v[i - 1].place).to_string()],
        supporting,
    })
}

/// One give fact of qa5.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Gift {
    fact: usize,
    giver: usize,
    object: usize,
    recipient: usize,
}

/// qa5: one of five questions about a give fact, answered by the latest give that matches
/// what the question names.
fn giving(world: &World, vocab: &Vocab, rng: &mut Rng) -> Option<Asked> {
    let gifts: Vec<Gift> = world
        .events
        .iter()
        .enumerate()
        .filter_map(|(fact, e)| match *e {
            Event::Give {
                actor,
                object,
                recipient,
                ..
            } => Some(Gift {
                fact,
                giver: actor,
                object,
                recipient,
            }),
            _ => None,
        })
        .collect();
    if gifts.is_empty() {
        return None;
    }
    let g = *rng.choose(&gifts);
    let latest = |matches: &dyn Fn(&Gift) -> bool| gifts.iter().rev().copied().find(matches);
    let (object, giver, to) = (
        vocab.object(g.object),
        vocab.actor(g.giver),
        vocab.actor(g.recipient),
    );
    let phrasing = rng.index(5);
    let (query, question, found) = match phrasing {
        0 => (
            json!({"kind": "who_gave", "object": object, "recipient": to}),
            format!("Who gave the {object} to {to}?"),
            latest(&|x| x.object == g.object && x.recipient == g.recipient),
        ),
        1 => (
            json!({"kind": "who_received", "object": object}),
            format!("Who received the {object}?"),
            latest(&|x| x.object == g.object),
        ),
        2 => (
            json!({"kind": "what_given", "actor": giver, "recipient": to}),
            format!("What did {giver} give to {to}?"),
            latest(&|x| x.giver == g.giver && x.recipient == g.recipient),
        ),
        3 => (
            json!({"kind": "given_to", "actor": giver, "object": object}),
            format!("Who did {giver} give the {object} to?"),
            latest(&|x| x.giver == g.giver && x.object == g.object),
        ),
        _ => (
            json!({"kind": "who_gave_object", "object": object}),
            format!("Who gave the {object}?"),
            latest(&|x| x.object == g.object),
        ),
    };
    let found = found?;
    let answer = match phrasing {
        0 | 4 => vocab.actor(found.giver),
        1 | 3 => vocab.actor(found.recipient),
        _ => vocab.object(found.object),
    };
    Some(Asked {
        query,
        question,
        answers: vec![answer.to_string()],
        supporting: vec![found.fact],
    })
}

/// qa6: is a moved actor in their place (yes) or another one (no).
fn is_actor_in(world: &World, vocab: &Vocab, rng: &mut Rng) -> Option<Asked> {
    let a = world.random_moved_actor(rng)?;
    let at = world.actor_at[a]?;
    let yes = rng.chance(1, 2);
    let p = if yes {
        at
    } else {
        world.other_place(Some(at), rng)
    };
    let (actor, place) = (vocab.actor(a), vocab.place(p));
    Some(Asked {
        query: json!({"kind": "is_in", "actor": actor, "location": place}),
        question: format!("Is {actor} in the {place}?"),
        answers: vec![if yes { "yes" } else { "no" }.to_string()],
        supporting: vec![world.last_move[a]?],
    })
}

/// qa7 (`count`) and qa8: what an actor who has held something carries now, supported by
/// every fact that changed what they hold.
fn carrying(world: &World, vocab: &Vocab, rng: &mut Rng, count: bool) -> Option<Asked> {
    let involved: Vec<usize> = (0..world.actors())
        .filter(|&a| world.holding_fact[a].iter().any(Option::is_some))
        .collect();
    if involved.is_empty() {
        return None;
    }
    let a = *rng.choose(&involved);
    let mut supporting: Vec<usize> = world.holding_fact[a].iter().flatten().copied().collect();
    supporting.sort_unstable();
    let held = &world.carrying[a];
    let actor = vocab.actor(a);
    let (query, question, answers) = if count {
        (
            json!({"kind": "count_carrying", "actor": actor}),
            format!("How many objects is {actor} carrying?"),
            vec![COUNTS[held.len()].to_string()],
        )
    } else {
        (
            json!({"kind": "list_carrying", "actor": actor}),
            format!("What is {actor} carrying?"),
            if held.is_empty() {
                vec!["nothing".to_string()]
            } else {
                held.iter().map(|&o| vocab.object(o).to_string()).collect()
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

/// qa9, qa10: is an actor in a place, from the actor's latest fact alone: yes or no where it
/// placed them, no where it ruled the place out, maybe where it named two places.
fn is_actor_maybe_in(world: &World, vocab: &Vocab, rng: &mut Rng) -> Option<Asked> {
    let known: Vec<usize> = (0..world.actors())
        .filter(|&a| world.whereabouts[a].is_some())
        .collect();
    if known.is_empty() {
        return None;
    }
    let a = *rng.choose(&known);
    let elsewhere = |rng: &mut Rng, not: &[usize]| -> usize {
        let free: Vec<usize> = (0..world.places()).filter(|p| !not.contains(p)).collect();
        *rng.choose(&free)
    };
    let (p, answer) = match world.whereabouts[a]? {
        Whereabouts::At(p) => {
            if rng.chance(1, 2) {
                (p, "yes")
            } else {
                (elsewhere(rng, &[p]), "no")
            }
        }
        Whereabouts::Not(p) => (p, "no"),
        Whereabouts::Either(p, q) => {
            if rng.chance(2, 3) {
                (if rng.chance(1, 2) { p } else { q }, "maybe")
            } else {
                (elsewhere(rng, &[p, q]), "no")
            }
        }
    };
    let last = (0..world.events.len())
        .rev()
        .find(|&i| world.events[i].actor() == a)?;
    let (actor, place) = (vocab.actor(a), vocab.place(p));
    Some(Asked {
        query: json!({"kind": "is_in", "actor": actor, "location": place}),
        question: format!("Is {actor} in the {place}?"),
        answers: vec![answer.to_string()],
        supporting: vec![last],
    })
}

#[cfg(test)]
#[path = "questions_tests.rs"]
mod tests;
