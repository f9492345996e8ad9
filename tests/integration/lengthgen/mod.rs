//! End-to-end tests of `gen posgen`, `gen sort` and `gen arith`, with independent re-computation
//! of every answer.

mod bignum;

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::*;
use bignum::{big, carries};
use serde_json::Value;

/// A JSON array of strings, borrowed.
fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect()
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

/// Each posgen variant obeys its rule at every position; target is the
/// continuation; train and test seed tuples are disjoint.
#[test]
fn posgen_rules_and_disjoint_splits() {
    let t = tmp();
    for variant in ["recursive", "cot", "semi-recursive"] {
        let mut seeds: [BTreeSet<Vec<u64>>; 2] = Default::default();
        for (s, split) in ["train", "test"].iter().enumerate() {
            let o = out_arg(t.path(), &format!("{variant}-{split}"));
            generate(
                &o,
                &[
                    "posgen",
                    "--variant",
                    variant,
                    "--split",
                    split,
                    "--samples",
                    "60",
                    "--modulus",
                    "5",
                    "--near",
                    "2",
                    "--far",
                    "1",
                ],
            );
            for r in rows(Path::new(&o)) {
                let p = &r.params;
                let (m, j, k) = (5u64, 2usize, 1usize);
                let seq = u64s(&p["sequence"]);
                assert_eq!(seq.len(), if *split == "train" { 64 } else { 256 });
                for tpos in j + k..seq.len() {
                    let near: u64 = seq[tpos - j..tpos].iter().sum();
                    let far: u64 = match variant {
                        "recursive" => seq[tpos - j - k..tpos - j].iter().sum(),
                        "cot" => seq[..k].iter().sum(),
                        _ => {
                            let p = (tpos - j - k) / 2;
                            seq[p..p + k].iter().sum()
                        }
                    };
                    assert_eq!(seq[tpos], (near + far) % m, "{variant} position {tpos}");
                }
                let seed_tokens = u64s(&p["seed_tokens"]);
                assert_eq!(seed_tokens[..], seq[..j + k]);
                let cont: Vec<String> = seq[j + k..].iter().map(u64::to_string).collect();
                assert_eq!(r.target, cont.join(" "));
                assert_eq!(p["ood_from"], 64);
                assert!(
                    r.input.trim()
                        == seed_tokens
                            .iter()
                            .map(u64::to_string)
                            .collect::<Vec<_>>()
                            .join(" ")
                );
                seeds[s].insert(seed_tokens);
            }
        }
        assert!(seeds[0].len() > 50 && seeds[1].len() > 50);
        assert!(
            seeds[0].is_disjoint(&seeds[1]),
            "{variant}: train and test share seed tuples"
        );
    }
}

/// `--split both` writes a train and a test split into one config, with disjoint seed tuples and
/// distinct ids, and verifies.
#[test]
fn posgen_both_splits_in_one_dataset() {
    let t = tmp();
    let o = out_arg(t.path(), "both");
    generate(&o, &["posgen", "--split", "both", "--samples", "50"]);
    let dir = Path::new(&o).join("posgen_recursive");
    assert!(dir.join("train-00000-of-00001.parquet").exists());
    assert!(dir.join("test-00000-of-00001.parquet").exists());
    let card = std::fs::read_to_string(Path::new(&o).join("README.md")).unwrap();
    assert!(card.contains("- split: train\n") && card.contains("- split: test\n"));
    let all = rows(Path::new(&o));
    assert_eq!(all.len(), 100);
    let ids: BTreeSet<&str> = all.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids.len(), 100, "ids are unique across splits");
    let mut seeds: [BTreeSet<Vec<u64>>; 2] = Default::default();
    for r in &all {
        let s = usize::from(r.params["split"] == "test");
        assert_eq!(
            u64s(&r.params["sequence"]).len(),
            if s == 0 { 64 } else { 256 }
        );
        seeds[s].insert(u64s(&r.params["seed_tokens"]));
    }
    assert!(seeds[0].is_disjoint(&seeds[1]));
    gen_ok(&["verify", &o, "-q"]);
}

fn numeric_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    (a.len(), a).cmp(&(b.len(), b))
}

/// Sort targets are exactly the sorted items, for 10 items and --len 32k.
#[test]
fn sort_targets_are_sorted_items() {
    let t = tmp();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("ten", vec!["--items", "10"]),
        (
            "ten-desc-dup",
            vec![
                "--items",
                "10",
                "--descending",
                "--duplicates",
                "--digits",
                "1",
            ],
        ),
        ("len32k", vec!["--len", "32k", "--digits", "1..6"]),
        ("words", vec!["--items", "30", "--words"]),
        (
            "keys",
            vec![
                "--items",
                "12",
                "--output",
                "keys",
                "--duplicates",
                "--digits",
                "1",
            ],
        ),
        (
            "hidden",
            vec![
                "--items",
                "15",
                "--haystack",
                "generated",
                "--len",
                "8k",
                "--depths",
                "2",
            ],
        ),
    ];
    for (name, args) in cases {
        let o = out_arg(t.path(), name);
        let mut all = vec!["sort", "--samples", "2"];
        all.extend(args.iter());
        generate(&o, &all);
        for r in rows(Path::new(&o)) {
            let p = &r.params;
            let items: Vec<String> = p["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            let words = p["kind"] == "words";
            let desc = p["order"] == "descending";
            let mut idx: Vec<usize> = (0..items.len()).collect();
            idx.sort_by(|&a, &b| {
                let o = if words {
                    items[a].cmp(&items[b])
                } else {
                    numeric_cmp(&items[a], &items[b])
                };
                (if desc { o.reverse() } else { o }).then(a.cmp(&b))
            });
            if p["output"] == "keys" {
                let keys: Vec<String> = p["keys"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap().to_string())
                    .collect();
                let want: Vec<&str> = idx.iter().map(|&i| keys[i].as_str()).collect();
                assert_eq!(r.target, want.join(","), "{name}");
                for (k, v) in keys.iter().zip(&items) {
                    assert!(r.input.contains(&format!("{k}:{v}")));
                }
            } else {
                let want: Vec<&str> = idx.iter().map(|&i| items[i].as_str()).collect();
                assert_eq!(r.target, want.join(" "), "{name}");
                assert_eq!(r.answers, want);
                assert!(!r.target.contains('['));
            }
            for it in &items {
                assert!(
                    r.input.contains(it.as_str()),
                    "{name}: item {it} not in input"
                );
            }
            let distinct: BTreeSet<&String> = items.iter().collect();
            if p["duplicates"] == true {
                if name == "ten-desc-dup" || name == "keys" {
                    assert!(
                        distinct.len() < items.len(),
                        "{name}: duplicates expected among 1-digit items"
                    );
                }
            } else {
                assert_eq!(distinct.len(), items.len(), "{name}: no duplicates asked");
            }
            match name {
                "ten" | "ten-desc-dup" => assert_eq!(items.len(), 10),
                "len32k" => {
                    assert!(items.len() > 3000, "{}", items.len());
                    // The list is read and written back: prompt and answer budget fill 32k.
                    let filled = r.prompt_tokens + r.max_new_tokens;
                    assert!(filled <= 32768 && filled > 32768 - 70, "{filled}");
                }
                "hidden" => {
                    assert_eq!(r.needle_offsets.len(), 15);
                    let budget = 8192 - r.max_new_tokens;
                    assert!(r.prompt_tokens <= budget && r.prompt_tokens >= budget - 17);
                }
                _ => {}
            }
        }
    }
}

/// Results are right for 1..200-digit operands; layouts render as specified;
/// carry control does what it says.
#[test]
fn arith_results_layouts_and_carries() {
    let t = tmp();
    for op in ["add", "sub", "mul"] {
        let o = out_arg(t.path(), op);
        generate(
            &o,
            &["arith", "--op", op, "--digits", "1..200", "--samples", "40"],
        );
        let mut widths = BTreeSet::new();
        for r in rows(Path::new(&o)) {
            let ops: Vec<&str> = strs(&r.params["operands"]);
            for x in &ops {
                assert!(!x.starts_with('0') || x.len() == 1, "leading zero in {x}");
                widths.insert(x.len());
            }
            let want = big(ops[0], ops[1], op);
            assert_eq!(r.params["result"].as_str().unwrap(), want, "{op} {ops:?}");
            assert_eq!(r.target, want);
            let sym = match op {
                "add" => "+",
                "sub" => "-",
                _ => "*",
            };
            assert_eq!(r.input, format!("{}{sym}{}=", ops[0], ops[1]));
        }
        assert!(
            widths.len() > 20,
            "digit counts are drawn first: {widths:?}"
        );
    }
    // Layouts.
    for layout in ["reversed", "reversed-answer", "padded", "hints"] {
        let o = out_arg(t.path(), layout);
        generate(
            &o,
            &[
                "arith",
                "--layout",
                layout,
                "--digits",
                "1..12",
                "--samples",
                "10",
            ],
        );
        for r in rows(Path::new(&o)) {
            let ops: Vec<String> = r.params["operands"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            let res = r.params["result"].as_str().unwrap().to_string();
            let rev = |s: &str| s.chars().rev().collect::<String>();
            let pad = |s: &str, w: usize| format!("{s:0>w$}");
            let hint = |s: &str| {
                s.chars()
                    .enumerate()
                    .map(|(i, c)| {
                        let p = s.len() - 1 - i;
                        let mut m = String::new();
                        let mut n = p;
                        m.insert(0, (b'a' + (n % 26) as u8) as char);
                        n /= 26;
                        while n > 0 {
                            m.insert(0, (b'a' + (n % 26) as u8) as char);
                            n /= 26;
                        }
                        format!("{m}{c}")
                    })
                    .collect::<String>()
            };
            let (a, b, ans) = match layout {
                "reversed" => (rev(&ops[0]), rev(&ops[1]), rev(&res)),
                "reversed-answer" => (ops[0].clone(), ops[1].clone(), rev(&res)),
                "padded" => (pad(&ops[0], 12), pad(&ops[1], 12), pad(&res, 13)),
                _ => (hint(&ops[0]), hint(&ops[1]), hint(&res)),
            };
            assert_eq!(r.input, format!("{a}+{b}="), "{layout}");
            assert_eq!(r.target, ans, "{layout}");
        }
    }
    // Carry control.
    for (op, mode) in [
        ("add", "none"),
        ("add", "max"),
        ("sub", "none"),
        ("sub", "max"),
    ] {
        let o = out_arg(t.path(), &format!("{op}-{mode}"));
        generate(
            &o,
            &[
                "arith",
                "--op",
                op,
                "--carries",
                mode,
                "--digits",
                "5..60",
                "--samples",
                "30",
            ],
        );
        for r in rows(Path::new(&o)) {
            let ops: Vec<&str> = strs(&r.params["operands"]);
            let n = carries(ops[0], ops[1], op);
            assert_eq!(r.params["carries_count"].as_u64().unwrap() as usize, n);
            if mode == "none" {
                assert_eq!(n, 0, "{op} {ops:?}");
            } else {
                let cols = if op == "add" {
                    ops[0].len().min(ops[1].len())
                } else {
                    ops[0].len() - 1
                };
                assert!(n >= cols, "{op} {ops:?}: {n} carries, {cols} columns");
                assert!(r.params["longest_carry_chain"].as_u64().unwrap() as usize >= cols);
            }
            assert_eq!(r.target, big(ops[0], ops[1], op));
        }
    }
}

/// The long-context sum.
#[test]
fn arith_sum_in_a_haystack() {
    let t = tmp();
    let o = out_arg(t.path(), "sum");
    generate(
        &o,
        &[
            "arith",
            "--op",
            "sum",
            "--len",
            "32k",
            "--haystack",
            "generated",
            "--count",
            "25",
            "--digits",
            "2..9",
            "--depths",
            "3",
        ],
    );
    for r in rows(Path::new(&o)) {
        let nums: Vec<&str> = strs(&r.params["operands"]);
        assert_eq!(nums.len(), 25);
        let total: u128 = nums.iter().map(|n| n.parse::<u128>().unwrap()).sum();
        assert_eq!(r.target, total.to_string());
        for n in &nums {
            assert!(r.input.contains(&format!("Add {n} to the tally.")));
        }
        assert_eq!(r.needle_offsets.len(), 25);
        assert!(r.length <= 32768 && r.length >= 32768 - 66, "{}", r.length);
    }
}

/// Deterministic and verifiable, all three tasks.
#[test]
fn lengthgen_tasks_are_deterministic_and_verify() {
    let t = tmp();
    for (name, args) in [
        (
            "posgen",
            vec!["posgen", "--variant", "cot", "--samples", "5"],
        ),
        (
            "sort",
            vec![
                "sort",
                "--len",
                "2k,4k",
                "--digits",
                "1..6",
                "--samples",
                "2",
            ],
        ),
        (
            "arith",
            vec![
                "arith",
                "--op",
                "mul",
                "--digits",
                "1..50",
                "--layout",
                "hints",
                "--samples",
                "5",
            ],
        ),
        (
            "sum",
            vec!["arith", "--op", "sum", "--len", "4k", "--depths", "2"],
        ),
    ] {
        let a = out_arg(t.path(), &format!("{name}-a"));
        let b = out_arg(t.path(), &format!("{name}-b"));
        generate(&a, &args);
        let mut one_thread = args.clone();
        one_thread.extend(["--threads", "1"]);
        generate(&b, &one_thread);
        assert_eq!(
            dataset_bytes(Path::new(&a)),
            dataset_bytes(Path::new(&b)),
            "{name}"
        );
        gen_ok(&["verify", &a, "-q"]);
    }
}

#[test]
fn lengthgen_bad_input() {
    let t = tmp();
    for (args, needle) in [
        (vec!["posgen", "--variant", "spiral"], "spiral"),
        (vec!["posgen", "--split", "valid"], "--split"),
        (vec!["posgen", "--train-len", "3"], "--train-len"),
        (vec!["posgen", "--op", "mul"], "--op"),
        (vec!["sort", "--output", "both"], "--output"),
        (vec!["sort", "--digits", "x"], "--digits"),
        (
            vec!["sort", "--items", "1001", "--digits", "1..3"],
            "distinct",
        ),
        (vec!["arith", "--layout", "spiral"], "--layout"),
        (
            vec!["arith", "--op", "mul", "--carries", "max"],
            "--carries",
        ),
        (vec!["arith", "--op", "div"], "--op"),
        (vec!["arith", "--depths", "3"], "no haystack"),
    ] {
        assert_refused(&args, &out_arg(t.path(), "x"), needle);
    }
}
