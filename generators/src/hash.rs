//! Provenance and content hashes (xxh3-128, hex).
//!
//! Fields are length-prefixed so that no two different rows can serialize to the same bytes.

use xxhash_rust::xxh3::Xxh3;

use crate::Instance;

/// Feeds length-prefixed fields to xxh3-128.
pub struct FieldHasher(Xxh3);

impl Default for FieldHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl FieldHasher {
    /// A fresh hasher.
    pub fn new() -> Self {
        FieldHasher(Xxh3::new())
    }
    /// Add a byte string.
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.update(&(b.len() as u64).to_le_bytes());
        self.0.update(b);
        self
    }
    /// Add a string.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }
    /// Add an integer.
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.bytes(&v.to_le_bytes())
    }
    /// Add an optional float (bit pattern; `None` differs from every value).
    pub fn opt_f64(&mut self, v: Option<f64>) -> &mut Self {
        match v {
            Some(x) => self.bytes(&x.to_bits().to_le_bytes()),
            None => self.bytes(b""),
        }
    }
    /// Add a list of strings.
    pub fn strs(&mut self, items: &[String]) -> &mut Self {
        self.u64(items.len() as u64);
        for s in items {
            self.str(s);
        }
        self
    }
    /// The 128-bit digest as 32 hex digits.
    pub fn hex(&self) -> String {
        format!("{:032x}", self.0.digest128())
    }
}

/// Everything that determines a row: its hash is the row's identity.
#[derive(Debug, Clone, Copy)]
pub struct Provenance<'a> {
    /// Task name.
    pub task: &'a str,
    /// Task variant.
    pub variant: &'a str,
    /// Canonical JSON of the task's content parameters.
    pub params: &'a str,
    /// Master seed (0 for a private split, whose commitment stands in `extra`).
    pub seed: u64,
    /// The instance's coordinates.
    pub cell: &'a crate::Cell,
    /// Content hash of the template source.
    pub template_hash: &'a str,
    /// Haystack identity.
    pub haystack_id: &'a str,
    /// Tokenizer identity.
    pub tokenizer_id: &'a str,
    /// Tokens kept free for the answer.
    pub reserve: u64,
    /// How the model reads the prompt ([`crate::chat::Reader::id`]): empty without a chat
    /// template.
    pub reader_id: &'a str,
    /// Further facts that determine the row, as (name, value): a private seed's commitment, the
    /// datasets it was kept disjoint from, a control row's kind. Empty for a plain row, whose
    /// hash is then what it always was.
    pub extra: &'a [(&'a str, String)],
}

impl Provenance<'_> {
    /// xxh3-128 over every field (and the format version), hex.
    pub fn hash(&self) -> String {
        let mut h = FieldHasher::new();
        h.str("needlework-provenance")
            .u64(crate::FORMAT_VERSION as u64)
            .str(self.task)
            .str(self.variant)
            .str(self.params)
            .u64(self.seed)
            .u64(self.cell.length)
            .opt_f64(self.cell.depth)
            .u64(self.cell.sample)
            .str(self.template_hash)
            .str(self.haystack_id)
            .str(self.tokenizer_id)
            .u64(self.reserve)
            .str(self.reader_id);
        for (name, value) in self.extra {
            h.str(name).str(value);
        }
        h.hex()
    }
}

/// A hash of the row's content: what `gen verify` compares.
pub fn content_hash(i: &Instance) -> String {
    let mut h = FieldHasher::new();
    h.str("needlework-content")
        .str(&i.task)
        .str(&i.variant)
        .str(&i.input)
        .str(&i.question)
        .str(&i.answer_prefix)
        .str(&i.target)
        .strs(&i.answers)
        .strs(&i.labels)
        .str(i.metric.as_str())
        .u64(i.max_new_tokens as u64)
        .u64(i.target_length)
        .u64(i.length)
        .u64(i.prompt_tokens)
        .str(&i.tokenizer)
        .opt_f64(i.depth_percent)
        .u64(i.needle_offsets.len() as u64);
    for &o in &i.needle_offsets {
        h.u64(o);
    }
    h.u64(i.needle_depths.len() as u64);
    for &d in &i.needle_depths {
        h.opt_f64(Some(d));
    }
    h.u64(i.sample_index).str(&i.params);
    h.hex()
}

/// 128 bits written as a version-4 GUID (version and variant bits set), the form canaries and
/// uuid keys take.
pub fn uuid_v4(hi: u64, lo: u64) -> String {
    let hi = (hi & 0xffff_ffff_ffff_0fff) | 0x0000_0000_0000_4000;
    let lo = (lo & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xffff,
        hi & 0xffff,
        lo >> 48,
        lo & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_prefixing_separates_fields() {
        let a = FieldHasher::new().str("ab").str("c").hex();
        let b = FieldHasher::new().str("a").str("bc").hex();
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert_ne!(
            FieldHasher::new().opt_f64(None).hex(),
            FieldHasher::new().opt_f64(Some(0.0)).hex()
        );
    }

    #[test]
    fn uuids_carry_version_and_variant() {
        assert_eq!(uuid_v4(0, 0), "00000000-0000-4000-8000-000000000000");
        assert_eq!(
            uuid_v4(u64::MAX, u64::MAX),
            "ffffffff-ffff-4fff-bfff-ffffffffffff"
        );
    }

    #[test]
    fn golden_provenance() {
        let cell = crate::Cell {
            length: 32768,
            depth: Some(50.0),
            sample: 0,
            slot: 0,
        };
        let h = Provenance {
            task: "niah",
            variant: "single",
            params: "{}",
            seed: 7,
            cell: &cell,
            template_hash: "t",
            haystack_id: "h",
            tokenizer_id: "o200k_base",
            reserve: 128,
            reader_id: "",
            extra: &[],
        }
        .hash();
        assert_eq!(h, GOLDEN);
    }

    const GOLDEN: &str = "6862bd3081c0deba77596b80953804ca";
}
