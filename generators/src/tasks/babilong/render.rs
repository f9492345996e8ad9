//! Sentences and data for a story's facts: the wording of each [`Event`] and the same facts as
//! JSON for `params`, kept apart from the simulation so the world never depends on words.

use serde_json::{json, Value};

use super::world::{Event, Movers};
use super::Vocab;

/// The four compass directions, in the order direction indices count them.
pub const DIRECTIONS: [&str; 4] = ["north", "east", "south", "west"];

/// Our sentence forms for a move (several verbs, picked by a fact's `form`).
const MOVE_VERBS: [&str; 6] = [
    "went to",
    "walked to",
    "travelled to",
    "headed to",
    "moved to",
    "hurried to",
];
const GET_VERBS: [&str; 4] = ["picked up", "took", "grabbed", "got hold of"];
const DROP_VERBS: [&str; 4] = ["put down", "dropped", "set down", "discarded"];
const GIVE_VERBS: [&str; 3] = ["gave", "handed", "passed"];
/// How a pronoun sentence opens, so it reads as following the previous fact.
const COREFERENCE_LEADS: [&str; 4] = ["Then", "After that", "Afterwards", "Later"];

/// The sentence of one fact.
pub fn render_event(event: &Event, vocab: &Vocab) -> String {
    let name = |a: usize| vocab.actors[a].0.as_str();
    let place = |p: usize| vocab.places[p].as_str();
    let object = |o: usize| vocab.objects[o].as_str();
    let form = event.form();
    // The low two bits pick a coreference lead, the rest the verb.
    let verb = (form / 4) as usize;
    let movers = match *event {
        Event::Move { movers, .. } => movers,
        _ => Movers::alone(event.actor()),
    };
    let subject = if movers.coreference {
        let lead = COREFERENCE_LEADS[(form % 4) as usize];
        let pronoun = if movers.companion.is_some() {
            "they"
        } else if vocab.actors[movers.actor].1 {
            "he"
        } else {
            "she"
        };
        format!("{lead} {pronoun}")
    } else if let Some(b) = movers.companion {
        format!("{} and {}", name(movers.actor), name(b))
    } else {
        name(movers.actor).to_string()
    };
    let predicate = match *event {
        Event::NotIn { location, .. } if form == 1 => {
            format!("is no longer in the {}", place(location))
        }
        Event::NotIn { location, .. } => format!("is not in the {}", place(location)),
        Event::IsIn { location, .. } => match verb % 2 {
            0 => format!("is in the {}", place(location)),
            _ => format!("is now in the {}", place(location)),
        },
        Event::EitherIn {
            location,
            alternative,
            ..
        } => {
            let (a, b) = (place(location), place(alternative));
            match verb % 2 {
                0 => format!("is either in the {a} or the {b}"),
                _ => format!("is in the {a} or else in the {b}"),
            }
        }
        Event::Move { location, .. } => format!("{} the {}", MOVE_VERBS[verb % 6], place(location)),
        Event::Get { object: o, .. } => format!("{} the {}", GET_VERBS[verb % 4], object(o)),
        Event::Drop { object: o, .. } => format!("{} the {}", DROP_VERBS[verb % 4], object(o)),
        Event::Give {
            object: o,
            recipient,
            ..
        } => format!(
            "{} the {} to {}",
            GIVE_VERBS[verb % 3],
            object(o),
            name(recipient)
        ),
    };
    format!("{subject} {predicate}.")
}

/// `params.events`: every fact as data, with names.
pub fn events_json(events: &[Event], vocab: &Vocab) -> Value {
    let actor = |a: usize| json!(vocab.actors[a].0);
    let place = |p: usize| json!(vocab.places[p]);
    let object = |o: usize| json!(vocab.objects[o]);
    let facts: Vec<Value> = events
        .iter()
        .map(|event| {
            let mut o = serde_json::Map::new();
            o.insert("actor".into(), actor(event.actor()));
            o.insert("action".into(), json!(event.action()));
            match *event {
                Event::Move {
                    movers, location, ..
                } => {
                    o.insert("location".into(), place(location));
                    if let Some(b) = movers.companion {
                        o.insert("conj".into(), actor(b));
                    }
                    if movers.coreference {
                        o.insert("coref".into(), json!(true));
                    }
                }
                Event::NotIn { location, .. } => {
                    o.insert("location".into(), place(location));
                    o.insert("negated".into(), json!(true));
                }
                Event::IsIn { location, .. } => {
                    o.insert("location".into(), place(location));
                    o.insert("stated".into(), json!(true));
                }
                Event::EitherIn {
                    location,
                    alternative,
                    ..
                } => {
                    o.insert("location".into(), place(location));
                    o.insert("either".into(), place(alternative));
                }
                Event::Get { object: x, .. } | Event::Drop { object: x, .. } => {
                    o.insert("object".into(), object(x));
                }
                Event::Give {
                    object: x,
                    recipient,
                    ..
                } => {
                    o.insert("object".into(), object(x));
                    o.insert("recipient".into(), actor(recipient));
                }
            }
            Value::Object(o)
        })
        .collect();
    json!(facts)
}

/// Compass facts as data (`params.relations` of qa4 and qa19): `location` lies `direction` of
/// `of`.
pub fn relation_json(location: &str, direction: usize, of: &str) -> Value {
    json!({"location": location, "direction": DIRECTIONS[direction], "of": of})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab() -> Vocab {
        Vocab {
            actors: vec![("John".into(), true), ("Mary".into(), false)],
            places: vec!["kitchen".into(), "garden".into()],
            objects: vec!["apple".into()],
        }
    }

    #[test]
    fn sentences_follow_the_form() {
        let v = vocab();
        let went = Event::Move {
            movers: Movers::alone(0),
            location: 1,
            form: 0,
        };
        assert_eq!(render_event(&went, &v), "John went to the garden.");
        let together_later = Event::Move {
            movers: Movers {
                actor: 1,
                companion: Some(0),
                coreference: true,
            },
            location: 0,
            form: 3 + 4 * 2,
        };
        assert_eq!(
            render_event(&together_later, &v),
            "Later they travelled to the kitchen."
        );
        let no_longer = Event::NotIn {
            actor: 1,
            location: 0,
            form: 1,
        };
        assert_eq!(
            render_event(&no_longer, &v),
            "Mary is no longer in the kitchen."
        );
        let either = Event::EitherIn {
            actor: 0,
            location: 0,
            alternative: 1,
            form: 4,
        };
        assert_eq!(
            render_event(&either, &v),
            "John is in the kitchen or else in the garden."
        );
        let gave = Event::Give {
            actor: 0,
            object: 0,
            recipient: 1,
            form: 4,
        };
        assert_eq!(render_event(&gave, &v), "John handed the apple to Mary.");
    }

    #[test]
    fn events_as_data_name_only_what_they_state() {
        let v = vocab();
        let events = [
            Event::NotIn {
                actor: 1,
                location: 0,
                form: 0,
            },
            Event::Drop {
                actor: 0,
                object: 0,
                form: 9,
            },
        ];
        assert_eq!(
            events_json(&events, &v),
            json!([
                {"actor": "Mary", "action": "move", "location": "kitchen", "negated": true},
                {"actor": "John", "action": "drop", "object": "apple"},
            ])
        );
    }
}
