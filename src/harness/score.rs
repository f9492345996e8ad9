//! `gen score`: apply each row's metric to a model's predictions, report accuracy per config ×
//! length × depth, write `scores.json` (and `rows.json`, one verdict per row) and draw the
//! length × depth heatmap. Beside each row's own metric, RULER's partial credit is reported for
//! the rows that have one ([`ruler_credit`]), so numbers can be set beside RULER papers'.
//!
//! Every row of the dataset is scored: a row without a prediction counts as wrong (unless
//! [`Options::only_present`]), so a partial file cannot pass for a complete one, and the
//! coverage (rows predicted / rows) is reported beside the accuracy. A file that predicts no
//! row of the dataset is refused.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use needlework_generators::scoring::{ruler_credit, score as score_row, Gold};
use needlework_generators::Metric;
use serde::Serialize;
use serde_json::Value;

use crate::dataset::manifest::Manifest;
use crate::dataset::parquet_read::{Columns, ParquetFile};
use crate::dataset::schema::parse_metric;
use crate::harness::heatmap;
use crate::harness::predictions::{prediction_files, read_all_predictions, Positions, RowAt};
use crate::harness::tally::{GridScore, Tally};
use crate::usage::usage;
use needlework_generators::identity::CONTROL_VARIANT_SUFFIX;

/// What scoring needs of one dataset row.
struct GoldRow {
    id: String,
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
    /// A control row (`--controls`): scored apart from the instances.
    control: bool,
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
    /// The prediction files read, in order (a directory given on the command line stands for
    /// its `*.jsonl` files).
    pub predictions: Vec<String>,
    /// Every scored row of every config.
    pub overall: Tally,
    /// Rows with a prediction, of all rows.
    pub coverage: Coverage,
    /// Whether rows without a prediction were left out (`--only-present`) instead of
    /// counted as wrong.
    pub only_present: bool,
    /// Per config, by name (control rows left out).
    pub configs: BTreeMap<String, ConfigScores>,
    /// Control rows (`--controls`), per config, apart from the instances: a model that answers
    /// them answers without the context, from memory, so the split leaked. Absent without
    /// control rows.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub controls: BTreeMap<String, Tally>,
    /// Dataset rows with no prediction (counted as wrong, or left out with `only_present`).
    pub missing: Vec<String>,
    /// Prediction ids that are not in the dataset (ignored).
    pub unknown: Vec<String>,
}

/// The columns scoring reads. `input` (which can hold millions of bytes per row) is read one
/// batch at a time for its length only: the echo rule bounds an answer by half the prompt.
const GOLD_COLUMNS: [&str; 12] = [
    "id",
    "variant",
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

/// Every row's gold fields, in dataset order (a repeated id keeps its last row), and every
/// row's (config, split, id) in dataset order, repeats included, as positions count them.
fn gold_rows(dir: &Path, m: &Manifest) -> Result<(Vec<GoldRow>, Vec<RowAt>)> {
    let mut out: Vec<GoldRow> = Vec::new();
    let mut order = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
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
            let variant = s("variant")?;
            for i in 0..columns.num_rows() {
                let metric = parse_metric(metric.value(i))
                    .with_context(|| format!("{} row {i}", path.display()))?;
                let row = GoldRow {
                    id: id.value(i).to_string(),
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
                    control: variant.value(i).ends_with(CONTROL_VARIANT_SUFFIX),
                };
                order.push((f.config.clone(), f.split.clone(), row.id.clone()));
                match seen.get(&row.id) {
                    Some(&k) => out[k] = row,
                    None => {
                        seen.insert(row.id.clone(), out.len());
                        out.push(row);
                    }
                }
            }
        }
    }
    Ok((out, order))
}

/// One line of `rows.json`: the verdict on one dataset row.
#[derive(Serialize)]
struct RowScore<'a> {
    id: &'a str,
    config: &'a str,
    target_length: u64,
    depth_percent: Option<f64>,
    metric: &'static str,
    /// Whether the predictions had this row.
    predicted: bool,
    /// The row's own metric gives full marks (a row without a prediction is wrong).
    correct: bool,
    /// The row's score by its own metric, 0 to 1 (graded metrics score between).
    score: f64,
    /// RULER's partial credit, for `all` and `any` rows (0 without a prediction).
    ruler: Option<f64>,
}

/// Score `dir` against `predictions`, print the table, and write `scores.json` and the
/// heatmaps into `out`.
pub fn score(dir: &Path, predictions: &[PathBuf], out: &Path, options: Options) -> Result<Scores> {
    let m = Manifest::read(dir).map_err(|e| usage(format!("{e:#}")))?;
    let files = prediction_files(predictions)?;
    check_out(out, &files)?;
    let (gold, order) = gold_rows(dir, &m)?;
    let preds = read_all_predictions(&files, &Positions::of(&m, &order))?;
    let ids: BTreeSet<&str> = gold.iter().map(|g| g.id.as_str()).collect();
    let unknown: Vec<String> = preds
        .keys()
        .filter(|id| !ids.contains(id.as_str()))
        .cloned()
        .collect();
    if unknown.len() == preds.len() {
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        return Err(usage(format!(
            "--predictions {} matches no row of {}: {} predictions, none with the id of one of its {} rows",
            names.join(", "),
            dir.display(),
            preds.len(),
            gold.len()
        )));
    }
    let mut verdicts = Vec::with_capacity(gold.len());
    let mut missing = Vec::new();
    let mut overall = Tally::default();
    let mut coverage = Coverage::default();
    let mut config_coverage: BTreeMap<String, Coverage> = BTreeMap::new();
    let mut controls: BTreeMap<String, Tally> = BTreeMap::new();
    // config -> (length, depth bits) -> tally
    let mut grid: BTreeMap<String, BTreeMap<(u64, Option<u64>), Tally>> = BTreeMap::new();
    for c in &m.configs {
        grid.entry(c.clone()).or_default();
    }
    for g in &gold {
        let p = preds.get(&g.id);
        coverage.add(p.is_some());
        config_coverage
            .entry(g.config.clone())
            .or_default()
            .add(p.is_some());
        if p.is_none() {
            missing.push(g.id.clone());
            if options.only_present {
                continue;
            }
        }
        // A row without a prediction is wrong, and earns no partial credit.
        let value = p.map_or(0.0, |p| score_row(&g.gold(), p));
        let ruler = ruler_credit(&g.gold(), p.map_or("", String::as_str));
        if g.control {
            controls
                .entry(g.config.clone())
                .or_default()
                .add(value, ruler);
        } else {
            overall.add(value, ruler);
            grid.entry(g.config.clone())
                .or_default()
                .entry((g.length, g.depth.map(|d| (d * 1000.0).round() as u64)))
                .or_default()
                .add(value, ruler);
        }
        verdicts.push(RowScore {
            id: &g.id,
            config: &g.config,
            target_length: g.length,
            depth_percent: g.depth,
            metric: g.metric.as_str(),
            predicted: p.is_some(),
            correct: value == 1.0,
            score: value,
            ruler,
        });
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
        predictions: files.iter().map(|f| f.display().to_string()).collect(),
        overall,
        coverage,
        only_present: options.only_present,
        configs,
        controls,
        missing,
        unknown,
    };
    // An --out that cannot be made (below a file, /proc/x, not ours to write) is bad input.
    std::fs::create_dir_all(out)
        .map_err(|e| usage(format!("cannot create --out {}: {e}", out.display())))?;
    // A folder we may not write into (read-only, another user's) is bad input, as one that
    // cannot be made is; running out of space stays a runtime failure.
    let path = out.join("scores.json");
    std::fs::write(&path, serde_json::to_string_pretty(&scores)? + "\n").map_err(|e| {
        use std::io::ErrorKind::{PermissionDenied, ReadOnlyFilesystem};
        if matches!(e.kind(), PermissionDenied | ReadOnlyFilesystem) {
            usage(format!("cannot write into --out {}: {e}", out.display()))
        } else {
            anyhow::Error::new(e).context(format!("cannot write {}", path.display()))
        }
    })?;
    write_rows(&out.join("rows.json"), &verdicts)?;
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

/// `p` made absolute with every existing part resolved (links, `..`), so two spellings of one
/// place compare equal even where its last parts do not exist yet.
fn resolved(p: &Path) -> PathBuf {
    let abs = std::env::current_dir().map_or_else(|_| p.to_path_buf(), |d| d.join(p));
    let mut rest = Vec::new();
    let mut at = abs.as_path();
    loop {
        if let Ok(real) = at.canonicalize() {
            return rest.iter().rev().fold(real, |r, part| r.join(part));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return abs,
        }
    }
}

/// Whether `name` is a file `gen score` writes into its `--out`.
fn is_score_file(name: &str) -> bool {
    name == "scores.json"
        || name == "rows.json"
        || (name.starts_with("heatmap_") && (name.ends_with(".svg") || name.ends_with(".png")))
}

/// `--out` receives `scores.json`, `rows.json` and heatmaps, overwriting files of those names:
/// it must hold no predictions file being read, be no dataset, lie in none except as a
/// dataset's own `scores/` (when no config holds data there), and, when it is not empty, hold
/// only what an earlier `gen score` wrote there.
fn check_out(out: &Path, predictions: &[PathBuf]) -> Result<()> {
    let shown = out.display();
    let real = resolved(out);
    if let Some(p) = predictions.iter().find(|p| resolved(p).starts_with(&real)) {
        return Err(usage(format!(
            "--out {shown} holds the predictions file {}, which the scores could overwrite: choose another --out",
            p.display()
        )));
    }
    for (depth, above) in real.ancestors().enumerate() {
        if !above.join("manifest.json").is_file() {
            continue;
        }
        if depth == 0 {
            return Err(usage(format!(
                "--out {shown} is a dataset: the scores would be written among its files; choose another --out (the default is the dataset's scores/)"
            )));
        }
        let own_scores = depth == 1 && real.file_name().is_some_and(|n| n == "scores");
        if !own_scores {
            return Err(usage(format!(
                "--out {shown} lies inside the dataset {}: write the scores to its scores/ (the default) or outside it",
                above.display()
            )));
        }
        let m = Manifest::read(above).map_err(|e| usage(format!("--out {shown}: {e:#}")))?;
        if let Some(data) = m.data_in("scores") {
            return Err(usage(format!(
                "--out {shown} would be written over the dataset {}'s data: its scores/ holds {data}; choose another --out",
                above.display()
            )));
        }
    }
    if !out.is_dir() {
        return Ok(());
    }
    let entries =
        std::fs::read_dir(out).map_err(|e| usage(format!("cannot read --out {shown}: {e}")))?;
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    if names.is_empty() {
        return Ok(());
    }
    let ours = std::fs::read(out.join("scores.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .is_some_and(|v| v.get("dataset_hash").is_some() && v.get("overall").is_some());
    let holds = match names.iter().find(|n| !is_score_file(n)) {
        Some(foreign) => foreign.clone(),
        None if ours => return Ok(()),
        None => format!("{} without gen score's scores.json", names.join(", ")),
    };
    Err(usage(format!(
        "--out {shown} is not empty and was not written by gen score (it holds {holds}): choose an empty or new folder"
    )))
}

/// `rows.json`: a JSON array with one row's verdict per line, in dataset order (not `.jsonl`:
/// the dataset's loaders glob for that, and `gen verify` refuses such files in tool folders).
fn write_rows(path: &Path, rows: &[RowScore<'_>]) -> Result<()> {
    let file = File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
    let mut w = BufWriter::new(file);
    w.write_all(b"[")?;
    for (i, r) in rows.iter().enumerate() {
        w.write_all(if i == 0 { b"\n" } else { b",\n" })?;
        serde_json::to_writer(&mut w, r)?;
    }
    w.write_all(b"\n]\n")?;
    w.flush()?;
    Ok(())
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

/// RULER's score of a group as RULER prints it (a percentage, two decimals), or `-`.
fn ruler_cell(t: &Tally) -> String {
    t.ruler
        .map_or("-".into(), |r| format!("{:.2}", 100.0 * r.score))
}

fn print_table(s: &Scores) {
    println!(
        "{:<24} {:>9} {:>7} {:>6} {:>8} {:>9} {:>7}",
        "config", "length", "depth", "rows", "correct", "accuracy", "ruler"
    );
    let line = |config: &str, length: &str, depth: &str, t: &Tally| {
        println!(
            "{config:<24} {length:>9} {depth:>7} {:>6} {:>8} {:>8.1}% {:>7}",
            t.rows,
            t.correct,
            100.0 * t.accuracy,
            ruler_cell(t)
        );
    };
    for (config, c) in &s.configs {
        let depths: BTreeSet<Option<u64>> = c
            .cells
            .iter()
            .map(|x| x.depth.map(|d| (d * 1000.0) as u64))
            .collect();
        for cell in &c.cells {
            if depths.len() > 1 || cell.depth.is_some() {
                let depth = cell.depth.map_or("-".into(), |d| format!("{d:.1}"));
                line(config, &cell.length.to_string(), &depth, &cell.tally);
            }
        }
        for (length, t) in &c.by_length {
            line(config, &length.to_string(), "all", t);
        }
    }
    line("overall", "all", "all", &s.overall);
    for (config, t) in &s.controls {
        line(&format!("{config} control"), "all", "all", t);
    }
    if !s.controls.is_empty() {
        println!("control rows (the question without its context) are scored apart: answering them means answering from memory");
    }
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
    if s.overall.ruler.is_some() {
        println!(
            "ruler: RULER's partial credit (fraction of gold items present, as its string_match_all) for all/any rows, in %; no echo rule"
        );
    }
}
