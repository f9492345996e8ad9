//! bAbI's rules, checked by replaying each story's facts as data (`params.events`, or the
//! puzzle's statements) from bAbI's start world, over 300 stories per task; and BABILong's
//! scoring rule, restated, applied to every gold answer.

use std::collections::BTreeMap;

use serde_json::Value;

use super::babi::{ACTOR_START, OBJECT_START};
use super::{Babilong, Story, CLASSIC_ACTORS, CLASSIC_GIVERS, CLASSIC_OBJECTS, CLASSIC_PLACES};

const STORIES: u64 = 300;

fn stories(qa: u8) -> Vec<Story> {
    let task = Babilong::new(qa, "babi", None, (0.0, 100.0)).unwrap();
    (0..STORIES).map(|i| task.story(7, i).unwrap()).collect()
}

fn s(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// The facts of a walk story replayed from bAbI's start world under its validity rules; per
/// fact, the true places before it. Returns each object's known places over the story.
struct Replay {
    at: BTreeMap<String, String>,
    holder: BTreeMap<String, Option<String>>,
    lies: BTreeMap<String, String>,
    known: BTreeMap<String, String>,
    history: BTreeMap<String, Vec<String>>,
}

impl Replay {
    fn new(qa: u8) -> Self {
        let cast = if qa == 5 {
            &CLASSIC_GIVERS
        } else {
            &CLASSIC_ACTORS
        };
        let at = (0..4)
            .map(|a| {
                (
                    cast[a].0.to_string(),
                    CLASSIC_PLACES[ACTOR_START[a]].to_string(),
                )
            })
            .collect();
        let lies = (0..3)
            .map(|o| {
                (
                    CLASSIC_OBJECTS[o].to_string(),
                    CLASSIC_PLACES[OBJECT_START[o]].to_string(),
                )
            })
            .collect();
        Replay {
            at,
            holder: CLASSIC_OBJECTS
                .iter()
                .map(|o| (o.to_string(), None))
                .collect(),
            lies,
            known: BTreeMap::new(),
            history: BTreeMap::new(),
        }
    }

    fn known_place(&self, o: &str, known_lies: &BTreeMap<String, String>) -> Option<String> {
        match &self.holder[o] {
            Some(a) => self.known.get(a).cloned(),
            None => known_lies.get(o).cloned(),
        }
    }

    fn run(&mut self, qa: u8, events: &[Value]) {
        let mut known_lies: BTreeMap<String, String> = BTreeMap::new();
        for (i, e) in events.iter().enumerate() {
            let (actor, action) = (s(&e["actor"]), s(&e["action"]));
            let allowed: &[&str] = match qa {
                1 | 6 | 9 | 10 | 11 | 12 | 13 => &["move"],
                2 | 3 => &["move", "get", "drop"],
                5 => &["move", "get", "give"],
                _ => &["move", "get", "drop", "give"],
            };
            assert!(allowed.contains(&action.as_str()), "qa{qa} fact {i}: {e}");
            let hedge = e.get("negated").is_some()
                || e.get("either").is_some()
                || e.get("stated").is_some();
            assert!(!hedge || matches!(qa, 9 | 10), "qa{qa}: {e}");
            assert!(e.get("either").is_none() || qa == 10);
            assert!(e.get("negated").is_none() || qa == 9);
            assert!(
                e.get("conj").is_some() == matches!(qa, 12 | 13),
                "qa{qa}: {e}"
            );
            match action.as_str() {
                "move" if e.get("negated").is_some() => {
                    assert_ne!(self.at[&actor], s(&e["location"]), "a false 'not in'");
                    self.known.remove(&actor);
                }
                "move" if e.get("stated").is_some() => {
                    assert_eq!(self.at[&actor], s(&e["location"]), "a false 'is in'");
                    self.known.insert(actor, s(&e["location"]));
                }
                "move" if e.get("either").is_some() => {
                    self.known.remove(&actor);
                }
                "move" => {
                    let l = s(&e["location"]);
                    let mut who = vec![actor];
                    who.extend(e.get("conj").map(s));
                    for a in who {
                        if !matches!(qa, 12 | 13) {
                            assert_ne!(self.at[&a], l, "qa{qa}: a move to where one is");
                        }
                        self.at.insert(a.clone(), l.clone());
                        self.known.insert(a, l.clone());
                    }
                }
                "get" => {
                    let o = s(&e["object"]);
                    assert_eq!(self.holder[&o], None, "get of a held object");
                    assert_eq!(
                        self.lies[&o], self.at[&actor],
                        "get where the object is not"
                    );
                    self.holder.insert(o, Some(actor));
                }
                "drop" => {
                    let o = s(&e["object"]);
                    assert_eq!(
                        self.holder[&o].as_ref(),
                        Some(&actor),
                        "drop of what one lacks"
                    );
                    self.holder.insert(o.clone(), None);
                    self.lies.insert(o.clone(), self.at[&actor].clone());
                    match self.known.get(&actor) {
                        Some(p) => known_lies.insert(o, p.clone()),
                        None => known_lies.remove(&o),
                    };
                }
                "give" => {
                    let (o, r) = (s(&e["object"]), s(&e["recipient"]));
                    assert_eq!(
                        self.holder[&o].as_ref(),
                        Some(&actor),
                        "give of what one lacks"
                    );
                    assert_ne!(actor, r);
                    assert_eq!(self.at[&actor], self.at[&r], "give across places");
                    self.holder.insert(o, Some(r.clone()));
                    // One in the same place as the other: a reader learns where from either.
                    match (self.known.get(&actor).cloned(), self.known.get(&r).cloned()) {
                        (Some(p), None) => self.known.insert(r, p),
                        (None, Some(p)) => self.known.insert(actor, p),
                        _ => None,
                    };
                }
                other => panic!("unknown action {other}"),
            }
            for o in CLASSIC_OBJECTS {
                if let Some(p) = self.known_place(o, &known_lies) {
                    let h = self.history.entry(o.to_string()).or_default();
                    if h.last() != Some(&p) {
                        h.push(p);
                    }
                }
            }
        }
    }
}

#[test]
fn walk_stories_follow_babi_rules() {
    for qa in [1u8, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13] {
        for story in stories(qa) {
            let events = story.data.as_array().unwrap();
            let n = events.len();
            let q = &story.query;
            let mut w = Replay::new(qa);
            w.run(qa, events);
            if matches!(qa, 1 | 6 | 9 | 10 | 11 | 12 | 13) {
                assert!([2, 4, 6, 8, 10].contains(&n), "qa{qa}: {n} facts");
            }
            match qa {
                1 | 11 | 12 | 13 => {
                    assert_eq!(story.answers, [w.known[&s(&q["actor"])].clone()]);
                }
                2 => {
                    // Only an object someone holds, whose place a reader knows.
                    let o = s(&q["object"]);
                    let a = w.holder[&o].clone().expect("qa2 asks about a held object");
                    assert_eq!(story.answers, [w.known[&a].clone()]);
                    assert_eq!(story.supporting.len(), 2);
                }
                3 => {
                    // L is where the object is now, as far as a reader knows.
                    let h = &w.history[&s(&q["object"])];
                    assert_eq!(
                        s(&q["location"]),
                        h[h.len() - 1],
                        "qa3 asks about the latest place"
                    );
                    assert_eq!(story.answers, [h[h.len() - 2].clone()]);
                }
                5 => {
                    let f = story.supporting[0];
                    assert_eq!(story.supporting.len(), 1);
                    assert_eq!(s(&events[f]["action"]), "give");
                    assert!(n - 1 - f <= 5, "qa5: the give {} facts back", n - 1 - f);
                    let o = &events[f]["object"];
                    assert!(events[f + 1..].iter().all(|e| e.get("object") != Some(o)));
                }
                _ => {}
            }
            let i = story.supporting.iter().max().copied().unwrap_or(0);
            assert!(i < n);
            if matches!(qa, 1 | 6 | 9 | 10 | 11 | 12 | 13) && qa != 10 {
                // The question follows the second fact of a round.
                assert_eq!(n % 2, 0);
            }
        }
    }
}

#[test]
fn puzzle_stories_have_babi_sizes_and_casts() {
    let sizes: [(u8, &[usize]); 8] = [
        (4, &[2]),
        (14, &[4, 6, 8, 10, 12]),
        (15, &[8]),
        (16, &[9]),
        (17, &[2]),
        (18, &[4, 5, 6, 7, 8, 9]),
        (19, &[4]),
        (20, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
    ];
    for (qa, allowed) in sizes {
        let mut seen = std::collections::BTreeSet::new();
        for story in stories(qa) {
            let n = story.facts.len();
            assert!(allowed.contains(&n), "qa{qa}: {n} facts");
            seen.insert(n);
            if qa == 20 {
                // The question is about the latest statement's person.
                let st = story.data.as_array().unwrap();
                assert_eq!(st[n - 1]["actor"], story.query["actor"]);
            }
        }
        assert_eq!(seen.len(), allowed.len(), "qa{qa} reaches every bAbI size");
    }
}

/// BABILong's closed answer sets per task (its `TASK_LABELS`), as facts.
fn babilong_labels(qa: u8) -> Vec<&'static str> {
    let rooms = vec![
        "bathroom", "bedroom", "garden", "hallway", "kitchen", "office",
    ];
    match qa {
        1 | 2 | 3 | 4 | 11 | 12 | 13 => rooms,
        5 => vec!["Bill", "Fred", "Jeff", "Mary", "apple", "football", "milk"],
        6 | 9 | 17 | 18 => vec!["no", "yes"],
        7 => vec!["none", "one", "three", "two"],
        8 => vec!["apple", "football", "milk", "nothing"],
        10 => vec!["maybe", "no", "yes"],
        14 => vec!["bedroom", "cinema", "kitchen", "office", "park", "school"],
        15 => vec!["cat", "mouse", "sheep", "wolf"],
        16 => vec!["gray", "green", "white", "yellow"],
        19 => vec![
            "e,e", "e,n", "e,s", "n,e", "n,n", "n,w", "s,e", "s,s", "s,w", "w,n", "w,s", "w,w",
        ],
        _ => vec![
            "bedroom", "bored", "garden", "hungry", "kitchen", "thirsty", "tired",
        ],
    }
}

/// BABILong's scoring rule, restated: lower-case the output and keep what comes before the
/// first full stop; the labels of the task found in it, less those the question mentions,
/// must be exactly the target (or, for a comma list longer than three characters, exactly
/// its items). Matching is by substring.
fn babilong_accepts(target: &str, output: &str, question: &str, labels: &[&str]) -> bool {
    let output = output.to_lowercase();
    let output = output.split('.').next().unwrap_or("");
    let target = target.to_lowercase();
    let question = question.to_lowercase();
    let labels: Vec<String> = labels.iter().map(|l| l.to_lowercase()).collect();
    let found: std::collections::BTreeSet<&String> = labels
        .iter()
        .filter(|l| output.contains(l.as_str()) && !question.contains(l.as_str()))
        .collect();
    if target.contains(',') && target.len() > 3 {
        let items: Vec<&str> = target.split(',').collect();
        items.iter().all(|t| found.iter().any(|f| f.as_str() == *t)) && found.len() == items.len()
    } else {
        found.len() == 1 && found.iter().all(|f| **f == target)
    }
}

#[test]
fn babilong_scorer_accepts_every_gold_answer_but_qa7_none() {
    for qa in 1..=20u8 {
        let labels = babilong_labels(qa);
        for story in stories(qa) {
            let mut ours: Vec<&str> = story.labels.iter().map(String::as_str).collect();
            ours.sort_unstable();
            let mut theirs = labels.clone();
            theirs.sort_unstable();
            assert_eq!(ours, theirs, "qa{qa}: our labels are BABILong's");
            let target = story.answers.join(",");
            let ok = babilong_accepts(&target, &target, &story.question, &labels);
            let known_bug = qa == 7 && target == "none";
            assert_eq!(ok, !known_bug, "qa{qa}: {} -> {target}", story.question);
        }
    }
    // The restated rule can fail: a wrong or doubled answer is refused.
    assert!(!babilong_accepts(
        "kitchen",
        "garden",
        "Where is Mary?",
        &babilong_labels(1)
    ));
    assert!(!babilong_accepts(
        "kitchen",
        "kitchen or garden",
        "Where is Mary?",
        &babilong_labels(1)
    ));
    assert!(babilong_accepts(
        "apple,milk",
        "milk, apple",
        "What is John carrying?",
        &babilong_labels(8)
    ));
}
