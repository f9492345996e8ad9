//! `gen export opencompass`: a dataset config (a list named after the dataset, every type a
//! dotted path) and, beside it, the module holding the dataset class and the evaluator.

use std::path::Path;

use anyhow::Result;

use super::{
    fill, literal, path_literal, ConfigInfo, METRICS_PY, OPENCOMPASS_CONFIG_PY,
    OPENCOMPASS_MODULE_PY,
};
use crate::dataset::manifest::Manifest;

/// One OpenCompass dataset entry: every type a dotted path, every value a literal.
fn opencompass_entry(
    abbr: &str,
    module: &str,
    path: &Path,
    split: &str,
    max_out_len: u32,
) -> Result<String> {
    Ok(format!(
        r#"    dict(
        abbr={abbr},
        type={dataset},
        path={path},
        split={split},
        reader_cfg=dict(input_columns=["prompt"], output_column="answers"),
        infer_cfg=dict(
            prompt_template=dict(
                type="opencompass.openicl.icl_prompt_template.PromptTemplate",
                template=dict(round=[dict(role="HUMAN", prompt="{{prompt}}"), dict(role="BOT", prompt="")]),
            ),
            retriever=dict(type="opencompass.openicl.icl_retriever.ZeroRetriever"),
            inferencer=dict(type="opencompass.openicl.icl_inferencer.GenInferencer", max_out_len={max_out_len}),
        ),
        eval_cfg=dict(evaluator=dict(type={evaluator}), pred_role="BOT"),
    ),
"#,
        abbr = literal(abbr),
        dataset = literal(&format!("{module}.NeedleworkDataset")),
        evaluator = literal(&format!("{module}.NeedleworkEvaluator")),
        path = path_literal(path)?,
        split = literal(split),
    ))
}

pub(super) fn write(
    out: &Path,
    dir: &Path,
    m: &Manifest,
    infos: &[ConfigInfo],
    name: &str,
) -> Result<()> {
    let module = format!("needlework_{name}_oc");
    let variable = format!("needlework_{name}_datasets");
    let mut configs = String::new();
    for info in infos {
        // One absolute path per config: the evaluated split's only file, or the config's
        // directory (read for that split's shards).
        let path = match info.eval_files().as_slice() {
            [one] => (*one).clone(),
            _ => dir.join(&info.name),
        };
        configs.push_str(&opencompass_entry(
            &format!("needlework_{name}_{}", info.name),
            &module,
            &path,
            &info.eval_split(),
            info.max_new_tokens,
        )?);
    }
    let values = [
        ("@@HASH@@", m.dataset_hash.as_str()),
        ("@@NAME@@", name),
        ("@@MODULE@@", module.as_str()),
        ("@@VARIABLE@@", variable.as_str()),
        ("@@METRICS@@", METRICS_PY),
        ("@@CONFIGS@@", configs.trim_end_matches('\n')),
    ];
    std::fs::write(
        out.join(format!("needlework_{name}.py")),
        fill(OPENCOMPASS_CONFIG_PY, &values),
    )?;
    std::fs::write(
        out.join(format!("{module}.py")),
        fill(OPENCOMPASS_MODULE_PY, &values),
    )?;
    Ok(())
}
