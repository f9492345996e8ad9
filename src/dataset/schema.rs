//! The output contract: Arrow schema of every row (see `schemas/columns.json`), and conversion
//! between rows and record batches.

use std::sync::Arc;

use anyhow::{anyhow, Context, Result};
use arrow_array::builder::{Float64Builder, Int64Builder, ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use needlework_generators::{Instance, Metric};

use crate::dataset::parquet_read::Columns;

/// One output row: an instance and its identity.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Short stable id, derived from the provenance (what `score` joins predictions on).
    pub id: String,
    /// Hash of everything that made the row (recipe and cell): `verify` regenerates from it.
    pub provenance_hash: String,
    /// Hash of the row's content, so an edited row is caught without regenerating.
    pub content_hash: String,
    /// What the task generated.
    pub instance: Instance,
}

fn list_of(t: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("item", t, true)))
}

/// The schema every Parquet file of every task has.
pub fn schema() -> SchemaRef {
    use DataType::*;
    let f = |name: &str, t: DataType| Field::new(name, t, false);
    Arc::new(Schema::new(vec![
        f("id", Utf8),
        f("task", Utf8),
        f("variant", Utf8),
        f("input", LargeUtf8),
        f("question", Utf8),
        f("answer_prefix", Utf8),
        f("target", Utf8),
        f("answers", list_of(Utf8)),
        f("labels", list_of(Utf8)),
        f("metric", Utf8),
        f("max_new_tokens", Int32),
        f("target_length", Int64),
        f("length", Int64),
        f("prompt_tokens", Int64),
        f("tokenizer", Utf8),
        Field::new("depth_percent", Float64, true),
        f("needle_offsets", list_of(Int64)),
        f("needle_depths", list_of(Float64)),
        f("sample_index", Int64),
        f("params", Utf8),
        f("provenance_hash", Utf8),
        f("content_hash", Utf8),
        f("canary", Utf8),
    ]))
}

fn strings<'a>(it: impl Iterator<Item = &'a str>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(it))
}

fn string_lists<'a>(rows: &'a [Row], get: impl Fn(&'a Row) -> &'a [String]) -> ArrayRef {
    let mut b = ListBuilder::new(StringBuilder::new());
    for r in rows {
        for s in get(r) {
            b.values().append_value(s);
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

/// Rows as one record batch.
///
/// The `input` column comes built: the writer appends each prompt as its row arrives, while
/// later rows are being made, and frees the row's copy; the rows' own `input` is not read.
pub fn to_batch_with_input(rows: &[Row], input: ArrayRef, canary: &str) -> Result<RecordBatch> {
    fn i(r: &Row) -> &Instance {
        &r.instance
    }
    let mut offsets = ListBuilder::new(Int64Builder::new());
    let mut depths = ListBuilder::new(Float64Builder::new());
    for r in rows {
        for &o in &r.instance.needle_offsets {
            offsets.values().append_value(o as i64);
        }
        offsets.append(true);
        depths.values().append_slice(&r.instance.needle_depths);
        depths.append(true);
    }
    let columns: Vec<ArrayRef> = vec![
        strings(rows.iter().map(|r| r.id.as_str())),
        strings(rows.iter().map(|r| i(r).task.as_str())),
        strings(rows.iter().map(|r| i(r).variant.as_str())),
        input,
        strings(rows.iter().map(|r| i(r).question.as_str())),
        strings(rows.iter().map(|r| i(r).answer_prefix.as_str())),
        strings(rows.iter().map(|r| i(r).target.as_str())),
        string_lists(rows, |r| &r.instance.answers),
        string_lists(rows, |r| &r.instance.labels),
        strings(rows.iter().map(|r| i(r).metric.as_str())),
        Arc::new(Int32Array::from_iter_values(
            rows.iter().map(|r| i(r).max_new_tokens as i32),
        )),
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|r| i(r).target_length as i64),
        )),
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|r| i(r).length as i64),
        )),
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|r| i(r).prompt_tokens as i64),
        )),
        strings(rows.iter().map(|r| i(r).tokenizer.as_str())),
        Arc::new(Float64Array::from_iter(
            rows.iter().map(|r| i(r).depth_percent),
        )),
        Arc::new(offsets.finish()),
        Arc::new(depths.finish()),
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|r| i(r).sample_index as i64),
        )),
        strings(rows.iter().map(|r| i(r).params.as_str())),
        strings(rows.iter().map(|r| r.provenance_hash.as_str())),
        strings(rows.iter().map(|r| r.content_hash.as_str())),
        strings(rows.iter().map(|_| canary)),
    ];
    RecordBatch::try_new(schema(), columns).context("building a record batch")
}

/// A stored metric name back as the enum; an unknown name is an error, not a default, so a
/// foreign or corrupted file is never scored with the wrong rule.
pub(crate) fn parse_metric(s: &str) -> Result<Metric> {
    s.parse().map_err(|_| anyhow!("unknown metric '{s}'"))
}

/// A row as stored, with its canary (kept apart from [`Row`] because the canary is per dataset,
/// and `verify` checks it against the manifest's).
pub struct StoredRow {
    /// The row as `gen` would build it.
    pub row: Row,
    /// The `canary` column of the row.
    pub canary: String,
}

/// Read rows back from a record batch with this schema (`verify` compares them with rows it
/// regenerates). Errors name the column; the caller names the file.
pub fn from_batch(batch: &RecordBatch) -> Result<Vec<StoredRow>> {
    let columns = Columns::new(batch);
    let s = |n: &str| columns.strings(n);
    let (id, task, variant, input) = (s("id")?, s("task")?, s("variant")?, s("input")?);
    let (question, prefix, target, metric) = (
        s("question")?,
        s("answer_prefix")?,
        s("target")?,
        s("metric")?,
    );
    let answers = columns.string_lists("answers")?;
    let labels = columns.string_lists("labels")?;
    let mnt = columns.i32s("max_new_tokens")?;
    let tlen = columns.i64s("target_length")?;
    let len = columns.i64s("length")?;
    let prompt_tokens = columns.i64s("prompt_tokens")?;
    let tokenizer = s("tokenizer")?;
    let depth = columns.f64s("depth_percent")?;
    let offsets = columns.i64_lists("needle_offsets")?;
    let depths = columns.f64_lists("needle_depths")?;
    let sample = columns.i64s("sample_index")?;
    let params = s("params")?;
    let (prov, content, canary) = (s("provenance_hash")?, s("content_hash")?, s("canary")?);
    let mut out = Vec::with_capacity(batch.num_rows());
    for i in 0..batch.num_rows() {
        let instance = Instance {
            task: task.value(i).to_string(),
            variant: variant.value(i).to_string(),
            input: input.value(i).to_string(),
            question: question.value(i).to_string(),
            answer_prefix: prefix.value(i).to_string(),
            target: target.value(i).to_string(),
            answers: answers.value(i),
            labels: labels.value(i),
            metric: parse_metric(metric.value(i))?,
            max_new_tokens: mnt.value(i) as u32,
            target_length: tlen.value(i) as u64,
            length: len.value(i) as u64,
            prompt_tokens: prompt_tokens.value(i) as u64,
            tokenizer: tokenizer.value(i).to_string(),
            depth_percent: depth.get(i),
            needle_offsets: offsets.value(i).into_iter().map(|x| x as u64).collect(),
            needle_depths: depths.value(i),
            sample_index: sample.value(i) as u64,
            params: params.value(i).to_string(),
        };
        out.push(StoredRow {
            row: Row {
                id: id.value(i).to_string(),
                provenance_hash: prov.value(i).to_string(),
                content_hash: content.value(i).to_string(),
                instance,
            },
            canary: canary.value(i).to_string(),
        });
    }
    Ok(out)
}
