//! `gen graphwalks` through the real binary: bad input refused in one line with nothing
//! written, rows that do not depend on threads or shards, and a private split kept apart from
//! a public one by graph and question.

use std::path::Path;

use crate::common::*;

#[test]
fn bad_graphwalks_input_is_refused_in_one_line() {
    let dir = tmp();
    let out = out_arg(dir.path(), "bad");
    assert_refused(
        &["graphwalks", "--degree", "zipf:3", "--len", "4k"],
        &out,
        "--degree",
    );
    assert_refused(
        &["graphwalks", "--degree", "fixed:2.5", "--len", "4k"],
        &out,
        "--degree",
    );
    assert_refused(
        &["graphwalks", "--bfs-depth", "0..2", "--len", "4k"],
        &out,
        "--bfs-depth",
    );
    assert_refused(
        &["graphwalks", "--answer-size", "9..3", "--len", "4k"],
        &out,
        "--answer-size",
    );
    assert_refused(
        &["graphwalks", "--edge-order", "sorted", "--len", "4k"],
        &out,
        "grouped",
    );
    // No node of a 16k graph has 300 parents: refused before anything is written.
    assert_refused(
        &[
            "graphwalks",
            "--problem",
            "parents",
            "--answer-size",
            "300..400",
            "--len",
            "16k",
        ],
        &out,
        "answer_size",
    );
}

#[test]
fn graphwalks_rows_do_not_depend_on_threads_or_shards() {
    let dir = tmp();
    let args = [
        "graphwalks",
        "--len",
        "2k,5k",
        "--samples",
        "3",
        "--edge-order",
        "shuffled",
    ];
    let one = out_arg(dir.path(), "one");
    let mut a = args.to_vec();
    a.extend(["--threads", "1"]);
    generate(&one, &a);
    let two = out_arg(dir.path(), "two");
    let mut b = args.to_vec();
    b.extend(["--threads", "2"]);
    generate(&two, &b);
    assert_eq!(
        dataset_bytes(Path::new(&one)),
        dataset_bytes(Path::new(&two))
    );
    let mut parts = Vec::new();
    for i in ["0", "1", "2"] {
        let p = out_arg(dir.path(), &format!("part{i}"));
        let mut c = args.to_vec();
        c.extend(["--num-shards", "3", "--shard-index", i]);
        generate(&p, &c);
        parts.push(p);
    }
    let merged = out_arg(dir.path(), "merged");
    let mut m = vec!["merge"];
    m.extend(parts.iter().map(String::as_str));
    m.extend(["--out", merged.as_str(), "-q"]);
    gen_ok(&m);
    assert_eq!(
        dataset_bytes(Path::new(&one)),
        dataset_bytes(Path::new(&merged))
    );
    gen_ok(&["verify", &merged, "-q"]);
}

#[test]
fn a_disjoint_split_shares_no_graph_and_question() {
    let dir = tmp();
    let public = out_arg(dir.path(), "public");
    generate(
        &public,
        &["graphwalks", "--len", "2k", "--samples", "8", "--seed", "3"],
    );
    let other = out_arg(dir.path(), "other");
    generate(
        &other,
        &[
            "graphwalks",
            "--len",
            "2k",
            "--samples",
            "8",
            "--seed",
            "3",
            "--disjoint-from",
            &public,
        ],
    );
    let key = |r: &TestRow| r.params["identity"].to_string();
    let seen: std::collections::BTreeSet<String> =
        rows(Path::new(&public)).iter().map(key).collect();
    let again = rows(Path::new(&other));
    assert_eq!(again.len(), 16);
    assert!(again.iter().all(|r| !seen.contains(&key(r))));
}
