//! A row group's columns encoded in parallel: the last row group of a run is written after its
//! last row is made, when the workers are idle, so its columns (long text, long lists) are
//! encoded on their threads instead of one after another on the writer's.

use std::io::Write;
use std::sync::Mutex;

use anyhow::Result;
use arrow_array::RecordBatch;
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory,
};
use parquet::file::writer::SerializedFileWriter;

/// Write `batch` as one row group of `file`, as `ArrowWriter::write` then `ArrowWriter::flush`
/// write it, with its columns encoded on up to `threads` threads.
pub fn write_row_group<W: Write + Send>(
    file: &mut SerializedFileWriter<W>,
    columns: &ArrowRowGroupWriterFactory,
    batch: &RecordBatch,
    threads: usize,
) -> Result<()> {
    let writers = columns.create_column_writers(file.flushed_row_groups().len())?;
    let chunks = encode_columns(batch, writers, threads)?;
    let mut group = file.next_row_group()?;
    for chunk in chunks {
        chunk.append_to_row_group(&mut group)?;
    }
    group.close()?;
    Ok(())
}

/// One row group's column chunks, in column order, each encoded by its own writer as
/// `ArrowWriter` encodes a batch (all its rows in one write), on up to `threads` threads,
/// largest column first: which thread encodes a column does not change its bytes.
fn encode_columns(
    batch: &RecordBatch,
    writers: Vec<ArrowColumnWriter>,
    threads: usize,
) -> Result<Vec<ArrowColumnChunk>> {
    let mut leaves = Vec::with_capacity(writers.len());
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        let size = column.get_array_memory_size();
        leaves.extend(
            compute_leaves(field, column)?
                .into_iter()
                .map(|l| (l, size)),
        );
    }
    anyhow::ensure!(
        leaves.len() == writers.len(),
        "internal error: {} leaf columns for {} column writers",
        leaves.len(),
        writers.len()
    );
    let mut jobs: Vec<_> = writers.into_iter().zip(leaves).enumerate().collect();
    // Smallest first, taken from the end: the largest column starts first.
    jobs.sort_by_key(|(i, (_, (_, size)))| (*size, std::cmp::Reverse(*i)));
    let n = jobs.len();
    let jobs = Mutex::new(jobs);
    let done = Mutex::new(Vec::with_capacity(n));
    let take = || jobs.lock().unwrap_or_else(|e| e.into_inner()).pop();
    let work = || -> Result<()> {
        while let Some((i, (mut writer, (leaf, _)))) = take() {
            writer.write(&leaf)?;
            let chunk = writer.close()?;
            done.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((i, chunk));
        }
        Ok(())
    };
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads.min(n)).map(|_| scope.spawn(work)).collect();
        let mine = work();
        helpers.into_iter().try_for_each(|h| {
            h.join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("a column encoder panicked")))
        })?;
        mine
    })?;
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_by_key(|(i, _)| *i);
    Ok(done.into_iter().map(|(_, chunk)| chunk).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::writer::writer_properties;
    use arrow_array::builder::{ListBuilder, StringBuilder};
    use arrow_array::{ArrayRef, Int64Array, LargeStringArray};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use std::sync::Arc;

    /// Encoding a row group's columns on several threads writes the bytes that ArrowWriter
    /// writes, for random batches whose long text splits into many pages and whose lists of
    /// many distinct strings spill out of their dictionary, under every compression.
    #[test]
    fn columns_encoded_in_parallel_write_arrow_writers_bytes() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut draw = move |n: u64| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % n.max(1)
        };
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("input", DataType::LargeUtf8, false),
            Field::new(
                "answers",
                DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
                false,
            ),
            Field::new("note", DataType::Utf8, false),
        ]));
        for case in 0..18 {
            let mut batch = || {
                let rows = 1 + draw(30) as usize;
                let mut text = |len: u64| -> String {
                    (0..draw(len))
                        .map(|_| char::from(b"abc de1 23\n"[draw(11) as usize]))
                        .collect()
                };
                let input: Vec<String> = (0..rows).map(|_| text(300_000)).collect();
                let notes: Vec<String> = (0..rows).map(|_| text(40)).collect();
                let mut answers = ListBuilder::new(StringBuilder::new());
                for _ in 0..rows {
                    for _ in 0..draw(9000) {
                        answers.values().append_value(draw(1_000_000).to_string());
                    }
                    answers.append(true);
                }
                let columns: Vec<ArrayRef> = vec![
                    Arc::new(Int64Array::from_iter_values(0..rows as i64)),
                    Arc::new(LargeStringArray::from_iter_values(&input)),
                    Arc::new(answers.finish()),
                    Arc::new(arrow_array::StringArray::from_iter_values(&notes)),
                ];
                RecordBatch::try_new(schema.clone(), columns).unwrap()
            };
            let groups = [batch(), batch()];
            let compression = ["zstd", "snappy", "none"][case % 3];
            let props = writer_properties(compression, "c", "0.0.0").unwrap();
            let mut want = Vec::new();
            let mut writer =
                ArrowWriter::try_new(&mut want, schema.clone(), Some(props.clone())).unwrap();
            for group in &groups {
                writer.write(group).unwrap();
                writer.flush().unwrap();
            }
            writer.close().unwrap();
            for threads in 1..=4 {
                let mut got = Vec::new();
                let (mut file, columns) =
                    ArrowWriter::try_new(&mut got, schema.clone(), Some(props.clone()))
                        .unwrap()
                        .into_serialized_writer()
                        .unwrap();
                for group in &groups {
                    write_row_group(&mut file, &columns, group, threads).unwrap();
                }
                file.close().unwrap();
                assert!(got == want, "case {case}, {compression}, {threads} threads");
            }
        }
    }
}
