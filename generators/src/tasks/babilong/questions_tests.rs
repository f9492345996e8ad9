//! Each question family on a small hand-built story whose answer is known by hand; where the
//! family draws (which phrasing, yes or no), many seeds cover every draw.

use std::collections::BTreeSet;

use super::*;
use crate::rng::Stream;
use crate::tasks::babilong::world::{Movers, Sizes};

const JOHN: usize = 0;
const MARY: usize = 1;
const KITCHEN: usize = 0;
const GARDEN: usize = 1;
const OFFICE: usize = 2;
const APPLE: usize = 0;
const MILK: usize = 1;

fn vocab() -> Vocab {
    Vocab {
        actors: vec![("John".into(), true), ("Mary".into(), false)],
        places: vec!["kitchen".into(), "garden".into(), "office".into()],
        objects: vec!["apple".into(), "milk".into()],
    }
}

/// A world of `vocab()` whose objects all lie in the kitchen, with `events` applied.
fn story(events: &[Event]) -> World {
    let sizes = Sizes {
        actors: 2,
        places: 3,
        objects: 2,
    };
    let mut world = World::new(sizes, &mut Rng::from_seed_u64(0, Stream::Content));
    world.lies_at = vec![KITCHEN; 2];
    for &e in events {
        world.apply(e).unwrap();
    }
    world
}

fn go(actor: usize, location: usize) -> Event {
    Event::Move {
        movers: Movers::alone(actor),
        location,
        form: 0,
    }
}

fn get(actor: usize, object: usize) -> Event {
    Event::Get {
        actor,
        object,
        form: 0,
    }
}

/// The question of `family` under many seeds.
fn asked(family: Question, world: &World) -> Vec<Asked> {
    (0..64)
        .map(|seed| {
            let mut rng = Rng::from_seed_u64(seed, Stream::Content);
            ask(family, world, &vocab(), &mut rng).expect("the story answers the question")
        })
        .collect()
}

fn kind(a: &Asked) -> &str {
    a.query["kind"].as_str().unwrap()
}

#[test]
fn where_is_actor_follows_the_last_move_and_its_antecedent() {
    let world = story(&[go(JOHN, GARDEN), go(JOHN, KITCHEN)]);
    for a in asked(Question::WhereIsActor, &world) {
        assert_eq!(a.question, "Where is John?");
        assert_eq!(a.answers, ["kitchen"]);
        assert_eq!(a.supporting, [1]);
    }
    let pronoun = Event::Move {
        movers: Movers {
            coreference: true,
            ..Movers::alone(JOHN)
        },
        location: OFFICE,
        form: 0,
    };
    let world = story(&[go(JOHN, GARDEN), pronoun]);
    for a in asked(Question::WhereIsActor, &world) {
        assert_eq!(a.answers, ["office"]);
        assert_eq!(a.supporting, [0, 1], "a pronoun fact needs its antecedent");
    }
    let nobody_moved = story(&[]);
    let mut rng = Rng::from_seed_u64(0, Stream::Content);
    assert!(where_is_actor(&nobody_moved, &vocab(), &mut rng).is_none());
}

#[test]
fn companions_move_together() {
    let pair = Event::Move {
        movers: Movers {
            actor: JOHN,
            companion: Some(MARY),
            coreference: false,
        },
        location: GARDEN,
        form: 0,
    };
    let world = story(&[go(MARY, OFFICE), pair]);
    let actors: BTreeSet<String> = asked(Question::WhereIsActor, &world)
        .into_iter()
        .map(|a| {
            assert_eq!(a.answers, ["garden"]);
            assert_eq!(a.supporting, [1]);
            a.query["actor"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(actors.len(), 2, "both actors are asked about");
}

#[test]
fn where_is_object_follows_its_carrier() {
    let world = story(&[go(JOHN, KITCHEN), get(JOHN, APPLE), go(JOHN, GARDEN)]);
    for a in asked(Question::WhereIsObject, &world) {
        assert_eq!(a.question, "Where is the apple?");
        assert_eq!(a.answers, ["garden"]);
        assert_eq!(a.supporting, [1, 2]);
    }
    let dropped = [
        go(JOHN, KITCHEN),
        get(JOHN, MILK),
        go(JOHN, OFFICE),
        Event::Drop {
            actor: JOHN,
            object: MILK,
            form: 0,
        },
        go(JOHN, GARDEN),
    ];
    for a in asked(Question::WhereIsObject, &story(&dropped)) {
        assert_eq!(a.question, "Where is the milk?");
        assert_eq!(a.answers, ["office"]);
        assert_eq!(a.supporting, [2, 3]);
    }
}

#[test]
fn where_was_object_names_the_place_before() {
    let world = story(&[go(JOHN, KITCHEN), get(JOHN, APPLE), go(JOHN, GARDEN)]);
    for a in asked(Question::WhereWasObject, &world) {
        assert_eq!(a.question, "Where was the apple before the garden?");
        assert_eq!(a.answers, ["kitchen"]);
        assert_eq!(a.supporting, [1, 2]);
    }
    let unmoved = story(&[go(JOHN, KITCHEN), get(JOHN, APPLE)]);
    let mut rng = Rng::from_seed_u64(0, Stream::Content);
    assert!(where_was_object(&unmoved, &vocab(), &mut rng).is_none());
}

#[test]
fn giving_answers_every_phrasing_from_the_give_fact() {
    let give = Event::Give {
        actor: JOHN,
        object: APPLE,
        recipient: MARY,
        form: 0,
    };
    let world = story(&[go(JOHN, KITCHEN), go(MARY, KITCHEN), get(JOHN, APPLE), give]);
    let mut kinds = BTreeSet::new();
    for a in asked(Question::Giving, &world) {
        let want = match kind(&a) {
            "who_gave" | "who_gave_object" => "John",
            "who_received" | "given_to" => "Mary",
            "what_given" => "apple",
            other => panic!("unexpected question kind {other}"),
        };
        assert_eq!(a.answers, [want], "{}", a.question);
        assert_eq!(a.supporting, [3]);
        kinds.insert(kind(&a).to_string());
    }
    assert_eq!(kinds.len(), 5, "every phrasing is drawn");
}

#[test]
fn is_actor_in_says_yes_only_for_their_place() {
    let world = story(&[go(JOHN, GARDEN)]);
    let answers: BTreeSet<String> = asked(Question::IsActorIn, &world)
        .into_iter()
        .map(|a| {
            let here = a.query["location"] == "garden";
            assert_eq!(a.answers, [if here { "yes" } else { "no" }]);
            assert_eq!(a.supporting, [0]);
            a.answers[0].clone()
        })
        .collect();
    assert_eq!(answers.len(), 2, "both answers are drawn");
}

#[test]
fn carrying_counts_and_lists_what_is_held_now() {
    let world = story(&[
        go(JOHN, KITCHEN),
        get(JOHN, APPLE),
        get(JOHN, MILK),
        Event::Drop {
            actor: JOHN,
            object: APPLE,
            form: 0,
        },
    ]);
    for a in asked(Question::CountCarried, &world) {
        assert_eq!(a.question, "How many objects is John carrying?");
        assert_eq!(a.answers, ["one"]);
        // Per object, the last fact that changed whether John holds it: the milk's get and
        // the apple's drop.
        assert_eq!(a.supporting, [2, 3]);
    }
    for a in asked(Question::ListCarried, &world) {
        assert_eq!(a.question, "What is John carrying?");
        assert_eq!(a.answers, ["milk"]);
    }
    let drop = Event::Drop {
        actor: JOHN,
        object: APPLE,
        form: 0,
    };
    let empty_handed = story(&[go(JOHN, KITCHEN), get(JOHN, APPLE), drop]);
    for a in asked(Question::ListCarried, &empty_handed) {
        assert_eq!(a.answers, ["nothing"]);
        assert_eq!(a.supporting, [2]);
    }
}

#[test]
fn hedged_facts_answer_no_or_maybe() {
    let not_in = Event::NotIn {
        actor: MARY,
        location: OFFICE,
        form: 0,
    };
    for a in asked(Question::IsActorMaybeIn, &story(&[not_in])) {
        assert_eq!(a.question, "Is Mary in the office?");
        assert_eq!(a.answers, ["no"]);
        assert_eq!(a.supporting, [0]);
    }
    let either = Event::EitherIn {
        actor: JOHN,
        location: KITCHEN,
        alternative: GARDEN,
        form: 0,
    };
    let world = story(&[go(JOHN, OFFICE), either]);
    let mut answers = BTreeSet::new();
    for a in asked(Question::IsActorMaybeIn, &world) {
        let named = a.query["location"] != "office";
        assert_eq!(a.answers, [if named { "maybe" } else { "no" }]);
        assert_eq!(a.supporting, [1], "only the latest fact counts");
        answers.insert(a.answers[0].clone());
    }
    assert_eq!(answers.len(), 2);
}
