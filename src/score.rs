//! `gen score`: apply each row's metric to a model's predictions, report accuracy per config ×
//! length × depth, write `scores.json` and draw the length × depth heatmap.
//!
//! Every row of the dataset is scored: a row without a prediction counts as wrong (unless
//! [`Options::only_present`]), so a partial file cannot pass for a complete one, and the
//! coverage (rows predicted / rows) is reported beside the accuracy. A file that predicts no
//! row of the dataset is refused.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use anyhow::{Context, Result};
use needlework_generators::scoring::{is_correct, Gold};
use needlework_generators::Metric;
use serde::Serialize;
use serde_json::Value;

use crate::heatmap;
use crate::manifest::Manifest;
use crate::parquet_read::{Columns, ParquetFile};
use crate::schema::parse_metric;
use crate::tally::{GridScore, Tally};
use crate::usage::usage;

/// What scoring needs of one dataset row.
struct GoldRow {
    config: String,
    length: u64,
    depth: Option<f64>,
    metric: Metric,
    target: String,
    answers: Vec<String>,
    labels: Vec<String>,
    question: String,
    answer_prefix: String,
    max_new_tokens: u32,
    input_chars: usize,
}

impl GoldRow {
    fn gold(&self) -> Gold<'_> {
        Gold {
            metric: self.metric,
            target: &self.target,
            answers: &self.answers,
            labels: &self.labels,
            question: &self.question,
            answer_prefix: &self.answer_prefix,
            max_new_tokens: self.max_new_tokens,
            input_chars: self.input_chars,
        }
    }
}

/// How `gen score` runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Only the table: no warnings about missing or unknown ids.
    pub quiet: bool,
    /// Score only the rows that have a prediction (rows without one are left out rather than
    /// counted as wrong).
    pub only_present: bool,
}

/// How many rows had a prediction, of how many.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Coverage {
    /// Dataset rows with a prediction.
    pub predicted: u64,
    /// Dataset rows.
    pub rows: u64,
}

impl Coverage {
    fn add(&mut self, predicted: bool) {
        self.rows += 1;
        self.predicted += u64::from(predicted);
    }
}

/// Scores of one config.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigScores {
    /// Every scored row of the config.
    pub overall: Tally,
    /// Rows of the config with a prediction, of all its rows.
    pub coverage: Coverage,
    /// Per target length over all depths: RULER reports accuracy by length.
    pub by_length: BTreeMap<u64, Tally>,
    /// The length × depth grid the heatmap draws, sorted by length then depth.
    pub cells: Vec<GridScore>,
}

/// `scores.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Scores {
    /// The manifest's dataset hash: which exact data the scores are of.
    pub dataset_hash: String,
    /// The predictions file as given on the command line.
    pub predictions: String,
    /// Every scored row of every config.
    pub overall: Tally,
    /// Rows with a prediction, of all rows.
    pub coverage: Coverage,
    /// Whether rows without a prediction were left out (`--only-present`) instead of
    /// counted as wrong.
    pub only_present: bool,
    /// Per config, by name.
    pub configs: BTreeMap<String, ConfigScores>,
    /// Dataset rows with no prediction (counted as wrong, or left out with `only_present`).
    pub missing: Vec<String>,
    /// Prediction ids that are not in the dataset (ignored).
    pub unknown: Vec<String>,
}

/// The columns scoring reads. `input` (which can hold millions of bytes per row) is read one
/// batch at a time for its length only: the echo rule bounds an answer by half the prompt.
const GOLD_COLUMNS: [&str; 11] = [
    "id",
    "input",
    "max_new_tokens",
    "question",
    "answer_prefix",
    "target",
    "answers",
    "labels",
    "metric",
    "target_length",
    "depth_percent",
];

/// Read every row's gold fields, keyed by id.
fn gold_rows(dir: &Path, m: &Manifest) -> Result<BTreeMap<String, GoldRow>> {
    let mut out = BTreeMap::new();
    for f in &m.files {
        let path = dir.join(&f.path);
        for batch in ParquetFile::open(&path)?.project(&GOLD_COLUMNS)? {
            let batch = batch?;
            let columns = Columns::in_file(&batch, &path);
            let s = |n: &str| columns.strings(n);
            let (id, question, prefix, target, metric) = (
                s("id")?,
                s("question")?,
                s("answer_prefix")?,
                s("target")?,
                s("metric")?,
            );
            let answers = columns.string_lists("answers")?;
            let labels = columns.string_lists("labels")?;
            let length = columns.i64s("target_length")?;
            let depth = columns.f64s("depth_percent")?;
            let budget = columns.i32s("max_new_tokens")?;
            let input = s("input")?;
            for i in 0..columns.num_rows() {
                let metric = parse_metric(metric.value(i))
                    .with_context(|| format!("{} row {i}", path.display()))?;
                out.insert(
                    id.value(i).to_string(),
                    GoldRow {
                        config: f.config.clone(),
                        length: length.value(i).max(0) as u64,
                        depth: depth.get(i),
                        metric,
                        target: target.value(i).to_string(),
                        answers: answers.value(i),
                        labels: labels.value(i),
                        question: question.value(i).to_string(),
                        answer_prefix: prefix.value(i).to_string(),
                        max_new_tokens: budget.value(i).max(0) as u32,
                        input_chars: input.value(i).chars().count(),
                    },
                );
            }
        }
    }
    Ok(out)
}

/// The (id, prediction) of one line of a predictions file: ours (`id`, `prediction`),
/// RULER's (`index`, `pred`) or lm-evaluation-harness's `--log_samples` (`doc.id`,
/// `filtered_resps`).
fn parse_prediction(v: &Value) -> Option<(String, String)> {
    let id = match (&v["id"], &v["doc"]["id"], &v["index"]) {
        (Value::String(s), _, _) | (_, Value::String(s), _) | (_, _, Value::String(s)) => s.clone(),
        (_, _, Value::Number(n)) => n.to_string(),
        _ => return None,
    };
    let text = |x: &Value| -> Option<String> {
        match x {
            Value::String(s) => Some(s.clone()),
            Value::Array(a) => a.first().and_then(|y| match y {
                Value::String(s) => Some(s.clone()),
                Value::Array(b) => b.first().and_then(Value::as_str).map(str::to_string),
                _ => None,
            }),
            _ => None,
        }
    };
    let prediction = [
        "prediction",
        "pred",
        "filtered_resps",
        "resps",
        "response",
        "output",
    ]
    .iter()
    .find_map(|k| text(&v[*k]))?;
    Some((id, prediction))
}

/// Largest predictions file read: far more than any dataset's answers need.
const MAX_PREDICTION_BYTES: u64 = 2 << 30;

fn read_predictions(path: &Path) -> Result<BTreeMap<String, String>> {
    let meta = std::fs::metadata(path)
        .map_err(|e| usage(format!("cannot read --predictions {}: {e}", path.display())))?;
    if !meta.is_file() || meta.len() > MAX_PREDICTION_BYTES {
        return Err(usage(format!(
            "invalid --predictions {}: expected a regular JSON Lines file of at most {} MiB",
            path.display(),
            MAX_PREDICTION_BYTES >> 20
        )));
    }
    let file = File::open(path)
        .map_err(|e| usage(format!("cannot read --predictions {}: {e}", path.display())))?;
    let mut out = BTreeMap::new();
    let reader = BufReader::new(std::io::Read::take(file, MAX_PREDICTION_BYTES));
    for (n, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| {
            usage(format!(
                "invalid --predictions {} line {}: {e} (expected UTF-8 JSON Lines)",
                path.display(),
                n + 1
            ))
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let bad = || {
            usage(format!(
                "invalid --predictions {} line {}: expected a JSON object with \"id\" and \"prediction\" (or RULER's index/pred, or lm-eval's doc.id/filtered_resps)",
                path.display(),
                n + 1
            ))
        };
        let v: Value = serde_json::from_str(&line).map_err(|_| bad())?;
        let (id, prediction) = parse_prediction(&v).ok_or_else(bad)?;
        if out.insert(id.clone(), prediction).is_some() {
            return Err(usage(format!(
                "invalid --predictions {}: id {id} appears twice (line {}); one prediction per row",
                path.display(),
                n + 1
            )));
        }
    }
    Ok(out)
}

/// Score `dir` against `predictions`, print the table, and write `scores.json` and the
/// heatmaps into `out`.
pub fn score(dir: &Path, predictions: &Path, out: &Path, options: Options) -> Result<Scores> {
    let m = Manifest::read(dir).map_err(|e| usage(format!("{e:#}")))?;
    let preds = read_predictions(predictions)?;
    let gold = gold_rows(dir, &m)?;
    let unknown: Vec<String> = preds
        .keys()
        .filter(|id| !gold.contains_key(*id))
        .cloned()
        .collect();
    if unknown.len() == preds.len() {
        return Err(usage(format!(
            "--predictions {} matches no row of {}: {} predictions, none with the id of one of its {} rows",
            predictions.display(),
            dir.display(),
            preds.len(),
            gold.len()
        )));
    }
    let mut missing = Vec::new();
    let mut overall = Tally::default();
    let mut coverage = Coverage::default();
    let mut config_coverage: BTreeMap<String, Coverage> = BTreeMap::new();
    // config -> (length, depth bits) -> tally
    let mut grid: BTreeMap<String, BTreeMap<(u64, Option<u64>), Tally>> = BTreeMap::new();
    for c in &m.configs {
        grid.entry(c.clone()).or_default();
    }
    for (id, g) in &gold {
        let p = preds.get(id);
        coverage.add(p.is_some());
        config_coverage
            .entry(g.config.clone())
            .or_default()
            .add(p.is_some());
        if p.is_none() {
            missing.push(id.clone());
            if options.only_present {
                continue;
            }
        }
        // A row without a prediction is wrong.
        let ok = p.is_some_and(|p| is_correct(&g.gold(), p));
        overall.add(ok);
        grid.entry(g.config.clone())
            .or_default()
            .entry((g.length, g.depth.map(|d| (d * 1000.0).round() as u64)))
            .or_default()
            .add(ok);
    }
    let mut configs = BTreeMap::new();
    for (config, cells) in &grid {
        let mut total = Tally::default();
        let mut by_length: BTreeMap<u64, Tally> = BTreeMap::new();
        let mut list = Vec::new();
        for (&(length, depth), t) in cells {
            total.merge(t);
            by_length.entry(length).or_default().merge(t);
            list.push(GridScore {
                length,
                depth: depth.map(|d| d as f64 / 1000.0),
                tally: *t,
            });
        }
        configs.insert(
            config.clone(),
            ConfigScores {
                overall: total,
                coverage: config_coverage.get(config).copied().unwrap_or_default(),
                by_length,
                cells: list,
            },
        );
    }
    let scores = Scores {
        dataset_hash: m.dataset_hash.clone(),
        predictions: predictions.display().to_string(),
        overall,
        coverage,
        only_present: options.only_present,
        configs,
        missing,
        unknown,
    };
    // An --out that cannot be made (below a file, /proc/x, not ours to write) is bad input.
    std::fs::create_dir_all(out)
        .map_err(|e| usage(format!("cannot create --out {}: {e}", out.display())))?;
    std::fs::write(
        out.join("scores.json"),
        serde_json::to_string_pretty(&scores)? + "\n",
    )?;
    for (config, c) in &scores.configs {
        if c.overall.rows > 0 {
            heatmap::draw(config, &c.cells, out)?;
        }
    }
    print_table(&scores);
    if options.only_present && !scores.missing.is_empty() {
        // Loud whatever --quiet says: the numbers above are not over the whole dataset.
        eprintln!(
            "WARNING: --only-present: {} of {} rows have no prediction and are left out; the accuracies above are over the {} predicted rows only, not the dataset",
            scores.missing.len(),
            scores.coverage.rows,
            scores.coverage.predicted
        );
    }
    if !options.quiet {
        let what = if options.only_present {
            "left out"
        } else {
            "counted as wrong"
        };
        report_ids("rows have no prediction", &scores.missing, what);
        report_ids(
            "predictions name ids not in the dataset",
            &scores.unknown,
            "ignored",
        );
        eprintln!("wrote {}", out.join("scores.json").display());
    }
    Ok(scores)
}

fn report_ids(what: &str, ids: &[String], treated: &str) {
    if ids.is_empty() {
        return;
    }
    let shown: Vec<&str> = ids.iter().take(10).map(String::as_str).collect();
    let more = if ids.len() > 10 {
        format!(" and {} more", ids.len() - 10)
    } else {
        String::new()
    };
    eprintln!(
        "warning: {} {what}: {}{more} (listed in scores.json; {treated})",
        ids.len(),
        shown.join(", ")
    );
}

fn print_table(s: &Scores) {
    println!(
        "{:<24} {:>9} {:>7} {:>6} {:>8} {:>9}",
        "config", "length", "depth", "rows", "correct", "accuracy"
    );
    for (config, c) in &s.configs {
        let depths: BTreeSet<Option<u64>> = c
            .cells
            .iter()
            .map(|x| x.depth.map(|d| (d * 1000.0) as u64))
            .collect();
        for cell in &c.cells {
            if depths.len() > 1 || cell.depth.is_some() {
                println!(
                    "{config:<24} {:>9} {:>7} {:>6} {:>8} {:>8.1}%",
                    cell.length,
                    cell.depth.map_or("-".into(), |d| format!("{d:.1}")),
                    cell.tally.rows,
                    cell.tally.correct,
                    100.0 * cell.tally.accuracy
                );
            }
        }
        for (length, t) in &c.by_length {
            println!(
                "{config:<24} {length:>9} {:>7} {:>6} {:>8} {:>8.1}%",
                "all",
                t.rows,
                t.correct,
                100.0 * t.accuracy
            );
        }
    }
    println!(
        "{:<24} {:>9} {:>7} {:>6} {:>8} {:>8.1}%",
        "overall",
        "all",
        "all",
        s.overall.rows,
        s.overall.correct,
        100.0 * s.overall.accuracy
    );
    let c = s.coverage;
    println!(
        "coverage: {} of {} rows predicted ({:.1}%){}",
        c.predicted,
        c.rows,
        100.0 * c.predicted as f64 / c.rows.max(1) as f64,
        match (c.predicted < c.rows, s.only_present) {
            (false, _) => "",
            (true, false) => "; the rest count as wrong",
            (true, true) => "; the rest are left out (--only-present)",
        }
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prediction_formats() {
        let ours = json!({"id": "ab12", "prediction": "x"});
        assert_eq!(parse_prediction(&ours), Some(("ab12".into(), "x".into())));
        let ruler = json!({"index": "ab12", "pred": "y", "outputs": ["z"]});
        assert_eq!(parse_prediction(&ruler), Some(("ab12".into(), "y".into())));
        let lm_eval =
            json!({"doc_id": 3, "doc": {"id": "ab12"}, "resps": [["r"]], "filtered_resps": ["f"]});
        assert_eq!(
            parse_prediction(&lm_eval),
            Some(("ab12".into(), "f".into()))
        );
        assert_eq!(parse_prediction(&json!({"prediction": "x"})), None);
        assert_eq!(parse_prediction(&json!({"id": "a"})), None);
    }
}
