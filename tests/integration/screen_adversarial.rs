//! Screening, attacked with the instances' own words: a dataset is made, then a corpus is
//! written that mentions every gold item and every key of every row of it — as competing needles,
//! in other words, in other cases — and the same recipe is made again over that corpus. Instance
//! content does not depend on the haystack, so the second dataset asks the same questions with
//! the same answers; screening must keep every hostile sentence out, so each gold item and key
//! occurs in each row exactly as often as over the built-in haystack (where only the needles
//! and the question say them). Recipes and seeds are drawn at random (a fixed seed by default,
//! `NEEDLEWORK_ADVERSARY_SEED` to draw others).

use std::fmt::Write as _;
use std::path::Path;

use crate::common::*;

/// Occurrences of `term` in `text` as a whole word (no letter or digit on either side),
/// ignoring case: what a reader would take for a mention.
fn mentions(text: &str, term: &str) -> usize {
    let (text, term) = (text.to_lowercase(), term.to_lowercase());
    if term.is_empty() {
        return 0;
    }
    let word = |i: usize| -> bool {
        text[..i]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric)
    };
    let mut n = 0;
    for (at, _) in text.match_indices(&term) {
        let end = at + term.len();
        let after = text[end..]
            .chars()
            .next()
            .is_some_and(char::is_alphanumeric);
        if !word(at) && !after {
            n += 1;
        }
    }
    n
}

/// The terms a row's gold rests on: its gold items and target, and niah's keys.
fn gold_terms(row: &TestRow) -> Vec<String> {
    let mut terms: Vec<String> = row.answers.clone();
    if !row.target.is_empty() && row.target.split_whitespace().count() == 1 {
        terms.push(row.target.clone());
    }
    if let Some(needles) = row.params["needles"].as_array() {
        for n in needles {
            if let Some(k) = n["key"].as_str() {
                terms.push(k.to_string());
            }
        }
    }
    if let Some(asked) = row.params["asked"].as_array() {
        terms.extend(asked.iter().filter_map(|k| k.as_str().map(str::to_string)));
    }
    terms.sort();
    terms.dedup();
    terms.retain(|t| t.chars().any(char::is_alphanumeric));
    terms
}

const OPENERS: &[&str] = &[
    "By most accounts",
    "In the old ledger",
    "Somebody wrote that",
    "Rumour has it that",
    "As the clerk recalled,",
];
const FILLER: &[&str] = &[
    "The harbour was quiet before the storm arrived.",
    "Nobody in the village remembered the last dry summer.",
    "A long table stood in the middle of the hall.",
    "The road bent twice before it reached the bridge.",
    "Her notebook was full of careful little drawings.",
    "They waited for the bell and then went home.",
];

/// A corpus that mentions every term, in hostile sentences of several shapes and cases,
/// between ordinary sentences.
fn hostile_corpus(terms: &[String], draw: &mut Draw) -> String {
    let mut text = String::new();
    for _ in 0..200 {
        let _ = write!(text, "{} ", draw.pick(FILLER));
    }
    for (i, term) in terms.iter().enumerate() {
        let other = 1_000_000 + draw.below(8_999_999);
        let opener = draw.pick(OPENERS);
        let shown = match draw.below(3) {
            0 => term.clone(),
            1 => term.to_uppercase(),
            _ => {
                let mut c = term.chars();
                c.next()
                    .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                    .unwrap_or_default()
            }
        };
        let _ = write!(
            text,
            "{opener} the access code for {shown} is {other}. {shown} was the answer, the notes say. \
             The value everyone quoted was {shown}, not {i}. {} {} ",
            draw.pick(FILLER),
            draw.pick(FILLER)
        );
    }
    text
}

/// Recipes whose gold a hostile corpus could make ambiguous.
const RECIPES: &[&[&str]] = &[
    &["niah", "--len", "2k", "--depths", "3"],
    &[
        "niah",
        "--variant",
        "multikey",
        "--len",
        "2k",
        "--depths",
        "2",
    ],
    &[
        "niah",
        "--variant",
        "multivalue",
        "--len",
        "2k",
        "--depths",
        "2",
    ],
    &[
        "niah",
        "--variant",
        "multiquery",
        "--len",
        "2k",
        "--depths",
        "2",
    ],
    &[
        "niah",
        "--key-type",
        "uuids",
        "--value-type",
        "uuids",
        "--len",
        "2k",
    ],
    &["babilong", "--task", "qa1", "--len", "2k", "--depths", "2"],
    &["babilong", "--task", "qa2", "--len", "2k", "--depths", "2"],
    // The worked examples name the same people and places: they count alike over both haystacks.
    &[
        "babilong",
        "--task",
        "qa1",
        "--len",
        "2k",
        "--depths",
        "2",
        "--template",
        "babilong",
    ],
    &["arith", "--op", "sum", "--len", "2k"],
    &["needlechain", "--len", "2k", "--haystack", "generated"],
    &[
        "sort",
        "--len",
        "2k",
        "--items",
        "8",
        "--haystack",
        "generated",
    ],
    &[
        "sort",
        "--len",
        "2k",
        "--items",
        "6",
        "--words",
        "--haystack",
        "generated",
    ],
];

#[test]
fn gold_stays_unambiguous_in_a_corpus_made_of_the_instances_own_words() {
    let seed: u64 = std::env::var("NEEDLEWORK_ADVERSARY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_261_130);
    let mut draw = Draw(seed);
    let t = tmp();
    let mut checked = 0;
    for (r, recipe) in RECIPES.iter().enumerate() {
        let seed_arg = draw.below(1_000_000).to_string();
        let samples = (2 + draw.below(3)).to_string();
        let mut args: Vec<&str> = recipe.to_vec();
        args.extend(["--seed", &seed_arg, "--samples", &samples]);
        let plain = out_arg(t.path(), &format!("plain{r}"));
        generate(&plain, &args);
        let plain_rows = rows(Path::new(&plain));
        let terms: Vec<String> = plain_rows.iter().flat_map(gold_terms).collect();
        assert!(!terms.is_empty(), "{recipe:?}: no gold terms");
        let corpus = t.path().join(format!("hostile{r}.txt"));
        std::fs::write(&corpus, hostile_corpus(&terms, &mut draw)).unwrap();
        let corpus = corpus.display().to_string();
        let attacked = out_arg(t.path(), &format!("attacked{r}"));
        // The same recipe over the hostile corpus (its --haystack, if any, replaced).
        let mut hostile_args: Vec<&str> = Vec::new();
        let mut skip = false;
        for a in &args {
            if std::mem::take(&mut skip) {
                continue;
            }
            if *a == "--haystack" {
                skip = true;
                continue;
            }
            hostile_args.push(a);
        }
        hostile_args.extend(["--haystack", &corpus]);
        generate(&attacked, &hostile_args);
        let attacked_rows = rows(Path::new(&attacked));
        assert_eq!(plain_rows.len(), attacked_rows.len(), "{recipe:?}");
        for (a, b) in plain_rows.iter().zip(&attacked_rows) {
            assert_eq!(
                a.target, b.target,
                "{recipe:?}: the same instance over both haystacks"
            );
            assert_eq!(a.answers, b.answers, "{recipe:?}");
            for term in gold_terms(a) {
                assert_eq!(
                    mentions(&b.input, &term),
                    mentions(&a.input, &term),
                    "{recipe:?} seed {seed_arg}, row {}: '{term}' is mentioned {} times over the hostile corpus, {} times over the built-in haystack",
                    b.id,
                    mentions(&b.input, &term),
                    mentions(&a.input, &term)
                );
            }
            // The attack was real: the hostile corpus reached the input.
            assert!(
                FILLER.iter().any(|f| b.input.contains(f)),
                "{recipe:?}: the corpus was not used"
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} rows checked");
}

#[test]
fn the_attack_would_be_seen_without_screening() {
    // The counting rule the test relies on finds a hostile mention in any case and shape.
    assert_eq!(mentions("The code for Leafy-Mole is 1.", "leafy-mole"), 1);
    assert_eq!(mentions("x leafy-moles", "leafy-mole"), 0);
    assert_eq!(mentions("8707592, 18707592 and 8707592.", "8707592"), 2);
    assert_eq!(mentions("KITCHEN kitchen", "kitchen"), 2);
}
