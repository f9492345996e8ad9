//! End-to-end tests of `gen score`: hand-made predictions (all right, all wrong, half right)
//! give the right numbers per config, length and depth, and the heatmaps are drawn.

use std::path::{Path, PathBuf};

use crate::common::*;
use serde_json::{json, Value};

/// The text that is right for a row: every answer for `all`, else the target.
fn gold(r: &TestRow) -> String {
    if r.metric == "all" {
        r.answers.join(" ")
    } else {
        r.target.clone()
    }
}

fn write(path: &Path, lines: &[Value]) {
    let text: String = lines.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// Run `gen score` (warnings on stderr kept).
fn score(dir: &Path, preds: &Path, out: &Path) -> std::process::Output {
    gen(&[
        "score",
        dir.to_str().unwrap(),
        "--predictions",
        preds.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
}

/// Run `gen score`, which must succeed, and read `scores.json`.
fn scores(dir: &Path, preds: &Path, out: &Path) -> Value {
    let o = score(dir, preds, out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    read_scores(out)
}

/// The `scores.json` that `gen score` wrote into `out`.
fn read_scores(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("scores.json")).unwrap()).unwrap()
}

/// Generate a dataset with `args` into `t/d` and return its directory.
fn dataset(t: &tempfile::TempDir, args: &[&str]) -> PathBuf {
    let dir = t.path().join("d");
    generate(dir.to_str().unwrap(), args);
    dir
}

/// Pixels of the exact 0 % and 100 % colours in a PNG: only grid cells have them (the colour
/// scale's steps never hit the ends exactly).
fn red_and_green(png_path: &Path) -> (usize, usize, (u32, u32)) {
    let decoder = png::Decoder::new(std::fs::File::open(png_path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = info.color_type.samples();
    let (mut red, mut green) = (0, 0);
    for px in buf[..info.buffer_size()].chunks(step) {
        match (px[0], px[1], px[2]) {
            (215, 48, 39) => red += 1,
            (26, 152, 80) => green += 1,
            _ => {}
        }
    }
    (red, green, (info.width, info.height))
}

/// 100 % for gold, 0 % for empty, the right fraction for a mix, per length and
/// depth; the heatmaps exist and show the grid.
#[test]
fn gold_empty_and_half() {
    let t = tmp();
    let dir = dataset(
        &t,
        &["niah", "--len", "1k,2k", "--depths", "3", "--samples", "2"],
    );
    let rows = rows(&dir);
    assert_eq!(rows.len(), 12);
    let gold_lines: Vec<Value> = rows
        .iter()
        .map(|r| json!({"id": r.id, "prediction": gold(r)}))
        .collect();
    let empty_lines: Vec<Value> = rows
        .iter()
        .map(|r| json!({"id": r.id, "prediction": ""}))
        .collect();
    // Right only above 50 % depth, and for sample 0 at 50 %: 100 %, 50 % and 0 % rows.
    let half_lines: Vec<Value> = rows
        .iter()
        .map(|r| {
            let d = r.depth_percent.unwrap();
            let right = d < 50.0 || (d == 50.0 && r.sample_index == 0);
            json!({"id": r.id, "prediction": if right { gold(r) } else { "I could not find it.".to_string() }})
        })
        .collect();
    for (name, lines, want) in [
        ("gold", &gold_lines, 1.0),
        ("empty", &empty_lines, 0.0),
        ("half", &half_lines, 0.5),
    ] {
        let p = t.path().join(format!("{name}.jsonl"));
        write(&p, lines);
        let out = t.path().join(format!("scores-{name}"));
        let s = scores(&dir, &p, &out);
        assert_eq!(s["overall"]["rows"], 12, "{name}");
        assert_eq!(s["overall"]["accuracy"].as_f64().unwrap(), want, "{name}");
        let c = &s["configs"]["niah_single"];
        assert_eq!(
            c["cells"].as_array().unwrap().len(),
            6,
            "2 lengths x 3 depths"
        );
        for cell in c["cells"].as_array().unwrap() {
            let d = cell["depth"].as_f64().unwrap();
            let acc = cell["accuracy"].as_f64().unwrap();
            assert_eq!(cell["rows"], 2);
            let expect = match name {
                "gold" => 1.0,
                "empty" => 0.0,
                _ if d < 50.0 => 1.0,
                _ if d == 50.0 => 0.5,
                _ => 0.0,
            };
            assert_eq!(acc, expect, "{name} at length {} depth {d}", cell["length"]);
        }
        for (len, t) in c["by_length"].as_object().unwrap() {
            assert_eq!(t["accuracy"].as_f64().unwrap(), want, "{name} at {len}");
        }
        assert!(s["missing"].as_array().unwrap().is_empty());
        let png = out.join("heatmap_niah_single.png");
        let svg = std::fs::read_to_string(out.join("heatmap_niah_single.svg")).unwrap();
        assert!(
            svg.contains("<svg") && svg.contains("\n1k\n</text>") && svg.contains("\n50%\n</text>"),
            "{svg}"
        );
        let (red, green, (w, h)) = red_and_green(&png);
        assert!(w > 300 && h > 200);
        match name {
            "gold" => assert!(red == 0 && green > 10_000, "{red} {green}"),
            "empty" => assert!(green == 0 && red > 10_000, "{red} {green}"),
            _ => {
                // Two of six cells green, two red, two half-way (yellow).
                let ratio = green as f64 / red as f64;
                assert!((0.8..1.25).contains(&ratio), "{red} {green}");
                // Byte for byte the PNG that plotters' file backend wrote through the image
                // crate before the heatmap encoded its buffer with png itself (x86_64).
                let bytes = std::fs::read(&png).unwrap();
                assert_eq!(
                    xxhash_rust::xxh3::xxh3_64(&bytes),
                    0x2bf2_aa14_3544_c056,
                    "{} bytes",
                    bytes.len()
                );
            }
        }
    }
}

/// Missing and unknown ids are reported, not guessed; a malformed file is refused.
#[test]
fn missing_unknown_and_bad_predictions() {
    let t = tmp();
    let dir = dataset(
        &t,
        &[
            "babilong",
            "--task",
            "qa1,qa6",
            "--len",
            "0",
            "--samples",
            "3",
        ],
    );
    let rows = rows(&dir);
    assert_eq!(rows.len(), 6);
    let mut lines: Vec<Value> = rows[1..]
        .iter()
        .map(|r| json!({"id": r.id, "prediction": r.target}))
        .collect();
    lines.push(json!({"id": "feedfacefeedface", "prediction": "kitchen"}));
    let p = t.path().join("p.jsonl");
    write(&p, &lines);
    let out = t.path().join("s");
    let o = score(&dir, &p, &out);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&rows[0].id) && err.contains("feedfacefeedface"),
        "{err}"
    );
    let s = read_scores(&out);
    assert_eq!(s["missing"], json!([rows[0].id]));
    assert_eq!(s["unknown"], json!(["feedfacefeedface"]));
    // The row without a prediction counts as wrong.
    assert_eq!(s["overall"]["rows"], 6);
    assert_eq!(s["overall"]["correct"], 5);
    assert_eq!(s["coverage"], json!({"predicted": 5, "rows": 6}));
    assert!(
        out.join("heatmap_babilong_qa1.png").exists()
            && out.join("heatmap_babilong_qa6.svg").exists()
    );
    // RULER- and lm-eval-style lines are read too.
    let styled = vec![
        json!({"index": rows[0].id, "pred": rows[0].target}),
        json!({"doc_id": 1, "doc": {"id": rows[1].id}, "filtered_resps": [rows[1].target]}),
    ];
    write(&p, &styled);
    let s = scores(&dir, &p, &out);
    assert_eq!(
        (
            s["overall"]["rows"].clone(),
            s["overall"]["correct"].clone()
        ),
        (json!(6), json!(2))
    );
    assert_eq!(s["coverage"], json!({"predicted": 2, "rows": 6}));
    for bad in [
        "not json\n",
        "{\"id\": \"x\"}\n",
        "{\"id\":\"a\",\"prediction\":\"1\"}\n{\"id\":\"a\",\"prediction\":\"2\"}\n",
    ] {
        std::fs::write(&p, bad).unwrap();
        let o = score(&dir, &p, &out);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr)
                .trim_end()
                .lines()
                .count(),
            1
        );
    }
}

/// The rows whose id is in `ids`, as gold predictions.
fn gold_lines(rows: &[TestRow]) -> Vec<Value> {
    rows.iter()
        .map(|r| json!({"id": r.id, "prediction": gold(r)}))
        .collect()
}

/// A file covering 10 of 24 rows does not score 100 %: the 14 missing rows count as
/// wrong, the length nobody predicted is still reported (at 0 %), and the coverage is printed
/// on its own line and written per config and overall. `--only-present` scores only the 10,
/// and says so loudly on stderr.
#[test]
fn missing_rows_count_as_wrong_and_coverage_is_reported() {
    let t = tmp();
    let dir = dataset(
        &t,
        &[
            "niah",
            "--len",
            "1k,2k,4k",
            "--depths",
            "4",
            "--samples",
            "2",
        ],
    );
    let rows = rows(&dir);
    assert_eq!(rows.len(), 24);
    // Rows are ordered by length: the first 10 are 8 rows of 1k and 2 of 2k; no 4k row.
    let p = t.path().join("partial.jsonl");
    write(&p, &gold_lines(&rows[..10]));
    let out = t.path().join("s");
    let o = score(&dir, &p, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("coverage") && l.contains("10 of 24")),
        "{stdout}"
    );
    let s = read_scores(&out);
    assert_eq!(s["overall"]["rows"], 24);
    assert_eq!(s["overall"]["correct"], 10);
    assert_eq!(s["coverage"], json!({"predicted": 10, "rows": 24}));
    let c = &s["configs"]["niah_single"];
    assert_eq!(c["coverage"], json!({"predicted": 10, "rows": 24}));
    assert_eq!(c["by_length"]["1024"]["accuracy"], 1.0);
    assert_eq!(c["by_length"]["2048"]["correct"], 2);
    assert_eq!(c["by_length"]["2048"]["rows"], 8);
    assert_eq!(
        c["by_length"]["4096"]["rows"], 8,
        "the unpredicted length is reported"
    );
    assert_eq!(c["by_length"]["4096"]["accuracy"], 0.0);
    assert_eq!(c["cells"].as_array().unwrap().len(), 12);
    assert!(!o.stderr.is_empty());

    // Opting out: only the predicted rows, with a loud note (even with -q).
    let o = gen(&[
        "score",
        dir.to_str().unwrap(),
        "--predictions",
        p.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--only-present",
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--only-present") && err.contains("14"),
        "{err}"
    );
    let s = read_scores(&out);
    assert_eq!(s["overall"]["rows"], 10);
    assert_eq!(s["overall"]["accuracy"], 1.0);
    assert_eq!(s["only_present"], true);
    assert_eq!(s["coverage"], json!({"predicted": 10, "rows": 24}));
}

/// An empty file, or a file of some other dataset's ids, is refused (exit 2, one
/// line) instead of scoring 0 % over 0 rows.
#[test]
fn predictions_matching_no_row_are_refused() {
    let t = tmp();
    let dir = dataset(&t, &["niah", "--len", "1k", "--samples", "2"]);
    let p = t.path().join("p.jsonl");
    let out = t.path().join("s");
    for text in [
        "".to_string(),
        "\n".to_string(),
        format!(
            "{}\n{}\n",
            json!({"id": "0123456789abcdef", "prediction": "1234567"}),
            json!({"id": "fedcba9876543210", "prediction": "7654321"})
        ),
    ] {
        std::fs::write(&p, &text).unwrap();
        let o = score(&dir, &p, &out);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{text:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("no row"), "{err}");
        assert!(!out.join("scores.json").exists());
    }
}

/// A prediction made from a row.
type Predict = fn(&TestRow) -> String;

/// Echoing the prompt back is judged as an echo and scores 0; gold answers, and gold
/// answers inside a short sentence, still score 100 %. Also where the input is short and the
/// answer long (chars tokenizer, four uuids), and for BABILong stories without filler.
#[test]
fn an_echo_of_the_input_scores_zero() {
    let t = tmp();
    let datasets: [&[&str]; 3] = [
        &[
            "niah",
            "--len",
            "1k,2k",
            "--depths",
            "3",
            "--samples",
            "2",
            "--variant",
            "multikey",
        ],
        &[
            "niah",
            "--len",
            "1200",
            "--depths",
            "2",
            "--variant",
            "multivalue",
            "--key-type",
            "uuids",
            "--value-type",
            "uuids",
            "--tokenizer",
            "chars",
        ],
        &[
            "babilong",
            "--task",
            "qa1,qa2",
            "--len",
            "0",
            "--samples",
            "3",
        ],
    ];
    let cases: [(&str, Predict, f64); 4] = [
        ("echo", |r| r.input.clone(), 0.0),
        ("echo+gold", |r| format!("{} {}", r.input, gold(r)), 0.0),
        ("gold", gold, 1.0),
        ("lead-in", |r| format!("The answer is {}.", gold(r)), 1.0),
    ];
    for (n, args) in datasets.iter().enumerate() {
        let dir = t.path().join(format!("d{n}"));
        generate(dir.to_str().unwrap(), args);
        let rows = rows(&dir);
        for (name, text, want) in cases {
            let lines: Vec<Value> = rows
                .iter()
                .map(|r| json!({"id": r.id, "prediction": text(r)}))
                .collect();
            let p = t.path().join(format!("{n}-{name}.jsonl"));
            write(&p, &lines);
            let s = scores(&dir, &p, &t.path().join(format!("s-{n}-{name}")));
            assert_eq!(s["overall"]["rows"], rows.len(), "{args:?} {name}");
            assert_eq!(
                s["overall"]["accuracy"].as_f64().unwrap(),
                want,
                "{args:?} {name}"
            );
        }
    }
}

/// RULER's per-row rule, restated: the fraction of gold items found, case-insensitively, in the
/// prediction (after turning control characters into newlines).
fn ruler_rule(answers: &[String], prediction: &str) -> f64 {
    let cleaned: String = prediction
        .chars()
        .map(|c| if (c as u32) < 0x20 { '\n' } else { c })
        .collect();
    let pred = cleaned.to_lowercase();
    let found = answers
        .iter()
        .filter(|a| pred.contains(&a.to_lowercase()))
        .count();
    found as f64 / answers.len() as f64
}

/// Beside each row's own metric, `gen score` reports RULER's partial credit for
/// multi-answer rows — per row in rows.json, per cell, length, config and overall in
/// scores.json, and in the table — equal to RULER's rule. A row giving 2 of 4 values is wrong
/// by its own metric and earns 0.5; the echo of the prompt is wrong but earns full credit (RULER
/// has no echo rule); a missing row earns 0. Rows without such credit (BABILong) report none.
#[test]
fn ruler_partial_credit_beside_the_row_metric() {
    let t = tmp();
    let dir = dataset(
        &t,
        &[
            "niah",
            "--len",
            "1k,2k",
            "--depths",
            "2",
            "--samples",
            "2",
            "--variant",
            "multivalue",
        ],
    );
    let rows = rows(&dir);
    assert_eq!(rows.len(), 8);
    // Row i gives the first i % 5 of its 4 values; row 5 echoes the input; row 7 is missing.
    let text = |i: usize, r: &TestRow| -> String {
        match i {
            5 => r.input.clone(),
            _ => format!("Codes: {}", r.answers[..i % 5].join(", ").to_uppercase()),
        }
    };
    let lines: Vec<Value> = rows
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 7)
        .map(|(i, r)| json!({"id": r.id, "prediction": text(i, r)}))
        .collect();
    let p = t.path().join("p.jsonl");
    write(&p, &lines);
    let out = t.path().join("s");
    let o = score(&dir, &p, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.lines().next().unwrap().ends_with("ruler"),
        "{stdout}"
    );
    let verdicts: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(out.join("rows.json")).unwrap()).unwrap();
    assert_eq!(verdicts.len(), 8);
    let mut want_total = 0.0;
    for (i, (v, r)) in verdicts.iter().zip(&rows).enumerate() {
        assert_eq!(v["id"], r.id.as_str(), "rows.json is in dataset order");
        let want = if i == 7 {
            0.0
        } else {
            ruler_rule(&r.answers, &text(i, r))
        };
        want_total += want;
        assert_eq!(v["ruler"].as_f64().unwrap(), want, "row {i}");
        assert_eq!(v["predicted"], i != 7);
        assert_eq!(
            v["correct"],
            i % 5 == 4,
            "row {i}: only all four values are right"
        );
    }
    assert_eq!(verdicts[5]["ruler"], 1.0, "no echo rule in RULER's credit");
    assert_eq!(verdicts[2]["ruler"], 0.5);
    let s = read_scores(&out);
    let r = &s["overall"]["ruler"];
    assert_eq!(r["rows"], 8);
    assert!((r["credit"].as_f64().unwrap() - want_total).abs() < 1e-12);
    assert!((r["score"].as_f64().unwrap() - want_total / 8.0).abs() < 1e-12);
    let c = &s["configs"]["niah_multivalue"];
    assert_eq!(c["overall"]["ruler"], s["overall"]["ruler"]);
    let by_length: f64 = c["by_length"]
        .as_object()
        .unwrap()
        .values()
        .map(|t| t["ruler"]["credit"].as_f64().unwrap())
        .sum();
    assert!((by_length - want_total).abs() < 1e-12);
    for cell in c["cells"].as_array().unwrap() {
        assert_eq!(cell["ruler"]["rows"], 2);
    }

    // BABILong rows have no RULER credit: none is reported.
    let b = t.path().join("b");
    generate(
        b.to_str().unwrap(),
        &["babilong", "--task", "qa1", "--len", "0", "--samples", "2"],
    );
    let lines: Vec<Value> = crate::common::rows(&b)
        .iter()
        .map(|r| json!({"id": r.id, "prediction": r.target}))
        .collect();
    write(&p, &lines);
    let s = scores(&b, &p, &t.path().join("sb"));
    assert!(s["overall"].get("ruler").is_none(), "{}", s["overall"]);
    let verdicts = std::fs::read_to_string(t.path().join("sb/rows.json")).unwrap();
    assert!(verdicts.contains("\"ruler\":null"), "{verdicts}");
}

/// RULER's prediction files name rows by `others.id` (their `index` is the row's
/// position in RULER's task file); a folder of them (one `<task>.jsonl` per task, as RULER's
/// prediction script writes) is read whole, and `--predictions` may be repeated. A folder
/// without prediction files, and an id predicted in two files, are refused (exit 2, one line).
#[test]
fn ruler_prediction_files_by_others_id() {
    let t = tmp();
    let dir = dataset(
        &t,
        &[
            "babilong",
            "--task",
            "qa1,qa6",
            "--len",
            "0",
            "--samples",
            "3",
        ],
    );
    let rows = rows(&dir);
    let pred = t.path().join("pred");
    std::fs::create_dir(&pred).unwrap();
    let line = |i: usize, r: &TestRow| {
        json!({"index": i, "pred": r.target, "input": "…", "outputs": [r.target],
               "others": {"id": r.id}, "truncation": -1, "length": 10})
    };
    write(
        &pred.join("babilong_qa1.jsonl"),
        &rows[..3]
            .iter()
            .enumerate()
            .map(|(i, r)| line(i, r))
            .collect::<Vec<_>>(),
    );
    write(
        &pred.join("babilong_qa6.jsonl"),
        &rows[3..5]
            .iter()
            .enumerate()
            .map(|(i, r)| line(i, r))
            .collect::<Vec<_>>(),
    );
    std::fs::write(pred.join("summary.csv"), "Tasks,x\n").unwrap();
    let extra = t.path().join("extra.jsonl");
    write(&extra, &[line(2, &rows[5])]);
    let out = t.path().join("s");
    let o = gen(&[
        "score",
        dir.to_str().unwrap(),
        "--predictions",
        pred.to_str().unwrap(),
        "--predictions",
        extra.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = read_scores(&out);
    assert_eq!(s["coverage"], json!({"predicted": 6, "rows": 6}));
    assert_eq!(s["overall"]["correct"], 6);
    assert_eq!(s["predictions"].as_array().unwrap().len(), 3);

    // Refusals.
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let twice = t.path().join("twice.jsonl");
    write(&twice, &[line(0, &rows[0])]);
    for args in [
        vec!["--predictions", empty.to_str().unwrap()],
        vec![
            "--predictions",
            pred.to_str().unwrap(),
            "--predictions",
            twice.to_str().unwrap(),
        ],
    ] {
        let mut all = vec![
            "score",
            dir.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        all.extend(args.iter().copied());
        let o = gen(&all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}
