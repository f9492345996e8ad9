//! `gen export ruler`: RULER's on-disk layout, `<task>/validation.jsonl` per config, named
//! after the RULER task a config reproduces.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use needlework_generators::chat::Reader;
use serde::Serialize;

use super::ConfigInfo;
use crate::manifest::Manifest;
use crate::parquet_read::{Columns, ParquetFile};

/// What RULER calls the haystack a dataset was made over.
#[derive(Debug, Clone, Copy, PartialEq)]
enum RulerHaystack {
    /// Repeated filler sentences (ours: `noise`).
    Noise,
    /// Running prose (RULER: Paul Graham's essays; ours: `generated`, or a corpus).
    Essay,
    /// Distractor needles (ours: `needles`).
    Needle,
}

fn ruler_haystack(recipe_haystack: &str) -> Option<RulerHaystack> {
    match recipe_haystack {
        "noise" => Some(RulerHaystack::Noise),
        "needles" => Some(RulerHaystack::Needle),
        "none" | "" => None,
        // `generated`, or a path to a corpus: running text.
        _ => Some(RulerHaystack::Essay),
    }
}

/// RULER's tasks, by name: what `scripts/synthetic.yaml` defines them as.
pub(super) const RULER_TASKS: [&str; 13] = [
    "niah_single_1",
    "niah_single_2",
    "niah_single_3",
    "niah_multikey_1",
    "niah_multikey_2",
    "niah_multikey_3",
    "niah_multivalue",
    "niah_multiquery",
    "vt",
    "cwe",
    "fwe",
    "qa_1",
    "qa_2",
];

/// The RULER task a config reproduces, by structure: RULER's eight NIAH configurations differ
/// in haystack, key and value types, and the numbers of keys (K), values (V) and queries (Q)
/// (RULER's `niah_multiquery` asks Q = 4 of K = 4 keys). A config already named like a RULER
/// task keeps its name.
fn ruler_task_for(info: &ConfigInfo, haystack: Option<RulerHaystack>) -> Option<&'static str> {
    if let Some(t) = RULER_TASKS.iter().find(|t| **t == info.name) {
        return Some(t);
    }
    if info.task != "niah" {
        return ruler_other_task(info, haystack);
    }
    let p = &info.params;
    let n = |k: &str| p[k].as_u64();
    let s = |k: &str| p[k].as_str();
    // RULER has no absent key, no near-miss facts and no latent needles.
    if p["absent"].as_bool() != Some(false)
        || p.get("confusers").is_some()
        || p.get("needle").is_some()
    {
        return None;
    }
    use RulerHaystack::*;
    let shape = (
        n("keys")?,
        n("values")?,
        n("queries")?,
        s("key_type")?,
        s("value_type")?,
        haystack?,
    );
    Some(match shape {
        (1, 1, 1, "words", "numbers", Noise) => "niah_single_1",
        (1, 1, 1, "words", "numbers", Essay) => "niah_single_2",
        (1, 1, 1, "words", "uuids", Essay) => "niah_single_3",
        (4, 1, 1, "words", "numbers", Essay) => "niah_multikey_1",
        (1, 1, 1, "words", "numbers", Needle) => "niah_multikey_2",
        (1, 1, 1, "uuids", "uuids", Needle) => "niah_multikey_3",
        (1, 4, 1, "words", "numbers", Essay) => "niah_multivalue",
        (4, 1, 4, "words", "numbers", Essay) => "niah_multiquery",
        _ => return None,
    })
}

/// RULER's vt, cwe, fwe and qa tasks, by their defaults in RULER's `synthetic.yaml`: vt is one
/// chain of four hops in noise; cwe 10 common words repeated 30 times among words repeated 3
/// times; fwe Zipf counts with alpha 2 and the top 3 asked; qa_1 over SQuAD, qa_2 over
/// HotpotQA (scored as RULER scores them, not by exact match).
fn ruler_other_task(info: &ConfigInfo, haystack: Option<RulerHaystack>) -> Option<&'static str> {
    let p = &info.params;
    let n = |k: &str| p[k].as_u64();
    match info.task.as_str() {
        "vt" if (n("chains")?, n("hops")?, haystack?) == (1, 4, RulerHaystack::Noise) => Some("vt"),
        "cwe" if (n("common")?, n("common_repeats")?, n("rare_repeats")?) == (10, 30, 3) => {
            Some("cwe")
        }
        "fwe" if p["alpha"].as_f64()? == 2.0 && n("top")? == 3 => Some("fwe"),
        // RULER scores qa by "any gold answer present"; an --exact config is another task.
        "qa" if p["exact"].as_bool() == Some(false) => match p["format"].as_str()? {
            "squad" => Some("qa_1"),
            "hotpotqa" => Some("qa_2"),
            _ => None,
        },
        _ => None,
    }
}

/// The name of each config's folder in RULER's layout: its RULER task where it reproduces one
/// and no other config claims the same task, else its own name (config names are plain, so
/// they never hold the `-` that RULER's prediction-chunk merging splits on).
pub(super) fn names(infos: &[ConfigInfo], m: &Manifest) -> Vec<String> {
    // A suite's entry names its config (RULER's suite names them as RULER does) and has its
    // own haystack.
    let haystack_of = |config: &str| {
        let entry = m.suite.as_ref().and_then(|s| {
            s.entries
                .iter()
                .find(|e| e.config.as_deref() == Some(config))
        });
        ruler_haystack(entry.map_or(&m.recipe.haystack, |e| &e.recipe.haystack))
    };
    let mut names: Vec<String> = infos
        .iter()
        .map(|i| {
            ruler_task_for(i, haystack_of(&i.name)).map_or_else(|| i.name.clone(), str::to_string)
        })
        .collect();
    // A name two configs would share goes back to the configs' own names (which are unique),
    // until no name is shared.
    loop {
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for n in &names {
            *count.entry(n.as_str()).or_default() += 1;
        }
        let shared: BTreeSet<String> = count
            .into_iter()
            .filter(|(_, c)| *c > 1)
            .map(|(n, _)| n.to_string())
            .collect();
        let mut changed = false;
        for (n, info) in names.iter_mut().zip(infos) {
            if shared.contains(n) && *n != info.name {
                *n = info.name.clone();
                changed = true;
            }
        }
        if !changed {
            return names;
        }
    }
}

/// One line of RULER's `validation.jsonl`, fields in RULER's order.
#[derive(Serialize)]
struct RulerRow<'a> {
    /// Position in the file (RULER's prediction script resumes by it, so it is unique).
    index: u64,
    /// The row's input, inside the dataset's chat template when it has one (RULER sends
    /// `input` then `answer_prefix`, so it sends the text `prompt_tokens` counts).
    input: std::borrow::Cow<'a, str>,
    /// The items RULER's string matching looks for: the gold items of `all`/`any` rows, else
    /// the target.
    outputs: Vec<String>,
    /// Tokens of `input`.
    length: i64,
    /// Tokens the model reads: `prompt_tokens` where the dataset has it, else `length`.
    length_w_model_temp: i64,
    answer_prefix: &'a str,
    /// Token offset of the first queried needle in `input` (null for rows without needles).
    token_position_answer: Option<i64>,
    others: RulerOthers<'a>,
}

#[derive(Serialize)]
struct RulerOthers<'a> {
    /// The row's id: `gen score` reads it back from RULER's prediction files.
    id: &'a str,
}

/// The columns RULER's layout is made of; `prompt_tokens` is read as well where a file has it.
const RULER_COLUMNS: [&str; 8] = [
    "id",
    "input",
    "answers",
    "target",
    "metric",
    "length",
    "answer_prefix",
    "needle_offsets",
];

pub(super) fn write(
    out: &Path,
    infos: &[ConfigInfo],
    names: &[String],
    reader: &Reader,
) -> Result<()> {
    for (info, task) in infos.iter().zip(names) {
        let folder = out.join(task);
        std::fs::create_dir_all(&folder)?;
        let path = folder.join("validation.jsonl");
        let mut w = BufWriter::new(
            File::create(&path).with_context(|| format!("cannot write {}", path.display()))?,
        );
        let mut index = 0u64;
        // Only the evaluated split (posgen's train rows stay out).
        for file in info.eval_files() {
            let parquet = ParquetFile::open(file)?;
            let has_prompt_tokens = parquet.schema().index_of("prompt_tokens").is_ok();
            let mut wanted = RULER_COLUMNS.to_vec();
            if has_prompt_tokens {
                wanted.push("prompt_tokens");
            }
            for batch in parquet.project(&wanted)? {
                let batch = batch?;
                let c = Columns::in_file(&batch, file);
                let (id, input, target, metric, prefix) = (
                    c.strings("id")?,
                    c.strings("input")?,
                    c.strings("target")?,
                    c.strings("metric")?,
                    c.strings("answer_prefix")?,
                );
                let answers = c.string_lists("answers")?;
                let length = c.i64s("length")?;
                let offsets = c.i64_lists("needle_offsets")?;
                let prompt_tokens = if has_prompt_tokens {
                    Some(c.i64s("prompt_tokens")?)
                } else {
                    None
                };
                for i in 0..c.num_rows() {
                    let items = answers.value(i);
                    let outputs = if matches!(metric.value(i), "all" | "any") && !items.is_empty() {
                        items
                    } else {
                        vec![target.value(i).to_string()]
                    };
                    let row = RulerRow {
                        index,
                        input: if reader.chat.is_some() {
                            std::borrow::Cow::Owned(
                                reader
                                    .turns(input.value(i))
                                    .map_err(|e| anyhow::anyhow!("row {}: {e}", id.value(i)))?,
                            )
                        } else {
                            std::borrow::Cow::Borrowed(input.value(i))
                        },
                        outputs,
                        length: length.value(i),
                        length_w_model_temp: prompt_tokens
                            .as_ref()
                            .and_then(|p| p.get(i))
                            .unwrap_or_else(|| length.value(i)),
                        answer_prefix: prefix.value(i),
                        token_position_answer: offsets.value(i).first().copied(),
                        others: RulerOthers { id: id.value(i) },
                    };
                    serde_json::to_writer(&mut w, &row)?;
                    w.write_all(b"\n")?;
                    index += 1;
                }
            }
        }
        w.flush()?;
    }
    Ok(())
}
