//! `gen export`: the files a harness needs to run a dataset — lm-evaluation-harness task
//! YAMLs, an inspect_ai task file, OpenCompass dataset configs, RULER's on-disk layout — written
//! into `<dataset>/<harness>/` (the folder is replaced as a whole). Every export scores each row
//! with the row's own metric (`python/needlework/metrics.py`, the Python twin of
//! `generators/src/scoring.rs`) and reports RULER's partial credit beside it where the row has
//! one; every export sends the model the row's `input` immediately followed by its
//! `answer_prefix`, the `input` inside the dataset's chat template when it has one
//! ([`prompts`]: lm-eval, OpenCompass and RULER send the rendered chat; inspect_ai sends turns).
//!
//! Names are made unique per dataset (from the directory's name, or `--name`), so that two
//! exported datasets can run side by side: lm-eval groups, tasks and modules, OpenCompass
//! variables, abbreviations and modules all carry it.
//!
//! Nothing read from the disk goes raw into a generated file: paths are written only as string
//! literals ([`literal`], valid for YAML and Python alike), never into comments; names that
//! become YAML keys or Python identifiers (configs, splits, the dataset name) and the dataset
//! hash (in comments) are checked and refused when they are not plain ([`check_manifest`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::Value;

use crate::dataset::manifest::Manifest;
use crate::dataset::parquet_read::{Columns, ParquetFile};
use crate::harness::prompts;
use crate::usage::usage;
use needlework_generators::chat::Reader;

mod lm_eval;
mod opencompass;
mod ruler;
const METRICS_PY: &str = include_str!("../../../python/needlework/metrics.py");
const LM_EVAL_UTILS_PY: &str = include_str!("../../../exports/lm_eval_utils.py");
const INSPECT_PY: &str = include_str!("../../../exports/inspect_task.py");
const OPENCOMPASS_MODULE_PY: &str = include_str!("../../../exports/opencompass_module.py");
const OPENCOMPASS_CONFIG_PY: &str = include_str!("../../../exports/opencompass_config.py");

/// Each config of `m` with the name of its folder in `gen export ruler`'s layout (RULER's
/// task where the config reproduces one), in manifest order: RULER's prediction files are
/// named after those folders, and their numeric `index` counts rows within one.
pub fn ruler_folders(m: &Manifest) -> Vec<(String, String)> {
    let names = ruler::names(&m.configs, m);
    m.configs
        .iter()
        .cloned()
        .zip(names.into_iter().map(|(n, _)| n))
        .collect()
}

/// The harnesses `gen export` writes for.
const HARNESSES: [&str; 4] = ["lm-eval", "inspect", "opencompass", "ruler"];

/// What an export needs to know of one config.
struct ConfigInfo {
    name: String,
    /// Splits in manifest order.
    splits: Vec<String>,
    /// Its Parquet files: split and absolute path, in manifest order.
    files: Vec<(String, PathBuf)>,
    /// Distinct target lengths.
    lengths: BTreeSet<u64>,
    /// Largest answer budget of its rows.
    max_new_tokens: u32,
    /// Whether some row has RULER's partial credit (metric `all` or `any`).
    ruler: bool,
    /// The task and parameters of its first row (`task`, `params`), for RULER's names.
    task: String,
    params: Value,
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

    /// The files of the evaluated split.
    fn eval_files(&self) -> Vec<&PathBuf> {
        let split = self.eval_split();
        self.files
            .iter()
            .filter(|(s, _)| *s == split)
            .map(|(_, p)| p)
            .collect()
    }
}

/// What each config of the manifest needs for an export, reading only small columns.
fn config_infos(dir: &Path, m: &Manifest) -> Result<Vec<ConfigInfo>> {
    let mut out = Vec::new();
    for name in &m.configs {
        let mut info = ConfigInfo {
            name: name.clone(),
            splits: Vec::new(),
            files: Vec::new(),
            lengths: BTreeSet::new(),
            max_new_tokens: 0,
            ruler: false,
            task: String::new(),
            params: Value::Null,
        };
        for f in m.files.iter().filter(|f| &f.config == name) {
            if !info.splits.contains(&f.split) {
                info.splits.push(f.split.clone());
            }
            let path = dir.join(&f.path);
            let file = ParquetFile::open(&path)?;
            // Tolerate a file without these columns (the harness then gets the defaults),
            // as exports always have; a column of the wrong type is an error.
            let wanted: Vec<&str> = [
                "max_new_tokens",
                "target_length",
                "metric",
                "task",
                "params",
            ]
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
                if columns.has("metric") {
                    let metric = columns.strings("metric")?;
                    info.ruler |= metric
                        .iter()
                        .any(|x| matches!(x, Some("all") | Some("any")));
                }
                if info.task.is_empty() && columns.num_rows() > 0 {
                    if columns.has("task") {
                        info.task = columns.strings("task")?.value(0).to_string();
                    }
                    if columns.has("params") {
                        let text = columns.strings("params")?.value(0);
                        info.params = serde_json::from_str(text).unwrap_or(Value::Null);
                    }
                }
            }
            info.files.push((f.split.clone(), path));
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

/// Longest dataset name: names end up in task names, module names and file names.
const MAX_NAME: usize = 64;

/// The dataset's name in generated identifiers: `--name` when given (refused unless plain),
/// else the directory's name, lowercased, with every run of other characters turned into `_`.
fn dataset_name(dir: &Path, given: Option<&str>) -> Result<String> {
    if let Some(name) = given {
        let plain = !name.is_empty()
            && name.len() <= MAX_NAME
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !plain {
            return Err(usage(format!(
                "invalid --name {}: expected 1 to {MAX_NAME} letters, digits and _",
                literal(name)
            )));
        }
        return Ok(name.to_string());
    }
    let base = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut out = String::new();
    for c in base.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let out: String = out.trim_matches('_').chars().take(MAX_NAME).collect();
    let out = out.trim_end_matches('_');
    Ok(if out.is_empty() {
        "dataset".to_string()
    } else {
        out.to_string()
    })
}

fn inspect(out: &Path, m: &Manifest, infos: &[ConfigInfo], reader: &Reader) -> Result<()> {
    let mut tasks = String::new();
    for info in infos {
        let split = info.eval_split();
        tasks.push_str(&format!(
            "\n\n@task\ndef {name}():\n    \"\"\"The `{name}` config ({split} split).\"\"\"\n    return needlework_task({name_literal}, {split_literal}, {max}, ruler={ruler})\n",
            name = info.name,
            name_literal = literal(&info.name),
            split_literal = literal(&split),
            max = info.max_new_tokens,
            ruler = if info.ruler { "True" } else { "False" },
        ));
    }
    let system = match (&reader.chat, &reader.system) {
        (Some(_), Some(text)) => literal(text),
        _ => "None".to_string(),
    };
    let text = fill(
        INSPECT_PY,
        &[
            ("@@HASH@@", &m.dataset_hash),
            ("@@SYSTEM@@", &system),
            ("@@METRICS@@", METRICS_PY),
            ("@@TASKS@@", &tasks),
        ],
    );
    std::fs::write(out.join("needlework_tasks.py"), text)?;
    Ok(())
}

/// Write `harness`'s files into a fresh `<dir>/<folder>.tmp`, then put it in place of
/// `<dir>/<folder>`: files an older export wrote there (other names, an old group) never
/// linger beside the new ones.
fn replace_folder(
    dir: &Path,
    folder: &str,
    write: impl FnOnce(&Path) -> Result<()>,
) -> Result<PathBuf> {
    let target = dir.join(folder);
    let staging = dir.join(format!(".{folder}.tmp"));
    // A dataset we may not write into (read-only, another user's) is bad input, as an
    // unwritable --out is: exit 2, before anything is written.
    let unwritable = |e: std::io::Error| {
        usage(format!(
            "cannot export into {}: cannot create {} ({e})",
            dir.display(),
            staging.display()
        ))
    };
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(unwritable)?;
    }
    std::fs::create_dir_all(&staging).map_err(unwritable)?;
    if let Err(e) = write(&staging) {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    if target.exists() {
        std::fs::remove_dir_all(&target)
            .with_context(|| format!("cannot replace {}", target.display()))?;
    }
    std::fs::rename(&staging, &target)
        .with_context(|| format!("cannot move {} into place", staging.display()))?;
    Ok(target)
}

/// Every file under `dir`, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(files_under(&p));
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Write the files of `harness` into `<dir>/<harness folder>` and say how to run them.
pub fn export(
    harness: &str,
    dir: &Path,
    name: Option<&str>,
    chat_override: Option<&String>,
) -> Result<()> {
    if !HARNESSES.contains(&harness) {
        return Err(usage(format!(
            "invalid harness '{harness}': expected lm-eval, inspect, opencompass or ruler"
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
    let name = dataset_name(&dir, name)?;
    let m = Manifest::read(&dir)?;
    m.check_format(&dir, "cannot export")?;
    check_manifest(&m)?;
    let infos = config_infos(&dir, &m)?;
    let reader = prompts::dataset_reader(&dir, &m, chat_override)?;
    let chat = reader.chat.is_some();
    let prefix = format!("needlework_{name}");
    let own = if harness == "lm-eval" {
        "lm_eval"
    } else {
        harness
    };
    // The export replaces its folder as a whole: never one that holds the dataset's data.
    if let Some(data) = m.data_in(own) {
        return Err(usage(format!(
            "cannot export {harness} into {}: the export replaces {own}/, which holds {data}; remake the dataset with another config name",
            dir.display()
        )));
    }
    let folder = match harness {
        "lm-eval" => replace_folder(&dir, own, |out| {
            prompts::write_chat_turns(out, &dir, &m, &reader)?;
            lm_eval::write(out, &dir, &m, &infos, &name, chat)
        })?,
        "inspect" => replace_folder(&dir, own, |out| inspect(out, &m, &infos, &reader))?,
        "opencompass" => replace_folder(&dir, own, |out| {
            prompts::write_chat_turns(out, &dir, &m, &reader)?;
            opencompass::write(out, &dir, &m, &infos, &name)
        })?,
        _ => {
            let configs: Vec<String> = infos.iter().map(|i| i.name.clone()).collect();
            let names = ruler::names(&configs, &m);
            let folder = replace_folder(&dir, own, |out| {
                let folders: Vec<String> = names.iter().map(|(n, _)| n.clone()).collect();
                ruler::write(out, &infos, &folders, &reader)
            })?;
            for (info, (task, ruler)) in infos.iter().zip(&names) {
                let how = if *ruler {
                    "RULER's task"
                } else {
                    "not a RULER task: its own name"
                };
                println!("config {} -> {task} ({how})", info.name);
            }
            folder
        }
    };
    for p in files_under(&folder) {
        println!("wrote {}", p.display());
    }
    match harness {
        "lm-eval" => {
            println!(
                "run: lm_eval --model <model> --model_args <args> --include_path {} --tasks {prefix} --log_samples --output_path results",
                folder.display()
            );
            if chat {
                println!("the chat template is already applied: run without --apply_chat_template");
            }
            println!(
                "per length: --tasks {prefix}_by_length (one task per config and length; --limit N then takes N rows of each length, where on {prefix} it takes the N shortest rows)"
            );
        }
        "inspect" => println!(
            "run: inspect eval {}@{} --model <provider/model>",
            folder.join("needlework_tasks.py").display(),
            infos.first().map_or("", |i| i.name.as_str())
        ),
        "opencompass" => {
            println!(
                "use: in a run config beside {} (or beside a link to it): with read_base(): from .{prefix} import {prefix}_datasets",
                folder.join(format!("{prefix}.py")).display()
            );
            println!(
                "run: PYTHONPATH={} opencompass <that config>",
                folder.display()
            );
        }
        _ => {
            println!(
                "run (in RULER's scripts/): python pred/call_api.py --data_dir {} --save_dir <pred> --task <task> ...; python eval/evaluate.py --data_dir <pred>",
                folder.display()
            );
            println!(
                "score per length and depth: gen score {} --predictions <pred>",
                dir.display()
            );
        }
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
    fn dataset_names_are_plain() {
        let name = |d: &str| dataset_name(Path::new(d), None).unwrap();
        assert_eq!(name("/x/datasets/niah-s7"), "niah_s7");
        assert_eq!(name("/x/Niah  Run (2)"), "niah_run_2");
        assert_eq!(name("/x/--é--"), "dataset");
        assert_eq!(name("/x/7days"), "7days");
        assert_eq!(name(&format!("/x/{}-b", "a".repeat(70))).len(), MAX_NAME);
        assert!(!name(&format!("/x/{}_b", "a".repeat(63))).ends_with('_'));
        assert_eq!(
            dataset_name(Path::new("/x/y"), Some("Bab_2")).unwrap(),
            "Bab_2"
        );
        for bad in ["", "a-b", "a b", "é"] {
            assert!(dataset_name(Path::new("/x/y"), Some(bad)).is_err(), "{bad}");
        }
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
