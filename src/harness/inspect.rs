//! `gen inspect`: what a dataset or file holds, without reading the prompts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::dataset::manifest::Manifest;
use crate::dataset::parquet_read::{Columns, ParquetFile};
use crate::dataset::writer::hash_file;

/// The columns the table needs.
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

/// Print what `path` (a dataset directory or one Parquet file) holds: its files, then rows and
/// measured lengths per task × variant × target length × depth. Only five small columns are
/// decoded, never `input`, so a dataset of million-token rows is described in moments.
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
        let file = ParquetFile::open(f)?;
        let rows = file.num_rows();
        for batch in file.project(COLUMNS)? {
            let batch = batch?;
            let columns = Columns::in_file(&batch, f);
            let (task, variant) = (columns.strings("task")?, columns.strings("variant")?);
            let target = columns.i64s("target_length")?;
            let length = columns.i64s("length")?;
            let depth = columns.f64s("depth_percent")?;
            for r in 0..columns.num_rows() {
                // Depth in thousandths of a percent, so the table sorts numerically.
                let d = depth.get(r).map_or(-1, |d| (d * 1000.0).round() as i64);
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
