//! The MRCR, GraphWalks and RULER v2 metrics against the values their reference rules give in
//! Python, case by case. `tests/python/check_metrics.py` writes the cases (difflib's own ratio
//! and matching blocks; the other rules restated there and checked against the exports' twin);
//! `NEEDLEWORK_METRIC_CASES` names such a file (CI writes one of about 17,000 cases), else the
//! committed fixture of 300 is read.

use std::path::PathBuf;
use std::sync::OnceLock;

use needlework_generators::scoring::difflib::{matching_blocks, ratio};
use needlework_generators::scoring::graph_f1::{graph_f1, graph_flexible_f1};
use needlework_generators::scoring::mrcr::{mrcr_score, mrcr_v2_score};
use needlework_generators::scoring::pystr;
use needlework_generators::scoring::soft_match::{
    multiple_choice_letter, ruler2_soft_match, SoftMatchMode,
};
use serde_json::Value;

const TOLERANCE: f64 = 1e-12;

fn cases_path() -> PathBuf {
    match std::env::var_os("NEEDLEWORK_METRIC_CASES") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/metric_cases.jsonl"),
    }
}

fn cases() -> &'static [Value] {
    static CASES: OnceLock<Vec<Value>> = OnceLock::new();
    CASES.get_or_init(|| {
        let path = cases_path();
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        text.lines()
            .enumerate()
            .map(|(n, line)| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), n + 1))
            })
            .collect()
    })
}

fn of_kind(kind: &str) -> Vec<&'static Value> {
    cases().iter().filter(|c| c["kind"] == kind).collect()
}

fn text(case: &'static Value, field: &str) -> &'static str {
    case[field]
        .as_str()
        .unwrap_or_else(|| panic!("{field} is not a string in {case}"))
}

fn strings(case: &Value, field: &str) -> Vec<String> {
    case[field]
        .as_array()
        .unwrap_or_else(|| panic!("{field} is not a list in {case}"))
        .iter()
        .map(|v| v.as_str().expect("a string").to_string())
        .collect()
}

/// A float field, exactly: from its IEEE-754 bits where the case records them (decimal JSON
/// numbers may round by one unit in the last place on the way in).
fn number(case: &Value, field: &str) -> f64 {
    match case[format!("{field}_bits")].as_u64() {
        Some(bits) => f64::from_bits(bits),
        None => case[field]
            .as_f64()
            .unwrap_or_else(|| panic!("{field} is not a number in {case}")),
    }
}

/// Compares every case of `kind` (at least `min` of them) and reports the largest difference.
fn check_scores(kind: &str, min: usize, field: &str, score: impl Fn(&'static Value) -> f64) {
    let all = of_kind(kind);
    assert!(
        all.len() >= min,
        "{kind}: {} cases, expected at least {min}",
        all.len()
    );
    let mut worst = 0.0f64;
    let mut failures = Vec::new();
    for &case in &all {
        let want = number(case, field);
        let got = score(case);
        let delta = (got - want).abs();
        worst = worst.max(delta);
        // A NaN differs too.
        let equal = delta <= TOLERANCE;
        if !equal && failures.len() < 5 {
            failures.push(format!("got {got}, Python {want}: {case}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{kind} ({field}) differs from Python:\n{}",
        failures.join("\n")
    );
    eprintln!(
        "{kind} ({field}): {} cases equal to Python, max |delta| {worst:e}",
        all.len()
    );
}

/// A fixture of 300 cases holds about 150 difflib pairs and 30 of each other rule.
const MIN_DIFFLIB: usize = 150;
const MIN_RULE: usize = 30;

#[test]
fn difflib_ratio_and_blocks_equal_pythons() {
    check_scores("difflib", MIN_DIFFLIB, "expected", |c| {
        ratio(text(c, "a"), text(c, "b"))
    });
    let mut mismatched = Vec::new();
    for case in of_kind("difflib") {
        let got: Vec<Vec<usize>> = matching_blocks(text(case, "a"), text(case, "b"))
            .into_iter()
            .map(|m| vec![m.a, m.b, m.size])
            .collect();
        let want: Vec<Vec<usize>> = serde_json::from_value(case["blocks"].clone()).expect("blocks");
        if got != want && mismatched.len() < 3 {
            mismatched.push(format!("blocks {got:?}, Python {want:?}: {case}"));
        }
    }
    assert!(mismatched.is_empty(), "{}", mismatched.join("\n"));
}

#[test]
fn mrcr_grades_equal_the_references() {
    check_scores("mrcr", MIN_RULE, "expected", |c| {
        mrcr_score(
            text(c, "response"),
            text(c, "answer"),
            text(c, "random_string"),
        )
    });
    check_scores("mrcr_v2", MIN_RULE, "expected", |c| {
        mrcr_v2_score(text(c, "prediction"), text(c, "target"))
    });
}

#[test]
fn graph_f1_equals_lm_evals_parsing() {
    check_scores("graph", MIN_RULE, "expected", |c| {
        graph_f1(text(c, "prediction"), &strings(c, "gold"))
    });
    check_scores("graph", MIN_RULE, "expected_flexible", |c| {
        graph_flexible_f1(text(c, "prediction"), &strings(c, "gold"))
    });
}

#[test]
fn soft_match_equals_nemo_skills() {
    check_scores("soft_match", MIN_RULE, "expected", |c| {
        let mode = SoftMatchMode::parse(text(c, "mode")).expect("a mode");
        ruler2_soft_match(text(c, "prediction"), &strings(c, "refs"), mode)
    });
}

#[test]
fn letters_equal_nemo_skills() {
    let all = of_kind("mc_letter");
    assert!(all.len() >= MIN_RULE);
    for &case in &all {
        let want = case["expected"].as_str().map(str::to_string);
        let got = multiple_choice_letter(text(case, "prediction")).map(String::from);
        assert_eq!(got, want, "{case}");
    }
    eprintln!("mc_letter: {} cases equal to Python", all.len());
}

/// One of Python's character predicates.
type CharClass = fn(char) -> bool;

/// Inclusive `[first, last]` pairs as a membership test over all code points.
fn in_python_ranges(record: &Value, field: &str) -> Vec<bool> {
    let mut hit = vec![false; 0x110000];
    for pair in record[field].as_array().expect("ranges") {
        let (lo, hi) = (pair[0].as_u64().unwrap(), pair[1].as_u64().unwrap());
        for cp in lo..=hi {
            hit[cp as usize] = true;
        }
    }
    hit
}

#[test]
fn character_classes_and_lowercasing_are_this_pythons() {
    let record = of_kind("pychar");
    assert_eq!(record.len(), 1, "one record of Python's character tables");
    let record = record[0];
    assert_eq!(
        record["unicode"].as_str(),
        Some(pystr::UNICODE_VERSION),
        "the tables in generators/src/scoring/pystr/tables.rs are another Unicode version than \
         this Python's ({}); regenerate them with tests/python/make_pychar_tables.py",
        record["python"]
    );
    let classes: [(&str, CharClass); 3] = [
        ("isalnum", pystr::is_alnum),
        ("isdecimal", pystr::is_decimal),
        ("isspace", pystr::is_space),
    ];
    for (field, test) in classes {
        let python = in_python_ranges(record, field);
        let wrong: Vec<String> = (0..0x110000u32)
            .filter_map(char::from_u32)
            .filter(|&c| test(c) != python[c as usize])
            .take(10)
            .map(|c| format!("U+{:04X}", c as u32))
            .collect();
        assert!(wrong.is_empty(), "{field} differs from Python at {wrong:?}");
    }
    // Every character Python's Unicode assigns lowercases as Python lowercases it.
    let assigned = in_python_ranges(record, "assigned");
    let mut lower = vec![None; 0x110000];
    for pair in record["lower"].as_array().expect("lower") {
        lower[pair[0].as_u64().unwrap() as usize] = Some(pair[1].as_str().unwrap().to_string());
    }
    let mut checked = 0;
    for c in (0..0x110000u32).filter_map(char::from_u32) {
        if !assigned[c as usize] {
            continue;
        }
        let want = lower[c as usize].clone().unwrap_or_else(|| c.to_string());
        assert_eq!(
            c.to_lowercase().collect::<String>(),
            want,
            "U+{:04X}",
            c as u32
        );
        checked += 1;
    }
    assert!(checked > 250_000, "only {checked} assigned characters");
}
