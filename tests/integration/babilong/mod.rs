//! End-to-end tests of `gen babilong`, running the real binary. Answers are re-derived from
//! `params` by a solver written here (tests/babilong/solver.rs), independently of the
//! generator's world simulator.

mod solver;

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::*;
use needlework_generators::Tokenizer;
use solver::{fact_words, s, solve};

const CLASSIC_ACTORS: [&str; 7] = ["John", "Mary", "Sandra", "Daniel", "Bill", "Fred", "Jeff"];
const CLASSIC_PLACES: [&str; 6] = [
    "bathroom", "bedroom", "garden", "hallway", "kitchen", "office",
];

/// Every fact is in `input`, in story order, at its recorded token offset, and says what its
/// data says.
fn check_facts(r: &TestRow, tok: &Tokenizer) {
    let p = &r.params;
    let n = p["fact_count"].as_u64().unwrap() as usize;
    assert_eq!(r.needle_offsets.len(), n);
    assert!(
        r.needle_offsets.windows(2).all(|w| w[0] < w[1]),
        "story order"
    );
    // Candidate sentence starts: capitals after a blank or a newline.
    let bytes = r.input.as_bytes();
    let starts: Vec<usize> = (1..bytes.len())
        .filter(|&i| bytes[i].is_ascii_uppercase() && matches!(bytes[i - 1], b'\n' | b' '))
        .collect();
    let (_, offsets) = tok.count_with_marks(&r.input, &starts).unwrap();
    let mut from = 0usize;
    let mut first_start = None;
    for i in 0..n {
        let want = r.needle_offsets[i];
        // The sentence starting at the recorded offset (a leading space may share its token).
        let k = (from..starts.len())
            .find(|&k| {
                (offsets[k] as i64 - want).abs() <= 1 && {
                    let end = r.input[starts[k]..].find('.').unwrap() + starts[k];
                    let sentence = &r.input[starts[k]..end];
                    fact_words(p, i).iter().all(|w| {
                        sentence
                            .split(|c: char| !c.is_alphanumeric())
                            .any(|x| w.split('|').any(|alt| x == alt))
                    })
                }
            })
            .unwrap_or_else(|| {
                panic!(
                    "fact {i} ({:?}) not at token {want} of {}",
                    fact_words(p, i),
                    r.id
                )
            });
        first_start.get_or_insert(starts[k]);
        from = k + 1;
    }
    // The first fact's offset, recounted the plain way (no marks).
    if let Some(at) = first_start {
        let before = tok.count(&r.input[..at]).unwrap() as i64;
        assert!((before - r.needle_offsets[0]).abs() <= 1);
    }
}

fn check_rows(dir: &Path, config: &str, tok: &Tokenizer, reserve: i64) -> usize {
    let rows = rows(&dir.join(config));
    assert!(!rows.is_empty(), "{config} has rows");
    for r in &rows {
        let p = &r.params;
        assert_eq!(r.metric, "label");
        let solved = solve(p);
        assert_eq!(r.answers, solved, "{config} {}: {p}", r.id);
        assert_eq!(r.target, solved.join(","));
        assert_eq!(
            r.length as usize,
            tok.count(&r.input).unwrap(),
            "exact length"
        );
        if r.target_length > 0 {
            let budget = r.target_length - reserve;
            let tol = (budget / 500).max(16);
            assert!(
                r.length <= budget && r.length >= budget - tol,
                "{config}: {} for a budget of {budget}",
                r.length
            );
        } else {
            assert!(r.needle_depths.is_empty() && r.depth_percent.is_none());
        }
        let supporting: Vec<u64> = p["supporting"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert!(!supporting.is_empty());
        assert!(supporting.windows(2).all(|w| w[0] < w[1]));
        assert!(*supporting.last().unwrap() < p["fact_count"].as_u64().unwrap());
        check_facts(r, tok);
    }
    rows.len()
}

/// Generate `babilong --task TASKS --len LENS EXTRA..` into `out`, quietly.
fn babilong(out: &str, tasks: &str, lens: &str, extra: &[&str]) {
    let mut args = vec!["babilong", "--task", tasks, "--len", lens];
    args.extend_from_slice(extra);
    generate(out, &args);
}

/// Generate bAbI tasks `qas` with `--len lens`, check every row of every config (answers
/// re-solved, facts at their offsets, exact lengths), and return the dataset.
fn generate_and_check(
    qas: std::ops::RangeInclusive<u8>,
    lens: &str,
    samples: usize,
    tokenizer: (&str, Tokenizer),
) -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tmp();
    let out = t.path().join("d");
    let tasks: Vec<String> = qas.clone().map(|qa| format!("qa{qa}")).collect();
    let (tasks, samples_arg) = (tasks.join(","), samples.to_string());
    babilong(
        out.to_str().unwrap(),
        &tasks,
        lens,
        &[
            "--samples",
            &samples_arg,
            "--seed",
            "5",
            "--tokenizer",
            tokenizer.0,
        ],
    );
    let rows_per_config = samples * lens.split(',').count();
    for qa in qas {
        let n = check_rows(&out, &format!("babilong_qa{qa}"), &tokenizer.1, 16);
        assert_eq!(n, rows_per_config, "qa{qa}");
    }
    (t, out)
}

/// Qa1-qa5 at --len 0, 4k and 32k; answers re-solved, facts in order at
/// their offsets, lengths exact.
#[test]
fn qa1_to_qa5_at_0_4k_32k() {
    let (_t, out) = generate_and_check(1..=5, "0,4k,32k", 3, ("o200k", Tokenizer::O200k));
    // The same story at every length: BABILong's samples keep their question across lengths.
    let by_sample = |len: i64| -> Vec<String> {
        rows(&out.join("babilong_qa2"))
            .into_iter()
            .filter(|r| r.target_length == len)
            .map(|r| r.params["query"].to_string() + &r.params["events"].to_string())
            .collect()
    };
    assert_eq!(by_sample(0), by_sample(32768));
}

/// Qa6-qa13 at 4k, in another tokenizer.
#[test]
fn qa6_to_qa13_at_4k() {
    generate_and_check(6..=13, "4k", 6, ("cl100k", Tokenizer::Cl100k));
}

/// qa14-qa20 at 4k and with the story alone, in the tokenizer BABILong counts with.
#[test]
fn qa14_to_qa20() {
    generate_and_check(14..=20, "0,4k", 5, ("gpt2", Tokenizer::Gpt2));
}

/// The property test: thousands of stories re-solved from their events.
#[test]
fn thousands_of_stories_resolve() {
    let t = tmp();
    let mut seen: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    let mut total = 0;
    for (vocab, samples) in [("babi", "250"), ("fresh", "80")] {
        let out = t.path().join(vocab).display().to_string();
        babilong(&out, "all", "0", &["--samples", samples, "--vocab", vocab]);
        for qa in 1..=20 {
            for r in rows(&Path::new(&out).join(format!("babilong_qa{qa}"))) {
                assert_eq!(r.answers, solve(&r.params), "{}", r.params);
                *seen
                    .entry(format!("qa{qa}"))
                    .or_default()
                    .entry(r.target.clone())
                    .or_default() += 1;
                total += 1;
            }
        }
    }
    assert_eq!(total, 20 * 330);
    // Every closed answer set is used, not one answer over and over.
    for (qa, answers) in &seen {
        let min = match qa.as_str() {
            "qa6" | "qa9" | "qa17" | "qa18" => 2,
            "qa10" | "qa7" => 3,
            _ => 4,
        };
        assert!(answers.len() >= min, "{qa}: {answers:?}");
        // qa10 asks about a place drawn among all six, as bAbI does: mostly "no".
        if matches!(qa.as_str(), "qa6" | "qa9" | "qa17" | "qa18") {
            let most = answers.values().max().unwrap();
            assert!(
                *most < 330 * 3 / 4,
                "{qa} answers balanced enough: {answers:?}"
            );
        }
    }
}

/// Fresh vocabulary avoids bAbI's names.
#[test]
fn fresh_vocabulary_is_new() {
    let t = tmp();
    let out = t.path().join("d").display().to_string();
    babilong(
        &out,
        "qa1,qa5",
        "2k",
        &["--samples", "8", "--vocab", "fresh"],
    );
    let mut actors = std::collections::BTreeSet::new();
    for config in ["babilong_qa1", "babilong_qa5"] {
        for r in rows(&Path::new(&out).join(config)) {
            let p = &r.params;
            for a in p["actors"].as_array().unwrap() {
                assert!(!CLASSIC_ACTORS.contains(&a.as_str().unwrap()), "{a}");
                actors.insert(s(a));
            }
            for l in p["places"].as_array().unwrap() {
                assert!(!CLASSIC_PLACES.contains(&l.as_str().unwrap()), "{l}");
            }
            for name in CLASSIC_ACTORS {
                assert!(
                    !r.input
                        .split(|c: char| !c.is_alphanumeric())
                        .any(|w| w == name),
                    "{name} in a fresh story"
                );
            }
            assert_eq!(r.answers, solve(p));
        }
    }
    assert!(
        actors.len() > 12,
        "names vary between instances: {actors:?}"
    );
}

/// A user's .txt corpus as haystack, facts kept within 40-60 % depth; and
/// `--depths` placing the first supporting fact.
#[test]
fn corpus_haystack_and_fact_window() {
    let t = tmp();
    let out = t.path().join("d").display().to_string();
    let corpus = fixture("corpus/rivers.txt");
    babilong(
        &out,
        "qa1,qa2",
        "8k",
        &[
            "--samples",
            "4",
            "--haystack",
            &corpus,
            "--fact-window",
            "40..60",
        ],
    );
    let tok = Tokenizer::O200k;
    for config in ["babilong_qa1", "babilong_qa2"] {
        check_rows(Path::new(&out), config, &tok, 16);
        for r in rows(&Path::new(&out).join(config)) {
            for d in &r.needle_depths {
                assert!((40.0..=60.0).contains(d), "{config}: depth {d}");
            }
        }
    }
    let out2 = t.path().join("e").display().to_string();
    babilong(&out2, "qa2", "8k", &["--depths", "10,90", "--samples", "3"]);
    for r in rows(&Path::new(&out2).join("babilong_qa2")) {
        let first = r.params["supporting"][0].as_u64().unwrap() as usize;
        let d = r.depth_percent.unwrap();
        assert!(
            (r.needle_depths[first] - d).abs() < 1.0,
            "first supporting fact at {} for depth {d}",
            r.needle_depths[first]
        );
        check_facts(&r, &tok);
    }
}

/// The same command twice gives byte-identical files, whatever the threads;
/// `gen verify` passes.
#[test]
fn deterministic_and_verifiable() {
    let t = tmp();
    let mk = |name: &str, threads: &str| {
        let out = t.path().join(name).display().to_string();
        babilong(
            &out,
            "qa2,qa7",
            "2k",
            &["--samples", "5", "--seed", "3", "--threads", threads],
        );
        out
    };
    let (a, b) = (mk("a", "1"), mk("b", "2"));
    for config in ["babilong_qa2", "babilong_qa7"] {
        let f = format!("{config}/test-00000-of-00001.parquet");
        assert_eq!(
            std::fs::read(Path::new(&a).join(&f)).unwrap(),
            std::fs::read(Path::new(&b).join(&f)).unwrap()
        );
    }
    let card = std::fs::read_to_string(Path::new(&a).join("README.md")).unwrap();
    assert!(
        card.contains("- config_name: babilong_qa2\n")
            && card.contains("- config_name: babilong_qa7\n")
    );
    let v = gen_ok(&["verify", &a, "-q"]);
    assert!(String::from_utf8_lossy(&v.stdout).starts_with("ok: 10 rows"));
    // A truncated file in the second config is caught.
    let f = Path::new(&a).join("babilong_qa7/test-00000-of-00001.parquet");
    let mut bytes = std::fs::read(&f).unwrap();
    let n = bytes.len();
    bytes.truncate(n - 200);
    std::fs::write(&f, bytes).unwrap();
    let v = gen(&["verify", &a, "-q"]);
    assert_eq!(v.status.code(), Some(1));
}

#[test]
fn bad_input_is_refused() {
    let t = tmp();
    let out = t.path().join("d").display().to_string();
    for args in [
        vec!["--task", "qa21"],
        vec!["--task", "qa16", "--facts", "5"],
        vec!["--task", "qa1,x"],
        vec!["--vocab", "big"],
        vec!["--facts", "0..4"],
        vec!["--facts", "9..3"],
        vec!["--task", "qa4", "--facts", "3"],
        vec!["--fact-window", "60..40"],
        vec!["--fact-window", "40"],
        vec!["--fact-window", "40..60", "--depths", "10"],
        vec!["--len", "0", "--depths", "50"],
        vec!["--task", "qa3", "--facts", "200..228", "--len", "1k"],
        vec!["--haystack", "none"],
    ] {
        let mut all = vec!["babilong"];
        all.extend(&args);
        // Any wording: the messages belong to the config layer's tests.
        assert_refused(&all, &out, "error: ");
    }
}

/// The `babilong` template's worked examples, as checked in.
const EXAMPLES: &str = include_str!("../../../generators/templates/babilong/examples.json");

fn examples() -> serde_json::Map<String, serde_json::Value> {
    match serde_json::from_str(EXAMPLES).unwrap() {
        serde_json::Value::Object(m) => m,
        other => panic!("examples are a map of tasks: {other}"),
    }
}

/// Every worked example re-solved by this file's own solver from its facts as data, and
/// every example sentence saying what its data says.
#[test]
fn template_examples_are_right() {
    let all = examples();
    assert_eq!(all.len(), 20);
    for (qa, list) in &all {
        let list = list.as_array().unwrap();
        assert!((2..=3).contains(&list.len()), "{qa}");
        for e in list {
            let mut p = serde_json::json!({"query": e["query"]});
            p[s(&e["data_key"])] = e["data"].clone();
            let answers: Vec<String> = e["answers"].as_array().unwrap().iter().map(s).collect();
            assert_eq!(solve(&p), answers, "{qa}: {}", e["question"]);
            for (i, fact) in e["facts"].as_array().unwrap().iter().enumerate() {
                let words: Vec<&str> = fact
                    .as_str()
                    .unwrap()
                    .split(|c: char| !c.is_alphanumeric())
                    .collect();
                for w in fact_words(&p, i) {
                    assert!(
                        words.iter().any(|x| w.split('|').any(|alt| *x == alt)),
                        "{qa}: {w} in {fact}"
                    );
                }
            }
        }
    }
}

/// `--template babilong`: BABILong's prompt structure (instruction, worked examples each in
/// `<example>` tags headed `Example`, the answer format, the context in `<context>` tags,
/// the question), for all twenty tasks, with and without filler; the rows are checked like
/// any other (answers re-solved, facts at their offsets, exact lengths) and verify.
#[test]
fn babilong_template_frames_every_task() {
    let listed = gen_ok(&["list", "templates"]);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("babilong/babilong"));
    let t = tmp();
    let out = t.path().join("d");
    let d = out.to_str().unwrap();
    babilong(
        d,
        "all",
        "0,4k",
        &["--samples", "2", "--seed", "5", "--template", "babilong"],
    );
    let all = examples();
    let tok = Tokenizer::O200k;
    for qa in 1..=20 {
        let config = format!("babilong_qa{qa}");
        assert_eq!(check_rows(&out, &config, &tok, 16), 4, "{config}");
        let shown = all[&format!("qa{qa}")].as_array().unwrap();
        for r in rows(&out.join(&config)) {
            let input = &r.input;
            let head = if r.target_length > 0 {
                "Between <context> and </context> below is a long text."
            } else {
                "Between <context> and </context> below is a short story"
            };
            assert!(input.starts_with(head), "{config}: {input}");
            assert_eq!(r.answer_prefix, "Answer:");
            // The examples in order, each headed and in tags.
            let mut at = 0;
            for (k, e) in shown.iter().enumerate() {
                let facts: Vec<String> = e["facts"].as_array().unwrap().iter().map(s).collect();
                let answers: Vec<String> = e["answers"].as_array().unwrap().iter().map(s).collect();
                let block = format!(
                    "<example>\nExample {}\n{}\nQuestion: {}\nAnswer: {}\n</example>\n",
                    k + 1,
                    facts.join(" "),
                    s(&e["question"]),
                    answers.join(",")
                );
                let found = input[at..].find(&block).unwrap_or_else(|| {
                    panic!("{config}: example {} missing:\n{block}\nin\n{input}", k + 1)
                });
                at += found + block.len();
            }
            assert_eq!(input.matches("<example>").count(), shown.len());
            // Then the answer format, the context, the question.
            let open = input.find("\n<context>\n").expect("context opens");
            assert!(open > at && input.matches("\n<context>\n").count() == 1);
            let format_line = input[..open].trim_end().lines().last().unwrap();
            assert!(
                format_line.starts_with("Answer "),
                "{config}: {format_line}"
            );
            let close = input
                .rfind("\n</context>\n\nQuestion: ")
                .expect("context closes");
            let question = &input[close + "\n</context>\n\nQuestion: ".len()..];
            assert!(
                question.ends_with("?\n") && question.lines().count() == 1,
                "{config}: {question}"
            );
            // Every fact lies inside the context.
            let before = tok.count(&input[..open + "\n<context>\n".len()]).unwrap() as i64;
            assert!(
                r.needle_offsets.iter().all(|&o| o + 1 >= before),
                "{config}"
            );
        }
    }
    let v = gen_ok(&["verify", d, "-q"]);
    assert!(String::from_utf8_lossy(&v.stdout).starts_with("ok: 80 rows"));
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["recipe"]["template"], "babilong");
    // Other tasks have no such template.
    let other = t.path().join("n").display().to_string();
    assert_refused(
        &["niah", "--template", "babilong"],
        &other,
        "unknown template 'babilong' for niah",
    );
}

/// A suite file entry takes `template = "babilong"`, and the suite verifies.
#[test]
fn suite_entries_take_the_babilong_template() {
    let t = tmp();
    let file = t.path().join("s.toml");
    std::fs::write(
        &file,
        "lengths = [\"0\", \"2k\"]\nsamples = 2\n\n[[task]]\ntask = \"babilong\"\ntasks = \"qa1\"\ntemplate = \"babilong\"\n\n[[task]]\ntask = \"babilong\"\ntasks = \"qa2\"\n",
    )
    .unwrap();
    let out = t.path().join("d");
    let d = out.to_str().unwrap();
    gen_ok(&["suite", file.to_str().unwrap(), "--out", d, "-q"]);
    for r in rows(&out.join("babilong_qa1")) {
        assert!(r.input.contains("<example>\nExample 1\n"), "{}", r.input);
    }
    for r in rows(&out.join("babilong_qa2")) {
        assert!(!r.input.contains("<example>"));
    }
    let v = gen_ok(&["verify", d, "-q"]);
    assert!(String::from_utf8_lossy(&v.stdout).starts_with("ok: 8 rows"));
}
