//! RULER's remaining tasks (`vt`, `cwe`, `fwe`, `qa`) through the real binary: answers
//! recomputed from each row's `params` over many seeds, lengths exact, `verify` passing, and
//! bad input refused.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::*;
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

/// The `n` most frequent of `words` (leaving out `ignored`), counted afresh, when the n-th is
/// strictly more frequent than the next; sorted.
fn top_words(words: &[String], ignored: &[String], n: usize) -> Option<Vec<String>> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for w in words.iter().filter(|w| !ignored.contains(w)) {
        *counts.entry(w).or_default() += 1;
    }
    let mut by: Vec<(usize, &str)> = counts.into_iter().map(|(w, c)| (c, w)).collect();
    by.sort_by(|a, b| b.cmp(a));
    if by.len() > n && by[n - 1].0 <= by[n].0 {
        return None;
    }
    let mut top: Vec<String> = by.iter().take(n).map(|(_, w)| w.to_string()).collect();
    top.sort();
    Some(top)
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    serde_json::from_value(v.clone()).unwrap()
}

#[test]
fn cwe_and_fwe_answers_are_recounted_from_the_words_over_many_seeds() {
    let t = tmp();
    for (k, args) in [
        vec!["cwe", "--tokenizer", "o200k", "--len", "2k,5000"],
        vec![
            "cwe",
            "--common",
            "4",
            "--common-repeats",
            "6",
            "--rare-repeats",
            "2",
            "--tokenizer",
            "gpt2",
            "--len",
            "700,3k",
        ],
        vec![
            "cwe",
            "--common",
            "5",
            "--common-repeats",
            "2",
            "--rare-repeats",
            "1",
            "--tokenizer",
            "words",
            "--len",
            "600",
        ],
        vec!["fwe", "--tokenizer", "cl100k", "--len", "1k,5000"],
        vec![
            "fwe",
            "--alpha",
            "1.5",
            "--top",
            "5",
            "--tokenizer",
            "chars",
            "--len",
            "3000",
        ],
        vec![
            "fwe",
            "--alpha",
            "3",
            "--top",
            "1",
            "--tokenizer",
            "o200k",
            "--len",
            "2k",
        ],
    ]
    .into_iter()
    .enumerate()
    {
        let out = out_arg(t.path(), &format!("w{k}"));
        let seed = (k * 7 + 1).to_string();
        let mut all = args.clone();
        all.extend(["--samples", "4", "--seed", &seed]);
        generate(&out, &all);
        let tok =
            Tokenizer::builtin(args[args.iter().position(|a| *a == "--tokenizer").unwrap() + 1])
                .unwrap();
        // The largest list that fits: within a few words of the target.
        check_lengths(&out, &tok, 24);
        let rows = rows(Path::new(&out));
        assert!(rows.len() >= 4);
        for r in &rows {
            let words = strings(&r.params["words"]);
            let ignored = strings(&r.params["ignored"]);
            let mut got = r.answers.clone();
            got.sort();
            assert_eq!(
                top_words(&words, &ignored, got.len()),
                Some(got),
                "{}",
                r.id
            );
            assert_eq!(r.metric, "all");
            if args[0] == "cwe" {
                assert!(ignored.is_empty());
                let listed: Vec<String> = words
                    .iter()
                    .enumerate()
                    .map(|(i, w)| format!("{}. {w}", i + 1))
                    .collect();
                assert!(r.input.contains(&listed.join("\n")), "{}", r.id);
            } else {
                assert_eq!(ignored, ["..."]);
                assert!(r.input.contains(&words.join(" ")), "{}", r.id);
            }
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
    assert_refused(
        &["cwe", "--common-repeats", "3", "--rare-repeats", "3"],
        &out,
        "invalid --common-repeats 3",
    );
    assert_refused(&["cwe", "--common", "0"], &out, "invalid --common 0");
    assert_refused(&["cwe", "--len", "300"], &out, "minimum");
    assert_refused(&["cwe", "--depths", "3"], &out, "--depths 3 does not apply");
    assert_refused(&["fwe", "--alpha", "0.2"], &out, "invalid --alpha 0.2");
    assert_refused(&["fwe", "--top", "0"], &out, "invalid --top 0");
    assert_refused(
        &["fwe", "--haystack", "noise"],
        &out,
        "--haystack does not apply",
    );
}
