//! Gold stays unambiguous whatever the corpus: haystack sentences that mention an instance's
//! keys, values, names or needle phrase are screened out (and counted in `params`), and an
//! over-long corpus sentence is cut so depths still land where they were asked. Each test
//! failed before screening and cutting existed.

use std::fmt::Write as _;

use crate::common::*;

const KEY_ADJECTIVES: &str = include_str!("../../generators/haystacks/vocab/key_adjectives.txt");
const KEY_NOUNS: &str = include_str!("../../generators/haystacks/vocab/key_nouns.txt");

fn words(list: &str) -> Vec<&str> {
    list.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// Ordinary sentences with none of our key words in them.
fn ordinary(n: usize) -> String {
    let mut text = String::new();
    for i in 0..n {
        let _ = write!(
            text,
            "Sentence {i} says nothing much, and then it stops. It was quiet that day. "
        );
    }
    text
}

/// The share of `needle` among the sentences of `text`.
fn count(text: &str, needle: &str) -> usize {
    text.to_lowercase().matches(&needle.to_lowercase()).count()
}

#[test]
fn niah_gold_is_unambiguous_in_a_hostile_corpus() {
    // Every key our generator can draw, with a competing value, in our needle's own words and in
    // other words; between them, ordinary sentences.
    let mut corpus = ordinary(150);
    for (i, adj) in words(KEY_ADJECTIVES).iter().enumerate() {
        for (j, noun) in words(KEY_NOUNS).iter().enumerate() {
            let key = format!("{adj}-{noun}");
            let _ = write!(
                corpus,
                "{} Also, {} holds code {}. ",
                niah_needle(&key, &(1_000_000 + i * 100 + j).to_string()),
                key.to_uppercase(),
                2_000_000 + i * 100 + j
            );
        }
        corpus.push_str(&ordinary(3));
    }
    let t = tmp();
    let file = t.path().join("hostile.txt");
    std::fs::write(&file, corpus).unwrap();
    let file = file.display().to_string();
    let mut screened = 0u64;
    for variant in ["single", "multikey", "multivalue", "multiquery", "none"] {
        let out = out_arg(t.path(), variant);
        generate(
            &out,
            &[
                "niah",
                "--variant",
                variant,
                "--len",
                "2k",
                "--depths",
                "3",
                "--samples",
                "2",
                "--haystack",
                &file,
            ],
        );
        for row in rows(std::path::Path::new(&out)) {
            let needles = row.params["needles"].as_array().unwrap();
            assert_eq!(
                count(&row.input, "One of the access codes assigned to"),
                needles.len(),
                "{variant} {}: a corpus sentence in the needles' words got in",
                row.id
            );
            let asked = row.params["asked"].as_array().unwrap();
            let keys = needles.iter().map(|n| &n["key"]).chain(asked);
            for key in keys {
                let key = key.as_str().unwrap();
                let in_needles = needles.iter().filter(|n| n["key"] == key).count();
                // A key is in its own needles and, when asked, in the question and answer
                // prefix; a competing corpus sentence would add one more.
                let in_question = if asked.iter().any(|a| a == key) { 2 } else { 0 };
                assert!(
                    count(&row.input, key) <= in_needles + in_question,
                    "{variant} {}: '{key}' appears outside its needles",
                    row.id
                );
            }
            screened += row.params["screened_units"].as_u64().unwrap();
        }
    }
    assert!(
        screened > 0,
        "the hostile corpus made the screen drop nothing"
    );
    // Screening changes nothing about regeneration.
    assert!(gen(&["verify", &out_arg(t.path(), "none"), "-q"])
        .status
        .success());
}

#[test]
fn a_corpus_cannot_move_a_story_actor() {
    let actors = [
        "Mary", "John", "Daniel", "Sandra", "Bill", "Fred", "Jeff", "Julie",
    ];
    let places = [
        "kitchen", "garden", "hallway", "bathroom", "bedroom", "office", "park", "cinema",
    ];
    let objects = ["football", "apple", "milk"];
    let mut corpus = ordinary(100);
    for (i, a) in actors.iter().enumerate() {
        for (j, p) in places.iter().enumerate() {
            let o = objects[(i + j) % objects.len()];
            let _ = write!(
                corpus,
                "Rumour has it that {a} strolled to the {p}. Rumour has it that {a} grabbed the {o}. "
            );
        }
    }
    let t = tmp();
    let file = t.path().join("moves.txt");
    std::fs::write(&file, corpus).unwrap();
    let file = file.display().to_string();
    for task in ["qa1", "qa2", "qa3", "qa5", "qa6", "qa11", "qa14"] {
        let out = out_arg(t.path(), task);
        generate(
            &out,
            &[
                "babilong",
                "--task",
                task,
                "--vocab",
                "babi",
                "--len",
                "2k",
                "--depths",
                "2",
                "--samples",
                "2",
                "--haystack",
                &file,
            ],
        );
        for row in rows(std::path::Path::new(&out)) {
            let named: Vec<String> = ["actors", "places", "objects"]
                .iter()
                .flat_map(|k| row.params[*k].as_array().unwrap().clone())
                .map(|v| v.as_str().unwrap().to_lowercase())
                .collect();
            for sentence in row
                .input
                .split(['.', '\n'])
                .filter(|s| s.contains("Rumour has it"))
            {
                let lower = sentence.to_lowercase();
                let words: Vec<&str> = lower
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .collect();
                assert!(
                    !named.iter().any(|n| words.contains(&n.as_str())),
                    "{task} {}: corpus sentence '{sentence}' names the story's world",
                    row.id
                );
            }
        }
    }
}

#[test]
fn screening_a_whole_corpus_away_is_refused_clearly() {
    // Every sentence names every babi actor: nothing is left to fill with.
    let sentence = "Mary, John, Daniel, Sandra, Bill, Fred, Jeff and Julie met in the kitchen, garden, hallway, bathroom, bedroom and office. ";
    let t = tmp();
    let file = t.path().join("all.txt");
    std::fs::write(&file, sentence.repeat(50)).unwrap();
    let out = out_arg(t.path(), "out");
    let args = [
        "babilong",
        "--task",
        "qa1",
        "--vocab",
        "babi",
        "--len",
        "2k",
        "--haystack",
    ];
    let mut all = args.to_vec();
    all.extend([file.to_str().unwrap(), "--out", &out]);
    let res = gen(&all);
    let err = String::from_utf8_lossy(&res.stderr);
    assert_eq!(res.status.code(), Some(2), "{err}");
    assert!(err.contains("mention its needles"), "{err}");
    assert!(!std::path::Path::new(&out).exists());
}

#[test]
fn one_giant_sentence_still_gives_meaningful_depths() {
    // 300 KB without a full stop: one "sentence" before cutting.
    let mut blob = String::new();
    for i in 0..40_000 {
        let _ = write!(blob, "item{} ", i % 97);
        if i % 13 == 12 {
            blob.push_str("then, ");
        }
    }
    blob.insert_str(0, "A short start. ");
    blob.push_str(". A short end.");
    let t = tmp();
    let file = t.path().join("giant.txt");
    std::fs::write(&file, &blob).unwrap();
    let out = out_arg(t.path(), "out");
    generate(
        &out,
        &[
            "niah",
            "--len",
            "16k",
            "--depths",
            "0,25,50,75,100",
            "--haystack",
            file.to_str().unwrap(),
        ],
    );
    let rows = rows(std::path::Path::new(&out));
    assert_eq!(rows.len(), 5);
    for row in rows {
        let asked = row.depth_percent.unwrap();
        let got = row.needle_depths[0];
        assert!(
            (got - asked).abs() <= 2.0,
            "{}: asked {asked} %, got {got} %",
            row.id
        );
    }
}
