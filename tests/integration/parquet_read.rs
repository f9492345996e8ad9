//! The shared Parquet reader (src/parquet_read.rs) on files `gen` does not write: every text
//! layout, nulls, lists, and errors (not panics) that name the file and column.

use std::path::Path;
use std::sync::Arc;

use crate::common::parquet_read::{Columns, ParquetFile};
use crate::common::tmp;
use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, Float64Array, Int32Array, Int64Array, LargeStringArray, RecordBatch, StringArray,
    StringViewArray,
};
use parquet::arrow::ArrowWriter;

/// Write one batch of `columns` to `path`.
fn write(path: &Path, columns: Vec<(&str, ArrayRef)>) {
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let mut w =
        ArrowWriter::try_new(std::fs::File::create(path).unwrap(), batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

fn words() -> ArrayRef {
    let mut b = ListBuilder::new(StringBuilder::new());
    b.values().append_value("a");
    b.values().append_value("b");
    b.append(true);
    b.append(true);
    Arc::new(b.finish())
}

#[test]
fn every_text_layout_numbers_and_lists_read_back() {
    let t = tmp();
    let path = t.path().join("mixed.parquet");
    write(
        &path,
        vec![
            ("utf8", Arc::new(StringArray::from(vec![Some("x"), None]))),
            (
                "large",
                Arc::new(LargeStringArray::from(vec!["long", "er"])),
            ),
            ("view", Arc::new(StringViewArray::from(vec!["v", "w"]))),
            ("i32", Arc::new(Int32Array::from(vec![7, -1]))),
            ("i64", Arc::new(Int64Array::from(vec![1, 2]))),
            ("f64", Arc::new(Float64Array::from(vec![Some(0.5), None]))),
            ("words", words()),
        ],
    );
    let file = ParquetFile::open(&path).unwrap();
    assert_eq!(file.num_rows(), 2);
    let batches: Vec<RecordBatch> = file
        .project(&["utf8", "large", "view", "i32", "f64", "words"])
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let columns = Columns::in_file(&batches[0], &path);
    assert!(
        !columns.has("i64"),
        "only the projected columns are decoded"
    );
    let utf8 = columns.strings("utf8").unwrap();
    assert_eq!(
        (utf8.get(0), utf8.get(1), utf8.value(1)),
        (Some("x"), None, "")
    );
    assert_eq!(columns.strings("large").unwrap().value(0), "long");
    let view: Vec<Option<&str>> = columns.strings("view").unwrap().iter().collect();
    assert_eq!(view, [Some("v"), Some("w")]);
    assert_eq!(columns.i32s("i32").unwrap().value(1), -1);
    let f64s = columns.f64s("f64").unwrap();
    assert_eq!((f64s.get(0), f64s.get(1)), (Some(0.5), None));
    let words = columns.string_lists("words").unwrap();
    assert_eq!(
        (words.value(0), words.value(1)),
        (vec!["a".to_string(), "b".into()], vec![])
    );
}

#[test]
fn bad_files_and_columns_are_errors_that_say_where() {
    let t = tmp();
    let path = t.path().join("small.parquet");
    write(&path, vec![("n", Arc::new(Int64Array::from(vec![1])))]);
    let message = |e: anyhow::Error| format!("{e:#}");

    let missing = ParquetFile::open(&path).unwrap().project(&["n", "text"]);
    let e = message(missing.err().unwrap());
    assert!(e.contains("small.parquet") && e.contains("'text'"), "{e}");

    let batch = ParquetFile::open(&path)
        .unwrap()
        .project(&["n"])
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let columns = Columns::in_file(&batch, &path);
    for e in [
        columns.strings("n").err().unwrap(),
        columns.f64s("n").err().unwrap(),
        columns.string_lists("n").err().unwrap(),
        columns.i64_lists("n").err().unwrap(),
    ] {
        let e = message(e);
        assert!(
            e.contains("small.parquet") && e.contains("'n' has the wrong type"),
            "{e}"
        );
    }
    let e = message(Columns::new(&batch).i32s("absent").err().unwrap());
    assert_eq!(e, "column 'absent' is missing");

    let text = t.path().join("text.parquet");
    std::fs::write(&text, "not parquet at all").unwrap();
    let e = message(ParquetFile::open(&text).err().unwrap());
    assert!(e.contains("text.parquet is not a Parquet file"), "{e}");
    let e = message(
        ParquetFile::open(&t.path().join("none.parquet"))
            .err()
            .unwrap(),
    );
    assert!(
        e.starts_with("cannot open") && e.contains("none.parquet"),
        "{e}"
    );
}
