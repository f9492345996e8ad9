//! `gen export ruler`: RULER's on-disk layout, `<task>/validation.jsonl` per config, named
//! after the RULER task a config reproduces.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use needlework_generators::chat::Reader;
use serde::Serialize;

use needlework_generators::tasks::RulerHaystack;

use super::ConfigInfo;
use crate::dataset::manifest::Manifest;
use crate::dataset::parquet_read::{Columns, ParquetFile};
use crate::run::recipe::Recipe;

/// The RULER task a config reproduces, by its task's structure over its recipe's haystack
/// ([`Task::ruler_task`]): the config's entry in a suite (whose name it carries) or the
/// manifest's one recipe.
fn ruler_task_for(wanted: &str, m: &Manifest) -> Option<&'static str> {
    let entries: Vec<(Option<&str>, &Recipe)> = match &m.suite {
        Some(s) => s
            .entries
            .iter()
            .map(|e| (e.config.as_deref(), &e.recipe))
            .collect(),
        None => vec![(None, &m.recipe)],
    };
    for (config, recipe) in entries {
        for part in recipe.options.parts().ok()? {
            let task = part.task.as_ref();
            let name = config.map_or_else(|| recipe.config_name(task), str::to_string);
            if name == wanted {
                return task.ruler_task(RulerHaystack::of(&recipe.haystack));
            }
        }
    }
    None
}

/// The name of each config's folder in RULER's layout: its RULER task where it reproduces one
/// and no other config claims the same task, else its own name (config names are plain, so
/// they never hold the `-` that RULER's prediction-chunk merging splits on).
pub(super) fn names(configs: &[String], m: &Manifest) -> Vec<(String, bool)> {
    let mut names: Vec<String> = configs
        .iter()
        .map(|c| ruler_task_for(c, m).map_or_else(|| c.clone(), str::to_string))
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
        for (n, config) in names.iter_mut().zip(configs) {
            if shared.contains(n) && n != config {
                *n = config.clone();
                changed = true;
            }
        }
        if !changed {
            return names
                .into_iter()
                .zip(configs)
                .map(|(n, c)| {
                    let ruler = ruler_task_for(c, m) == Some(n.as_str());
                    (n, ruler)
                })
                .collect();
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
