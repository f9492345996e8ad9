//! bAbI walk questions in words: each question of [`super::babi`] as the prompt asks it, with
//! its query as data and its answer.

use serde_json::json;

use super::questions::Asked;
use super::spec::COUNTS;
use super::world::Event;
use super::Vocab;
use crate::rng::Rng;

/// A question as data before it is worded.
pub(super) enum Q {
    /// Where is actor (answer place), supporting facts.
    WhereIs(usize, usize, Vec<usize>),
    /// Is actor in place, yes/no/maybe.
    IsIn(usize, usize, &'static str, Vec<usize>),
    /// Where is object (answer place).
    WhereObject(usize, usize, Vec<usize>),
    /// Where was object before place (answer place).
    WhereWas(usize, usize, usize, Vec<usize>),
    /// A give (fact index) asked about.
    Gave(usize),
    /// What an actor carries (objects), supporting facts.
    Carrying(usize, Vec<usize>, Vec<usize>),
}

/// The question in words, with its answer.
pub(super) fn word(q: Q, qa: u8, events: &[Event], vocab: &Vocab, rng: &mut Rng) -> Asked {
    let one = |query: serde_json::Value, question: String, answer: &str, s: Vec<usize>| Asked {
        query,
        question,
        answers: vec![answer.to_string()],
        supporting: s,
    };
    match q {
        Q::WhereIs(a, p, s) => {
            let actor = vocab.actor(a);
            one(
                json!({"kind": "where_is", "actor": actor}),
                format!("Where is {actor}?"),
                vocab.place(p),
                s,
            )
        }
        Q::IsIn(a, p, answer, s) => {
            let (actor, place) = (vocab.actor(a), vocab.place(p));
            one(
                json!({"kind": "is_in", "actor": actor, "location": place}),
                format!("Is {actor} in the {place}?"),
                answer,
                s,
            )
        }
        Q::WhereObject(o, p, s) => {
            let object = vocab.object(o);
            one(
                json!({"kind": "where_is_object", "object": object}),
                format!("Where is the {object}?"),
                vocab.place(p),
                s,
            )
        }
        Q::WhereWas(o, now, before, s) => {
            let (object, place) = (vocab.object(o), vocab.place(now));
            one(
                json!({"kind": "where_was_before", "object": object, "location": place}),
                format!("Where was the {object} before the {place}?"),
                vocab.place(before),
                s,
            )
        }
        Q::Gave(fact) => {
            let Event::Give {
                actor,
                object,
                recipient,
                ..
            } = events[fact]
            else {
                unreachable!("a give is asked about")
            };
            let (object, giver, to) = (
                vocab.object(object),
                vocab.actor(actor),
                vocab.actor(recipient),
            );
            let (query, question, answer) = match rng.index(5) {
                0 => (
                    json!({"kind": "who_gave", "object": object, "recipient": to}),
                    format!("Who gave the {object} to {to}?"),
                    giver,
                ),
                1 => (
                    json!({"kind": "who_received", "object": object}),
                    format!("Who received the {object}?"),
                    to,
                ),
                2 => (
                    json!({"kind": "what_given", "actor": giver, "recipient": to}),
                    format!("What did {giver} give to {to}?"),
                    object,
                ),
                3 => (
                    json!({"kind": "given_to", "actor": giver, "object": object}),
                    format!("Who did {giver} give the {object} to?"),
                    to,
                ),
                _ => (
                    json!({"kind": "who_gave_object", "object": object}),
                    format!("Who gave the {object}?"),
                    giver,
                ),
            };
            one(query, question, answer, vec![fact])
        }
        Q::Carrying(a, held, s) => {
            let actor = vocab.actor(a);
            if qa == 7 {
                one(
                    json!({"kind": "count_carrying", "actor": actor}),
                    format!("How many objects is {actor} carrying?"),
                    COUNTS[held.len()],
                    s,
                )
            } else {
                Asked {
                    query: json!({"kind": "list_carrying", "actor": actor}),
                    question: format!("What is {actor} carrying?"),
                    answers: if held.is_empty() {
                        vec!["nothing".to_string()]
                    } else {
                        held.iter().map(|&o| vocab.object(o).to_string()).collect()
                    },
                    supporting: s,
                }
            }
        }
    }
}
