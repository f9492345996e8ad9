//! Golden files: a tiny command per task and variant, and the rows it makes, so any drift in
//! output shows in review. One table for every task; regenerate with
//! `UPDATE_GOLDEN=1 cargo test --release --test integration golden` (then review the diff).

use std::path::Path;

use crate::common::*;

/// (golden file, command): the command's rows, as JSON Lines, are the golden file; a command
/// making several configs (`babilong --task all`) names each config's file after the config
/// (`*`). `{fixtures}` stands for `tests/fixtures`. Every command also gets `--jsonl`.
const GOLDEN: &[(&str, &str)] = &[
    ("niah_single", "niah --variant single --len 600 --depths 0,100 --seed 11"),
    (
        "niah_multikey",
        "niah --variant multikey --len 600 --depths 0,100 --seed 11 --haystack noise --key-type uuids",
    ),
    (
        "niah_multivalue",
        "niah --variant multivalue --len 600 --depths 0,100 --seed 11 --tokenizer cl100k --value-type words",
    ),
    (
        "niah_multiquery",
        "niah --variant multiquery --len 600 --depths 0,100 --seed 11 --haystack needles --tokenizer gpt2",
    ),
    (
        "niah_none",
        "niah --variant none --len 600 --depths 0,100 --seed 11 --tokenizer words --spread even",
    ),
    (
        "niah_confusers",
        "niah --len 700 --depths 0,100 --seed 11 --variant multikey --confusers 3",
    ),
    (
        "niah_latent",
        "niah --len 700 --depths 0,100 --seed 11 --needle latent --variant multikey",
    ),
    (
        "needlechain_salary_forward",
        "needlechain --chain 6 --len 600 --seed 2 --order forward",
    ),
    (
        "needlechain_salary_backward",
        "needlechain --chain 6 --len 600 --seed 2 --order backward --question total",
    ),
    (
        "needlechain_salary_shuffled",
        "needlechain --chain 6 --len 600 --seed 2 --order shuffled --tokenizer cl100k",
    ),
    (
        "needlechain_salary_parallel",
        "needlechain --chain 6 --len 600 --seed 2 --order parallel",
    ),
    (
        "needlechain_kinship_shuffled",
        "needlechain --chain 6 --len 600 --seed 2 --kind kinship --order shuffled --question ancestor",
    ),
    ("*", "babilong --task all --len 0 --samples 2 --seed 1"),
    (
        "babilong_qa1_fresh_700",
        "babilong --task qa1 --len 700 --facts 4 --seed 1 --vocab fresh",
    ),
    (
        "babilong_qa2_template_1k",
        "babilong --task qa2 --len 1k --seed 1 --template babilong",
    ),
    (
        "posgen_recursive",
        "posgen --train-len 12 --test-len 20 --samples 2 --seed 4",
    ),
    (
        "posgen_semi_recursive",
        "posgen --variant semi-recursive --split train --train-len 12 --explain --seed 4",
    ),
    ("sort_numbers_values", "sort --items 8 --seed 4"),
    (
        "sort_words_keys",
        "sort --items 6 --words --output keys --seed 4",
    ),
    (
        "sort_numbers_values_hidden",
        "sort --items 5 --haystack noise --len 300 --seed 4",
    ),
    ("arith_add_plain", "arith --digits 1..20 --samples 3 --seed 4"),
    (
        "arith_add_reversed",
        "arith --digits 8 --layout reversed --carries max --seed 4",
    ),
    (
        "arith_sub_padded",
        "arith --op sub --digits 3..8 --layout padded --carries none --seed 4",
    ),
    (
        "arith_mul_hints",
        "arith --op mul --digits 4 --layout hints --seed 4",
    ),
    (
        "arith_add_reversed_answer",
        "arith --digits 6 --layout reversed-answer --seed 4",
    ),
    (
        "arith_sum",
        "arith --op sum --count 4 --digits 3 --len 400 --haystack noise --seed 4",
    ),
    (
        "vt_c2_h3",
        "vt --chains 2 --hops 3 --len 700 --depths 0,60 --haystack noise --seed 11",
    ),
    (
        "cwe_n3_r5_2",
        "cwe --common 3 --common-repeats 5 --rare-repeats 2 --len 600 --samples 2 --seed 11",
    ),
    ("fwe_a2_top3", "fwe --len 600 --samples 2 --seed 11"),
    (
        "qa_squad",
        "qa --data {fixtures}/qa/squad.json --len 900 --seed 11 --depths 0,70",
    ),
    (
        "qa_hotpotqa_exact",
        "qa --data {fixtures}/qa/hotpotqa.json --len 900 --seed 11 --exact",
    ),
    ("*", "graphwalks --len 2k --samples 2 --seed 5 --degree geometric:2"),
    (
        "graphwalks_bfs_shuffled",
        "graphwalks --problem bfs --edge-order shuffled --bfs-depth 2 --len 3k --seed 5 --tokenizer cl100k",
    ),
    (
        "ruler2_mk_niah_basic",
        "ruler2 --variant mk_niah_basic --len 500 --samples 2 --seed 3",
    ),
    (
        "ruler2_mv_niah_medium",
        "ruler2 --variant mv_niah_medium --data {fixtures}/mmlu/jsonl --len 1200 --seed 3 --depths 0,60",
    ),
    (
        "ruler2_mk_niah_hard",
        "ruler2 --variant mk_niah_hard --data {fixtures}/mmlu/parquet --len 1500 --seed 3 --tokenizer cl100k",
    ),
    (
        "ruler2_qa_easy",
        "ruler2 --variant qa_easy --data {fixtures}/qa/hotpotqa.json --len 1500 --seed 3",
    ),
];

#[test]
fn golden_instances() {
    let t = tmp();
    let fixtures = fixture("");
    let fixtures = fixtures.trim_end_matches('/');
    let mut tasks = std::collections::BTreeSet::new();
    for (i, (name, command)) in GOLDEN.iter().enumerate() {
        let command = command.replace("{fixtures}", fixtures);
        let mut args: Vec<&str> = command.split_whitespace().collect();
        tasks.insert(args[0].to_string());
        args.push("--jsonl");
        let out = out_arg(t.path(), &format!("g{i}"));
        generate(&out, &args);
        if *name == "*" {
            let mut configs: Vec<_> = std::fs::read_dir(&out)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.is_dir())
                .collect();
            configs.sort();
            assert!(configs.len() > 1, "{command}");
            for c in configs {
                let config = c.file_name().unwrap().to_string_lossy().to_string();
                assert_golden(&config, &jsonl_text(&c));
            }
        } else {
            assert_golden(name, &jsonl_text(Path::new(&out)));
        }
    }
    // Every task has its golden rows.
    let all: std::collections::BTreeSet<String> = needlework_generators::tasks::TASKS
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    assert_eq!(tasks, all, "a task without golden rows");
}
