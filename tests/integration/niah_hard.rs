//! Harder needles, end to end with the real binary: `gen niah --confusers N` (near-miss facts
//! that never change the gold answer) and `gen niah --needle latent` (needles that share no
//! word with their question; the answer takes one hop through our association tables).
//!

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::common::*;
use needlework_generators::scoring::{is_correct, Gold};
use needlework_generators::{Metric, Tokenizer};

/// Levenshtein distance over characters (the test's own).
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let sub = prev[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            cur[j] = sub.min(prev[j] + 1).min(cur[j - 1] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Occurrences of `item` in `text` as a whole token, tokens being runs of letters, digits and
/// hyphens, compared without case (a key `amber-fox` is not found in `amber-foxes`).
fn token_count(text: &str, item: &str) -> usize {
    let item = item.to_lowercase();
    text.split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .filter(|t| t.to_lowercase() == item)
        .count()
}

/// Whether `text` mentions `term` as a sequence of whole words (letters and digits), without
/// case: the test's own reading of "the haystack mentions it".
fn mentions(text: &str, term: &str) -> bool {
    let words = |s: &str| {
        let w: Vec<String> = s
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        format!(" {} ", w.join(" "))
    };
    let term = words(term);
    term.trim() != "" && words(text).contains(&term)
}

fn metric(name: &str) -> Metric {
    match name {
        "all" => Metric::All,
        "any" => Metric::Any,
        "exact" => Metric::Exact,
        "set" => Metric::Set,
        _ => Metric::Label,
    }
}

/// Each row's closed label set, by id (read with `gen`'s own reader).
fn labels_of(dir: &Path) -> BTreeMap<String, Vec<String>> {
    use crate::common::parquet_read::{Columns, ParquetFile};
    let mut out = BTreeMap::new();
    for file in parquet_files(dir) {
        for batch in ParquetFile::open(&file)
            .unwrap()
            .project(&["id", "labels"])
            .unwrap()
        {
            let batch = batch.unwrap();
            let columns = Columns::in_file(&batch, &file);
            let (ids, labels) = (
                columns.strings("id").unwrap(),
                columns.string_lists("labels").unwrap(),
            );
            for i in 0..columns.num_rows() {
                out.insert(ids.value(i).to_string(), labels.value(i));
            }
        }
    }
    out
}

/// Whether `prediction` scores as correct for `r` (with its `labels`) under its own metric.
fn scores_with(r: &TestRow, labels: &[String], prediction: &str) -> bool {
    let gold = Gold {
        metric: metric(&r.metric),
        target: &r.target,
        answers: &r.answers,
        labels,
        question: "",
        answer_prefix: &r.answer_prefix,
        max_new_tokens: r.max_new_tokens as u32,
        input_chars: r.input.chars().count(),
    };
    is_correct(&gold, prediction)
}

/// [`scores_with`] for a row without labels (every metric but `label`).
fn scores(r: &TestRow, prediction: &str) -> bool {
    scores_with(r, &[], prediction)
}

/// Lengths exact: `length` is the count of `input`, and what the model reads fills the budget.
fn assert_exact_length(r: &TestRow, tok: &Tokenizer) {
    assert_eq!(r.length as usize, tok.count(&r.input).unwrap(), "{}", r.id);
    let prompt = tok
        .count(&format!("{}{}", r.input, r.answer_prefix))
        .unwrap() as i64;
    assert_eq!(prompt, r.prompt_tokens, "{}", r.id);
    let budget = r.target_length - r.max_new_tokens;
    let tolerance = (budget / 500).max(16);
    assert!(
        prompt <= budget && prompt >= budget - tolerance,
        "{}: {prompt} tokens for a budget of {budget}",
        r.id
    );
}

fn str_of(v: &serde_json::Value) -> &str {
    v.as_str().expect("a string")
}

/// Confusers: over every variant, key and value type and several haystacks,
/// the gold answers are the asked keys' own values, every confuser sentence is in the input
/// where recorded, near keys are one edit from an asked key and no key or value of the
/// instance, superseded and negated facts name an asked key with a value that is not gold,
/// no haystack sentence repeats a confuser's key or value, and scoring gives the gold full
/// marks and any confuser's value none.
#[test]
fn confusers_never_change_the_gold() {
    let t = tmp();
    let corpus = fixture("corpus");
    let runs: Vec<Vec<&str>> = vec![
        vec!["--variant", "single", "--confusers", "4"],
        vec![
            "--variant",
            "multikey",
            "--confusers",
            "6",
            "--key-type",
            "numbers",
            "--value-type",
            "words",
        ],
        vec![
            "--variant",
            "multivalue",
            "--confusers",
            "3",
            "--key-type",
            "uuids",
            "--value-type",
            "uuids",
        ],
        vec![
            "--variant",
            "multiquery",
            "--confusers",
            "5",
            "--haystack",
            "needles",
            "--value-type",
            "words",
        ],
        vec![
            "--variant",
            "none",
            "--confusers",
            "4",
            "--key-type",
            "numbers",
        ],
        vec![
            "--confusers",
            "2",
            "--haystack",
            &corpus,
            "--spread",
            "even",
        ],
        vec![
            "--confusers",
            "3",
            "--haystack",
            "noise",
            "--tokenizer",
            "cl100k",
        ],
    ];
    let (mut rows_seen, mut kinds) = (0, BTreeMap::<String, usize>::new());
    for (i, extra) in runs.iter().enumerate() {
        let out = out_arg(t.path(), &format!("c{i}"));
        let seed = (40 + i).to_string();
        let mut args = vec![
            "niah",
            "--len",
            "1800,3k",
            "--depths",
            "3",
            "--samples",
            "4",
            "--seed",
            &seed,
        ];
        args.extend(extra.iter().copied());
        generate(&out, &args);
        gen_ok(&["verify", &out, "-q"]);
        let tok = if extra.contains(&"cl100k") {
            Tokenizer::Cl100k
        } else {
            Tokenizer::O200k
        };
        let want: usize = extra[extra.iter().position(|a| *a == "--confusers").unwrap() + 1]
            .parse()
            .unwrap();
        for r in rows(Path::new(&out)) {
            rows_seen += 1;
            assert_exact_length(&r, &tok);
            let p = &r.params;
            let needles = p["needles"].as_array().unwrap();
            let asked: Vec<&str> = p["asked"].as_array().unwrap().iter().map(str_of).collect();
            let absent = p["absent"].as_bool().unwrap();
            // Gold: the values of the asked keys' needles, in needle order; `none` if absent.
            let gold: Vec<String> = needles
                .iter()
                .filter(|n| asked.contains(&str_of(&n["key"])))
                .map(|n| str_of(&n["value"]).to_string())
                .collect();
            if absent {
                assert_eq!((r.target.as_str(), r.metric.as_str()), ("none", "exact"));
                assert!(gold.is_empty());
            } else {
                assert_eq!(r.answers, gold, "{}", r.id);
                assert_eq!(r.target, gold.join(", "));
            }
            assert_eq!(r.needle_offsets.len(), needles.len(), "needles only");
            for n in needles {
                let s = niah_needle(str_of(&n["key"]), str_of(&n["value"]));
                assert_eq!(r.input.matches(&s).count(), 1, "{}: {s}", r.id);
            }
            let keys: BTreeSet<&str> = needles
                .iter()
                .map(|n| str_of(&n["key"]))
                .chain(asked.iter().copied())
                .collect();
            let values: BTreeSet<&str> = needles.iter().map(|n| str_of(&n["value"])).collect();
            let confusers = p["confusers"].as_array().unwrap();
            assert_eq!(confusers.len(), want, "{}", r.id);
            for c in confusers {
                let (kind, key, value, sentence) = (
                    str_of(&c["kind"]),
                    str_of(&c["key"]),
                    str_of(&c["value"]),
                    str_of(&c["sentence"]),
                );
                *kinds.entry(kind.to_string()).or_default() += 1;
                assert_eq!(r.input.matches(sentence).count(), 1, "{}: {sentence}", r.id);
                assert!(sentence.contains(key) && sentence.contains(value));
                // At its recorded token offset.
                let at = r.input.find(sentence).unwrap();
                let before = tok.count(&r.input[..at]).unwrap() as i64;
                assert!(
                    (before - c["offset"].as_i64().unwrap()).abs() <= 1,
                    "{}",
                    r.id
                );
                // Never a gold value, nor one inside the other (substring scoring).
                for g in &gold {
                    let (a, b) = (g.to_lowercase(), value.to_lowercase());
                    assert!(
                        !a.contains(&b) && !b.contains(&a),
                        "{}: {value} vs {g}",
                        r.id
                    );
                }
                assert!(!values.contains(value) && !keys.contains(value));
                // The value is stated once: in its own sentence, nowhere in the haystack.
                assert_eq!(token_count(&r.input, value), 1, "{}: {value}", r.id);
                match kind {
                    "near_key" => {
                        assert!(
                            asked.iter().any(|a| distance(a, key) == 1),
                            "{}: {key} is not one edit from {asked:?}",
                            r.id
                        );
                        assert!(!keys.contains(key) && !values.contains(key), "{key}");
                        assert_eq!(sentence, niah_needle(key, value));
                        assert_eq!(token_count(&r.input, key), 1, "{}: {key}", r.id);
                    }
                    "superseded" | "negated" => {
                        assert!(!absent, "an absent key gets near keys only");
                        assert!(asked.contains(&key), "{}: {key}", r.id);
                        let word = if kind == "superseded" {
                            "withdrawn"
                        } else {
                            " is not "
                        };
                        assert!(sentence.contains(word), "{sentence}");
                    }
                    other => panic!("unknown confuser kind {other}"),
                }
                // Scoring is not fooled: a confuser's value, alone or in a sentence, is wrong.
                assert!(!scores(&r, value), "{}: {value} scored", r.id);
                assert!(!scores(
                    &r,
                    &format!("The access code assigned to {key} is {value}.")
                ));
            }
            assert!(scores(&r, &r.target), "{}: gold scored wrong", r.id);
        }
    }
    assert_eq!(rows_seen, runs.len() * 2 * 3 * 4);
    for kind in ["near_key", "superseded", "negated"] {
        assert!(kinds.get(kind).copied().unwrap_or(0) > 10, "{kinds:?}");
    }
}

/// `gen score` agrees: the gold answers score 1, the confusers' values 0.
#[test]
fn gen_score_credits_gold_not_confusers() {
    let t = tmp();
    let out = out_arg(t.path(), "ds");
    generate(
        &out,
        &[
            "niah",
            "--variant",
            "multikey",
            "--confusers",
            "3",
            "--len",
            "2k",
            "--depths",
            "4",
            "--samples",
            "3",
        ],
    );
    let rows = rows(Path::new(&out));
    let write = |name: &str, pick: &dyn Fn(&TestRow) -> String| {
        let path = t.path().join(name);
        let text: String = rows
            .iter()
            .map(|r| {
                format!(
                    "{}\n",
                    serde_json::json!({"id": r.id, "prediction": pick(r)})
                )
            })
            .collect();
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let gold = write("gold.jsonl", &|r| r.target.clone());
    let confused = write("confused.jsonl", &|r| {
        str_of(&r.params["confusers"][0]["value"]).to_string()
    });
    for (preds, want) in [(gold, 1.0), (confused, 0.0)] {
        let s = out_arg(t.path(), &format!("scores{want}"));
        gen_ok(&["score", &out, "--predictions", &preds, "--out", &s]);
        let v: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(Path::new(&s).join("scores.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(v["overall"]["accuracy"].as_f64().unwrap(), want, "{preds}");
    }
}

/// The latent tables as their files say, read by the test itself: thing → (table, place),
/// and each place's other names.
struct Tables {
    hops: BTreeMap<String, (String, String)>,
    aliases: BTreeMap<String, Vec<String>>,
}

fn read_tables() -> Tables {
    let dir = root().join("generators/haystacks/latent");
    let strip = |s: &str| {
        s.trim()
            .strip_prefix("the ")
            .unwrap_or(s.trim())
            .to_string()
    };
    let mut hops = BTreeMap::new();
    for table in [
        "landmark_city",
        "artwork_city",
        "dish_country",
        "river_country",
        "instrument_family",
    ] {
        let text = std::fs::read_to_string(dir.join(format!("{table}.txt"))).unwrap();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            if let Some((from, to)) = line.split_once(" | ") {
                hops.insert(strip(from), (table.to_string(), strip(to)));
            }
        }
    }
    let mut aliases = BTreeMap::new();
    let text = std::fs::read_to_string(dir.join("aliases.txt")).unwrap();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        if let Some((place, words)) = line.split_once(':') {
            aliases.insert(
                place.trim().to_string(),
                words.split(',').map(|w| w.trim().to_string()).collect(),
            );
        }
    }
    assert!(hops.len() >= 300, "{} rows", hops.len());
    Tables { hops, aliases }
}

/// The test's own reading of the overlap rule: words of at least four letters, lower-cased,
/// with one ending -ing, -ed, -es or -s dropped when four letters remain; two words clash when
/// one stem begins with the other.
fn shared_content_word(a: &str, b: &str) -> Option<(String, String)> {
    fn stems(s: &str) -> Vec<String> {
        s.split(|c: char| !c.is_alphabetic())
            .filter(|w| w.chars().count() >= 4)
            .map(|w| {
                let w = w.to_lowercase();
                ["ing", "ed", "es", "s"]
                    .iter()
                    .find_map(|e| w.strip_suffix(e).filter(|r| r.chars().count() >= 4))
                    .map_or(w.clone(), str::to_string)
            })
            .collect()
    }
    let sb = stems(b);
    for x in stems(a) {
        if let Some(y) = sb
            .iter()
            .find(|y| x.starts_with(y.as_str()) || y.starts_with(&x))
        {
            return Some((x, y.clone()));
        }
    }
    None
}

/// Latent: over many seeds, variants and haystacks, no needle sentence shares a
/// content word with its question (nor with the asked place's other names); the answer follows
/// from the table (the test reads the data files itself); the other people lead elsewhere;
/// the hop's terms, every other thing that leads to the asked place, and the answer's name are
/// nowhere else in the input; lengths are exact; scoring credits the answer only.
#[test]
fn latent_needles_share_no_word_and_answer_by_one_hop() {
    let tables = read_tables();
    let t = tmp();
    let corpus = fixture("corpus");
    let runs: Vec<Vec<&str>> = vec![
        vec!["--variant", "single"],
        vec!["--variant", "multikey", "--haystack", "noise"],
        vec!["--variant", "multikey", "--haystack", "needles"],
        vec!["--keys", "7", "--spread", "even", "--haystack", &corpus],
        vec![
            "--variant",
            "single",
            "--tokenizer",
            "cl100k",
            "--template",
            "plain",
        ],
    ];
    let mut per_table = BTreeMap::<String, usize>::new();
    let mut rows_seen = 0;
    for (i, extra) in runs.iter().enumerate() {
        let out = out_arg(t.path(), &format!("l{i}"));
        let seed = (70 + i).to_string();
        let mut args = vec![
            "niah",
            "--needle",
            "latent",
            "--len",
            "1k,2500",
            "--depths",
            "3",
            "--samples",
            "6",
            "--seed",
            &seed,
        ];
        args.extend(extra.iter().copied());
        generate(&out, &args);
        gen_ok(&["verify", &out, "-q"]);
        let tok = if extra.contains(&"cl100k") {
            Tokenizer::Cl100k
        } else {
            Tokenizer::O200k
        };
        let plain = extra.contains(&"plain");
        let labels = labels_of(Path::new(&out));
        for r in rows(Path::new(&out)) {
            let labels = &labels[&r.id];
            let scores = |p: &str| scores_with(&r, labels, p);
            rows_seen += 1;
            assert_exact_length(&r, &tok);
            assert!(r.variant.starts_with("latent_"), "{}", r.variant);
            assert_eq!(r.input.starts_with("Below is a long document."), !plain);
            let p = &r.params;
            let hop = &p["hop"];
            let (table, from, to) = (
                str_of(&hop["table"]),
                str_of(&hop["from"]),
                str_of(&hop["to"]),
            );
            *per_table.entry(table.to_string()).or_default() += 1;
            // The answer follows from the table: the gold needle's thing leads to the asked place.
            assert_eq!(
                tables.hops.get(from),
                Some(&(table.to_string(), to.to_string())),
                "{}: {from} -> {to} is not in {table}",
                r.id
            );
            let sentences: Vec<&str> = p["needle_sentences"]
                .as_array()
                .unwrap()
                .iter()
                .map(str_of)
                .collect();
            let needles = p["needles"].as_array().unwrap();
            assert_eq!(sentences.len(), needles.len());
            assert_eq!(r.needle_offsets.len(), needles.len());
            assert_eq!(str_of(&needles[0]["key"]), from);
            assert_eq!(p["asked"][0], to);
            let name = str_of(&needles[0]["value"]);
            assert_eq!(
                (r.target.as_str(), r.answers.clone()),
                (name, vec![name.to_string()])
            );
            assert!(sentences[0].starts_with(name) && sentences[0].contains(from));
            let question = r.input[..r.input.rfind('?').unwrap() + 1]
                .rsplit(['\n', '>'])
                .next()
                .unwrap()
                .trim();
            assert!(question.contains(to), "{}: {question}", r.id);
            let mut guarded = question.to_string();
            for alias in tables.aliases.get(to).into_iter().flatten() {
                guarded.push(' ');
                guarded.push_str(alias);
            }
            for (k, s) in sentences.iter().enumerate() {
                assert_eq!(
                    shared_content_word(&guarded, s),
                    None,
                    "{}: {s} / {question}",
                    r.id
                );
                assert_eq!(r.input.matches(s).count(), 1, "{}: {s}", r.id);
                let n = &needles[k];
                let (other_from, other_name) = (str_of(&n["key"]), str_of(&n["value"]));
                assert!(s.contains(other_from) && s.starts_with(other_name));
                let (t2, to2) = tables.hops.get(other_from).unwrap();
                assert_eq!(t2, table, "one table per instance");
                if k > 0 {
                    assert_ne!(to2, to, "{}: a second person also leads to {to}", r.id);
                    let (a, b) = (name.to_lowercase(), other_name.to_lowercase());
                    assert!(!a.contains(&b) && !b.contains(&a), "{a} / {b}");
                }
            }
            // The first needle at its offset.
            let at = r.input.find(sentences[0]).unwrap();
            let before = tok.count(&r.input[..at]).unwrap() as i64;
            assert!((before - r.needle_offsets[0]).abs() <= 1, "{}", r.id);
            // Screened: outside the question and the needles, nothing names the answer, the
            // hop's two ends, the asked place's other names, or any thing leading there.
            let mut rest = r.input.replacen(question, " ", 1);
            for s in &sentences {
                rest = rest.replacen(s, " ", 1);
            }
            let mut terms: Vec<&str> = vec![name, from, to];
            terms.extend(
                tables
                    .aliases
                    .get(to)
                    .into_iter()
                    .flatten()
                    .map(String::as_str),
            );
            terms.extend(
                tables
                    .hops
                    .iter()
                    .filter(|(_, (_, place))| place == to)
                    .map(|(thing, _)| thing.as_str()),
            );
            for term in terms {
                assert!(
                    !mentions(&rest, term),
                    "{}: '{term}' outside its needle",
                    r.id
                );
            }
            // Scored by label: the name as a word, and no other person's name beside it.
            assert_eq!(r.metric, "label");
            assert!(labels.iter().any(|l| l == name) && labels.len() > 150);
            assert!(scores(name) && scores(&format!("It was {name}.")));
            assert!(!scores(&format!("{name}{name}")), "not a word");
            for n in &needles[1..] {
                let other = str_of(&n["value"]);
                assert!(!scores(other), "{}", r.id);
                assert!(!scores(&format!("{name} or {other}")), "{}", r.id);
            }
            let stranger = labels.iter().find(|l| *l != name).unwrap();
            assert!(!scores(&format!("{name} and {stranger}")));
            assert!(!scores("Several people, none of them named."));
        }
    }
    assert_eq!(rows_seen, runs.len() * 2 * 3 * 6);
    assert!(per_table.len() >= 4, "{per_table:?}");
}

/// Bad values are refused with one line naming the value and what is accepted, and nothing
/// is written; suite files take `confusers = 2` and `needle = "latent"`, and the manifest
/// records them so `gen verify` remakes the rows.
#[test]
fn options_are_checked_recorded_and_verified() {
    let t = tmp();
    let never = out_arg(t.path(), "never");
    for (args, needle) in [
        (
            vec!["niah", "--confusers", "51"],
            "--confusers 51: expected 0 to 50",
        ),
        (vec!["niah", "--confusers", "-1"], "-1"),
        (
            vec!["niah", "--needle", "hidden"],
            "expected code or latent",
        ),
        (
            vec!["niah", "--needle", "latent", "--variant", "multivalue"],
            "--values 4",
        ),
        (
            vec!["niah", "--needle", "latent", "--variant", "multiquery"],
            "--queries 4",
        ),
        (
            vec!["niah", "--needle", "latent", "--variant", "none"],
            "--absent",
        ),
        (
            vec!["niah", "--needle", "latent", "--keys", "21"],
            "--keys 21",
        ),
        (
            vec!["niah", "--needle", "latent", "--confusers", "1"],
            "--confusers 1",
        ),
        (
            vec!["niah", "--needle", "latent", "--key-type", "uuids"],
            "--key-type 'uuids'",
        ),
        (
            vec!["niah", "--needle", "latent", "--len", "200"],
            "minimum",
        ),
    ] {
        assert_refused(&args, &never, needle);
    }
    let suite = t.path().join("hard.toml");
    std::fs::write(
        &suite,
        "lengths = \"1500\"\nsamples = 2\n\n[[task]]\ntask = \"niah\"\nname = \"confused\"\nconfusers = 2\n\n[[task]]\ntask = \"niah\"\nname = \"latent\"\nneedle = \"latent\"\nvariant = \"multikey\"\n",
    )
    .unwrap();
    let out = out_arg(t.path(), "suite");
    gen_ok(&["suite", suite.to_str().unwrap(), "--out", &out, "-q"]);
    gen_ok(&["verify", &out, "-q"]);
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(&out).join("manifest.json")).unwrap(),
    )
    .unwrap();
    let entries = manifest["suite"]["entries"].as_array().unwrap();
    assert_eq!(entries[0]["recipe"]["options"]["confusers"], 2);
    assert_eq!(entries[1]["recipe"]["options"]["needle"], "latent");
    assert_eq!(entries[1]["recipe"]["template"], "latent");
    let bad = t.path().join("bad.toml");
    std::fs::write(&bad, "[[task]]\ntask = \"niah\"\nneedle = \"hidden\"\n").unwrap();
    let res = gen(&["suite", bad.to_str().unwrap(), "--out", &never]);
    assert_eq!(res.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&res.stderr).contains("hidden"));
    assert!(!Path::new(&never).exists());
    // A one-command dataset records its command with the new flags, and only those given.
    let one = out_arg(t.path(), "one");
    generate(&one, &["niah", "--confusers", "3", "--len", "2k"]);
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(&one).join("manifest.json")).unwrap(),
    )
    .unwrap();
    let command: Vec<&str> = manifest["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(str_of)
        .collect();
    assert!(
        command.windows(2).any(|w| w == ["--confusers", "3"]),
        "{command:?}"
    );
    assert!(!command.contains(&"--needle"), "{command:?}");
    gen_ok(&["verify", &one, "-q"]);
    let list = String::from_utf8(gen_ok(&["list", "needles"]).stdout).unwrap();
    for word in [
        "latent",
        "landmark_city",
        "instrument_family",
        "--confusers",
    ] {
        assert!(list.contains(word), "{list}");
    }
    let templates = String::from_utf8(gen_ok(&["list", "templates"]).stdout).unwrap();
    assert!(templates.contains("niah/latent"));
}
