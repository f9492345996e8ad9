//! `gen inspect`: what a dataset or file holds, without reading the prompts.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use arrow::array::{Array, Float64Array, Int64Array, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;

use crate::manifest::Manifest;
use crate::writer::hash_file;

const COLUMNS: &[&str] = &[
    "task",
    "variant",
    "target_length",
    "depth_percent",
    "length",
];

#[derive(Default)]
struct Stats {
    rows: u64,
    min: i64,
    max: i64,
    sum: i64,
    max_gap: i64,
}

pub fn inspect(path: &Path) -> Result<()> {
    let (files, manifest) = if path.is_dir() {
        let mut files = Vec::new();
        collect(path, &mut files)?;
        files.sort();
        (files, Manifest::read(path).ok())
    } else {
        (vec![path.to_path_buf()], None)
    };
    anyhow::ensure!(
        !files.is_empty(),
        "no Parquet files under {}",
        path.display()
    );
    let mut cells: BTreeMap<(String, String, i64, i64), Stats> = BTreeMap::new();
    println!("files:");
    for f in &files {
        let builder = ParquetRecordBatchReaderBuilder::try_new(
            File::open(f).with_context(|| format!("cannot open {}", f.display()))?,
        )
        .with_context(|| format!("{} is not a Parquet file", f.display()))?;
        let rows = builder.metadata().file_metadata().num_rows();
        let schema = builder.schema().clone();
        let indices: Vec<usize> = COLUMNS
            .iter()
            .map(|c| {
                schema
                    .index_of(c)
                    .with_context(|| format!("{} has no column '{c}'", f.display()))
            })
            .collect::<Result<_>>()?;
        let mask = ProjectionMask::roots(builder.parquet_schema(), indices);
        let reader = builder.with_projection(mask).build()?;
        for batch in reader {
            let b = batch?;
            let s = |n: &str| -> Result<&StringArray> {
                b.column_by_name(n)
                    .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                    .with_context(|| format!("column {n}"))
            };
            let i = |n: &str| -> Result<&Int64Array> {
                b.column_by_name(n)
                    .and_then(|c| c.as_any().downcast_ref::<Int64Array>())
                    .with_context(|| format!("column {n}"))
            };
            let (task, variant) = (s("task")?, s("variant")?);
            let (target, length) = (i("target_length")?, i("length")?);
            let depth = b
                .column_by_name("depth_percent")
                .and_then(|c| c.as_any().downcast_ref::<Float64Array>())
                .context("column depth_percent")?;
            for r in 0..b.num_rows() {
                // Depth in thousandths of a percent, so the table sorts numerically.
                let d = if depth.is_null(r) {
                    -1
                } else {
                    (depth.value(r) * 1000.0).round() as i64
                };
                let key = (
                    task.value(r).to_string(),
                    variant.value(r).to_string(),
                    target.value(r),
                    d,
                );
                let st = cells.entry(key).or_default();
                let len = length.value(r);
                if st.rows == 0 {
                    st.min = len;
                    st.max = len;
                }
                st.rows += 1;
                st.min = st.min.min(len);
                st.max = st.max.max(len);
                st.sum += len;
                st.max_gap = st.max_gap.max(target.value(r) - len);
            }
        }
        let (bytes, xxh3) = hash_file(f)?;
        println!("  {}  {rows} rows  {bytes} bytes  xxh3 {xxh3}", f.display());
    }
    println!();
    println!(
        "{:<8} {:<11} {:>10} {:>7} {:>6} {:>10} {:>10} {:>10} {:>8}",
        "task", "variant", "length", "depth", "rows", "min", "mean", "max", "max gap"
    );
    for ((task, variant, target, depth), st) in &cells {
        let depth = if *depth < 0 {
            "-".to_string()
        } else {
            format!("{:.1}", *depth as f64 / 1000.0)
        };
        println!(
            "{:<8} {:<11} {:>10} {:>7} {:>6} {:>10} {:>10.1} {:>10} {:>8}",
            task,
            variant,
            target,
            depth,
            st.rows,
            st.min,
            st.sum as f64 / st.rows as f64,
            st.max,
            st.max_gap
        );
    }
    if let Some(m) = manifest {
        println!();
        println!(
            "configs {}: {} rows, dataset hash {}",
            m.configs.join(", "),
            m.rows,
            m.dataset_hash
        );
        println!("canary {}", m.recipe.canary);
    }
    Ok(())
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for e in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let p = e?.path();
        if p.is_dir() {
            collect(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "parquet") {
            out.push(p);
        }
    }
    Ok(())
}
