//! `gen export`: the files a harness needs to run a dataset — lm-evaluation-harness task
//! YAMLs, an inspect_ai task file, OpenCompass dataset configs — written into the dataset
//! directory. Every export scores each row with the row's own metric
//! (`exports/needlework_metrics.py`, the Python twin of `generators/src/scoring.rs`).
//!
//! Nothing read from the disk goes raw into a generated file: paths are written only as string
//! literals ([`literal`], valid for YAML and Python alike), never into comments; names that
//! become YAML keys or Python identifiers (configs, splits) and the dataset hash (in comments)
//! are checked and refused when they are not plain ([`check_manifest`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::manifest::Manifest;
use crate::parquet_read::{Columns, ParquetFile};
use crate::usage::usage;

const METRICS_PY: &str = include_str!("../exports/needlework_metrics.py");
const LM_EVAL_UTILS_PY: &str = include_str!("../exports/lm_eval_utils.py");
const INSPECT_PY: &str = include_str!("../exports/inspect_task.py");
const OPENCOMPASS_PY: &str = include_str!("../exports/opencompass_datasets.py");

/// What an export needs to know of one config.
struct ConfigInfo {
    name: String,
    /// Splits in manifest order.
    splits: Vec<String>,
    /// Absolute paths of its Parquet files.
    files: Vec<PathBuf>,
    /// Distinct target lengths.
    lengths: BTreeSet<u64>,
    /// Largest answer budget of its rows.
    max_new_tokens: u32,
}

impl ConfigInfo {
    /// The split a harness evaluates: `test` when the config has one (posgen `--split both`
    /// also has `train`), else its only split.
    fn eval_split(&self) -> String {
        if self.splits.iter().any(|s| s == "test") {
            "test".into()
        } else {
            self.splits
                .first()
                .cloned()
                .unwrap_or_else(|| "test".into())
        }
    }
}

/// What each config of the manifest needs for an export, reading only two small columns.
fn config_infos(dir: &Path, m: &Manifest) -> Result<Vec<ConfigInfo>> {
    let mut out = Vec::new();
    for name in &m.configs {
        let mut info = ConfigInfo {
            name: name.clone(),
            splits: Vec::new(),
            files: Vec::new(),
            lengths: BTreeSet::new(),
            max_new_tokens: 0,
        };
        for f in m.files.iter().filter(|f| &f.config == name) {
            if !info.splits.contains(&f.split) {
                info.splits.push(f.split.clone());
            }
            let path = dir.join(&f.path);
            let file = ParquetFile::open(&path)?;
            // Tolerate a file without these columns (the harness then gets the defaults),
            // as exports always have; a column of the wrong type is an error.
            let wanted: Vec<&str> = ["max_new_tokens", "target_length"]
                .into_iter()
                .filter(|c| file.schema().index_of(c).is_ok())
                .collect();
            for batch in file.project(&wanted)? {
                let batch = batch?;
                let columns = Columns::in_file(&batch, &path);
                if columns.has("max_new_tokens") {
                    let max = columns.i32s("max_new_tokens")?.valid().max().unwrap_or(0);
                    info.max_new_tokens = info.max_new_tokens.max(max.max(0) as u32);
                }
                if columns.has("target_length") {
                    let lengths = columns.i64s("target_length")?;
                    info.lengths
                        .extend(lengths.valid().map(|v| v.max(0) as u64));
                }
            }
            info.files.push(path);
        }
        info.max_new_tokens = info.max_new_tokens.max(1);
        out.push(info);
    }
    Ok(out)
}

/// `s` as a double-quoted string literal that YAML (1.1 and 1.2) and Python read back as `s`:
/// ASCII only, with `\\`, `\"`, `\n`, `\r`, `\t`, `\xXX` for other controls, and `\uXXXX` or
/// `\UXXXXXXXX` beyond ASCII — escapes both languages spell the same way.
fn literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// A path as a string literal; a path that is not UTF-8 cannot be written faithfully and is
/// refused.
fn path_literal(p: &Path) -> Result<String> {
    p.to_str().map(literal).ok_or_else(|| {
        usage(format!(
            "cannot export {}: the path is not valid UTF-8",
            p.display()
        ))
    })
}

/// Python's keywords: a config of that name could not be an inspect task function.
const PYTHON_KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Refuse a manifest whose config or split names are not plain identifiers (they become YAML
/// keys, task names and Python functions) or whose dataset hash is not hexadecimal (it goes
/// into comments).
fn check_manifest(m: &Manifest) -> Result<()> {
    let plain = |s: &str| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !PYTHON_KEYWORDS.contains(&s)
    };
    let names = m
        .configs
        .iter()
        .map(|c| ("config", c))
        .chain(m.files.iter().map(|f| ("config", &f.config)))
        .chain(m.files.iter().map(|f| ("split", &f.split)));
    for (what, name) in names {
        if !plain(name) {
            return Err(usage(format!(
                "cannot export: manifest.json names the {what} {}: expected letters, digits and _ (not starting with a digit, not a Python keyword)",
                literal(name)
            )));
        }
    }
    if m.dataset_hash.is_empty() || !m.dataset_hash.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(usage(format!(
            "cannot export: manifest.json's dataset hash {} is not hexadecimal",
            literal(&m.dataset_hash)
        )));
    }
    Ok(())
}

/// `template` with each `@@KEY@@` of `values` replaced, in one pass: a value is never searched
/// for further placeholders.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find("@@") {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        match values.iter().find(|(k, _)| tail.starts_with(k)) {
            Some((k, v)) => {
                out.push_str(v);
                rest = &tail[k.len()..];
            }
            None => {
                out.push_str("@@");
                rest = &tail[2..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn lm_eval(dir: &Path, m: &Manifest, infos: &[ConfigInfo]) -> Result<Vec<PathBuf>> {
    // Config and split names are plain identifiers and the hash is hexadecimal
    // (`check_manifest`); paths go in as literals only.
    let out = dir.join("lm_eval");
    std::fs::create_dir_all(&out)?;
    let mut written = Vec::new();
    let all_lengths: BTreeSet<u64> = infos.iter().flat_map(|i| i.lengths.clone()).collect();
    let lengths = format!(
        "[{}]",
        all_lengths
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let utils = format!(
        "{METRICS_PY}{}",
        fill(LM_EVAL_UTILS_PY, &[("@@LENGTHS@@", &lengths)])
    );
    std::fs::write(out.join("utils.py"), utils)?;
    written.push(out.join("utils.py"));
    let mut tasks = Vec::new();
    for info in infos {
        let task = format!("needlework_{}", info.name);
        let split = info.eval_split();
        let mut data_files = String::new();
        for s in &info.splits {
            let pattern = dir.join(&info.name).join(format!("{s}-*.parquet"));
            data_files.push_str(&format!(
                "    {}: {}\n",
                literal(s),
                path_literal(&pattern)?
            ));
        }
        let mut metrics =
            String::from("  - metric: score\n    aggregation: mean\n    higher_is_better: true\n");
        for l in &info.lengths {
            metrics.push_str(&format!(
                "  - metric: \"{l}\"\n    aggregation: !function utils.aggregate\n    higher_is_better: true\n"
            ));
        }
        let yaml = format!(
            "# Written by `gen export lm-eval` for the needlework dataset in the parent directory\n\
             # (dataset hash {hash}); the shard paths below are absolute.\n\
             # Each row is scored with its own metric (`metric` column); `score` is the mean, and each\n\
             # length is reported on its own, as RULER does.\n\
             task: {task}\n\
             dataset_path: parquet\n\
             dataset_kwargs:\n  data_files:\n{data_files}\
             test_split: {split}\n\
             output_type: generate_until\n\
             doc_to_text: \"{{{{input}}}}\"\n\
             doc_to_target: target\n\
             gen_prefix: answer_prefix\n\
             target_delimiter: \" \"\n\
             process_results: !function utils.process_results\n\
             metric_list:\n{metrics}\
             generation_kwargs:\n  until: []\n  max_gen_toks: {max}\n  do_sample: false\n  temperature: 0.0\n\
             repeats: 1\n\
             metadata:\n  version: 1.0\n",
            hash = m.dataset_hash,
            max = info.max_new_tokens,
        );
        let path = out.join(format!("{task}.yaml"));
        std::fs::write(&path, yaml)?;
        written.push(path);
        tasks.push(task);
    }
    let group = format!(
        "group: needlework\ntask:\n{}aggregate_metric_list:\n  - metric: score\n    aggregation: mean\n    weight_by_size: true\nmetadata:\n  version: 1.0\n",
        tasks.iter().map(|t| format!("  - {t}\n")).collect::<String>()
    );
    std::fs::write(out.join("needlework.yaml"), group)?;
    written.push(out.join("needlework.yaml"));
    Ok(written)
}

fn inspect(dir: &Path, m: &Manifest, infos: &[ConfigInfo]) -> Result<Vec<PathBuf>> {
    let out = dir.join("inspect");
    std::fs::create_dir_all(&out)?;
    let mut tasks = String::new();
    for info in infos {
        let split = info.eval_split();
        tasks.push_str(&format!(
            "\n\n@task\ndef {name}():\n    \"\"\"The `{name}` config ({split} split).\"\"\"\n    return needlework_task({name_literal}, {split_literal}, {max})\n",
            name = info.name,
            name_literal = literal(&info.name),
            split_literal = literal(&split),
            max = info.max_new_tokens
        ));
    }
    let path = out.join("needlework_tasks.py");
    let text = fill(
        INSPECT_PY,
        &[
            ("@@HASH@@", &m.dataset_hash),
            ("@@METRICS@@", METRICS_PY),
            ("@@TASKS@@", &tasks),
        ],
    );
    std::fs::write(&path, text)?;
    Ok(vec![path])
}

fn opencompass(dir: &Path, m: &Manifest, infos: &[ConfigInfo]) -> Result<Vec<PathBuf>> {
    let out = dir.join("opencompass");
    std::fs::create_dir_all(&out)?;
    let mut configs = String::new();
    for info in infos {
        // One absolute path per config: its only file, or its directory of shards.
        let path = match info.files.as_slice() {
            [one] => one.clone(),
            _ => dir.join(&info.name),
        };
        configs.push_str(&format!(
            "    _config({}, {}, {}),\n",
            literal(&format!("needlework_{}", info.name)),
            path_literal(&path)?,
            info.max_new_tokens
        ));
    }
    let path = out.join("needlework_datasets.py");
    let text = fill(
        OPENCOMPASS_PY,
        &[
            ("@@HASH@@", &m.dataset_hash),
            ("@@METRICS@@", METRICS_PY),
            ("@@CONFIGS@@", configs.trim_end_matches('\n')),
        ],
    );
    std::fs::write(&path, text)?;
    Ok(vec![path])
}

/// Write the files of `harness` into `dir` and say how to run them.
pub fn export(harness: &str, dir: &Path) -> Result<()> {
    if !matches!(harness, "lm-eval" | "inspect" | "opencompass") {
        return Err(usage(format!(
            "invalid harness '{harness}': expected lm-eval, inspect or opencompass"
        )));
    }
    if !dir.join("manifest.json").exists() {
        return Err(usage(format!(
            "{} is not a needlework dataset: it has no manifest.json",
            dir.display()
        )));
    }
    let dir = dir
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", dir.display()))?;
    let m = Manifest::read(&dir)?;
    check_manifest(&m)?;
    let infos = config_infos(&dir, &m)?;
    let written = match harness {
        "lm-eval" => lm_eval(&dir, &m, &infos)?,
        "inspect" => inspect(&dir, &m, &infos)?,
        _ => opencompass(&dir, &m, &infos)?,
    };
    for p in &written {
        println!("wrote {}", p.display());
    }
    let first = infos.first().map(|i| i.name.as_str()).unwrap_or("");
    match harness {
        "lm-eval" => println!(
            "run: lm_eval --model <model> --model_args <args> --include_path {} --tasks needlework_{first} --log_samples --output_path results",
            dir.join("lm_eval").display()
        ),
        "inspect" => println!(
            "run: inspect eval {}@{first} --model <provider/model>",
            written[0].display()
        ),
        _ => println!(
            "use: import needlework_datasets from {} in an OpenCompass config",
            written[0].display()
        ),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_ascii_and_escape_everything_that_could_break_out() {
        assert_eq!(literal("a/b c"), "\"a/b c\"");
        assert_eq!(
            literal("x\"y\\z\n# k: v\r\t\u{7f}\u{85}é\u{2028}🧵"),
            "\"x\\\"y\\\\z\\n# k: v\\r\\t\\x7f\\x85\\xe9\\u2028\\U0001f9f5\""
        );
        assert!(literal("\u{0}\u{1b}").is_ascii());
    }

    #[test]
    fn fill_replaces_once() {
        assert_eq!(
            fill(
                "a @@X@@ b @@Y@@ @@Z@@ @@",
                &[("@@X@@", "@@Y@@"), ("@@Y@@", "y")]
            ),
            "a @@Y@@ b y @@Z@@ @@"
        );
    }
}
