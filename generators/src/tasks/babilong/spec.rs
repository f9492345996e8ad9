//! The twenty bAbI tasks as data: one [`TaskSpec`] per task says how big its stories are, how
//! they are made, what is asked, which answers are allowed and how the prompt asks for one.
//! Everything that differs between tasks is here, so the rest of the module has no
//! per-task branches.

use super::babi_puzzles;
use super::puzzles::{self, Names};

/// bAbI's cast of qa15.
pub const DEDUCTION_ACTORS: [(&str, bool); 4] = [
    ("Gertrude", false),
    ("Winona", false),
    ("Jessica", false),
    ("Emily", false),
];
/// bAbI's cast of qa16.
pub const INDUCTION_ACTORS: [(&str, bool); 5] = [
    ("Lily", false),
    ("Bernhard", true),
    ("Greg", true),
    ("Julius", true),
    ("Brian", true),
];
/// bAbI's cast of qa20.
pub const MOTIVATION_ACTORS: [(&str, bool); 4] = [
    ("Jason", true),
    ("Antoine", false),
    ("Sumit", false),
    ("Yann", true),
];
use super::world::Mix;
use super::{
    Story, Vocab, CLASSIC_ACTORS, CLASSIC_GIVERS, CLASSIC_PLACES, MAX_FACTS, TIME_ACTORS,
    TIME_PLACES,
};
use crate::rng::Rng;

/// Number words for qa7's counts.
pub const COUNTS: [&str; 11] = [
    "none", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
];

/// How a task makes its story.
#[derive(Debug, Clone, Copy)]
pub enum Plot {
    /// Actors act in the simulated world ([`super::world`]) until the story has its size and
    /// the question can be asked.
    Walk {
        /// Where each next fact comes from.
        events: Events,
        /// What is asked at the end.
        question: Question,
    },
    /// A small fixed-shape puzzle (qa4, qa14–qa20) built in one go, question included.
    Puzzle(fn(&Names<'_>, &mut Rng) -> Story),
}

/// Where the facts of a walk come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Events {
    /// Valid random actions with these relative frequencies.
    Mixed(Mix),
    /// qa9: moves, and "is (no longer) not in" facts.
    Negations,
    /// qa10: moves, and "is either in … or …" facts.
    Alternatives,
    /// qa11: moves, half of them by pronoun for the previous fact's actor.
    Coreferences,
    /// qa12, qa13: moves of one actor or two together; with `coreference`, a pair's next move
    /// may name them "they".
    Companions {
        /// qa13: pairs may be referred back to by pronoun.
        coreference: bool,
    },
}

/// The question family of a walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Question {
    /// qa1, qa11–qa13: where is an actor.
    WhereIsActor,
    /// qa2: where is an object (carried or dropped).
    WhereIsObject,
    /// qa3: where was an object before a place.
    WhereWasObject,
    /// qa5: who gave what to whom, in five phrasings.
    Giving,
    /// qa6: is an actor in a place (yes or no).
    IsActorIn,
    /// qa7: how many objects an actor carries.
    CountCarried,
    /// qa8: which objects an actor carries.
    ListCarried,
    /// qa9, qa10: is an actor in a place, when facts may only say where they are not or
    /// might be (yes, no or maybe).
    IsActorMaybeIn,
}

/// A task's closed answer set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Labels {
    /// The story's places.
    Places,
    /// Actor names and objects (qa5).
    ActorsAndObjects,
    /// yes, no.
    YesNo,
    /// yes, no, maybe.
    YesNoMaybe,
    /// Number words from none to the number of objects.
    Counts,
    /// The objects, or nothing.
    ObjectsOrNothing,
    /// The puzzle supplies its own set (its species, colours, paths, …).
    FromPuzzle,
}

impl Labels {
    /// The labels for a story's names; empty for [`Labels::FromPuzzle`].
    pub fn resolve(self, vocab: &Vocab) -> Vec<String> {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        match self {
            Labels::Places => vocab.places.clone(),
            Labels::ActorsAndObjects => vocab
                .actors
                .iter()
                .map(|(n, _)| n.clone())
                .chain(vocab.objects.iter().cloned())
                .collect(),
            Labels::YesNo => own(&["yes", "no"]),
            Labels::YesNoMaybe => own(&["yes", "no", "maybe"]),
            Labels::Counts => own(&COUNTS[..=vocab.objects.len()]),
            Labels::ObjectsOrNothing => vocab
                .objects
                .iter()
                .cloned()
                .chain(std::iter::once("nothing".to_string()))
                .collect(),
            Labels::FromPuzzle => Vec::new(),
        }
    }
}

/// Everything that makes one bAbI task what it is.
#[derive(Debug, Clone, Copy)]
pub struct TaskSpec {
    /// bAbI's task number.
    pub qa: u8,
    /// bAbI's story sizes (facts), from its test set where known; a puzzle's own range.
    pub default_facts: (u32, u32),
    /// The fewest facts a story of this task can have and still be answerable.
    pub min_facts: u32,
    /// The most facts a story of this task can have: [`MAX_FACTS`] for walks, the shape of
    /// a puzzle. `--facts` is honoured exactly between the two and refused outside.
    pub max_facts: u32,
    /// bAbI's own actors for the task (several tasks have their own cast).
    pub classic_actors: &'static [(&'static str, bool)],
    /// bAbI's own places for the task (qa14 has its own six).
    pub classic_places: &'static [&'static str],
    /// How the story is made.
    pub plot: Plot,
    /// The closed answer set.
    pub labels: Labels,
    /// The answer instruction of the prompt.
    pub instruction: &'static str,
}

/// The instruction of every task answered with a place.
const WHERE: &str = "Answer with one word: the name of a place.";
/// The instruction of the yes-or-no tasks.
const YES_NO: &str = "Answer yes or no.";

/// A walk task as most are: bAbI's four actors, a place for an answer. Table entries that
/// differ override fields with `..walk_task(…)`.
const fn walk_task(
    qa: u8,
    facts: (u32, u32),
    min_facts: u32,
    events: Events,
    question: Question,
) -> TaskSpec {
    TaskSpec {
        qa,
        default_facts: facts,
        min_facts,
        max_facts: MAX_FACTS,
        classic_actors: &CLASSIC_ACTORS,
        classic_places: &CLASSIC_PLACES,
        plot: Plot::Walk { events, question },
        labels: Labels::Places,
        instruction: WHERE,
    }
}

/// A puzzle task: its stories have between `facts.0` and `facts.1` facts (one size for most
/// puzzles), all sizes it can take by default.
const fn puzzle_task(
    qa: u8,
    facts: (u32, u32),
    make: fn(&Names<'_>, &mut Rng) -> Story,
    labels: Labels,
    instruction: &'static str,
) -> TaskSpec {
    TaskSpec {
        qa,
        default_facts: facts,
        min_facts: facts.0,
        max_facts: facts.1,
        classic_actors: &CLASSIC_ACTORS,
        classic_places: &CLASSIC_PLACES,
        plot: Plot::Puzzle(make),
        labels,
        instruction,
    }
}

/// The action frequencies of a walk, in the order moves, gets, drops, gives.
const fn mix(moves: u64, gets: u64, drops: u64, gives: u64) -> Events {
    Events::Mixed(Mix {
        moves,
        gets,
        drops,
        gives,
    })
}

/// The tasks, qa1 to qa20 in order.
pub const SPECS: [TaskSpec; 20] = [
    walk_task(1, (2, 10), 1, mix(1, 0, 0, 0), Question::WhereIsActor),
    // An object is located once someone placed holds it or drops it: a move, then a get.
    walk_task(2, (2, 88), 2, mix(5, 3, 2, 0), Question::WhereIsObject),
    // An object has been in two places after a move, a get and another move.
    walk_task(3, (4, 228), 3, mix(5, 3, 2, 0), Question::WhereWasObject),
    puzzle_task(4, (2, 2), babi_puzzles::compass, Labels::Places, WHERE),
    TaskSpec {
        classic_actors: &CLASSIC_GIVERS,
        labels: Labels::ActorsAndObjects,
        instruction: "Answer with one word: a name or an object.",
        // A give needs two actors moved to one place and an object got: four facts.
        ..walk_task(5, (4, 60), 4, mix(4, 3, 1, 4), Question::Giving)
    },
    TaskSpec {
        labels: Labels::YesNo,
        instruction: YES_NO,
        ..walk_task(6, (2, 26), 1, mix(6, 2, 1, 0), Question::IsActorIn)
    },
    TaskSpec {
        labels: Labels::Counts,
        instruction: "Answer with a number written as a word: none, one, two or three.",
        ..walk_task(7, (4, 40), 2, mix(4, 4, 2, 2), Question::CountCarried)
    },
    TaskSpec {
        labels: Labels::ObjectsOrNothing,
        instruction: "Answer with the objects separated by commas, or with nothing.",
        ..walk_task(8, (4, 40), 2, mix(4, 4, 2, 2), Question::ListCarried)
    },
    TaskSpec {
        labels: Labels::YesNo,
        instruction: YES_NO,
        ..walk_task(9, (2, 10), 1, Events::Negations, Question::IsActorMaybeIn)
    },
    TaskSpec {
        labels: Labels::YesNoMaybe,
        instruction: "Answer yes, no or maybe.",
        ..walk_task(
            10,
            (2, 10),
            1,
            Events::Alternatives,
            Question::IsActorMaybeIn,
        )
    },
    walk_task(11, (2, 10), 1, Events::Coreferences, Question::WhereIsActor),
    walk_task(
        12,
        (2, 10),
        1,
        Events::Companions { coreference: false },
        Question::WhereIsActor,
    ),
    walk_task(
        13,
        (2, 10),
        1,
        Events::Companions { coreference: true },
        Question::WhereIsActor,
    ),
    TaskSpec {
        classic_actors: &TIME_ACTORS,
        classic_places: &TIME_PLACES,
        labels: Labels::Places,
        ..puzzle_task(14, (2, 12), babi_puzzles::time, Labels::Places, WHERE)
    },
    TaskSpec {
        classic_actors: &DEDUCTION_ACTORS,
        ..puzzle_task(
            15,
            (8, 8),
            puzzles::deduction,
            Labels::FromPuzzle,
            "Answer with one word: an animal.",
        )
    },
    TaskSpec {
        classic_actors: &INDUCTION_ACTORS,
        ..puzzle_task(
            16,
            (9, 9),
            puzzles::induction,
            Labels::FromPuzzle,
            "Answer with one word: a colour.",
        )
    },
    puzzle_task(
        17,
        (2, 2),
        babi_puzzles::positions,
        Labels::FromPuzzle,
        YES_NO,
    ),
    puzzle_task(18, (4, 9), babi_puzzles::sizes, Labels::FromPuzzle, YES_NO),
    puzzle_task(
        19,
        (4, 4),
        babi_puzzles::path_finding,
        Labels::FromPuzzle,
        "Answer with the two directions, n, s, e or w, separated by a comma, like n,e.",
    ),
    TaskSpec {
        classic_actors: &MOTIVATION_ACTORS,
        ..puzzle_task(
            20,
            (1, 12),
            babi_puzzles::motivations,
            Labels::FromPuzzle,
            "Answer with one word.",
        )
    },
];

/// The spec of task `qa`, if there is such a task.
pub fn find(qa: u8) -> Option<&'static TaskSpec> {
    SPECS.iter().find(|s| s.qa == qa)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_spec_per_task_in_order() {
        assert_eq!(SPECS.len(), super::super::TASKS.len());
        for (spec, qa) in SPECS.iter().zip(super::super::TASKS) {
            assert_eq!(spec.qa, qa);
            assert!(spec.min_facts <= spec.default_facts.0);
            assert!(spec.default_facts.0 <= spec.default_facts.1);
            assert!(spec.default_facts.1 <= spec.max_facts);
        }
    }
}
