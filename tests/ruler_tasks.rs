//! RULER's remaining tasks (`vt`, `cwe`, `fwe`, `qa`) through the real binary: answers
//! recomputed from each row's `params` over many seeds, lengths exact, `verify` passing,
//! golden files, and bad input refused.
//!
//! Regenerate the golden files with `UPDATE_GOLDEN=1 cargo test --release --test ruler_tasks golden`.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use needlework_generators::Tokenizer;

/// Every row's length is the tokenizer's count of its input, and what the model reads plus its
/// answer budget fits the target within `slack` tokens.
fn check_lengths(out: &str, tok: &Tokenizer, slack: i64) {
    for r in rows(Path::new(out)) {
        assert_eq!(r.length as usize, tok.count(&r.input).unwrap(), "{}", r.id);
        let filled = r.prompt_tokens + r.max_new_tokens;
        assert!(
            filled <= r.target_length && filled + slack >= r.target_length,
            "{}: {} + {} for {}",
            r.id,
            r.prompt_tokens,
            r.max_new_tokens,
            r.target_length
        );
    }
}

fn verify_ok(out: &str) {
    let v = gen(&["verify", out, "-q"]);
    assert!(
        v.status.success(),
        "{out} does not verify: {}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );
}

/// The variables holding `value` once `assignments` are carried out, worked out afresh.
fn vt_holders(assignments: &[(String, String)], value: &str) -> Vec<String> {
    let mut state: BTreeMap<String, String> = BTreeMap::new();
    for (var, source) in assignments {
        let v = state.get(source).cloned().unwrap_or_else(|| source.clone());
        state.insert(var.clone(), v);
    }
    let mut out: Vec<String> = state
        .into_iter()
        .filter(|(_, v)| v == value)
        .map(|(k, _)| k)
        .collect();
    out.sort();
    out
}

#[test]
fn vt_answers_follow_from_the_assignments_over_many_seeds() {
    let t = tmp();
    for (k, (tokenizer, haystack, chains, hops)) in [
        ("o200k", "generated", "1", "4"),
        ("cl100k", "noise", "2", "3"),
        ("gpt2", "generated", "3", "1"),
        ("words", "noise", "1", "8"),
    ]
    .into_iter()
    .enumerate()
    {
        let out = out_arg(t.path(), &format!("vt{k}"));
        let seed = (k * 31 + 5).to_string();
        generate(
            &out,
            &[
                "vt",
                "--chains",
                chains,
                "--hops",
                hops,
                "--len",
                "1k,3000",
                "--depths",
                "0,37.5,100",
                "--samples",
                "3",
                "--seed",
                &seed,
                "--tokenizer",
                tokenizer,
                "--haystack",
                haystack,
            ],
        );
        let tok = Tokenizer::builtin(tokenizer).unwrap();
        check_lengths(&out, &tok, 16);
        let rows = rows(Path::new(&out));
        assert_eq!(rows.len(), 18);
        for r in &rows {
            let asg: Vec<(String, String)> = r.params["assignments"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| {
                    (
                        a[0].as_str().unwrap().to_string(),
                        a[1].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            let chains: usize = chains.parse().unwrap();
            let hops: usize = hops.parse().unwrap();
            assert_eq!(asg.len(), chains * (hops + 1));
            let value = r.params["query_value"].as_str().unwrap();
            assert_eq!(value.len(), 5);
            let mut got = r.answers.clone();
            got.sort();
            assert_eq!(got, vt_holders(&asg, value), "{}", r.id);
            assert_eq!(got.len(), hops + 1);
            assert_eq!(r.metric, "all");
            // The assignments appear in the text in the recorded order, each once, and the
            // first one at its recorded offset, near the requested depth.
            let mut from = 0;
            for (v, _) in &asg {
                let needle = format!("Set the variable {v} to");
                assert_eq!(r.input.matches(&needle).count(), 1, "{}", r.id);
                from += r.input[from..].find(&needle).unwrap() + 1;
            }
            assert_eq!(r.needle_offsets.len(), asg.len());
            // The later assignments all follow the first, so near 100 % it sits as late as
            // they leave room for (about 16 tokens each).
            let depth = r.depth_percent.unwrap();
            let later = 100.0 * (asg.len() - 1) as f64 * 16.0 / (r.target_length - 250) as f64;
            assert!(
                (r.needle_depths[0] - depth).abs() <= 3.0 + later * depth / 100.0,
                "{}: {} for {depth}",
                r.id,
                r.needle_depths[0]
            );
            assert!(r.needle_depths.windows(2).all(|w| w[0] <= w[1]));
            assert!(r.answer_prefix.contains(value));
        }
        verify_ok(&out);
    }
}

#[test]
fn vt_bad_input_is_refused() {
    let t = tmp();
    let out = out_arg(t.path(), "x");
    assert_refused(&["vt", "--chains", "0"], &out, "invalid --chains 0");
    assert_refused(&["vt", "--hops", "500"], &out, "invalid --hops 500");
    assert_refused(&["vt", "--haystack", "none"], &out, "needs a haystack");
    assert_refused(&["vt", "--len", "100"], &out, "minimum");
}

/// Golden files: tiny instances of each task, so any drift in output shows in review.
#[test]
fn golden_instances() {
    let t = tmp();
    let cases: Vec<(&str, Vec<&str>)> = vec![(
        "vt_c2_h3",
        vec![
            "vt",
            "--chains",
            "2",
            "--hops",
            "3",
            "--len",
            "700",
            "--depths",
            "0,60",
            "--haystack",
            "noise",
        ],
    )];
    for (name, args) in cases {
        let out = out_arg(t.path(), name);
        let mut all = args.clone();
        all.extend(["--seed", "11", "--jsonl"]);
        generate(&out, &all);
        assert_golden(name, &jsonl_text(Path::new(&out)));
    }
}
