//! Task-level promises, checked on the real binary: posgen never repeats a seed tuple within a
//! dataset and never exceeds `--len`; babilong tells exactly the `--facts` asked for or refuses
//! them; a reported minimum length is a true one. Each test failed before its fix.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::*;
use needlework_generators::Tokenizer;

/// A row's `params` numbers, as u64.
fn u64s(v: &serde_json::Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

/// Run `args --out OUT` and return (exit code, stderr).
fn run(args: &[&str], out: &str) -> (Option<i32>, String) {
    let mut all = args.to_vec();
    all.extend(["--out", out, "-q"]);
    let res = gen(&all);
    (
        res.status.code(),
        String::from_utf8_lossy(&res.stderr).to_string(),
    )
}

/// The minimum length `gen` reports for `args` (asked at `--len 1`, which it refuses up front).
fn reported_minimum(args: &[&str], out: &str) -> u64 {
    let mut all = args.to_vec();
    all.extend(["--len", "1"]);
    let (code, err) = run(&all, out);
    assert_eq!(code, Some(2), "{all:?}: {err}");
    assert!(!Path::new(out).exists(), "{all:?} left output behind");
    let tail = err
        .split("the minimum is ")
        .nth(1)
        .unwrap_or_else(|| panic!("{all:?}: no minimum in {err}"));
    tail.split(' ').next().unwrap().parse().unwrap()
}

/// Generating `args` at exactly the reported minimum succeeds, and one token less is refused
/// with exit 2 before anything is written. Returns the minimum.
fn minimum_is_true(args: &[&str], dir: &Path, name: &str) -> u64 {
    let out = out_arg(dir, name);
    let min = reported_minimum(args, &out);
    let below = (min - 1).to_string();
    let mut short = args.to_vec();
    short.extend(["--len", &below]);
    assert_refused(&short, &out, &format!("the minimum is {min} tokens"));
    let at = min.to_string();
    let mut exact = args.to_vec();
    exact.extend(["--len", &at]);
    let (code, err) = run(&exact, &out);
    assert_eq!(code, Some(0), "{exact:?} at its reported minimum: {err}");
    min
}

/// 3,000 default samples held about 90 repeated seed tuples per split (85 in train, 90
/// in test), and a tiny modulus repeated whole rows. Now every split's tuples are distinct,
/// train and test are disjoint, a tiny space is used up exactly, and asking for more samples
/// than it holds is refused up front, naming the value and how many exist.
#[test]
fn posgen_never_repeats_a_seed_tuple() {
    let t = tmp();
    let o = out_arg(t.path(), "default");
    generate(&o, &["posgen", "--split", "both", "--samples", "3000"]);
    let mut splits: [BTreeSet<Vec<u64>>; 2] = Default::default();
    let all = rows(Path::new(&o));
    assert_eq!(all.len(), 6000);
    for r in &all {
        let s = usize::from(r.params["split"] == "test");
        let tuple = u64s(&r.params["seed_tokens"]);
        assert!(splits[s].insert(tuple.clone()), "{tuple:?} repeats");
    }
    assert!(splits[0].is_disjoint(&splits[1]));

    // modulus 2, 3 + 1 seed tokens: 16 tuples, 8 per split; every length shows the same seed
    // for the same sample, and no two samples share one.
    let o = out_arg(t.path(), "tiny");
    let tiny = ["posgen", "--modulus", "2", "--split", "both"];
    let mut args = tiny.to_vec();
    args.extend(["--samples", "8", "--len", "40,80"]);
    generate(&o, &args);
    let mut seen = BTreeSet::new();
    for r in rows(Path::new(&o)) {
        let tuple = u64s(&r.params["seed_tokens"]);
        let key = (r.params["split"].to_string(), r.target_length, tuple);
        assert!(seen.insert(key), "a seed tuple repeats within a cell");
    }
    let tuples: BTreeSet<Vec<u64>> = seen.into_iter().map(|(_, _, t)| t).collect();
    assert_eq!(tuples.len(), 16, "the whole space, each tuple once");

    let mut args = tiny.to_vec();
    args.extend(["--samples", "9"]);
    assert_refused(
        &args,
        &out_arg(t.path(), "nine"),
        "invalid --samples 9: expected at most 8",
    );
    assert_refused(&args, &out_arg(t.path(), "nine"), "16 distinct seed tuples");
    let o = out_arg(t.path(), "overlap");
    generate(
        &o,
        &["posgen", "--modulus", "2", "--overlap", "--samples", "16"],
    );
    let own: BTreeSet<Vec<u64>> = rows(Path::new(&o))
        .iter()
        .map(|r| u64s(&r.params["seed_tokens"]))
        .collect();
    assert_eq!(own.len(), 16);
    assert_refused(
        &["posgen", "--modulus", "2", "--overlap", "--samples", "17"],
        &out_arg(t.path(), "seventeen"),
        "invalid --samples 17: expected at most 16",
    );
}

/// With `--explain` the rule was not counted, so `--len 19` gave rows of 34 tokens.
/// Now the prompt, the continuation the model writes after it and the reserve fit `--len`, or
/// the length is refused up front; the reported minimum is true.
#[test]
fn posgen_fits_its_window_or_is_refused() {
    let t = tmp();
    assert_refused(
        &["posgen", "--explain", "--len", "19"],
        &out_arg(t.path(), "nineteen"),
        "--len 19 is too short",
    );
    let tokenizers = [
        ("o200k", Tokenizer::O200k),
        ("words", Tokenizer::Words),
        ("chars", Tokenizer::Chars),
    ];
    let mut case = 0;
    for (name, tok) in &tokenizers {
        for variant in ["recursive", "semi-recursive"] {
            for extra in [&[][..], &["--explain"], &["--explain", "--reserve", "5"]] {
                let mut args = vec![
                    "posgen",
                    "--variant",
                    variant,
                    "--tokenizer",
                    name,
                    "--modulus",
                    "1000",
                    "--samples",
                    "6",
                    "--split",
                    "both",
                ];
                args.extend_from_slice(extra);
                case += 1;
                let min = minimum_is_true(&args, t.path(), &format!("min{case}"));
                let reserve: u64 = if extra.contains(&"--reserve") { 5 } else { 0 };
                let lens: BTreeSet<u64> = [min, min + 1, min + 9, 2 * min, 300].into();
                for len in lens {
                    let o = out_arg(t.path(), &format!("c{case}-{len}"));
                    let l = len.to_string();
                    let mut a = args.clone();
                    a.extend(["--len", &l]);
                    generate(&o, &a);
                    for r in rows(Path::new(&o)) {
                        assert_eq!(r.length as usize, tok.count(&r.input).unwrap());
                        // The window: what the model reads plus its answer budget, which
                        // holds the continuation (per row, or --reserve).
                        let answer = tok.count(&r.target).unwrap() as i64;
                        let budget = if reserve > 0 {
                            reserve as i64
                        } else {
                            answer + 16
                        };
                        assert_eq!(r.max_new_tokens, budget, "{a:?}");
                        assert!(
                            r.prompt_tokens + r.max_new_tokens <= len as i64 && answer <= budget,
                            "{a:?}: prompt {} and answer budget {} for --len {len}",
                            r.prompt_tokens,
                            r.max_new_tokens
                        );
                        assert!(r
                            .input
                            .contains(&u64s(&r.params["seed_tokens"])[0].to_string()));
                    }
                }
            }
        }
    }
}

/// `--task qa2 --facts 1` and `--task qa5 --facts 10` silently told other sizes (a
/// walk grew until its question could be asked; puzzles ignored `--facts`). Every task now
/// tells exactly the size asked for, or refuses it naming the sizes it accepts.
#[test]
fn babilong_tells_exactly_the_facts_asked_for_or_refuses() {
    let t = tmp();
    let mut case = 0;
    for qa in 1..=20 {
        let task = format!("qa{qa}");
        let mut accepted = 0;
        for facts in [
            "1", "2", "3", "4", "5", "7", "8", "9", "10", "12", "13", "40", "3..6", "2..12",
        ] {
            case += 1;
            let o = out_arg(t.path(), &format!("f{case}"));
            let args = [
                "babilong",
                "--task",
                &task,
                "--facts",
                facts,
                "--len",
                "0",
                "--samples",
                "5",
                "--vocab",
                if qa % 2 == 0 { "fresh" } else { "babi" },
            ];
            let (code, err) = run(&args, &o);
            let (lo, hi) = match facts.split_once("..") {
                Some((a, b)) => (a.parse::<u64>().unwrap(), b.parse::<u64>().unwrap()),
                None => (facts.parse().unwrap(), facts.parse().unwrap()),
            };
            if code == Some(2) {
                assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
                assert!(
                    err.contains(&format!("invalid --facts {facts}: expected "))
                        && err.contains(&format!("for {task}")),
                    "{args:?}: {err}"
                );
                assert!(!Path::new(&o).exists());
                continue;
            }
            assert_eq!(code, Some(0), "{args:?}: {err}");
            accepted += 1;
            let all = rows(Path::new(&o));
            assert_eq!(all.len(), 5);
            for r in all {
                let p = &r.params;
                let n = p["fact_count"].as_u64().unwrap();
                assert!(
                    (lo..=hi).contains(&n),
                    "{task} --facts {facts}: a story of {n} facts"
                );
                assert_eq!(u64s(&p["facts"]), [lo, hi], "the sizes asked for, recorded");
                let data = ["events", "relations", "statements"]
                    .iter()
                    .find_map(|k| p[k].as_array())
                    .unwrap();
                assert_eq!(data.len() as u64, n, "{task}: facts as data");
                // The story alone: one fact per line between the frame's lines.
                let told = r.input.lines().filter(|l| l.ends_with('.')).count() as u64;
                assert!(told >= n, "{task}: {told} sentences for {n} facts");
            }
        }
        assert!(accepted >= 1, "{task} accepts some --facts");
    }
}

/// `--task qa5 --vocab fresh` reported a minimum (probed on four stories) and then
/// failed at it on a longer story, after doing the work. The minimum is now the largest need
/// over the run's own stories: at it every task and vocabulary generates, one below is
/// refused before anything is written.
#[test]
fn babilong_minimum_length_is_true() {
    let t = tmp();
    let mut case = 0;
    for qa in 1..=20 {
        let task = format!("qa{qa}");
        for vocab in ["babi", "fresh"] {
            for seed in ["0", "1"] {
                case += 1;
                let args = [
                    "babilong",
                    "--task",
                    &task,
                    "--vocab",
                    vocab,
                    "--seed",
                    seed,
                    "--samples",
                    "25",
                ];
                minimum_is_true(&args, t.path(), &format!("m{case}"));
            }
        }
    }
    // The reported case (seed 0: 732 reported, sample 127 failed at it), other windows,
    // depths, tokenizers and story sizes.
    for extra in [
        &["--task", "qa5", "--vocab", "fresh", "--samples", "200"][..],
        &[
            "--task",
            "qa5",
            "--vocab",
            "fresh",
            "--fact-window",
            "40..60",
            "--samples",
            "20",
        ],
        &[
            "--task",
            "qa2",
            "--depths",
            "0,50,100",
            "--tokenizer",
            "gpt2",
            "--samples",
            "20",
        ],
        &[
            "--task",
            "qa3,qa14",
            "--tokenizer",
            "words",
            "--samples",
            "20",
        ],
        &[
            "--task",
            "qa1",
            "--facts",
            "30..60",
            "--vocab",
            "fresh",
            "--samples",
            "20",
        ],
    ] {
        case += 1;
        let mut args = vec!["babilong"];
        args.extend_from_slice(extra);
        minimum_is_true(&args, t.path(), &format!("m{case}"));
    }
}
