//! An independent bAbI solver for tests/babilong.rs: each answer re-derived from a row's
//! `params` (events, relations or statements) alone, without the generator's world simulator.

use std::collections::BTreeMap;

use serde_json::Value;

const COUNTS: [&str; 5] = ["none", "one", "two", "three", "four"];

/// A JSON string field, owned; panics (failing the test) on anything else.
pub fn s(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("{v} is not a string"))
        .to_string()
}

/// What the reader knows of an actor's place: qa9 denies one, qa10 offers two.
#[derive(Clone, Debug, PartialEq)]
enum Whereabouts {
    At(String),
    Not(String),
    Either(String, String),
}

/// qa19: the two moves from `from` to `to`, from the compass facts alone.
fn path(relations: &[Value], from: &str, to: &str) -> String {
    let opposite = |d: &str| match d {
        "north" => "south",
        "south" => "north",
        "east" => "west",
        _ => "east",
    };
    // (place, neighbour, direction of travel)
    let mut edges: Vec<(String, String, String)> = Vec::new();
    for r in relations {
        let (l, d, o) = (s(&r["location"]), s(&r["direction"]), s(&r["of"]));
        edges.push((o.clone(), l.clone(), d.clone()));
        edges.push((l, o, opposite(&d).to_string()));
    }
    let mut found = Vec::new();
    for (a, b, d1) in edges.iter().filter(|e| e.0 == from) {
        for (_, c, d2) in edges.iter().filter(|e| &e.0 == b && e.1 != *a) {
            if c == to {
                found.push(format!("{},{}", &d1[..1], &d2[..1]));
            }
        }
    }
    assert_eq!(found.len(), 1, "one two-step path from {from} to {to}");
    found.remove(0)
}

/// qa15-qa18 and qa20: the answer from `params.statements`.
fn solve_statements(st: &[Value], q: &Value) -> String {
    let kind = q["kind"].as_str().unwrap();
    let of = |k: &str, field: &str, key: &str, val: &Value| -> Vec<String> {
        st.iter()
            .filter(|x| x["kind"] == k && &x[key] == val)
            .map(|x| s(&x[field]))
            .collect()
    };
    match kind {
        "afraid_of" => {
            let species = of("member", "species", "actor", &q["actor"]);
            let feared = of("fear", "afraid_of", "species", &json_str(&species[0]));
            assert_eq!(feared.len(), 1);
            feared[0].clone()
        }
        "colour_of" => {
            let species = of("member", "species", "actor", &q["actor"]);
            let kin: Vec<String> = st
                .iter()
                .filter(|x| {
                    x["kind"] == "member"
                        && x["species"] == json_str(&species[0])
                        && x["actor"] != q["actor"]
                })
                .map(|x| s(&x["actor"]))
                .collect();
            let colours: std::collections::BTreeSet<String> = kin
                .iter()
                .flat_map(|a| of("colour", "colour", "actor", &json_str(a)))
                .collect();
            assert_eq!(colours.len(), 1, "one colour for the species: {colours:?}");
            colours.into_iter().next().unwrap()
        }
        "is_relation" => {
            // Coordinates from the facts, then the asked relation.
            let step = |r: &str| match r {
                "right of" => (1, 0),
                "left of" => (-1, 0),
                "above" => (0, 1),
                _ => (0, -1),
            };
            let mut at: BTreeMap<String, (i32, i32)> = BTreeMap::new();
            at.insert(s(&st[0]["b"]), (0, 0));
            for _ in 0..st.len() {
                for x in st {
                    let (a, b, d) = (
                        s(&x["a"]),
                        s(&x["b"]),
                        step(x["relation"].as_str().unwrap()),
                    );
                    if let Some(&(bx, by)) = at.get(&b) {
                        at.entry(a).or_insert((bx + d.0, by + d.1));
                    } else if let Some(&(ax, ay)) = at.get(&a) {
                        at.insert(b, (ax - d.0, ay - d.1));
                    }
                }
            }
            let (x, y) = (at[&s(&q["a"])], at[&s(&q["b"])]);
            let holds = match q["relation"].as_str().unwrap() {
                "right of" => x.0 > y.0,
                "left of" => x.0 < y.0,
                "above" => x.1 > y.1,
                _ => x.1 < y.1,
            };
            (if holds { "yes" } else { "no" }).to_string()
        }
        "fits_in" | "bigger_than" => {
            // smaller[x] = things known to be smaller than x, closed transitively.
            let mut less: Vec<(String, String)> = st
                .iter()
                .map(|x| match x["kind"].as_str().unwrap() {
                    "fits" => (s(&x["a"]), s(&x["b"])),
                    _ => (s(&x["b"]), s(&x["a"])),
                })
                .collect();
            loop {
                let mut more = Vec::new();
                for (a, b) in &less {
                    for (c, d) in &less {
                        if b == c && !less.contains(&(a.clone(), d.clone())) {
                            more.push((a.clone(), d.clone()));
                        }
                    }
                }
                if more.is_empty() {
                    break;
                }
                less.extend(more);
                less.sort();
                less.dedup();
            }
            let (a, b) = (s(&q["a"]), s(&q["b"]));
            let smaller = |x: &String, y: &String| less.contains(&(x.clone(), y.clone()));
            assert!(
                smaller(&a, &b) || smaller(&b, &a),
                "the sizes are derivable"
            );
            let yes = if kind == "fits_in" {
                smaller(&a, &b)
            } else {
                smaller(&b, &a)
            };
            (if yes { "yes" } else { "no" }).to_string()
        }
        "where_will_go" | "why_go" | "why_get" => {
            let feeling = of("feels", "motivation", "actor", &q["actor"]);
            assert_eq!(feeling.len(), 1);
            let place = match feeling[0].as_str() {
                "hungry" | "thirsty" => "kitchen",
                "tired" => "bedroom",
                _ => "garden",
            };
            if kind == "where_will_go" {
                assert!(of("move", "location", "actor", &q["actor"]).is_empty());
                place.to_string()
            } else {
                feeling[0].clone()
            }
        }
        other => panic!("unknown query {other}"),
    }
}

fn json_str(x: &str) -> Value {
    Value::String(x.to_string())
}

/// The answer to `params.query`, from `params.events` (or `params.relations`, or
/// `params.statements`) alone.
pub fn solve(p: &Value) -> Vec<String> {
    let q = &p["query"];
    let kind = q["kind"].as_str().unwrap();
    if let Some(st) = p["statements"].as_array() {
        return vec![solve_statements(st, q)];
    }
    if kind == "path" {
        let r = p["relations"].as_array().unwrap();
        return vec![path(r, &s(&q["from"]), &s(&q["to"]))];
    }
    if kind == "where_was_before" && q["actor"].is_string() {
        // qa14: the actor's moves in time order, not story order.
        let order = ["yesterday", "morning", "afternoon", "evening"];
        let mut moves: Vec<(usize, String)> = p["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["actor"] == q["actor"])
            .map(|e| {
                (
                    order.iter().position(|t| e["time"] == *t).unwrap(),
                    s(&e["location"]),
                )
            })
            .collect();
        moves.sort();
        let at = moves.iter().position(|m| m.1 == s(&q["location"])).unwrap();
        assert!(at > 0);
        return vec![moves[at - 1].1.clone()];
    }
    if let Some(relations) = p["relations"].as_array() {
        let dir = s(&q["direction"]);
        // Each fact read both ways: "a is north of b" is "b is south of a".
        let opposite = |d: &str| match d {
            "north" => "south",
            "south" => "north",
            "east" => "west",
            _ => "east",
        };
        let relations: Vec<Value> = relations
            .iter()
            .flat_map(|r| {
                let back = serde_json::json!({"location": r["of"], "direction": opposite(&s(&r["direction"])), "of": r["location"]});
                [r.clone(), back]
            })
            .collect();
        let found: Vec<String> = relations
            .iter()
            .filter(|r| s(&r["direction"]) == dir)
            .filter_map(|r| match kind {
                "what_is_dir_of" => (r["of"] == q["location"]).then(|| s(&r["location"])),
                "what_is_location_dir_of" => (r["location"] == q["location"]).then(|| s(&r["of"])),
                _ => panic!("unknown qa4 query {kind}"),
            })
            .collect();
        assert_eq!(found.len(), 1, "qa4 question has exactly one answer: {p}");
        return found;
    }
    let mut whereabouts: BTreeMap<String, Whereabouts> = BTreeMap::new();
    let mut holder: BTreeMap<String, String> = BTreeMap::new();
    let mut lies: BTreeMap<String, String> = BTreeMap::new();
    let mut held: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut trail: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut gives: Vec<(String, String, String)> = Vec::new();
    let place_of = |w: &BTreeMap<String, Whereabouts>, a: &str| match w.get(a) {
        Some(Whereabouts::At(l)) => Some(l.clone()),
        _ => None,
    };
    for e in p["events"].as_array().unwrap() {
        let actor = s(&e["actor"]);
        match e["action"].as_str().unwrap() {
            "move" => {
                let l = s(&e["location"]);
                if e["negated"] == Value::Bool(true) {
                    whereabouts.insert(actor, Whereabouts::Not(l));
                } else if let Some(b) = e["either"].as_str() {
                    // bAbI reads "either l or b" against what it knew: a known place among the
                    // two stays known; after another "either", a place ruled out leaves one.
                    let b = b.to_string();
                    let now = match whereabouts.get(&actor) {
                        // bAbI: a known place other than the two rules the first out, so
                        // the second is where the actor is.
                        Some(Whereabouts::At(x)) if *x == l => Whereabouts::At(x.clone()),
                        Some(Whereabouts::At(_)) => Whereabouts::At(b.clone()),
                        Some(Whereabouts::Either(c, d)) => {
                            let (li, bi) = (*c == l || *d == l, *c == b || *d == b);
                            match (li, bi) {
                                (true, true) => Whereabouts::Either(l, b),
                                (true, false) => Whereabouts::At(l),
                                _ => Whereabouts::At(b),
                            }
                        }
                        _ => Whereabouts::Either(l, b),
                    };
                    whereabouts.insert(actor, now);
                } else {
                    let mut who = vec![actor];
                    if let Some(c) = e["conj"].as_str() {
                        who.push(c.to_string());
                    }
                    for a in who {
                        whereabouts.insert(a.clone(), Whereabouts::At(l.clone()));
                        for o in held.get(&a).cloned().unwrap_or_default() {
                            trail.entry(o).or_default().push(l.clone());
                        }
                    }
                }
            }
            "get" => {
                let o = s(&e["object"]);
                if let (Some(l), Some(at)) = (lies.get(&o), place_of(&whereabouts, &actor)) {
                    assert_eq!(&at, l, "get where the object is: {p}");
                }
                assert!(!holder.contains_key(&o), "nobody holds what is got");
                holder.insert(o.clone(), actor.clone());
                held.entry(actor.clone()).or_default().push(o.clone());
                // bAbI's actors may act before the story places them: then no trail yet.
                if let Some(l) = place_of(&whereabouts, &actor) {
                    trail.entry(o).or_default().push(l);
                }
            }
            "drop" => {
                let o = s(&e["object"]);
                assert_eq!(holder.remove(&o), Some(actor.clone()), "drop needs holding");
                held.get_mut(&actor).unwrap().retain(|x| *x != o);
                match place_of(&whereabouts, &actor) {
                    Some(l) => lies.insert(o, l),
                    None => lies.remove(&o),
                };
            }
            "give" => {
                let (o, r) = (s(&e["object"]), s(&e["recipient"]));
                assert_eq!(holder.get(&o), Some(&actor), "give needs holding");
                assert_ne!(actor, r);
                // One in the same place as the other: a reader learns where from either.
                match (place_of(&whereabouts, &actor), place_of(&whereabouts, &r)) {
                    (Some(a), Some(b)) => assert_eq!(a, b, "give needs both in one place"),
                    (Some(a), None) => {
                        whereabouts.insert(r.clone(), Whereabouts::At(a));
                    }
                    (None, Some(b)) => {
                        whereabouts.insert(actor.clone(), Whereabouts::At(b));
                    }
                    (None, None) => {}
                }
                holder.insert(o.clone(), r.clone());
                held.get_mut(&actor).unwrap().retain(|x| *x != o);
                held.entry(r.clone()).or_default().push(o.clone());
                gives.push((actor, o, r));
            }
            other => panic!("unknown action {other}"),
        }
    }
    let last_give = |f: &dyn Fn(&(String, String, String)) -> bool| {
        gives
            .iter()
            .rev()
            .find(|g| f(g))
            .cloned()
            .expect("a give the question is about")
    };
    let one = |x: String| vec![x];
    match kind {
        "where_is" => one(place_of(&whereabouts, &s(&q["actor"])).unwrap()),
        "where_is_object" => {
            let o = s(&q["object"]);
            one(match holder.get(&o) {
                Some(a) => place_of(&whereabouts, a).unwrap(),
                None => lies[&o].clone(),
            })
        }
        "where_was_before" => {
            let mut t = trail[&s(&q["object"])].clone();
            t.dedup();
            let l = s(&q["location"]);
            // Before its latest arrival there.
            let at = t
                .iter()
                .rposition(|x| *x == l)
                .expect("the object was there");
            assert!(at > 0, "the object came to {l} from somewhere: {t:?}");
            one(t[at - 1].clone())
        }
        "who_gave" => {
            let (o, r) = (s(&q["object"]), s(&q["recipient"]));
            one(last_give(&|g| g.1 == o && g.2 == r).0)
        }
        "who_received" => {
            let o = s(&q["object"]);
            one(last_give(&|g| g.1 == o).2)
        }
        "what_given" => {
            let (a, r) = (s(&q["actor"]), s(&q["recipient"]));
            one(last_give(&|g| g.0 == a && g.2 == r).1)
        }
        "given_to" => {
            let (a, o) = (s(&q["actor"]), s(&q["object"]));
            one(last_give(&|g| g.0 == a && g.1 == o).2)
        }
        "who_gave_object" => {
            let o = s(&q["object"]);
            one(last_give(&|g| g.1 == o).0)
        }
        "is_in" => {
            let l = s(&q["location"]);
            let answer = match &whereabouts[&s(&q["actor"])] {
                Whereabouts::At(x) if *x == l => "yes",
                Whereabouts::At(_) => "no",
                Whereabouts::Not(x) => {
                    assert_eq!(*x, l, "only the denied place can be asked");
                    "no"
                }
                Whereabouts::Either(a, b) if *a == l || *b == l => "maybe",
                Whereabouts::Either(..) => "no",
            };
            one(answer.to_string())
        }
        "count_carrying" => one(COUNTS[held.get(&s(&q["actor"])).map_or(0, Vec::len)].to_string()),
        "list_carrying" => match held.get(&s(&q["actor"])) {
            Some(v) if !v.is_empty() => v.clone(),
            _ => one("nothing".to_string()),
        },
        other => panic!("unknown query {other}"),
    }
}

/// The words a fact sentence must contain, from its data.
pub fn fact_words(p: &Value, i: usize) -> Vec<String> {
    if let Some(r) = p["relations"].as_array() {
        let r = &r[i];
        return vec![s(&r["location"]), s(&r["direction"]), s(&r["of"])];
    }
    if let Some(st) = p["statements"].as_array() {
        // Every named thing, word by word, and the relation's key word.
        let x = &st[i];
        let mut w = Vec::new();
        for (k, v) in x.as_object().unwrap() {
            if let Some(v) = v.as_str() {
                match k.as_str() {
                    "kind" => {}
                    "relation" => w.push(v.split(' ').next().unwrap().to_string()),
                    _ => w.extend(v.split(' ').map(str::to_string)),
                }
            }
        }
        return w;
    }
    let e = &p["events"][i];
    let mut w = Vec::new();
    if e["coref"] == Value::Bool(true) {
        w.push(if e["conj"].is_string() { "they" } else { "" }.to_string());
    } else {
        w.push(s(&e["actor"]));
        if let Some(c) = e["conj"].as_str() {
            w.push(c.to_string());
        }
    }
    for k in ["location", "object", "recipient", "either"] {
        if let Some(x) = e[k].as_str() {
            w.push(x.to_string());
        }
    }
    if e["negated"] == Value::Bool(true) {
        w.push("not|no".to_string());
    }
    w.retain(|x| !x.is_empty());
    w
}
