//! `gen ruler2` and `gen suite ruler2` through the real binary, on the invented MMLU copy
//! (tests/fixtures/mmlu, in its Parquet and JSON Lines layouts) and the HotpotQA fixture: every
//! variant at 4k under two tokenizers, each row checked against the data files read here; the
//! suite's twelve configs, its skipped entries, its refusals; one copy in two layouts makes one
//! dataset; threads and shards never change a byte; `verify` finds the MMLU directory again.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::*;
use needlework_generators::Tokenizer;

const VARIANTS: [&str; 12] = [
    "mk_niah_basic",
    "mk_niah_easy",
    "mk_niah_medium",
    "mk_niah_hard",
    "mv_niah_basic",
    "mv_niah_easy",
    "mv_niah_medium",
    "mv_niah_hard",
    "qa_basic",
    "qa_easy",
    "qa_medium",
    "qa_hard",
];

fn mmlu(layout: &str) -> String {
    fixture(&format!("mmlu/{layout}"))
}

fn hotpotqa() -> String {
    fixture("qa/hotpotqa.json")
}

/// The `--data` a variant reads: the MMLU copy, the HotpotQA file, or none.
fn data_of(variant: &str) -> Option<String> {
    if variant.ends_with("_basic") && variant.starts_with("m") {
        None
    } else if variant.starts_with("qa_") {
        Some(hotpotqa())
    } else {
        Some(mmlu("parquet"))
    }
}

/// One MMLU item as the fixture's JSON Lines hold it: (question, choices, answer).
type Item = (String, Vec<String>, usize);

/// A split of the fixture, read with serde_json alone.
fn split(name: &str) -> Vec<Item> {
    let text = std::fs::read_to_string(format!("{}/{name}.jsonl", mmlu("jsonl"))).unwrap();
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let choices: Vec<String> = v["choices"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_string())
                .collect();
            (
                v["question"].as_str().unwrap().to_string(),
                choices,
                v["answer"].as_u64().unwrap() as usize,
            )
        })
        .collect()
}

/// An item as the context writes it after `Question {id}: `, whitespace runs collapsed.
fn item_text((q, c, _): &Item) -> String {
    let one = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    format!(
        "{} A. {} B. {} C. {} D. {}",
        one(q),
        one(&c[0]),
        one(&c[1]),
        one(&c[2]),
        one(&c[3])
    )
}

/// The context's MMLU items in order: (id, text after `Question {id}: `).
fn items_of(input: &str) -> Vec<(String, String)> {
    input
        .lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix("Question ")?;
            let (id, text) = rest.split_once(": ")?;
            (id.len() == 7 && id.bytes().all(|b| b.is_ascii_digit()))
                .then(|| (id.to_string(), text.to_string()))
        })
        .collect()
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

fn numbers(v: &serde_json::Value) -> Vec<usize> {
    v.as_array()
        .map(|a| a.iter().map(|x| x.as_u64().unwrap() as usize).collect())
        .unwrap_or_default()
}

/// Check one row from the row alone and the data files: its answers are what its variant asks.
fn check_row(variant: &str, r: &TestRow, test: &[Item], aux: &BTreeSet<String>) {
    let p = &r.params;
    let id = &r.id;
    assert_eq!(p["variant"], variant, "{id}");
    assert!(p["raw_question_tokens"].as_u64().unwrap() > 0, "{id}");
    assert!(p["units"].as_u64().unwrap() > 0, "{id}");
    match variant {
        "mk_niah_basic" | "mv_niah_basic" => {
            // The needle key's facts, in context order, are the answers; it has per_id of them
            // (one for mk), like every other key.
            let key = p["key"].as_str().unwrap();
            let fact = format!("The hidden number of {key} is ");
            let values: Vec<String> = r
                .input
                .lines()
                .filter_map(|l| l.trim().strip_prefix(&fact)?.strip_suffix('.'))
                .map(str::to_string)
                .collect();
            assert_eq!(r.answers, values, "{id}");
            let want = if variant.starts_with("mk") { 1 } else { 4 };
            assert_eq!(values.len(), want, "{id}");
            assert_eq!(numbers(&p["needle_lines"]).len(), want, "{id}");
            assert!(
                values
                    .iter()
                    .all(|v| v.len() == 10 && v.bytes().all(|b| b.is_ascii_digit())),
                "{id}: {values:?}"
            );
            let distinct: BTreeSet<&String> = values.iter().collect();
            assert_eq!(distinct.len(), values.len(), "{id}: values repeat");
        }
        v if v.starts_with("mk") || v.starts_with("mv") => {
            let items = items_of(&r.input);
            let label = p["id"].as_str().unwrap();
            let at = numbers(&p["needle_items"]);
            let labelled: Vec<usize> = items
                .iter()
                .enumerate()
                .filter(|(_, (i, _))| i == label)
                .map(|(k, _)| k + 1)
                .collect();
            assert_eq!(at, labelled, "{id}: the items labelled {label}");
            let asked: Vec<String> = numbers(&p["test_questions"])
                .iter()
                .map(|&q| item_text(&test[q]))
                .collect();
            let shown: Vec<String> = at.iter().map(|&k| items[k - 1].1.clone()).collect();
            assert_eq!(
                asked, shown,
                "{id}: the needles are the test questions named"
            );
            // Every other item is an auxiliary_train question.
            for (k, (_, text)) in items.iter().enumerate() {
                assert!(
                    at.contains(&(k + 1)) || aux.contains(text),
                    "{id}: item {k}"
                );
            }
            if v.starts_with("mk") {
                assert_eq!(at.len(), 1, "{id}: mk ids are distinct");
            } else {
                assert_eq!(at.len(), 4, "{id}: the needle id labels per_id items");
            }
            let ordinal = p["ordinal"].as_u64().map(|k| k as usize);
            let letter = |q: usize| ["A", "B", "C", "D"][test[q].2].to_string();
            let want: Vec<String> = match v {
                "mk_niah_easy" | "mv_niah_easy" => shown.clone(),
                "mk_niah_medium" | "mk_niah_hard" => {
                    let q = numbers(&p["test_questions"])[0];
                    assert_eq!(p["answer_letter"], letter(q).as_str(), "{id}");
                    vec![letter(q)]
                }
                _ => vec![shown[ordinal.unwrap() - 1].clone()],
            };
            assert_eq!(r.answers, want, "{id}");
        }
        _ => {
            let ids: Vec<String> = r
                .input
                .lines()
                .filter_map(|l| l.strip_prefix("Document ")?.strip_suffix(':'))
                .map(str::to_string)
                .collect();
            let distinct: BTreeSet<&String> = ids.iter().collect();
            assert_eq!(distinct.len(), ids.len(), "{id}: document ids are distinct");
            assert!(ids.iter().all(|i| i.len() == 7), "{id}: {ids:?}");
            let gold: Vec<String> = numbers(&p["gold_documents"])
                .iter()
                .map(|&k| ids[k - 1].clone())
                .collect();
            assert_eq!(gold, strings(&p["gold_ids"]), "{id}");
            match variant {
                "qa_basic" => {
                    let shown = p["shown_document"].as_u64().unwrap() as usize;
                    assert_eq!(r.answers, vec![ids[shown - 1].clone()], "{id}");
                }
                "qa_easy" => assert_eq!(r.answers, gold, "{id}"),
                _ => assert!(!r.answers.is_empty(), "{id}"),
            }
        }
    }
}

#[test]
fn every_variant_at_4k_under_two_tokenizers_asks_what_the_data_says() {
    let t = tmp();
    let test = split("test");
    let aux: BTreeSet<String> = split("auxiliary_train").iter().map(item_text).collect();
    for tokenizer in ["o200k", "cl100k"] {
        let tok = Tokenizer::builtin(tokenizer).unwrap();
        for variant in VARIANTS {
            let out = out_arg(t.path(), &format!("{tokenizer}-{variant}"));
            let data = data_of(variant);
            let mut args = vec![
                "ruler2",
                "--variant",
                variant,
                "--len",
                "4k",
                "--samples",
                "3",
                "--tokenizer",
                tokenizer,
            ];
            if let Some(d) = &data {
                args.extend(["--data", d]);
            }
            generate(&out, &args);
            let rows = rows(Path::new(&out));
            assert_eq!(rows.len(), 3, "{variant}");
            for r in &rows {
                assert_eq!(r.length as usize, tok.count(&r.input).unwrap(), "{}", r.id);
                let budget = r.target_length - r.max_new_tokens;
                let short = budget - r.prompt_tokens;
                let next = r.params["next_unit_tokens"].as_i64().unwrap();
                assert!(short >= 0, "{}: over budget", r.id);
                assert!(
                    short <= next.max(16),
                    "{}: {short} short, next unit {next}",
                    r.id
                );
                check_row(variant, r, &test, &aux);
            }
            let m = manifest(Path::new(&out));
            let haystack = m["recipe"]["haystack_id"].as_str().unwrap_or_default();
            match data_of(variant) {
                None => assert_eq!(haystack, "none", "{variant}"),
                Some(_) if variant.starts_with("qa") => {
                    assert!(haystack.starts_with("documents:"), "{variant}: {haystack}")
                }
                Some(_) => assert!(haystack.starts_with("mmlu:"), "{variant}: {haystack}"),
            }
            let v = gen(&["verify", &out, "-q"]);
            assert!(
                v.status.success(),
                "{variant}: {}",
                String::from_utf8_lossy(&v.stderr)
            );
        }
    }
}

fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

fn suite_args<'a>(mmlu: &'a str, qa: &'a str) -> Vec<&'a str> {
    vec![
        "suite",
        "ruler2",
        "--len",
        "4k",
        "--samples",
        "2",
        "--mmlu-data",
        mmlu,
        "--qa-data",
        qa,
    ]
}

#[test]
fn the_suite_writes_twelve_configs_under_ruler2s_names_that_verify() {
    let t = tmp();
    let (m, q) = (mmlu("parquet"), hotpotqa());
    let out = out_arg(t.path(), "ruler2");
    let mut args = suite_args(&m, &q);
    args.extend(["--out", &out]);
    let o = gen_ok(&args);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("skipped"));
    let man = manifest(Path::new(&out));
    let configs: Vec<String> = strings(&man["configs"]);
    assert_eq!(configs, VARIANTS.map(String::from).to_vec());
    assert_eq!(man["rows"], 24);
    let test = split("test");
    let aux: BTreeSet<String> = split("auxiliary_train").iter().map(item_text).collect();
    for v in VARIANTS {
        for r in rows(&Path::new(&out).join(v)) {
            check_row(v, &r, &test, &aux);
        }
    }
    let v = gen(&["verify", &out, "-q"]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
    // The recorded command names both inputs.
    let command = strings(&man["command"]).join(" ");
    assert!(
        command.contains("--mmlu-data") && command.contains("--qa-data"),
        "{command}"
    );
}

#[test]
fn entries_without_their_data_are_skipped_and_named() {
    let t = tmp();
    let out = out_arg(t.path(), "basic");
    let o = gen_ok(&[
        "suite",
        "ruler2",
        "--len",
        "4k",
        "--samples",
        "1",
        "--out",
        &out,
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    for v in VARIANTS {
        let why = if v.starts_with("qa") {
            "no --qa-data given"
        } else {
            "no --mmlu-data given"
        };
        if v.ends_with("basic") && !v.starts_with("qa") {
            assert!(!err.contains(&format!("skipped {v}")), "{err}");
        } else {
            assert!(err.contains(&format!("skipped {v}: {why}")), "{v}: {err}");
        }
    }
    let man = manifest(Path::new(&out));
    assert_eq!(
        strings(&man["configs"]),
        vec!["mk_niah_basic".to_string(), "mv_niah_basic".to_string()]
    );
    // With only the MMLU copy, the qa entries alone are skipped.
    let out = out_arg(t.path(), "mmlu");
    let m = mmlu("jsonl");
    let o = gen_ok(&[
        "suite",
        "ruler2",
        "--len",
        "4k",
        "--samples",
        "1",
        "--mmlu-data",
        &m,
        "--out",
        &out,
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("skipped").count(), 4, "{err}");
    assert_eq!(strings(&manifest(Path::new(&out))["configs"]).len(), 8);
}

/// A copy of the JSON Lines fixture with `edit` applied to its test split.
fn broken_copy(dir: &Path, name: &str, edit: impl Fn(&mut serde_json::Value)) -> String {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    let src = mmlu("jsonl");
    std::fs::copy(
        format!("{src}/auxiliary_train.jsonl"),
        d.join("auxiliary_train.jsonl"),
    )
    .unwrap();
    let text = std::fs::read_to_string(format!("{src}/test.jsonl")).unwrap();
    let lines: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if i == 6 {
                edit(&mut v);
            }
            v.to_string()
        })
        .collect();
    std::fs::write(d.join("test.jsonl"), lines.join("\n") + "\n").unwrap();
    d.display().to_string()
}

#[test]
fn bad_data_is_refused_in_one_line_before_anything_is_written() {
    let t = tmp();
    let dir = t.path();
    let out = out_arg(dir, "never");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::copy(
        format!("{}/auxiliary_train.jsonl", mmlu("jsonl")),
        empty.join("auxiliary_train.jsonl"),
    )
    .unwrap();
    let no_column = broken_copy(dir, "no_column", |v| {
        v.as_object_mut().unwrap().remove("subject");
    });
    let three = broken_copy(dir, "three", |v| {
        v["choices"].as_array_mut().unwrap().pop();
    });
    let five = broken_copy(dir, "five", |v| v["answer"] = 5.into());
    let squad = fixture("qa/squad.json");
    let (m, q) = (mmlu("parquet"), hotpotqa());
    let absent = dir.join("absent").display().to_string();
    let empty = empty.display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--variant", "mk_niah_easy", "--data", &absent],
            "no such directory",
        ),
        (
            vec!["--variant", "mk_niah_easy", "--data", &empty],
            "no test files",
        ),
        (
            vec!["--variant", "mv_niah_hard", "--data", &no_column],
            "line 7 has no field 'subject'",
        ),
        (
            vec!["--variant", "mk_niah_medium", "--data", &three],
            "line 7: choices has 3 options, expected 4",
        ),
        (
            vec!["--variant", "mk_niah_hard", "--data", &five],
            "line 7: answer is 5, expected 0, 1, 2 or 3",
        ),
        (
            vec!["--variant", "mk_niah_easy", "--data", "generated"],
            "reads an MMLU directory, not a built-in haystack",
        ),
        (
            vec!["--variant", "mk_niah_easy"],
            "ruler2 mk_niah_easy needs --data: the directory of your MMLU copy",
        ),
        (
            vec!["--variant", "qa_hard"],
            "ruler2 qa_hard needs --data: a HotpotQA JSON file",
        ),
        (
            vec!["--variant", "qa_easy", "--data", &squad],
            "this is a SQuAD file",
        ),
        (vec!["--variant", "qa_easy", "--data", &m], "invalid --data"),
        (
            vec!["--variant", "mk_niah_basic", "--data", &m],
            "does not apply: ruler2 mk_niah_basic makes its own",
        ),
        (
            vec!["--variant", "mv_niah_basic", "--data", &q],
            "does not apply",
        ),
        (
            vec![
                "--variant",
                "mk_niah_easy",
                "--data",
                &m,
                "--haystack",
                "noise",
            ],
            "--haystack noise does not apply",
        ),
        (vec!["--variant", "mk_niah_huge"], "mk_niah_huge"),
    ];
    for (args, says) in cases {
        let mut all = vec!["ruler2", "--len", "4k"];
        all.extend(args);
        assert_refused(&all, &out, says);
    }
    // The suite refuses bad data as its entry's command does, naming the entry.
    let mut all = suite_args(&three, &q);
    all.extend(["--out", &out]);
    let o = gen(&all);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("mk_niah_easy") && err.contains("choices has 3 options"),
        "{err}"
    );
    assert!(!Path::new(&out).exists());
    let mut all = suite_args(&m, &squad);
    all.extend(["--out", &out]);
    let o = gen(&all);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("SQuAD"));
    assert!(!Path::new(&out).exists());
}

#[test]
fn the_two_layouts_of_one_copy_make_the_same_rows_and_verify_either_way() {
    let t = tmp();
    let made: Vec<(Vec<TestRow>, String)> = ["parquet", "jsonl"]
        .iter()
        .map(|layout| {
            let out = out_arg(t.path(), layout);
            let m = mmlu(layout);
            generate(
                &out,
                &[
                    "ruler2",
                    "--variant",
                    "mv_niah_medium",
                    "--len",
                    "4k,8k",
                    "--samples",
                    "2",
                    "--data",
                    &m,
                ],
            );
            let id = manifest(Path::new(&out))["recipe"]["haystack_id"]
                .as_str()
                .unwrap()
                .to_string();
            (rows(Path::new(&out)), id)
        })
        .collect();
    assert_eq!(made[0].1, made[1].1, "one copy, one haystack id");
    let view = |rows: &[TestRow]| -> Vec<(String, String, Vec<String>, String)> {
        rows.iter()
            .map(|r| {
                (
                    r.id.clone(),
                    r.input.clone(),
                    r.answers.clone(),
                    r.params.to_string(),
                )
            })
            .collect()
    };
    assert_eq!(view(&made[0].0), view(&made[1].0));
    // verify finds the recorded directory, takes the other layout of the same copy when told,
    // and refuses a different copy.
    let out = out_arg(t.path(), "parquet");
    let js = mmlu("jsonl");
    assert!(gen(&["verify", &out, "-q"]).status.success());
    let v = gen(&["verify", &out, "--data", &js, "-q"]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
    let other = broken_copy(t.path(), "other", |v| {
        v["question"] = "What is two plus two?".into()
    });
    let v = gen(&["verify", &out, "--data", &other, "-q"]);
    let err = String::from_utf8_lossy(&v.stderr);
    assert!(!v.status.success());
    assert!(err.contains("mmlu:"), "{err}");
}

#[test]
fn threads_and_shards_never_change_a_byte() {
    let t = tmp();
    let (m, q) = (mmlu("parquet"), hotpotqa());
    let args = suite_args(&m, &q);
    let run = |name: &str, threads: &str| {
        let out = out_arg(t.path(), name);
        let mut a = args.clone();
        a.extend(["--threads", threads, "--out", &out, "-q"]);
        gen_ok(&a);
        all_files(Path::new(&out))
    };
    let one = run("one", "1");
    assert_eq!(one, run("two", "2"), "--threads 1 and 2 differ");
    let merged = t.path().join("merged");
    crate::suite::sharded(&args, 3, t.path(), &merged);
    assert_eq!(
        one,
        all_files(&merged),
        "the merged shards differ from the one-machine run"
    );
}

#[test]
fn an_mmlu_copy_inside_out_is_never_replaced() {
    let t = tmp();
    let out = t.path().join("ds");
    let copy = out.join("mmlu");
    std::fs::create_dir_all(&copy).unwrap();
    for f in ["test.jsonl", "auxiliary_train.jsonl"] {
        std::fs::copy(format!("{}/{f}", mmlu("jsonl")), copy.join(f)).unwrap();
    }
    let (o, c) = (out.display().to_string(), copy.display().to_string());
    let q = hotpotqa();
    let runs: [(Vec<&str>, &str); 2] = [
        (
            vec![
                "ruler2",
                "--variant",
                "mk_niah_easy",
                "--data",
                &c,
                "--len",
                "4k",
            ],
            "--data ",
        ),
        (suite_args(&c, &q), "--mmlu-data "),
    ];
    for (mut args, flag) in runs {
        args.extend(["--out", &o, "--force"]);
        let r = gen(&args);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{err}");
        assert!(
            err.contains(flag) && err.contains("is inside --out"),
            "{err}"
        );
        assert!(copy.join("test.jsonl").exists());
    }
}
