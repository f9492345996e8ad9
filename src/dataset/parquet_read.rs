//! The one way this project reads Parquet: open a file, decode only the columns asked for, and
//! get each column as a typed view that says which file and column is wrong instead of panicking.
//!
//! Datasets hold prompts of millions of bytes in `input`; a reader that decodes every column
//! costs gigabytes where the gold columns cost megabytes, so projection is not optional here.
//! Files written by other tools (user corpora) may store text as `Utf8`, `LargeUtf8` or
//! `Utf8View`; [`Strings`] accepts all three.
//!
//! This file depends on nothing else in the crate: the integration tests include it with
//! `#[path]` so that they read rows with the same code as `gen`.

use std::fmt;
use std::fs::File;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::ArrowPrimitiveType;
use arrow_array::{
    Array, ArrayRef, LargeStringArray, ListArray, PrimitiveArray, RecordBatch, StringArray,
    StringViewArray,
};
use arrow_schema::{DataType, SchemaRef};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;

/// An opened Parquet file whose footer has been read, before any column is decoded.
pub struct ParquetFile {
    path: PathBuf,
    builder: ParquetRecordBatchReaderBuilder<File>,
}

impl ParquetFile {
    /// Open `path` and read its footer; the error names the file.
    pub fn open(path: &Path) -> Result<ParquetFile> {
        let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(file)
            .with_context(|| format!("{} is not a Parquet file", path.display()))?;
        Ok(ParquetFile {
            path: path.to_path_buf(),
            builder,
        })
    }

    /// The rows the footer declares, without decoding anything.
    pub fn num_rows(&self) -> i64 {
        self.builder.metadata().file_metadata().num_rows()
    }

    /// The file's Arrow schema, to ask which columns it has before projecting.
    pub fn schema(&self) -> &SchemaRef {
        self.builder.schema()
    }

    /// Decode only the top-level `columns`, in batches; a column the file lacks is an error
    /// naming the file and the column.
    pub fn project(self, columns: &[&str]) -> Result<Batches> {
        let indices = columns
            .iter()
            .map(|c| {
                self.builder
                    .schema()
                    .index_of(c)
                    .map_err(|_| anyhow!("{} has no column '{c}'", self.path.display()))
            })
            .collect::<Result<Vec<usize>>>()?;
        let mask = ProjectionMask::roots(self.builder.parquet_schema(), indices);
        let reader = self
            .builder
            .with_projection(mask)
            .build()
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        Ok(Batches {
            path: self.path,
            reader,
        })
    }
}

/// The record batches of a projected file; each read error names the file.
pub struct Batches {
    path: PathBuf,
    reader: ParquetRecordBatchReader,
}

impl Iterator for Batches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        let next = self.reader.next()?;
        Some(next.with_context(|| format!("cannot read {}", self.path.display())))
    }
}

/// Typed access to the columns of one record batch, by name.
pub struct Columns<'a> {
    batch: &'a RecordBatch,
    /// The file the batch came from, when known, for error messages.
    source: Option<&'a Path>,
}

impl<'a> Columns<'a> {
    /// Columns of a batch whose origin the caller reports itself (errors name the column only).
    pub fn new(batch: &'a RecordBatch) -> Columns<'a> {
        Columns {
            batch,
            source: None,
        }
    }

    /// Columns of a batch read from `file` (errors name the file and the column).
    pub fn in_file(batch: &'a RecordBatch, file: &'a Path) -> Columns<'a> {
        Columns {
            batch,
            source: Some(file),
        }
    }

    /// Rows in the batch.
    pub fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }

    /// Whether the batch has `name`, for readers that tolerate an absent column.
    pub fn has(&self, name: &str) -> bool {
        self.batch.column_by_name(name).is_some()
    }

    fn error(&self, message: fmt::Arguments<'_>) -> anyhow::Error {
        match self.source {
            Some(file) => anyhow!("{}: {message}", file.display()),
            None => anyhow!("{message}"),
        }
    }

    fn column(&self, name: &str) -> Result<&'a ArrayRef> {
        self.batch
            .column_by_name(name)
            .ok_or_else(|| self.error(format_args!("column '{name}' is missing")))
    }

    fn wrong_type(&self, name: &str, found: &DataType, expected: &str) -> anyhow::Error {
        self.error(format_args!(
            "column '{name}' has the wrong type ({found}, expected {expected})"
        ))
    }

    /// A text column stored as `Utf8`, `LargeUtf8` or `Utf8View`.
    pub fn strings(&self, name: &str) -> Result<Strings<'a>> {
        let column = self.column(name)?;
        Strings::from_array(column.as_ref())
            .ok_or_else(|| self.wrong_type(name, column.data_type(), "a string"))
    }

    /// An `Int64` column.
    pub fn i64s(&self, name: &str) -> Result<Numbers<'a, Int64Type>> {
        self.numbers(name)
    }

    /// An `Int32` column.
    pub fn i32s(&self, name: &str) -> Result<Numbers<'a, Int32Type>> {
        self.numbers(name)
    }

    /// A `Float64` column; nullable ones (`depth_percent`) read through [`Numbers::get`].
    pub fn f64s(&self, name: &str) -> Result<Numbers<'a, Float64Type>> {
        self.numbers(name)
    }

    fn numbers<T: ArrowPrimitiveType>(&self, name: &str) -> Result<Numbers<'a, T>> {
        let column = self.column(name)?;
        column
            .as_any()
            .downcast_ref::<PrimitiveArray<T>>()
            .map(Numbers)
            .ok_or_else(|| self.wrong_type(name, column.data_type(), &T::DATA_TYPE.to_string()))
    }

    /// A `List<Utf8>` column (or a list of any text type).
    pub fn string_lists(&self, name: &str) -> Result<StringLists<'a>> {
        let list = self.list(name)?;
        if !matches!(
            list.value_type(),
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
        ) {
            return Err(self.wrong_type(name, list.data_type(), "a list of strings"));
        }
        Ok(StringLists(list))
    }

    /// A `List<Int64>` column.
    pub fn i64_lists(&self, name: &str) -> Result<NumberLists<'a, Int64Type>> {
        self.number_lists(name)
    }

    /// A `List<Float64>` column.
    pub fn f64_lists(&self, name: &str) -> Result<NumberLists<'a, Float64Type>> {
        self.number_lists(name)
    }

    fn number_lists<T: ArrowPrimitiveType>(&self, name: &str) -> Result<NumberLists<'a, T>> {
        let list = self.list(name)?;
        if list.value_type() != T::DATA_TYPE {
            return Err(self.wrong_type(
                name,
                list.data_type(),
                &format!("a list of {}", T::DATA_TYPE),
            ));
        }
        Ok(NumberLists(list, PhantomData))
    }

    fn list(&self, name: &str) -> Result<&'a ListArray> {
        let column = self.column(name)?;
        column
            .as_any()
            .downcast_ref::<ListArray>()
            .ok_or_else(|| self.wrong_type(name, column.data_type(), "a list"))
    }
}

/// A text column, whichever of Arrow's three string layouts the file uses.
#[derive(Clone, Copy)]
pub enum Strings<'a> {
    /// 32-bit offsets: what we write for every column but `input`.
    Utf8(&'a StringArray),
    /// 64-bit offsets: our `input`, whose values can pass 2 GiB in one batch.
    LargeUtf8(&'a LargeStringArray),
    /// Views, as newer writers (Polars, DuckDB) may store a user's corpus.
    Utf8View(&'a StringViewArray),
}

impl<'a> Strings<'a> {
    /// The array as text, or `None` when it holds something else.
    pub fn from_array(array: &'a dyn Array) -> Option<Strings<'a>> {
        let any = array.as_any();
        if let Some(a) = any.downcast_ref::<StringArray>() {
            Some(Strings::Utf8(a))
        } else if let Some(a) = any.downcast_ref::<LargeStringArray>() {
            Some(Strings::LargeUtf8(a))
        } else {
            any.downcast_ref::<StringViewArray>().map(Strings::Utf8View)
        }
    }

    fn len(&self) -> usize {
        match self {
            Strings::Utf8(a) => a.len(),
            Strings::LargeUtf8(a) => a.len(),
            Strings::Utf8View(a) => a.len(),
        }
    }

    /// The value at `row`, `None` when null.
    pub fn get(&self, row: usize) -> Option<&'a str> {
        match self {
            Strings::Utf8(a) => a.is_valid(row).then(|| a.value(row)),
            Strings::LargeUtf8(a) => a.is_valid(row).then(|| a.value(row)),
            Strings::Utf8View(a) => a.is_valid(row).then(|| a.value(row)),
        }
    }

    /// The value at `row`, empty when null (our own columns are never null).
    pub fn value(&self, row: usize) -> &'a str {
        self.get(row).unwrap_or_default()
    }

    /// Every value in order, `None` for nulls.
    pub fn iter(&self) -> impl Iterator<Item = Option<&'a str>> + '_ {
        (0..self.len()).map(|row| self.get(row))
    }
}

/// A column of numbers of one Arrow type.
#[derive(Clone, Copy)]
pub struct Numbers<'a, T: ArrowPrimitiveType>(&'a PrimitiveArray<T>);

impl<T: ArrowPrimitiveType> Numbers<'_, T> {
    /// The value at `row`, `None` when null.
    pub fn get(&self, row: usize) -> Option<T::Native> {
        self.0.is_valid(row).then(|| self.0.value(row))
    }

    /// The value at `row`, for columns that are never null (a null reads as zero).
    pub fn value(&self, row: usize) -> T::Native {
        self.get(row).unwrap_or_default()
    }

    /// The non-null values in order.
    pub fn valid(&self) -> impl Iterator<Item = T::Native> + '_ {
        self.0.iter().flatten()
    }
}

/// A list-of-text column.
#[derive(Clone, Copy)]
pub struct StringLists<'a>(&'a ListArray);

impl StringLists<'_> {
    /// The list at `row`; null items read as empty strings.
    pub fn value(&self, row: usize) -> Vec<String> {
        let items = self.0.value(row);
        match Strings::from_array(items.as_ref()) {
            Some(s) => s
                .iter()
                .map(|x| x.unwrap_or_default().to_string())
                .collect(),
            // The item type was checked when the column was taken.
            None => Vec::new(),
        }
    }
}

/// A list-of-numbers column.
#[derive(Clone, Copy)]
pub struct NumberLists<'a, T: ArrowPrimitiveType>(&'a ListArray, PhantomData<T>);

impl<T: ArrowPrimitiveType> NumberLists<'_, T> {
    /// The list at `row`; null items read as zero.
    pub fn value(&self, row: usize) -> Vec<T::Native> {
        let items = self.0.value(row);
        match items.as_any().downcast_ref::<PrimitiveArray<T>>() {
            Some(a) => a.values().to_vec(),
            // The item type was checked when the column was taken.
            None => Vec::new(),
        }
    }
}
