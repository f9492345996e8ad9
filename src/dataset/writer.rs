//! Writes a dataset: Parquet shards (and optional JSON Lines) in Hugging Face's sharded naming,
//! into a temporary sibling directory that is renamed into place only when everything is done.

use std::fs::{self, File};
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use arrow_array::builder::LargeStringBuilder;
use parquet::arrow::arrow_writer::ArrowRowGroupWriterFactory;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;
use std::sync::Arc;
use xxhash_rust::xxh3::Xxh3;

use crate::dataset::manifest::FileEntry;
use crate::dataset::row_group::write_row_group;
use crate::dataset::schema::{schema, to_batch_with_input, Row};

use crate::dataset::lock::parent_and_name;

/// A row group is closed once its rows hold this many bytes of text.
const ROW_GROUP_BYTES: usize = 64 << 20;
/// A file is closed once it holds this many bytes of text (unless --rows-per-file is given).
const FILE_BYTES: u64 = 256 << 20;

/// The temporary directory a dataset is built in; removed on drop unless committed.
pub struct Staging {
    /// Where shards are written until [`Staging::commit`] renames it into place.
    pub dir: PathBuf,
    committed: bool,
}

impl Staging {
    /// Create an empty staging directory `.NAME.tmp-PID` next to `out`.
    pub fn create(out: &Path) -> Result<Staging> {
        let (parent, name) = parent_and_name(out);
        fs::create_dir_all(&parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
        let dir = parent.join(format!(".{name}.tmp-{}", std::process::id()));
        if dir.exists() {
            fs::remove_dir_all(&dir).ok();
        }
        fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Staging {
            dir,
            committed: false,
        })
    }

    /// Move the finished dataset to `out`, replacing what is there (the caller checked --force
    /// and holds the [`OutLock`]). The replaced dataset is set aside as `.NAME.old-PID` and
    /// removed last.
    pub fn commit(mut self, out: &Path) -> Result<()> {
        if out.exists() {
            let (parent, name) = parent_and_name(out);
            let old = parent.join(format!(".{name}.old-{}", std::process::id()));
            fs::rename(out, &old).with_context(|| {
                format!("cannot move aside {} to {}", out.display(), old.display())
            })?;
            if let Err(e) = fs::rename(&self.dir, out) {
                fs::rename(&old, out).ok(); // put the previous dataset back
                return Err(e)
                    .with_context(|| format!("cannot move the dataset to {}", out.display()));
            }
            fs::remove_dir_all(&old).ok();
        } else {
            fs::rename(&self.dir, out)
                .with_context(|| format!("cannot move the dataset to {}", out.display()))?;
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            fs::remove_dir_all(&self.dir).ok();
        }
    }
}

/// Where a [`ShardWriter`]'s bytes go: files under a directory (the staging directory), or
/// nowhere: only counted and hashed, so `verify` can compare the files it finds with the bytes
/// the recipe makes, through the very code that wrote them.
#[derive(Debug, Clone)]
pub enum Target {
    /// Write files under this directory.
    Dir(PathBuf),
    /// Write nothing; hash what would be written.
    Hash,
}

/// A byte sink that hashes (xxh3-128) and counts what goes through it, and writes it to a file
/// when it has one.
struct Sink {
    file: Option<BufWriter<File>>,
    hash: Xxh3,
    bytes: u64,
}

impl Sink {
    fn new(file: Option<File>) -> Sink {
        Sink {
            file: file.map(BufWriter::new),
            hash: Xxh3::new(),
            bytes: 0,
        }
    }

    /// Flush the file, if any; the size and hash of everything written.
    fn finish(mut self) -> std::io::Result<(u64, String)> {
        self.flush()?;
        Ok((self.bytes, format!("{:032x}", self.hash.digest128())))
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = match self.file.as_mut() {
            Some(f) => f.write(buf)?,
            None => buf.len(),
        };
        self.hash.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.as_mut().map_or(Ok(()), Write::flush)
    }
}

/// The extension of a Parquet shard's JSON Lines mirror (`--jsonl`).
pub const MIRROR_EXT: &str = "rows.jsonl";

/// Streams rows of one config into shards.
pub struct ShardWriter {
    target: Target,
    config: String,
    split: String,
    props: WriterProperties,
    rows_per_file: Option<u64>,
    canary: String,
    jsonl: bool,
    current: Option<OpenFile>,
    pending: Vec<Row>,
    /// The `input` column of the pending rows, built as they arrive (their own copies freed).
    pending_input: LargeStringBuilder,
    pending_bytes: usize,
    parts: Vec<ClosedFile>,
    rows: u64,
    /// Threads that encode a row group's columns.
    threads: usize,
}

struct OpenFile {
    parquet: SerializedFileWriter<Sink>,
    /// Makes each row group's column writers, configured as [`ArrowWriter`] configures them.
    columns: ArrowRowGroupWriterFactory,
    jsonl: Option<(Sink, PathBuf)>,
    rows: u64,
    bytes: u64,
}

/// A closed shard: its rows, and the size and hash of it and of its mirror.
struct ClosedFile {
    rows: u64,
    parquet: (u64, String),
    jsonl: Option<(u64, String)>,
}

/// Writer properties that make file bytes reproducible and suit long text. `version` is the
/// `gen` version named in each file's `created_by` (this build's when generating; the
/// manifest's when `verify` remakes the bytes).
pub fn writer_properties(
    compression: &str,
    canary: &str,
    version: &str,
) -> Result<WriterProperties> {
    let compression = match compression {
        "zstd" => Compression::ZSTD(ZstdLevel::try_new(3)?),
        "snappy" => Compression::SNAPPY,
        _ => Compression::UNCOMPRESSED,
    };
    let input = ColumnPath::from("input");
    Ok(WriterProperties::builder()
        .set_compression(compression)
        .set_created_by(format!("needlework {version}"))
        .set_max_row_group_row_count(None)
        .set_column_dictionary_enabled(input.clone(), false)
        .set_column_statistics_enabled(input, EnabledStatistics::None)
        .set_key_value_metadata(Some(vec![
            KeyValue::new("needlework.canary".into(), canary.to_string()),
            KeyValue::new(
                "needlework.notice".into(),
                crate::dataset::manifest::CANARY_NOTICE.to_string(),
            ),
        ]))
        .build())
}

/// How one config's shards are cut and encoded: everything in a recipe that shapes file bytes
/// but not rows.
pub struct Layout<'a> {
    /// `zstd`, `snappy` or `none`.
    pub compression: &'a str,
    /// Rows per file, when fixed.
    pub rows_per_file: Option<u64>,
    /// The canary GUID (the `canary` column and the key-value metadata).
    pub canary: &'a str,
    /// Also JSON Lines mirrors.
    pub jsonl: bool,
    /// The `gen` version named in `created_by`.
    pub version: &'a str,
}

impl ShardWriter {
    /// A writer for one config and split into `target`; shards are named `part-NNNNN` until
    /// [`ShardWriter::finish`] knows how many there are.
    pub fn new(target: &Target, config: &str, split: &str, layout: &Layout) -> Result<Self> {
        if let Target::Dir(root) = target {
            fs::create_dir_all(root.join(config))
                .with_context(|| format!("cannot create {}", root.join(config).display()))?;
        }
        Ok(ShardWriter {
            target: target.clone(),
            config: config.to_string(),
            split: split.to_string(),
            props: writer_properties(layout.compression, layout.canary, layout.version)?,
            rows_per_file: layout.rows_per_file,
            canary: layout.canary.to_string(),
            jsonl: layout.jsonl,
            current: None,
            pending: Vec::new(),
            pending_input: LargeStringBuilder::new(),
            pending_bytes: 0,
            parts: Vec::new(),
            rows: 0,
            threads: 1,
        })
    }

    /// Encode each row group's columns on up to `threads` threads (the run's workers, idle
    /// when the last row group is written); the bytes are the same for any number.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    fn part_path(&self, k: usize, ext: &str) -> PathBuf {
        let rel = Path::new(&self.config).join(format!("part-{k:05}.{ext}"));
        match &self.target {
            Target::Dir(root) => root.join(rel),
            Target::Hash => rel,
        }
    }

    /// A sink for part `k`: a new file, or none when only hashing.
    fn sink(&self, k: usize, ext: &str) -> Result<Sink> {
        Ok(Sink::new(match self.target {
            Target::Dir(_) => {
                let path = self.part_path(k, ext);
                Some(
                    File::create(&path)
                        .with_context(|| format!("cannot create {}", path.display()))?,
                )
            }
            Target::Hash => None,
        }))
    }

    /// The Parquet file being written (or about to be opened), for error messages.
    fn writing(&self) -> PathBuf {
        self.part_path(self.parts.len(), "parquet")
    }

    /// Append one row (rows must arrive in dataset order). A failure names the file.
    pub fn push(&mut self, row: Row) -> Result<()> {
        let path = self.writing();
        self.push_row(row)
            .with_context(|| format!("cannot write {}", path.display()))
    }

    fn push_row(&mut self, mut row: Row) -> Result<()> {
        if self.current.is_none() {
            let k = self.parts.len();
            // ArrowWriter sets up the file (the Arrow schema in its metadata) and the column
            // writers; its row groups are written here, so that their columns encode in
            // parallel.
            let (parquet, columns) =
                ArrowWriter::try_new(self.sink(k, "parquet")?, schema(), Some(self.props.clone()))?
                    .into_serialized_writer()?;
            let jsonl = if self.jsonl {
                Some((self.sink(k, "jsonl")?, self.part_path(k, "jsonl")))
            } else {
                None
            };
            self.current = Some(OpenFile {
                parquet,
                columns,
                jsonl,
                rows: 0,
                bytes: 0,
            });
        }
        let size = row.instance.input.len() + row.instance.params.len() + 256;
        self.rows += 1;
        let Some(cur) = self.current.as_mut() else {
            unreachable!("a file was just opened")
        };
        if let Some((j, path)) = cur.jsonl.as_mut() {
            serde_json::to_writer(
                &mut *j,
                &crate::dataset::manifest::row_json(&row, &self.canary),
            )
            .map_err(std::io::Error::from)
            .and_then(|()| j.write_all(b"\n"))
            .with_context(|| format!("cannot write {}", path.display()))?;
        }
        cur.rows += 1;
        cur.bytes += size as u64;
        self.pending_input.append_value(&row.instance.input);
        row.instance.input = String::new();
        self.pending.push(row);
        self.pending_bytes += size;
        let file_full = match self.rows_per_file {
            Some(n) => cur.rows >= n,
            None => cur.bytes >= FILE_BYTES,
        };
        if self.pending_bytes >= ROW_GROUP_BYTES || file_full {
            self.flush_group()?;
        }
        if file_full {
            self.close_file()?;
        }
        Ok(())
    }

    fn flush_group(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let input = Arc::new(self.pending_input.finish());
        let batch = to_batch_with_input(&self.pending, input, &self.canary)?;
        if let Some(cur) = self.current.as_mut() {
            write_row_group(&mut cur.parquet, &cur.columns, &batch, self.threads)?;
        }
        self.pending.clear();
        self.pending_bytes = 0;
        Ok(())
    }

    fn close_file(&mut self) -> Result<()> {
        self.flush_group()?;
        if let Some(cur) = self.current.take() {
            let parquet = cur.parquet.into_inner()?.finish()?;
            let jsonl = match cur.jsonl {
                Some((j, path)) => Some(
                    j.finish()
                        .with_context(|| format!("cannot write {}", path.display()))?,
                ),
                None => None,
            };
            self.parts.push(ClosedFile {
                rows: cur.rows,
                parquet,
                jsonl,
            });
        }
        Ok(())
    }

    /// Close everything, give the shards their final names, and list them with their sizes
    /// and hashes. Returns the Parquet files, the JSON Lines mirrors, and the number of rows.
    pub fn finish(mut self) -> Result<Written> {
        let path = self.writing();
        self.close_file()
            .with_context(|| format!("cannot write {}", path.display()))?;
        let n = self.parts.len();
        let mut written = Written {
            files: Vec::with_capacity(n),
            mirrors: Vec::new(),
            rows: self.rows,
        };
        for (k, part) in self.parts.iter().enumerate() {
            let name = format!("{}-{k:05}-of-{n:05}", self.split);
            // A mirror is `<split>-NNNNN-of-NNNNN.rows.jsonl`: RULER's evaluation merges and
            // deletes every `<name>-<digits>.jsonl` in a folder it scores, which a plain
            // `.jsonl` shard name would be.
            let entry = |ext: &str, (bytes, xxh3): &(u64, String)| -> Result<FileEntry> {
                let final_ext = if ext == "jsonl" { MIRROR_EXT } else { ext };
                let rel = format!("{}/{name}.{final_ext}", self.config);
                if let Target::Dir(root) = &self.target {
                    let dest = root.join(&rel);
                    fs::rename(self.part_path(k, ext), &dest)
                        .with_context(|| format!("cannot move {} into place", dest.display()))?;
                }
                Ok(FileEntry {
                    path: rel,
                    config: self.config.clone(),
                    split: self.split.clone(),
                    rows: part.rows,
                    bytes: *bytes,
                    xxh3: xxh3.clone(),
                })
            };
            written.files.push(entry("parquet", &part.parquet)?);
            if let Some(j) = &part.jsonl {
                written.mirrors.push(entry("jsonl", j)?);
            }
        }
        Ok(written)
    }
}

/// What one config's writer produced, for the manifest.
pub struct Written {
    /// The Parquet shards.
    pub files: Vec<FileEntry>,
    /// Their JSON Lines mirrors (`--jsonl`), hashed like the shards.
    pub mirrors: Vec<FileEntry>,
    /// Rows written.
    pub rows: u64,
}

/// Size and xxh3-128 of a file, streamed.
pub fn hash_file(path: &Path) -> Result<(u64, String)> {
    let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut h = Xxh3::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        total += n as u64;
    }
    Ok((total, format!("{:032x}", h.digest128())))
}
