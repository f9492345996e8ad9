//! The text a dataset's model reads, row by row: `input` inside the recorded chat template (or
//! bare), then the answer prefix. `gen inspect --prompts` prints it so that it can be compared
//! with another renderer byte for byte; the exports send it, so what `prompt_tokens` counted is
//! what a harness sends.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use needlework_generators::chat::Reader;
use serde::Serialize;

use crate::dataset::manifest::Manifest;
use crate::dataset::parquet_read::{Columns, ParquetFile};
use crate::run::find_inputs::recorded_reader;
use crate::usage::usage;

/// The dataset's reader, with an optional `--chat-template` path for a template that moved.
pub fn dataset_reader(dir: &Path, m: &Manifest, chat_override: Option<&String>) -> Result<Reader> {
    recorded_reader(&m.recipe, None, chat_override, dir)
}

/// Call `each(config, id, input, answer_prefix)` for every row of the dataset, in file order
/// (the order of the manifest's files, then of their rows).
pub fn for_each_row(
    dir: &Path,
    m: &Manifest,
    mut each: impl FnMut(&str, &str, &str, &str) -> Result<()>,
) -> Result<()> {
    for f in &m.files {
        let path = dir.join(&f.path);
        for batch in ParquetFile::open(&path)?.project(&["id", "input", "answer_prefix"])? {
            let batch = batch?;
            let c = Columns::in_file(&batch, &path);
            let (id, input, prefix) = (
                c.strings("id")?,
                c.strings("input")?,
                c.strings("answer_prefix")?,
            );
            for i in 0..c.num_rows() {
                each(&f.config, id.value(i), input.value(i), prefix.value(i))?;
            }
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct PromptLine<'a> {
    config: &'a str,
    id: &'a str,
    prompt: &'a str,
}

/// `gen inspect DIR --prompts`: one JSON line per row, `{"config", "id", "prompt"}`, where
/// `prompt` is exactly the text `prompt_tokens` counts.
pub fn print_prompts(dir: &Path, chat_override: Option<&String>) -> Result<()> {
    if !dir.join("manifest.json").exists() {
        return Err(usage(format!(
            "--prompts needs a dataset directory (with its manifest.json): {} is not one",
            dir.display()
        )));
    }
    let m = Manifest::read(dir)?;
    let reader = dataset_reader(dir, &m, chat_override)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for_each_row(dir, &m, |config, id, input, prefix| {
        let prompt = reader
            .model_prompt(input, prefix)
            .map_err(|e| anyhow::anyhow!("row {id}: {e}"))?;
        serde_json::to_writer(
            &mut out,
            &PromptLine {
                config,
                id,
                prompt: &prompt,
            },
        )?;
        out.write_all(b"\n")?;
        Ok(())
    })?;
    out.flush()?;
    Ok(())
}

/// The file an export writes beside its code when the dataset has a chat template: one line
/// per row, `{"id", "text"}`, `text` being the rendered chat up to the model's turn. The
/// harness sends `text` followed by the row's answer prefix.
pub const CHAT_TURNS_FILE: &str = "chat_turns.jsonl";

#[derive(Serialize)]
struct TurnLine<'a> {
    id: &'a str,
    text: &'a str,
}

/// Write [`CHAT_TURNS_FILE`] into `out` when `reader` has a chat template; say whether it did.
pub fn write_chat_turns(out: &Path, dir: &Path, m: &Manifest, reader: &Reader) -> Result<bool> {
    if reader.chat.is_none() {
        return Ok(false);
    }
    let path = out.join(CHAT_TURNS_FILE);
    let mut w = std::io::BufWriter::new(
        std::fs::File::create(&path).with_context(|| format!("cannot write {}", path.display()))?,
    );
    for_each_row(dir, m, |_, id, input, _| {
        let text = reader
            .turns(input)
            .map_err(|e| anyhow::anyhow!("row {id}: {e}"))?;
        serde_json::to_writer(&mut w, &TurnLine { id, text: &text })?;
        w.write_all(b"\n")?;
        Ok(())
    })?;
    w.flush()?;
    Ok(true)
}
