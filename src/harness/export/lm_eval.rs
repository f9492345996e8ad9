//! `gen export lm-eval`: one task YAML per config and one per config and length, a group of
//! each kind, and the module their hooks live in — all named after the dataset.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Result;

use super::{fill, literal, path_literal, ConfigInfo, LM_EVAL_UTILS_PY, METRICS_PY};
use crate::dataset::manifest::Manifest;
use crate::usage::usage;

/// A YAML list of `items`, one `  - item` line each.
fn yaml_list(items: &[String]) -> String {
    items.iter().map(|t| format!("  - {t}\n")).collect()
}

/// One lm-eval task YAML. `task`, `utils` and the metric names are plain identifiers; paths
/// only go in as literals.
struct LmEvalTask<'a> {
    task: String,
    info: &'a ConfigInfo,
    /// `Some(length)` for a task over the rows of one length.
    length: Option<u64>,
}

fn lm_eval_yaml(
    t: &LmEvalTask<'_>,
    dir: &Path,
    hash: &str,
    utils: &str,
    name: &str,
    chat: bool,
) -> Result<String> {
    let info = t.info;
    let mut data_files = String::new();
    for s in &info.splits {
        let pattern = dir.join(&info.name).join(format!("{s}-*.parquet"));
        data_files.push_str(&format!(
            "    {}: {}\n",
            literal(s),
            path_literal(&pattern)?
        ));
    }
    let metric =
        |m: &str| format!("  - metric: {m}\n    aggregation: mean\n    higher_is_better: true\n");
    let mut metrics = metric("score");
    if info.ruler {
        metrics.push_str(&metric("ruler"));
    }
    let (what, process_results, process_docs) = match t.length {
        None => {
            for l in &info.lengths {
                metrics.push_str(&metric(&format!("\"{l}\"")));
                if info.ruler {
                    metrics.push_str(&metric(&format!("ruler_{l}")));
                }
            }
            (
                format!("the `{}` config", info.name),
                "process_results",
                String::new(),
            )
        }
        Some(l) => (
            format!("the rows of length {l} of the `{}` config", info.name),
            "process_length_results",
            format!("process_docs: !function {utils}.length_{l}\n"),
        ),
    };
    Ok(format!(
        "# Written by `gen export lm-eval` for {what} of the needlework dataset `{name}`\n\
         # (dataset hash {hash}) in the parent directory; the shard paths below are absolute.\n\
         # Each row is scored with its own metric (`metric` column): `score` is the mean over\n\
         # rows, and each length is also reported on its own, as RULER does.\n\
         {ruler_note}\
         task: {task}\n\
         dataset_path: parquet\n\
         dataset_kwargs:\n  data_files:\n{data_files}\
         test_split: {split}\n\
         {process_docs}\
         output_type: generate_until\n\
         doc_to_text: {doc_to_text}\n\
         doc_to_target: target\n\
         gen_prefix: answer_prefix\n\
         target_delimiter: \" \"\n\
         process_results: !function {utils}.{process_results}\n\
         metric_list:\n{metrics}\
         generation_kwargs:\n  until: []\n  max_gen_toks: {max}\n  do_sample: false\n  temperature: 0.0\n\
         repeats: 1\n\
         metadata:\n  version: 2.0\n",
        task = t.task,
        doc_to_text = if chat {
            format!("!function {utils}.doc_to_text")
        } else {
            "\"{{input}}\"".to_string()
        },
        ruler_note = if info.ruler {
            "# `ruler` is RULER's partial credit: the fraction of gold items present, per row.\n"
        } else {
            ""
        },
        split = info.eval_split(),
        max = info.max_new_tokens,
    ))
}

/// A group YAML over `tasks`, aggregating `score` (and `ruler` when some task has it) weighted
/// by size.
fn lm_eval_group(group: &str, what: &str, tasks: &[String], ruler: bool) -> String {
    let aggregate =
        |m: &str| format!("  - metric: {m}\n    aggregation: mean\n    weight_by_size: true\n");
    format!(
        "# Written by `gen export lm-eval`: {what}.\ngroup: {group}\ntask:\n{}aggregate_metric_list:\n{}{}metadata:\n  version: 2.0\n",
        yaml_list(tasks),
        aggregate("score"),
        if ruler { aggregate("ruler") } else { String::new() },
    )
}

pub(super) fn write(
    out: &Path,
    dir: &Path,
    m: &Manifest,
    infos: &[ConfigInfo],
    name: &str,
    chat: bool,
) -> Result<()> {
    // Config and split names and the dataset name are plain identifiers and the hash is
    // hexadecimal (`check_manifest`, `dataset_name`); paths go in as literals only.
    let prefix = format!("needlework_{name}");
    let utils = format!("{prefix}_utils");
    let all_lengths: BTreeSet<u64> = infos.iter().flat_map(|i| i.lengths.clone()).collect();
    let filters: String = all_lengths
        .iter()
        .map(|l| format!("\n\ndef length_{l}(dataset):\n    return _only_length(dataset, {l})\n"))
        .collect();
    let text = format!(
        "{METRICS_PY}{}",
        fill(LM_EVAL_UTILS_PY, &[("@@LENGTH_FILTERS@@", &filters)])
    );
    std::fs::write(out.join(format!("{utils}.py")), text)?;
    let mut tasks = Vec::new();
    let mut by_length = Vec::new();
    let mut names = BTreeSet::new();
    let ruler = infos.iter().any(|i| i.ruler);
    for info in infos {
        let full = LmEvalTask {
            task: format!("{prefix}_{}", info.name),
            info,
            length: None,
        };
        let mut all = vec![full];
        for &l in &info.lengths {
            all.push(LmEvalTask {
                task: format!("{prefix}_{}_len{l}", info.name),
                info,
                length: Some(l),
            });
        }
        for t in &all {
            if !names.insert(t.task.clone()) {
                return Err(usage(format!(
                    "cannot export: two lm-eval tasks would be named {}; rename a config or pass --name",
                    t.task
                )));
            }
            let yaml = lm_eval_yaml(t, dir, &m.dataset_hash, &utils, name, chat)?;
            std::fs::write(out.join(format!("{}.yaml", t.task)), yaml)?;
            match t.length {
                None => tasks.push(t.task.clone()),
                Some(_) => by_length.push(t.task.clone()),
            }
        }
    }
    let group = lm_eval_group(
        &prefix,
        &format!("every config of the needlework dataset `{name}`"),
        &tasks,
        ruler,
    );
    std::fs::write(out.join(format!("{prefix}.yaml")), group)?;
    let group = lm_eval_group(
        &format!("{prefix}_by_length"),
        &format!(
            "one task per config and length of the needlework dataset `{name}`, so that --limit N takes N rows of each length"
        ),
        &by_length,
        ruler,
    );
    std::fs::write(out.join(format!("{prefix}_by_length.yaml")), group)?;
    Ok(())
}
