//! Every puzzle task's seeded stories, re-solved here from their facts as data alone (not from
//! the generator's own bookkeeping): the answer must match, and the supporting facts must be
//! ascending, in range, and the ones the solver used.

use std::collections::BTreeMap;

use serde_json::Value;

use super::super::{Babilong, Story};

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("{v} is not a string"))
}

/// Seeded stories of task `qa`, both vocabularies: its default sizes, and every size it takes
/// asked for exactly (`--facts N`), each told with exactly that many facts.
fn stories(qa: u8) -> Vec<Story> {
    let mut out = Vec::new();
    let spec = super::super::spec::find(qa).unwrap();
    let sizes = (spec.min_facts..=spec.max_facts).map(|n| (Some((n, n)), 12));
    for (facts, samples) in std::iter::once((None, 60)).chain(sizes) {
        for vocab in ["babi", "fresh"] {
            let task = Babilong::new(qa, vocab, facts, (0.0, 100.0)).unwrap();
            for sample in 0..samples {
                let story = task.story(3, sample).unwrap();
                if let Some((n, _)) = facts {
                    assert_eq!(story.facts.len(), n as usize, "qa{qa}");
                }
                assert!(story.supporting.windows(2).all(|w| w[0] < w[1]));
                assert!(story.supporting.iter().all(|&f| f < story.facts.len()));
                assert!(story.labels.contains(&story.answers.join(",")));
                out.push(story);
            }
        }
    }
    out
}

/// Check each story's answer and supporting facts against `solve(data, query)`: the seeded
/// stories, and the `babilong` template's worked examples of the task.
fn check(qa: u8, solve: impl Fn(&[Value], &Value) -> (String, Vec<usize>)) {
    let told = stories(qa).into_iter().map(|s| {
        let n = s.facts.len();
        (s.data, s.query, s.answers, s.supporting, s.question, n)
    });
    let examples = super::super::prompt::examples(qa).unwrap().iter();
    let shown = examples.map(|e| {
        let n = e.facts.len();
        let (d, q, a) = (e.data.clone(), e.query.clone(), e.answers.clone());
        (d, q, a, e.supporting.clone(), e.question.clone(), n)
    });
    for (data, query, answers, supporting, question, n) in told.chain(shown) {
        let data = data.as_array().unwrap();
        assert_eq!(data.len(), n);
        let (answer, mut support) = solve(data, &query);
        support.sort_unstable();
        assert_eq!(answers, [answer], "qa{qa}: {question}");
        if qa == 18 {
            // Several two-fact chains may link a pair; bAbI's is one of them.
            assert_eq!(supporting.len(), 2, "qa18: {question}");
        } else {
            assert_eq!(supporting, support, "qa{qa}: {question}");
        }
    }
}

#[test]
fn qa4_compass() {
    let opposite = |d: &str| match d {
        "north" => "south",
        "south" => "north",
        "east" => "west",
        _ => "east",
    };
    check(4, |relations, q| {
        // Each fact read both ways: (a, dir, b) means a lies dir of b.
        let mut read: Vec<(&str, &str, &str, usize)> = Vec::new();
        for (i, r) in relations.iter().enumerate() {
            let (a, d, b) = (s(&r["location"]), s(&r["direction"]), s(&r["of"]));
            read.push((a, d, b, i));
            read.push((b, opposite(d), a, i));
        }
        let (dir, at) = (s(&q["direction"]), s(&q["location"]));
        let found: Vec<(String, usize)> = read
            .iter()
            .filter(|r| r.1 == dir)
            .filter_map(|&(a, _, b, i)| match s(&q["kind"]) {
                "what_is_dir_of" => (b == at).then(|| (a.to_string(), i)),
                _ => (a == at).then(|| (b.to_string(), i)),
            })
            .collect();
        assert_eq!(found.len(), 1, "one answer: {q}");
        // bAbI's rule: the question names the middle place (named by both facts).
        assert!(relations
            .iter()
            .all(|r| r["location"] == *at || r["of"] == *at));
        (found[0].0.clone(), vec![found[0].1])
    });
}

#[test]
fn qa14_time_order() {
    const TIMES: [&str; 4] = ["yesterday", "morning", "afternoon", "evening"];
    check(14, |events, q| {
        let time = |e: &Value| TIMES.iter().position(|t| *t == s(&e["time"])).unwrap();
        let of_actor = |i: &usize| events[*i]["actor"] == q["actor"];
        let at = (0..events.len())
            .filter(of_actor)
            .find(|&i| events[i]["location"] == q["location"])
            .unwrap();
        let before = (0..events.len())
            .filter(of_actor)
            .filter(|&i| time(&events[i]) < time(&events[at]))
            .max_by_key(|&i| time(&events[i]))
            .unwrap();
        (s(&events[before]["location"]).to_string(), vec![before, at])
    });
}

#[test]
fn qa15_deduction() {
    check(15, |statements, q| {
        let find = |kind: &str, key: &str, value: &Value| {
            (0..statements.len())
                .find(|&i| s(&statements[i]["kind"]) == kind && statements[i][key] == *value)
                .unwrap()
        };
        let member = find("member", "actor", &q["actor"]);
        let fear = find("fear", "species", &statements[member]["species"]);
        (
            s(&statements[fear]["afraid_of"]).to_string(),
            vec![member, fear],
        )
    });
}

#[test]
fn qa16_induction() {
    check(16, |statements, q| {
        let member = (0..statements.len())
            .find(|&i| statements[i]["actor"] == q["actor"])
            .unwrap();
        assert!(statements
            .iter()
            .all(|x| !(x["actor"] == q["actor"] && s(&x["kind"]) == "colour")));
        let species = &statements[member]["species"];
        let mut support = vec![member];
        let mut answer = String::new();
        for kin in (0..statements.len()).filter(|&i| {
            i != member
                && s(&statements[i]["kind"]) == "member"
                && statements[i]["species"] == *species
        }) {
            let colour = (0..statements.len())
                .find(|&i| {
                    s(&statements[i]["kind"]) == "colour"
                        && statements[i]["actor"] == statements[kin]["actor"]
                })
                .unwrap();
            answer = s(&statements[colour]["colour"]).to_string();
            support.extend([kin, colour]);
        }
        (answer, support)
    });
}

#[test]
fn qa17_positions() {
    let step = |relation: &str| match relation {
        "right of" => (1, 0),
        "left of" => (-1, 0),
        "above" => (0, 1),
        _ => (0, -1),
    };
    check(17, |statements, q| {
        // Place the shapes: repeat until both facts are used.
        let mut at: BTreeMap<String, (i32, i32)> = BTreeMap::new();
        at.insert(s(&statements[0]["b"]).to_string(), (0, 0));
        for _ in 0..2 {
            for f in statements {
                let (d, a, b) = (step(s(&f["relation"])), s(&f["a"]), s(&f["b"]));
                if let Some(&(x, y)) = at.get(b) {
                    at.insert(a.to_string(), (x + d.0, y + d.1));
                } else if let Some(&(x, y)) = at.get(a) {
                    at.insert(b.to_string(), (x - d.0, y - d.1));
                }
            }
        }
        let (a, b) = (at[s(&q["a"])], at[s(&q["b"])]);
        let d = step(s(&q["relation"]));
        let holds = (a.0 - b.0) * d.0 + (a.1 - b.1) * d.1 > 0;
        (if holds { "yes" } else { "no" }.to_string(), vec![0, 1])
    });
}

#[test]
fn qa18_sizes() {
    check(18, |statements, q| {
        // Smaller-than edges, each with its fact.
        let edges: Vec<(&str, &str, usize)> = statements
            .iter()
            .enumerate()
            .map(|(i, f)| match s(&f["kind"]) {
                "fits" => (s(&f["a"]), s(&f["b"]), i),
                _ => (s(&f["b"]), s(&f["a"]), i),
            })
            .collect();
        // bAbI asks about pairs two facts apart (and no fewer): the first such chain.
        let chain = |small: &str, big: &str| -> Option<Vec<usize>> {
            assert!(!edges.iter().any(|e| e.0 == small && e.1 == big));
            edges.iter().find_map(|&(a, m, i)| {
                let &(_, _, j) = edges
                    .iter()
                    .find(|e| a == small && e.0 == m && e.1 == big)?;
                Some(vec![i, j])
            })
        };
        let (a, b) = (s(&q["a"]), s(&q["b"]));
        let (small, big) = match s(&q["kind"]) {
            "fits_in" => (a, b),
            _ => (b, a),
        };
        match chain(small, big) {
            Some(used) => ("yes".into(), used),
            None => ("no".into(), chain(big, small).unwrap()),
        }
    });
}

#[test]
fn qa19_paths() {
    let opposite = |d: &str| match d {
        "north" => "south",
        "south" => "north",
        "east" => "west",
        _ => "east",
    };
    check(19, |relations, q| {
        // (from, to, direction of travel, fact)
        let mut steps: Vec<(&str, &str, &str, usize)> = Vec::new();
        for (i, r) in relations.iter().enumerate() {
            let (l, d, o) = (s(&r["location"]), s(&r["direction"]), s(&r["of"]));
            steps.push((o, l, d, i));
            steps.push((l, o, opposite(d), i));
        }
        let (from, to) = (s(&q["from"]), s(&q["to"]));
        for &(_, mid, d1, f1) in steps.iter().filter(|x| x.0 == from) {
            if let Some(&(_, _, d2, f2)) = steps.iter().find(|x| x.0 == mid && x.1 == to) {
                return (format!("{},{}", &d1[..1], &d2[..1]), vec![f1, f2]);
            }
        }
        panic!("no two-step path from {from} to {to}");
    });
}

#[test]
fn qa20_motivations() {
    let goes_to = |feeling: &str| match feeling {
        "hungry" | "thirsty" => "kitchen",
        "tired" => "bedroom",
        _ => "garden",
    };
    check(20, |statements, q| {
        let own: Vec<usize> = (0..statements.len())
            .filter(|&i| statements[i]["actor"] == q["actor"])
            .collect();
        let feeling = s(&statements[own[0]]["motivation"]);
        let answer = match s(&q["kind"]) {
            "where_will_go" => goes_to(feeling),
            _ => feeling,
        };
        (answer.to_string(), vec![own[0]])
    });
}
