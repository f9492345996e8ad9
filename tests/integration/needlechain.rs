//! End-to-end tests of `gen needlechain`, running the real binary.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::*;
use needlework_generators::Tokenizer;
use serde_json::Value;

/// Recompute every amount from the relations alone, checking integrality on the way.
fn amounts(chain: &[Value]) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for link in chain {
        let v = match link["relation"].as_str().unwrap() {
            "anchor" | "independent" => link["value"].as_u64().unwrap(),
            "double" => out.last().unwrap() * 2,
            "half" => {
                let prev = *out.last().unwrap();
                assert_eq!(prev % 2, 0, "half of an odd amount is not an integer");
                prev / 2
            }
            "same" => *out.last().unwrap(),
            other => panic!("unknown relation {other}"),
        };
        if !matches!(link["relation"].as_str().unwrap(), "anchor" | "independent") {
            assert_eq!(
                link["of"],
                out.len()
                    .checked_sub(1)
                    .map_or(Value::Null, |i| chain[i]["name"].clone())
            );
        }
        out.push(v);
    }
    out
}

/// Every order at --len 2k.
#[test]
fn salary_orders_at_2k() {
    let t = tmp();
    let tok = Tokenizer::O200k;
    for order in ["forward", "backward", "shuffled", "parallel"] {
        for question in ["single", "total"] {
            let out = t
                .path()
                .join(format!("{order}-{question}"))
                .display()
                .to_string();
            generate(
                &out,
                &[
                    "needlechain",
                    "--order",
                    order,
                    "--question",
                    question,
                    "--len",
                    "2k",
                    "--samples",
                    "3",
                ],
            );
            for r in rows(Path::new(&out)) {
                assert_eq!(r.variant, format!("salary_{order}"));
                let chain = r.params["chain"].as_array().unwrap();
                let k = chain.len();
                let values = amounts(chain);
                for (v, link) in values.iter().zip(chain) {
                    assert_eq!(*v, link["value"].as_u64().unwrap());
                }
                let want = if question == "single" {
                    *values.last().unwrap()
                } else {
                    values.iter().sum()
                };
                assert_eq!(r.target, want.to_string(), "{order} {question}");
                assert_eq!(r.metric, "exact");
                // Exact length, and within one fact (plus its name in the people list) of the budget.
                assert_eq!(r.length as usize, tok.count(&r.input).unwrap());
                let budget = 2048 - 32;
                assert!(r.length <= budget, "{}", r.length);
                assert!(
                    budget - r.length <= 24,
                    "{order}: {} tokens left unused with {k} facts",
                    budget - r.length
                );
                // Render order.
                let rendered: Vec<usize> = r.params["rendered_order"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap() as usize)
                    .collect();
                let forward: Vec<usize> = (0..k).collect();
                let backward: Vec<usize> = (0..k).rev().collect();
                match order {
                    "forward" | "parallel" => assert_eq!(rendered, forward),
                    "backward" => assert_eq!(rendered, backward),
                    _ => {
                        assert!(k >= 5);
                        assert_ne!(rendered, forward);
                        assert_ne!(rendered, backward);
                        let set: BTreeSet<usize> = rendered.iter().copied().collect();
                        assert_eq!(set.len(), k, "a permutation");
                    }
                }
                assert_eq!(r.needle_offsets.len(), k);
                assert!(
                    r.needle_offsets.windows(2).all(|w| w[0] < w[1]),
                    "offsets increase along input"
                );
                // Each fact names its person at its offset; facts appear in rendered order.
                let mut at = 0;
                for &i in &rendered {
                    let name = chain[i]["name"].as_str().unwrap();
                    let pos = r.input[at..]
                        .find(&format!("\n{name} is paid"))
                        .expect("fact in order")
                        + at;
                    at = pos + 1;
                }
                // The people list is sorted, so it does not reveal the chain.
                let intro = r.input.lines().next().unwrap();
                let listed = intro
                    .split(": ")
                    .nth(1)
                    .unwrap()
                    .split(". ")
                    .next()
                    .unwrap();
                let names: Vec<&str> = listed.split(", ").collect();
                let mut sorted = names.clone();
                sorted.sort();
                assert_eq!(names, sorted);
                assert_eq!(names.len(), k);
            }
        }
    }
}

/// A 200-fact chain keeps integral amounts; kinship's eldest ancestor is right.
#[test]
fn long_chains_and_kinship() {
    let t = tmp();
    let out = t.path().join("long").display().to_string();
    generate(
        &out,
        &[
            "needlechain",
            "--chain",
            "200",
            "--order",
            "shuffled",
            "--question",
            "total",
            "--len",
            "16k",
        ],
    );
    let r = &rows(Path::new(&out))[0];
    let chain = r.params["chain"].as_array().unwrap();
    assert_eq!(chain.len(), 200);
    let values = amounts(chain);
    assert_eq!(r.target, values.iter().sum::<u64>().to_string());
    let (min, max) = (values.iter().min().unwrap(), values.iter().max().unwrap());
    assert!(max / min <= 4096, "exponent bound over the whole chain");

    for question in ["eldest", "ancestor", "distance"] {
        let out = t
            .path()
            .join(format!("kin-{question}"))
            .display()
            .to_string();
        generate(
            &out,
            &[
                "needlechain",
                "--kind",
                "kinship",
                "--order",
                "shuffled",
                "--question",
                question,
                "--len",
                "3k",
                "--samples",
                "2",
            ],
        );
        for r in rows(Path::new(&out)) {
            let chain = r.params["chain"].as_array().unwrap();
            // Generations below the eldest, from the facts alone.
            let children: BTreeSet<&str> =
                chain.iter().map(|l| l["of"].as_str().unwrap()).collect();
            let parents: BTreeSet<&str> =
                chain.iter().map(|l| l["name"].as_str().unwrap()).collect();
            let eldest: Vec<&str> = parents
                .iter()
                .copied()
                .filter(|n| !children.contains(n))
                .collect();
            let youngest: Vec<&str> = children
                .iter()
                .copied()
                .filter(|n| !parents.contains(n))
                .collect();
            assert_eq!((eldest.len(), youngest.len()), (1, 1));
            let mut gen = std::collections::BTreeMap::from([(eldest[0], 0u64)]);
            let mut person = eldest[0];
            while let Some(link) = chain.iter().find(|l| l["name"] == person) {
                let child = link["of"].as_str().unwrap();
                gen.insert(child, gen[person] + link["value"].as_u64().unwrap());
                person = child;
            }
            assert_eq!(gen.len(), chain.len() + 1);
            match question {
                "eldest" => assert_eq!(r.target, eldest[0]),
                "distance" => assert_eq!(r.target, gen[youngest[0]].to_string()),
                _ => {
                    let q = r.params["question_text"].as_str().unwrap();
                    let n: u64 = q
                        .split(" exactly ")
                        .nth(1)
                        .unwrap()
                        .split(' ')
                        .next()
                        .unwrap()
                        .parse()
                        .unwrap();
                    let want = gen
                        .iter()
                        .find(|(_, g)| **g + n == gen[youngest[0]])
                        .unwrap()
                        .0;
                    assert_eq!(&r.target, want);
                }
            }
            assert!(r.input.contains(&r.target) || question == "distance");
        }
    }
}

/// Deterministic, and verify passes; also with a haystack and depths.
#[test]
fn deterministic_and_verifiable() {
    let t = tmp();
    let run = |name: &str, extra: &[&str]| {
        let out = t.path().join(name).display().to_string();
        let mut args = vec![
            "needlechain",
            "--order",
            "shuffled",
            "--len",
            "1k,3k",
            "--samples",
            "2",
            "--seed",
            "5",
        ];
        args.extend_from_slice(extra);
        generate(&out, &args);
        gen_ok(&["verify", &out, "-q"]);
        dataset_bytes(Path::new(&out))
    };
    assert_eq!(run("a", &[]), run("b", &["--threads", "1"]));
    let diluted = run(
        "d",
        &[
            "--haystack",
            "generated",
            "--chain",
            "6",
            "--depths",
            "0,50,100",
        ],
    );
    assert!(!diluted.is_empty());
    let out = t.path().join("d");
    for r in rows(&out) {
        let depth = r.depth_percent.unwrap();
        if depth < 100.0 {
            // Within max(2 points, one unit): a generated sentence is up to ~30 tokens of this
            // ~900-token context.
            assert!(
                (r.needle_depths[0] - depth).abs() < 3.5,
                "{} vs {depth}",
                r.needle_depths[0]
            );
        } else {
            // All six facts close the context; the first is followed by the other five.
            assert!(r.needle_depths[0] > 90.0, "{}", r.needle_depths[0]);
            assert!(r.needle_depths[5] > 99.0, "{}", r.needle_depths[5]);
        }
        assert!(r.needle_offsets.windows(2).all(|w| w[0] < w[1]));
        let budget = r.target_length - 32;
        assert!(
            r.length <= budget && r.length >= budget - 16,
            "{}",
            r.length
        );
    }
}

#[test]
fn bad_needlechain_input() {
    let t = tmp();
    for (args, needle) in [
        (vec!["--chain", "0"], "--chain 0"),
        (vec!["--kind", "kinship", "--chain", "1"], "--chain 1"),
        (vec!["--order", "sideways"], "sideways"),
        (vec!["--depths", "3"], "no haystack"),
        (vec!["--kind", "cousins"], "cousins"),
        (vec!["--chain", "400", "--len", "1k"], "too short"),
    ] {
        let mut all = vec!["needlechain"];
        all.extend(args.iter());
        assert_refused(&all, &out_arg(t.path(), "x"), needle);
    }
}
