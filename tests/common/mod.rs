//! Helpers shared by the integration tests: run the real `gen` binary, read what it wrote.
#![allow(dead_code)]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use arrow::array::{Array, Float64Array, Int64Array, LargeStringArray, ListArray, StringArray};
use arrow::record_batch::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

pub const GEN: &str = env!("CARGO_BIN_EXE_gen");

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(name: &str) -> String {
    root()
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// Run `gen` with `args`.
pub fn gen(args: &[&str]) -> Output {
    Command::new(GEN)
        .args(args)
        .output()
        .expect("the gen binary runs")
}

/// Run `gen` and require success.
pub fn gen_ok(args: &[&str]) -> Output {
    let out = gen(args);
    assert!(
        out.status.success(),
        "gen {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Every Parquet file of a dataset, in name order.
pub fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            files.extend(parquet_files(&p));
        } else if p.extension().is_some_and(|e| e == "parquet") {
            files.push(p);
        }
    }
    files.sort();
    files
}

pub fn read_batches(file: &Path) -> Vec<RecordBatch> {
    ParquetRecordBatchReaderBuilder::try_new(File::open(file).unwrap())
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

/// A row, as plain Rust values.
#[derive(Debug, Clone)]
pub struct TestRow {
    pub id: String,
    pub input: String,
    pub target: String,
    pub answers: Vec<String>,
    pub metric: String,
    pub target_length: i64,
    pub length: i64,
    pub depth_percent: Option<f64>,
    pub sample_index: i64,
    pub needle_offsets: Vec<i64>,
    pub needle_depths: Vec<f64>,
    pub params: serde_json::Value,
    pub variant: String,
}

fn strings(b: &RecordBatch, name: &str) -> Vec<String> {
    let a = b.column_by_name(name).unwrap();
    if let Some(s) = a.as_any().downcast_ref::<StringArray>() {
        return s.iter().map(|v| v.unwrap().to_string()).collect();
    }
    let s = a.as_any().downcast_ref::<LargeStringArray>().unwrap();
    s.iter().map(|v| v.unwrap().to_string()).collect()
}

pub fn rows(dir: &Path) -> Vec<TestRow> {
    let mut out = Vec::new();
    for f in parquet_files(dir) {
        for b in read_batches(&f) {
            let ids = strings(&b, "id");
            let input = strings(&b, "input");
            let target = strings(&b, "target");
            let metric = strings(&b, "metric");
            let params = strings(&b, "params");
            let variant = strings(&b, "variant");
            let int = |n: &str| {
                b.column_by_name(n)
                    .unwrap()
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap()
                    .clone()
            };
            let (tl, len, sample) = (int("target_length"), int("length"), int("sample_index"));
            let depth = b
                .column_by_name("depth_percent")
                .unwrap()
                .as_any()
                .downcast_ref::<Float64Array>()
                .unwrap()
                .clone();
            let list = |n: &str| {
                b.column_by_name(n)
                    .unwrap()
                    .as_any()
                    .downcast_ref::<ListArray>()
                    .unwrap()
                    .clone()
            };
            let (answers, offs, depths) = (
                list("answers"),
                list("needle_offsets"),
                list("needle_depths"),
            );
            for i in 0..b.num_rows() {
                let a = answers.value(i);
                let a = a.as_any().downcast_ref::<StringArray>().unwrap();
                let o = offs.value(i);
                let o = o.as_any().downcast_ref::<Int64Array>().unwrap();
                let d = depths.value(i);
                let d = d.as_any().downcast_ref::<Float64Array>().unwrap();
                out.push(TestRow {
                    id: ids[i].clone(),
                    input: input[i].clone(),
                    target: target[i].clone(),
                    answers: a.iter().map(|x| x.unwrap().to_string()).collect(),
                    metric: metric[i].clone(),
                    target_length: tl.value(i),
                    length: len.value(i),
                    depth_percent: (!depth.is_null(i)).then(|| depth.value(i)),
                    sample_index: sample.value(i),
                    needle_offsets: o.values().to_vec(),
                    needle_depths: d.values().to_vec(),
                    params: serde_json::from_str(&params[i]).unwrap(),
                    variant: variant[i].clone(),
                });
            }
        }
    }
    out
}

/// The needle sentence of a NIAH (key, value).
pub fn niah_needle(key: &str, value: &str) -> String {
    format!("One of the access codes assigned to {key} is {value}.")
}
