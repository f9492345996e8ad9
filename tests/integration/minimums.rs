//! The minimum length a refusal states is one that works: for every task that fills a length
//! and every kind of tokenizer, `--len` below the minimum is refused naming the minimum, and
//! `--len` at that minimum makes rows.

use crate::common::{gen, tmp, tokenizer_kinds};

/// The minimum named by a refusal of `--len 8`, if the task states one.
fn stated_minimum(args: &[&str]) -> Option<u64> {
    let mut all = args.to_vec();
    all.extend(["--len", "8", "--out", "/nonexistent-needlework-dir/x", "-q"]);
    let out = gen(&all);
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() != Some(2) {
        return None;
    }
    let at = err.find("the minimum is ")? + "the minimum is ".len();
    err[at..].split(' ').next()?.parse().ok()
}

#[test]
fn every_stated_minimum_is_reachable() {
    let tokenizers = tokenizer_kinds();
    let tasks: [&[&str]; 12] = [
        &["niah"],
        &["niah", "--variant", "multikey"],
        &["vt"],
        &["cwe"],
        &["fwe"],
        &["needlechain"],
        &["babilong", "--task", "qa2"],
        &["sort"],
        &["sort", "--words", "--output", "keys"],
        &["sort", "--digits", "4..9", "--duplicates"],
        &["sort", "--items", "5", "--haystack", "noise"],
        &["arith", "--op", "sum"],
    ];
    let tmp = tmp();
    let mut checked = 0;
    for tok in &tokenizers {
        for task in tasks {
            let mut args: Vec<&str> = task.to_vec();
            args.extend(["--tokenizer", tok, "--samples", "3", "--seed", "11"]);
            let Some(minimum) = stated_minimum(&args) else {
                continue;
            };
            let len = minimum.to_string();
            let out = tmp.path().join(format!("m{checked}"));
            let o = out.display().to_string();
            let mut run = args.clone();
            run.extend(["--len", &len, "--out", &o, "-q"]);
            let got = gen(&run);
            assert!(
                got.status.success(),
                "{run:?} (the stated minimum) failed: {}",
                String::from_utf8_lossy(&got.stderr)
            );
            checked += 1;
        }
    }
    // Every sort form under every tokenizer states its minimum.
    assert!(
        checked >= 4 * tokenizers.len(),
        "only {checked} minimums checked"
    );
}
