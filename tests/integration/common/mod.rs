//! Helpers shared by the integration tests: run the real `gen` binary, read what it wrote.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use arrow_array::RecordBatch;

/// The reader `gen` uses, compiled into the tests too: a row the tests read is a row as `gen`
/// reads it, and the reader is exercised on every dataset the tests write.
// Only part of the reader is used by the tests.
#[allow(dead_code)]
#[path = "../../../src/dataset/parquet_read.rs"]
pub mod parquet_read;

use parquet_read::{Columns, ParquetFile};

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

/// The bytes of every Parquet file of a dataset, in name order: equal for equal datasets.
pub fn dataset_bytes(dir: &Path) -> Vec<Vec<u8>> {
    parquet_files(dir)
        .iter()
        .map(|f| std::fs::read(f).unwrap())
        .collect()
}

/// A test's value or a panic that shows the whole error chain (which file, which column).
fn must<T>(result: anyhow::Result<T>) -> T {
    result.unwrap_or_else(|e| panic!("{e:#}"))
}

/// Every column of every batch of `file`, for tests that rewrite a file or check its schema.
pub fn read_batches(file: &Path) -> Vec<RecordBatch> {
    let parquet = must(ParquetFile::open(file));
    let names: Vec<String> = parquet
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    must(parquet.project(&names)).map(must).collect()
}

/// A row, as plain Rust values.
#[derive(Debug, Clone)]
pub struct TestRow {
    pub id: String,
    pub input: String,
    pub answer_prefix: String,
    pub target: String,
    pub answers: Vec<String>,
    pub metric: String,
    pub target_length: i64,
    pub length: i64,
    pub prompt_tokens: i64,
    pub max_new_tokens: i64,
    pub depth_percent: Option<f64>,
    pub sample_index: i64,
    pub needle_offsets: Vec<i64>,
    pub needle_depths: Vec<f64>,
    pub params: serde_json::Value,
    pub variant: String,
}

/// The columns [`TestRow`] holds: the rest (hashes, canary, tokenizer) is never decoded.
const TEST_ROW_COLUMNS: [&str; 16] = [
    "id",
    "input",
    "answer_prefix",
    "prompt_tokens",
    "max_new_tokens",
    "target",
    "answers",
    "metric",
    "target_length",
    "length",
    "depth_percent",
    "sample_index",
    "needle_offsets",
    "needle_depths",
    "params",
    "variant",
];

fn test_rows(file: &Path, batch: &RecordBatch) -> anyhow::Result<Vec<TestRow>> {
    let columns = Columns::in_file(batch, file);
    let s = |n: &str| columns.strings(n);
    let (id, input, target, metric) = (s("id")?, s("input")?, s("target")?, s("metric")?);
    let (params, variant) = (s("params")?, s("variant")?);
    let answers = columns.string_lists("answers")?;
    let (target_length, length) = (columns.i64s("target_length")?, columns.i64s("length")?);
    let (answer_prefix, prompt_tokens) = (s("answer_prefix")?, columns.i64s("prompt_tokens")?);
    let max_new_tokens = columns.i32s("max_new_tokens")?;
    let sample_index = columns.i64s("sample_index")?;
    let depth_percent = columns.f64s("depth_percent")?;
    let needle_offsets = columns.i64_lists("needle_offsets")?;
    let needle_depths = columns.f64_lists("needle_depths")?;
    (0..columns.num_rows())
        .map(|i| {
            Ok(TestRow {
                id: id.value(i).to_string(),
                input: input.value(i).to_string(),
                answer_prefix: answer_prefix.value(i).to_string(),
                target: target.value(i).to_string(),
                answers: answers.value(i),
                metric: metric.value(i).to_string(),
                target_length: target_length.value(i),
                length: length.value(i),
                prompt_tokens: prompt_tokens.value(i),
                max_new_tokens: max_new_tokens.value(i) as i64,
                depth_percent: depth_percent.get(i),
                sample_index: sample_index.value(i),
                needle_offsets: needle_offsets.value(i),
                needle_depths: needle_depths.value(i),
                params: serde_json::from_str(params.value(i))?,
                variant: variant.value(i).to_string(),
            })
        })
        .collect()
}

/// Every row of every Parquet file under `dir`, in file-name order, read with the reader
/// `gen` itself uses.
pub fn rows(dir: &Path) -> Vec<TestRow> {
    let mut out = Vec::new();
    for file in parquet_files(dir) {
        for batch in must(must(ParquetFile::open(&file)).project(&TEST_ROW_COLUMNS)) {
            out.extend(must(test_rows(&file, &must(batch))));
        }
    }
    out
}

/// A fresh temporary directory, removed when dropped.
pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

/// `dir/name`, as the string `--out` takes.
pub fn out_arg(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

/// Run a generating command into `out`, quietly (`--out OUT -q` is appended), and require
/// success.
pub fn generate(out: &str, args: &[&str]) {
    let mut all = args.to_vec();
    all.extend(["--out", out, "-q"]);
    gen_ok(&all);
}

/// `args` (with `--out OUT` appended) is refused as bad input: exit 2, one line on stderr that
/// contains `needle`, and nothing written at `out`.
pub fn assert_refused(args: &[&str], out: &str, needle: &str) {
    let mut all = args.to_vec();
    all.extend(["--out", out]);
    let res = gen(&all);
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert_eq!(res.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
    assert!(!Path::new(out).exists(), "{args:?} left output behind");
}

/// The JSON Lines twins (`--jsonl`) of every Parquet file under `dir`, concatenated in
/// file-name order: what the golden files pin.
pub fn jsonl_text(dir: &Path) -> String {
    parquet_files(dir)
        .iter()
        .map(|f| {
            std::fs::read_to_string(f.with_extension("rows.jsonl")).expect("a .rows.jsonl twin")
        })
        .collect()
}

/// Compare `got` with `tests/golden/<name>.jsonl`, so any drift in output shows in review.
/// With `UPDATE_GOLDEN` set, rewrite the golden file first (then review its diff).
pub fn assert_golden(name: &str, got: &str) {
    let golden = root().join(format!("tests/golden/{name}.jsonl"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden.parent().expect("tests/golden")).unwrap();
        std::fs::write(&golden, got).unwrap();
    }
    let want =
        std::fs::read_to_string(&golden).expect("golden file exists (UPDATE_GOLDEN=1 makes it)");
    assert_eq!(got, want, "{name} drifted from {}", golden.display());
}

/// The needle sentence of a NIAH (key, value).
pub fn niah_needle(key: &str, value: &str) -> String {
    format!("One of the access codes assigned to {key} is {value}.")
}

/// A hex string's bytes (seed files hold the secret as hex).
pub fn parse_hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A big-endian number's decimal digits.
pub fn decimal(bytes: &[u8]) -> String {
    let mut n = bytes.to_vec();
    let mut digits = Vec::new();
    while n.iter().any(|&b| b != 0) {
        let mut rem = 0u32;
        for b in n.iter_mut() {
            let cur = rem * 256 + u32::from(*b);
            *b = (cur / 10) as u8;
            rem = cur % 10;
        }
        digits.push(b'0' + rem as u8);
    }
    digits.reverse();
    String::from_utf8(digits).unwrap()
}

/// Every form of the seed that must not occur in a dataset: its bytes, its hex (both cases),
/// its decimal (both byte orders) and the decimal of each of its 64-bit words (both orders).
pub fn seed_forms(hex: &str) -> Vec<Vec<u8>> {
    let raw = parse_hex(hex);
    let mut reversed = raw.clone();
    reversed.reverse();
    let mut forms = vec![
        raw.clone(),
        hex.as_bytes().to_vec(),
        hex.to_ascii_uppercase().into_bytes(),
        decimal(&raw).into_bytes(),
        decimal(&reversed).into_bytes(),
    ];
    for chunk in raw.chunks(8) {
        let word: [u8; 8] = chunk.try_into().unwrap();
        forms.push(u64::from_le_bytes(word).to_string().into_bytes());
        forms.push(u64::from_be_bytes(word).to_string().into_bytes());
    }
    forms
}

/// Whether `needle` occurs anywhere in `hay`.
pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// One tokenizer of every kind gen reads: the three built-in OpenAI encodings, the two
/// model-free counts, and a byte-level and a metaspace tokenizer.json.
pub fn tokenizer_kinds() -> Vec<String> {
    let mut all: Vec<String> = ["o200k", "cl100k", "gpt2", "chars", "words"]
        .map(String::from)
        .to_vec();
    all.push(fixture("tokenizer-bytelevel.json"));
    all.push(fixture("tokenizer-metaspace.json"));
    all
}

/// SplitMix64: a test's own deterministic stream, independent of any crate.
pub struct Draw(pub u64);

impl Draw {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Every file under `dir` with its bytes, by relative path.
pub fn all_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}
