//! End-to-end tests of `gen score`: hand-made predictions (all right, all wrong, half right)
//! give the right numbers per config, length and depth, and the heatmaps are drawn.

mod common;

use std::path::{Path, PathBuf};

use common::*;
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

/// Must show 3: 100 % for gold, 0 % for empty, the right fraction for a mix, per length and
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
    assert_eq!(s["overall"]["rows"], 5);
    assert_eq!(s["overall"]["accuracy"], 1.0);
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
        (json!(2), json!(2))
    );
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
