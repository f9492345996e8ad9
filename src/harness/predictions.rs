//! The predictions `gen score` reads: JSON Lines in our form, RULER's (by `others.id`, else by
//! its numeric `index` within the task the file is named after) and lm-evaluation-harness's
//! `--log_samples`, each file bounded and every id predicted once.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde_json::Value;

use crate::dataset::manifest::Manifest;
use crate::usage::usage;

/// A row's config, split and id.
pub type RowAt = (String, String, String);

/// What names the row a prediction is for.
#[derive(Debug, Clone, PartialEq)]
enum Key {
    /// The row's id.
    Id(String),
    /// RULER's numeric `index`: the row's position in its task's `validation.jsonl`, which
    /// `gen export ruler` writes in dataset order, one file per config.
    Index(u64),
}

/// The (row, prediction) of one line of a predictions file: ours (`id`, `prediction`),
/// RULER's (`others.id` as `gen export ruler` writes it, else `index`; `pred`) or
/// lm-evaluation-harness's `--log_samples` (`doc.id`, `filtered_resps`). The first of `id`,
/// `others.id`, `doc.id` and `index` that is a string names the row by its id; else a
/// numeric `index` (RULER's own rows) names it by its position.
fn parse_prediction(v: &Value) -> Option<(Key, String)> {
    let named = [&v["id"], &v["others"]["id"], &v["doc"]["id"], &v["index"]];
    let key = match named.iter().find_map(|x| x.as_str()) {
        Some(s) => Key::Id(s.to_string()),
        None => Key::Index(v["index"].as_u64()?),
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
    Some((key, prediction))
}

/// The rows RULER's numeric `index` counts: per config, the ids of its evaluated split (`test`
/// where it has one, as `gen export ruler` writes it) in dataset order, found by the name of
/// the prediction file (`<task>.jsonl`, named after the config's folder in that layout, or
/// the config itself; RULER's chunks `<task>-<n>.jsonl` too).
pub struct Positions {
    /// (folder name, config name, ids in order).
    configs: Vec<(String, String, Vec<String>)>,
}

impl Positions {
    /// The positions of `gold` (every row in dataset order) in `m`'s configs.
    pub fn of(m: &Manifest, gold: &[RowAt]) -> Positions {
        let configs = crate::harness::export::ruler_folders(m)
            .into_iter()
            .map(|(config, folder)| {
                let splits: Vec<&str> = m
                    .files
                    .iter()
                    .filter(|f| f.config == config)
                    .map(|f| f.split.as_str())
                    .collect();
                let split = if splits.contains(&"test") {
                    "test"
                } else {
                    splits.first().copied().unwrap_or("test")
                };
                let ids = gold
                    .iter()
                    .filter(|(c, s, _)| *c == config && s == split)
                    .map(|(_, _, id)| id.clone())
                    .collect();
                (folder, config, ids)
            })
            .collect();
        Positions { configs }
    }

    /// The ids a file's indices count, by the file's name; a dataset of one config needs none.
    fn of_file(&self, path: &Path) -> Result<&[String]> {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        // A chunk of RULER's prediction script: the task's name, `-`, the chunk's number (RULER
        // groups chunks by the name up to their last `-`).
        let chunk = match stem.rsplit_once('-') {
            Some((task, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                task.to_string()
            }
            _ => stem.clone(),
        };
        let found = self.configs.iter().find(|(folder, config, _)| {
            [&stem, &chunk].iter().any(|n| *n == folder || *n == config)
        });
        match (found, self.configs.as_slice()) {
            (Some((_, _, ids)), _) | (None, [(_, _, ids)]) => Ok(ids),
            (None, all) => Err(usage(format!(
                "invalid --predictions {}: its rows name rows by RULER's numeric index, which counts the rows of one task, but the file's name is no task of the dataset: expected {}",
                path.display(),
                all.iter()
                    .map(|(f, _, _)| format!("{f}.jsonl"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}

/// Largest predictions file read: far more than any dataset's answers need.
const MAX_PREDICTION_BYTES: u64 = 2 << 30;

/// The files `--predictions` names: each file as given, each directory as its `*.jsonl` files
/// in name order (RULER writes one `<task>.jsonl` per task into its prediction folder).
pub fn prediction_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for path in paths {
        if !path.is_dir() {
            out.push(path.clone());
            continue;
        }
        let entries = std::fs::read_dir(path)
            .map_err(|e| usage(format!("cannot read --predictions {}: {e}", path.display())))?;
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        if files.is_empty() {
            return Err(usage(format!(
                "invalid --predictions {}: the directory holds no .jsonl file",
                path.display()
            )));
        }
        files.sort();
        out.extend(files);
    }
    if out.is_empty() {
        return Err(usage(
            "--predictions: expected at least one file or directory",
        ));
    }
    Ok(out)
}

/// Every prediction of `files`, by row id; an id predicted twice (in one file or across
/// files) is refused.
pub fn read_all_predictions(
    files: &[PathBuf],
    positions: &Positions,
) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for file in files {
        read_predictions(file, positions, &mut out)?;
    }
    Ok(out)
}

fn read_predictions(
    path: &Path,
    positions: &Positions,
    out: &mut BTreeMap<String, String>,
) -> Result<()> {
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
                "invalid --predictions {} line {}: expected a JSON object with \"id\" and \"prediction\" (or RULER's others.id or index with pred, or lm-eval's doc.id/filtered_resps)",
                path.display(),
                n + 1
            ))
        };
        let v: Value = serde_json::from_str(&line).map_err(|_| bad())?;
        let (key, prediction) = parse_prediction(&v).ok_or_else(bad)?;
        let id = match key {
            Key::Id(id) => id,
            // An index beyond the task's rows names no row: reported with the unknown ids.
            Key::Index(i) => positions
                .of_file(path)?
                .get(i as usize)
                .cloned()
                .unwrap_or_else(|| format!("index {i} of {}", path.display())),
        };
        if out.insert(id.clone(), prediction).is_some() {
            return Err(usage(format!(
                "invalid --predictions {}: id {id} appears twice (line {}); one prediction per row",
                path.display(),
                n + 1
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prediction_formats() {
        let id = |s: &str| Key::Id(s.into());
        let ours = json!({"id": "ab12", "prediction": "x"});
        assert_eq!(parse_prediction(&ours), Some((id("ab12"), "x".into())));
        let ruler = json!({"index": "ab12", "pred": "y", "outputs": ["z"]});
        assert_eq!(parse_prediction(&ruler), Some((id("ab12"), "y".into())));
        // `gen export ruler` rows come back from RULER's call_api with their position in
        // `index` and our id in `others.id`.
        let exported = json!({"index": 3, "pred": "y", "others": {"id": "ab12"}});
        assert_eq!(parse_prediction(&exported), Some((id("ab12"), "y".into())));
        // RULER's own rows: a position, never taken for an id.
        let plain = json!({"index": 3, "pred": "y", "others": {}});
        assert_eq!(parse_prediction(&plain), Some((Key::Index(3), "y".into())));
        assert_eq!(parse_prediction(&json!({"index": -1, "pred": "y"})), None);
        let lm_eval =
            json!({"doc_id": 3, "doc": {"id": "ab12"}, "resps": [["r"]], "filtered_resps": ["f"]});
        assert_eq!(parse_prediction(&lm_eval), Some((id("ab12"), "f".into())));
        assert_eq!(parse_prediction(&json!({"prediction": "x"})), None);
        assert_eq!(parse_prediction(&json!({"id": "a"})), None);
    }
}
