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

/// One walk story's facts, question, answers and supporting facts, checked against bAbI's
/// rules by replaying the facts; returns the replayed world.
fn check_walk(
    qa: u8,
    events: &[Value],
    q: &Value,
    answers: &[String],
    supporting: &[usize],
) -> Replay {
    let n = events.len();
    let mut w = Replay::new(qa);
    w.run(qa, events);
    if matches!(qa, 1 | 6 | 9 | 10 | 11 | 12 | 13) {
        assert!([2, 4, 6, 8, 10].contains(&n), "qa{qa}: {n} facts");
    }
    match qa {
        1 | 11 | 12 | 13 => {
            assert_eq!(answers, [w.known[&s(&q["actor"])].clone()]);
        }
        2 => {
            // Only an object someone holds, whose place a reader knows.
            let o = s(&q["object"]);
            let a = w.holder[&o].clone().expect("qa2 asks about a held object");
            assert_eq!(answers, [w.known[&a].clone()]);
            assert_eq!(supporting.len(), 2);
        }
        3 => {
            // L is where the object is now, as far as a reader knows.
            let h = &w.history[&s(&q["object"])];
            assert_eq!(
                s(&q["location"]),
                h[h.len() - 1],
                "qa3 asks about the latest place"
            );
            assert_eq!(answers, [h[h.len() - 2].clone()]);
        }
        5 => {
            let f = supporting[0];
            assert_eq!(supporting.len(), 1);
            assert_eq!(s(&events[f]["action"]), "give");
            assert!(n - 1 - f <= 5, "qa5: the give {} facts back", n - 1 - f);
            let o = &events[f]["object"];
            assert!(events[f + 1..].iter().all(|e| e.get("object") != Some(o)));
        }
        _ => {}
    }
    let i = supporting.iter().max().copied().unwrap_or(0);
    assert!(i < n);
    if matches!(qa, 1 | 6 | 9 | 10 | 11 | 12 | 13) {
        // The question follows the second fact of a round.
        assert_eq!(n % 2, 0);
    }
    w
}

#[test]
fn walk_stories_follow_babi_rules() {
    for qa in [1u8, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13] {
        for story in stories(qa) {
            let events = story.data.as_array().unwrap();
            check_walk(qa, events, &story.query, &story.answers, &story.supporting);
        }
    }
}

/// The `babilong` template's worked examples of the walk tasks follow the same rules.
#[test]
fn walk_examples_follow_babi_rules() {
    for qa in [1u8, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13] {
        for e in super::prompt::examples(qa).unwrap() {
            assert_eq!(e.data_key, "events");
            let events = e.data.as_array().unwrap();
            check_walk(qa, events, &e.query, &e.answers, &e.supporting);
        }
    }
}

/// What a reader knows of one actor's place, as bAbI's knowledge base keeps it for qa9 and
/// qa10 (`EntityProperties` with `is_in` exclusive): (place, truth, supporting facts) entries,
/// and whether `add` has bAbI's Lua quirk.
#[derive(Debug, Clone, Default)]
struct Knows(Vec<(String, bool, Vec<usize>)>, bool);

impl Knows {
    fn set(&mut self, place: &str, truth: bool, support: Vec<usize>) {
        self.0 = vec![(place.to_string(), truth, support)];
    }

    /// bAbI's `add`: drop the entry for the place, and with a true value any true entry.
    /// bAbI's Lua removes while iterating (`ipairs` and `remove_value`), which skips the entry
    /// after a removed one; with the quirk, so does this.
    fn add(&mut self, place: &str, truth: bool, support: Vec<usize>) {
        let mut i = 0;
        while i < self.0.len() {
            if self.0[i].0 == place || (truth && self.0[i].1) {
                self.0.remove(i);
                if !self.1 {
                    continue;
                }
            }
            i += 1;
        }
        self.0.push((place.to_string(), truth, support));
    }

    /// bAbI's `get_truth_value`: true if a true entry names the place; false if an entry
    /// denies it or a true entry names another; the support of both.
    fn truth(&self, place: &str) -> Option<(bool, Vec<usize>)> {
        let t = self.0.iter().find(|e| e.0 == place && e.1);
        let f = self.0.iter().rev().find(|e| (e.0 == place) != e.1);
        if t.is_none() && f.is_none() {
            return None;
        }
        let mut support: Vec<usize> = t.iter().chain(&f).flat_map(|e| e.2.clone()).collect();
        support.sort_unstable();
        support.dedup();
        Some((t.is_some(), support))
    }
}

/// qa6 to qa10 asked the way bAbI asks them, each answer as bAbI's knowledge gives it.
/// Returns whether bAbI's Lua, quirk included, would record other supporting facts (qa10).
fn check_qa6_to_qa10(
    qa: u8,
    events: &[Value],
    q: &Value,
    answers: &[String],
    supporting: &[usize],
) -> bool {
    let mut quirk = false;
    let w = check_walk(qa, events, q, answers, supporting);
    let n = events.len();
    let actor = s(&q["actor"]);
    let of_actor: Vec<usize> = (0..n)
        .filter(|&i| s(&events[i]["actor"]) == actor)
        .collect();
    let answer = answers.join(",");
    match qa {
        6 => {
            // A moved actor; yes exactly when asked about the place of their latest move,
            // which is the one supporting fact.
            let last = *of_actor.last().expect("qa6 asks about a moved actor");
            let at = s(&events[last]["location"]);
            assert_eq!(w.known[&actor], at);
            let yes = s(&q["location"]) == at;
            assert_eq!(answer, if yes { "yes" } else { "no" });
            assert_eq!(supporting, [last]);
        }
        7 | 8 => {
            // The first question comes once someone has got, dropped or given something
            // (never after the first fact), then one every second fact.
            let first = (2..=n)
                .find(|&i| events[..i].iter().any(|e| s(&e["action"]) != "move"))
                .expect("someone handled an object");
            assert!(
                n >= first && (n - first).is_multiple_of(2) && n - first <= 8,
                "qa{qa}: {n} facts, first question after {first}"
            );
            // About someone who has handled an object; supported by everything they did
            // with objects.
            let handled: Vec<usize> = of_actor
                .iter()
                .copied()
                .filter(|&i| s(&events[i]["action"]) != "move")
                .collect();
            assert!(
                !handled.is_empty(),
                "qa{qa} asks about someone who handled an object"
            );
            assert_eq!(supporting, handled);
            let mut held: Vec<String> = w
                .holder
                .iter()
                .filter(|(_, h)| h.as_deref() == Some(actor.as_str()))
                .map(|(o, _)| o.clone())
                .collect();
            if qa == 7 {
                assert_eq!(
                    answer,
                    super::spec::COUNTS[held.len()],
                    "qa7 counts what is held"
                );
            } else {
                let mut got = answers.to_vec();
                got.sort();
                held.sort();
                if held.is_empty() {
                    held.push("nothing".into());
                }
                assert_eq!(got, held, "qa8 lists what is held");
            }
        }
        _ => {
            // Knowledge as bAbI keeps it: moves and "is in" set a place; "is not in" denies
            // one; "either A or B" is a rule applied once, when it is told.
            assert!(
                !of_actor.is_empty(),
                "qa{qa} asks about someone the story names"
            );
            let asked = s(&q["location"]);
            let read = |quirk: bool| {
                let mut k = Knows(Vec::new(), quirk);
                let mut latest_either = None;
                for &i in &of_actor {
                    let e = &events[i];
                    let l = s(&e["location"]);
                    if e.get("negated").is_some() {
                        k.set(&l, false, vec![i]);
                    } else if let Some(b) = e.get("either").map(s) {
                        latest_either = Some(i);
                        let pair = [l.clone(), b.clone()];
                        assert_ne!(l, b, "two places");
                        for j in 0..2 {
                            if let Some((t, mut sup)) = k.truth(&pair[j]) {
                                sup.push(i);
                                sup.sort_unstable();
                                sup.dedup();
                                k.add(&pair[1 - j], !t, sup);
                            }
                        }
                        let others = CLASSIC_PLACES
                            .iter()
                            .filter(|p| !pair.contains(&p.to_string()));
                        for p in others {
                            k.add(p, false, vec![i]);
                        }
                    } else {
                        k.set(&l, true, vec![i]);
                    }
                }
                match k.truth(&asked) {
                    Some((true, sup)) => ("yes", sup),
                    Some((false, sup)) => ("no", sup),
                    None => ("maybe", latest_either.into_iter().collect()),
                }
            };
            let (want, support) = read(false);
            assert_eq!(answer, want, "qa{qa}: {q}");
            assert_eq!(supporting, support, "qa{qa}: {q}");
            // bAbI's Lua quirk never changes an answer; it may add a stale fact to the support.
            let (lua, lua_support) = read(true);
            assert_eq!(answer, lua, "qa{qa}: {q}");
            quirk = lua_support != support;
            let last = &events[*of_actor.last().unwrap()];
            if qa == 9 {
                // Simple negation: the latest statement decides; a denial is asked about the
                // denied place only.
                assert_eq!(support, [*of_actor.last().unwrap()]);
                if last.get("negated").is_some() {
                    assert_eq!(asked, s(&last["location"]));
                }
            } else if last.get("either").is_some() && of_actor.len() == 1 {
                // Indefinite knowledge, the plain case: maybe for the two places, no elsewhere.
                let two = [s(&last["location"]), s(&last["either"])];
                assert_eq!(answer, if two.contains(&asked) { "maybe" } else { "no" });
            } else if last.get("either").is_none() {
                // A definite latest statement: yes for its place, no elsewhere.
                let yes = asked == s(&last["location"]);
                assert_eq!(answer, if yes { "yes" } else { "no" });
            }
        }
    }
    quirk
}

#[test]
fn qa6_to_qa10_answers_follow_babi_knowledge() {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut quirks = 0;
    for qa in 6..=10u8 {
        for story in stories(qa) {
            let events = story.data.as_array().unwrap();
            let (q, a, sup) = (&story.query, &story.answers, &story.supporting);
            quirks += usize::from(check_qa6_to_qa10(qa, events, q, a, sup));
            *seen
                .entry(format!("qa{qa} {}", story.answers.join(",")))
                .or_default() += 1;
        }
        for e in super::prompt::examples(qa).unwrap() {
            let events = e.data.as_array().unwrap();
            let quirk = check_qa6_to_qa10(qa, events, &e.query, &e.answers, &e.supporting);
            assert!(!quirk, "an example bAbI's Lua would support otherwise");
        }
    }
    // bAbI's Lua records a stale extra supporting fact in a few qa10 stories (17 of 20,000
    // seeded ones); our supporting facts are the ones without that quirk.
    println!("qa10 stories whose support bAbI's Lua quirk would change: {quirks}");
    assert!(quirks * 100 <= STORIES as usize, "{quirks}");
    // Every kind of answer occurs, "none" and "nothing" included.
    for key in [
        "qa6 yes",
        "qa6 no",
        "qa7 none",
        "qa7 two",
        "qa8 nothing",
        "qa9 yes",
        "qa9 no",
        "qa10 maybe",
        "qa10 yes",
    ] {
        assert!(seen.get(key).copied().unwrap_or(0) > 5, "{key}: {seen:?}");
    }
}

/// The knowledge model can fail: bAbI's rules give other answers than a naive reading.
#[test]
fn knowledge_model_tells_either_apart() {
    let mut k = Knows::default();
    k.set("office", true, vec![0]);
    // Known in the office, then "either kitchen or garden": bAbI rules the kitchen out first
    // (another place is true), so the garden becomes true.
    let pair = ["kitchen", "garden"];
    for i in 0..2 {
        if let Some((t, sup)) = k.truth(pair[i]) {
            k.add(pair[1 - i], !t, sup);
        }
    }
    assert_eq!(k.truth("garden").map(|t| t.0), Some(true));
    assert_eq!(k.truth("kitchen").map(|t| t.0), Some(false));
    // The Lua quirk: in 0 "in the hallway", 3 "either garden or bedroom", 4 "either kitchen
    // or garden", removing the true bedroom skips the stale "not garden" (from 0 and 3), so
    // "not kitchen" rests on 0, 3 and 4 instead of 3 and 4. The answer is the same.
    let either = |k: &mut Knows, pair: [&str; 2], i: usize| {
        for j in 0..2 {
            if let Some((t, mut sup)) = k.truth(pair[j]) {
                sup.push(i);
                sup.sort_unstable();
                sup.dedup();
                k.add(pair[1 - j], !t, sup);
            }
        }
        for p in CLASSIC_PLACES.iter().filter(|p| !pair.contains(p)) {
            k.add(p, false, vec![i]);
        }
    };
    let support = |quirk: bool| {
        let mut k = Knows(Vec::new(), quirk);
        k.set("hallway", true, vec![0]);
        either(&mut k, ["garden", "bedroom"], 3);
        either(&mut k, ["kitchen", "garden"], 4);
        k.truth("kitchen").unwrap()
    };
    assert_eq!(support(false), (false, vec![3, 4]));
    assert_eq!(support(true), (false, vec![0, 3, 4]));
    let mut fresh = Knows::default();
    assert_eq!(fresh.truth("garden"), None);
    fresh.add("hallway", false, vec![3]);
    assert_eq!(fresh.truth("hallway"), Some((false, vec![3])));
    assert_eq!(fresh.truth("garden"), None);
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
