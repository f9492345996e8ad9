//! Token counting under the user's tokenizer.
//!
//! Lengths are promises about the user's model, so counts must equal the reference
//! implementations exactly: OpenAI's tiktoken for the built-in encodings (no special tokens),
//! Hugging Face `tokenizers` for `tokenizer.json` files (`add_special_tokens=False`, with the
//! file's truncation and padding switched off so the full text is measured).

use std::sync::Arc;

use thiserror::Error;

mod openai;
mod ranks;

/// Why a tokenizer could not be set up or used.
#[derive(Debug, Error)]
pub enum TokenizerError {
    /// The bytes are not a valid Hugging Face tokenizer.
    #[error("'{label}' is not a valid Hugging Face tokenizer.json: {message}")]
    Malformed {
        /// What the bytes were called (usually the file's path).
        label: String,
        /// What the parser said.
        message: String,
    },
    /// A valid tokenizer that cannot give exact, repeatable counts.
    #[error("'{label}' cannot measure lengths: {reason}")]
    Unusable {
        /// What the bytes were called (usually the file's path).
        label: String,
        /// Why.
        reason: String,
    },
    /// Encoding failed (only possible with a tokenizer.json).
    #[error("tokenizer failed to encode text: {0}")]
    Encode(String),
}

/// Plain text every usable tokenizer must count as at least one token.
const PROBE: &str = "The quick brown fox jumps over the lazy dog, 12 times.";

/// The tokenizers we can count with.
#[derive(Clone)]
pub enum Tokenizer {
    /// OpenAI o200k_base (GPT-4o and later).
    O200k,
    /// OpenAI cl100k_base (GPT-4, GPT-3.5).
    Cl100k,
    /// OpenAI r50k_base, the GPT-2 encoding BABILong measures in.
    Gpt2,
    /// Whitespace-separated words.
    Words,
    /// Unicode scalar values.
    Chars,
    /// A Hugging Face tokenizer.json.
    HuggingFace(Arc<HfTokenizer>),
}

/// A loaded tokenizer.json with its identity.
pub struct HfTokenizer {
    inner: tokenizers::Tokenizer,
    /// xxh3-128 of the file bytes, hex: what provenance records.
    pub file_hash: String,
}

impl HfTokenizer {
    /// `tokenizers`' encoding of `text` without special tokens (`fast`: without offsets), a
    /// panic inside it worded as an encoding error.
    fn encode(&self, text: &str, fast: bool) -> Result<tokenizers::Encoding, TokenizerError> {
        let encoded = crate::guard::quietly(|| {
            if fast {
                self.inner.encode_fast(text, false)
            } else {
                self.inner.encode(text, false)
            }
        });
        match encoded {
            Ok(Ok(enc)) => Ok(enc),
            Ok(Err(e)) => Err(TokenizerError::Encode(one_line(&e.to_string()))),
            Err(panic) => Err(TokenizerError::Encode(panic)),
        }
    }
}

/// The names accepted by `--tokenizer` besides a path, with a line on each.
pub const BUILTIN_TOKENIZERS: &[(&str, &str)] = &[
    (
        "o200k",
        "OpenAI o200k_base (GPT-4o, o1, o3, GPT-4.1); the default",
    ),
    ("cl100k", "OpenAI cl100k_base (GPT-4, GPT-3.5-turbo)"),
    ("gpt2", "OpenAI r50k_base (GPT-2, GPT-3); BABILong's unit"),
    ("words", "whitespace-separated words, no model needed"),
    ("chars", "Unicode scalar values, no model needed"),
];

impl Tokenizer {
    /// A built-in tokenizer by name (`o200k`, `cl100k_base`, `gpt2`, `words`, ...); `None` for any
    /// other name, which the caller may then treat as a tokenizer.json to read.
    pub fn builtin(name: &str) -> Option<Self> {
        match name {
            "o200k" | "o200k_base" => Some(Tokenizer::O200k),
            "cl100k" | "cl100k_base" => Some(Tokenizer::Cl100k),
            "gpt2" | "r50k" | "r50k_base" => Some(Tokenizer::Gpt2),
            "words" => Some(Tokenizer::Words),
            "chars" => Some(Tokenizer::Chars),
            _ => None,
        }
    }

    /// Build from the bytes of a Hugging Face tokenizer.json, offline; `label` (usually the
    /// file's path) names it in messages. The caller reads the file: the core does no I/O.
    pub fn from_json_bytes(bytes: &[u8], label: &str) -> Result<Self, TokenizerError> {
        let malformed = |e: &dyn std::fmt::Display| TokenizerError::Malformed {
            label: label.to_string(),
            message: one_line(&e.to_string()),
        };
        let unusable = |reason: &str| TokenizerError::Unusable {
            label: label.to_string(),
            reason: reason.to_string(),
        };
        // BPE dropout skips merges at random: counts would change from run to run.
        let json: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| malformed(&e))?;
        if json["model"]["dropout"].as_f64().is_some_and(|p| p > 0.0) {
            return Err(unusable(
                "its BPE model has dropout (random merges), so counts differ from run to run; set model.dropout to null",
            ));
        }
        // `tokenizers` panics on some malformed components (a `Precompiled` normalizer with a
        // charsmap that is not one, for instance): that is a malformed file, not a crash.
        let mut inner = crate::guard::quietly(|| tokenizers::Tokenizer::from_bytes(bytes))
            .map_err(|e| malformed(&e))?
            .map_err(|e| malformed(&e))?;
        inner.with_truncation(None).map_err(|e| malformed(&e))?;
        inner.with_padding(None);
        let file_hash = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes));
        let tok = Tokenizer::HuggingFace(Arc::new(HfTokenizer { inner, file_hash }));
        // A tokenizer that counts nothing (an empty vocabulary, no unknown token) would make
        // every length target unreachable; one whose components panic while encoding is
        // malformed.
        let probe = tok.count(PROBE).map_err(|e| match e {
            TokenizerError::Encode(m) => malformed(&m),
            other => other,
        })?;
        if probe == 0 {
            return Err(unusable(
                "it counts no tokens for plain English text (empty vocabulary and no unknown token?)",
            ));
        }
        Ok(tok)
    }

    /// The identity recorded in every row: a built-in name, or `hf:<file hash>`.
    pub fn id(&self) -> String {
        match self {
            Tokenizer::O200k => "o200k_base".into(),
            Tokenizer::Cl100k => "cl100k_base".into(),
            Tokenizer::Gpt2 => "r50k_base".into(),
            Tokenizer::Words => "words".into(),
            Tokenizer::Chars => "chars".into(),
            Tokenizer::HuggingFace(hf) => format!("hf:{}", hf.file_hash),
        }
    }

    /// The number of tokens in `text`.
    pub fn count(&self, text: &str) -> Result<usize, TokenizerError> {
        Ok(match self {
            Tokenizer::O200k | Tokenizer::Cl100k => self.openai().count(text),
            Tokenizer::Gpt2 => tiktoken_rs::r50k_base_singleton().count_ordinary(text),
            Tokenizer::Words => text.split_whitespace().count(),
            Tokenizer::Chars => text.chars().count(),
            Tokenizer::HuggingFace(hf) => hf.encode(text, true)?.len(),
        })
    }

    /// The special-token strings of a built-in encoding (tiktoken's `special_tokens_set`);
    /// `None` for a tokenizer.json, which recognises its own added tokens in any text.
    pub fn builtin_specials(&self) -> Option<&'static [&'static str]> {
        match self {
            Tokenizer::O200k => Some(&["<|endoftext|>", "<|endofprompt|>"]),
            Tokenizer::Cl100k => Some(&[
                "<|endoftext|>",
                "<|fim_prefix|>",
                "<|fim_middle|>",
                "<|fim_suffix|>",
                "<|endofprompt|>",
            ]),
            Tokenizer::Gpt2 => Some(&["<|endoftext|>"]),
            Tokenizer::Words | Tokenizer::Chars => Some(&[]),
            Tokenizer::HuggingFace(_) => None,
        }
    }

    /// The number of tokens in `text` with special tokens recognised, as a chat prompt is
    /// encoded: tiktoken's `encode(text, allowed_special="all")`, or for a tokenizer.json its
    /// `encode(text, add_special_tokens=False)` (which splits out added tokens anyway).
    pub fn count_special(&self, text: &str) -> Result<usize, TokenizerError> {
        let specials = match self.builtin_specials() {
            Some(s) if !s.is_empty() => s,
            _ => return self.count(text),
        };
        let mut total = 0usize;
        let mut rest = text;
        loop {
            let next = specials
                .iter()
                .filter_map(|sp| rest.find(sp).map(|i| (i, sp.len())))
                .min();
            match next {
                Some((i, len)) => {
                    total += self.count(&rest[..i])? + 1;
                    rest = &rest[i + len..];
                }
                None => return Ok(total + self.count(rest)?),
            }
        }
    }

    /// Count `text` once and also report, for each byte position in `marks` (ascending), the
    /// index of the first token that covers or follows it: the token offset of whatever starts
    /// there. One tokenization gives both the length and every needle's offset.
    pub fn count_with_marks(
        &self,
        text: &str,
        marks: &[usize],
    ) -> Result<(usize, Vec<usize>), TokenizerError> {
        debug_assert!(marks.windows(2).all(|w| w[0] <= w[1]));
        let mut offsets = Vec::with_capacity(marks.len());
        let mut next = 0usize;
        // Walk spans (given by their end byte and token count) in text order; a mark before a
        // span's end maps to the tokens before that span.
        let mut tokens_before = 0usize;
        let mut visit = |end: usize, n: usize| {
            while next < marks.len() && marks[next] < end {
                offsets.push(tokens_before);
                next += 1;
            }
            tokens_before += n;
        };
        match self {
            Tokenizer::O200k | Tokenizer::Cl100k => {
                self.openai().for_each_span(text, marks, &mut visit)
            }
            Tokenizer::Gpt2 => {
                let bpe = tiktoken_rs::r50k_base_singleton();
                let mut pos = 0usize;
                for token in bpe.encode_ordinary(text) {
                    let len = bpe
                        .decode_bytes(&[token])
                        .map_err(|e| TokenizerError::Encode(e.to_string()))?
                        .len();
                    visit(pos + len, 1);
                    pos += len;
                }
            }
            Tokenizer::Words => {
                let mut in_word = false;
                for (i, c) in text.char_indices() {
                    let space = c.is_whitespace();
                    if !space && !in_word {
                        // A word starting here; the span runs to the next word start, so a mark
                        // on the whitespace before a word maps to that word.
                        visit(i + c.len_utf8(), 1);
                    } else {
                        visit(i + c.len_utf8(), 0);
                    }
                    in_word = !space;
                }
            }
            Tokenizer::Chars => {
                for (i, c) in text.char_indices() {
                    visit(i + c.len_utf8(), 1);
                }
            }
            Tokenizer::HuggingFace(hf) => {
                let enc = hf.encode(text, false)?;
                for &(start, end) in enc.get_offsets() {
                    visit(end.max(start + 1), 1);
                }
            }
        }
        let total = tokens_before;
        while offsets.len() < marks.len() {
            offsets.push(total);
        }
        Ok((total, offsets))
    }
}

/// A stretch of an assembled text whose token count is already known: the byte range and
/// the count of that range tokenized alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Known {
    /// Start byte in the assembled text.
    pub start: usize,
    /// End byte.
    pub end: usize,
    /// Tokens of the range tokenized alone.
    pub tokens: usize,
}

impl Tokenizer {
    /// [`Tokenizer::count_with_marks`] of `text`, reusing the counts of `known` ranges
    /// (ascending, disjoint) instead of tokenizing them again: the fitter knows every haystack
    /// unit's count, so a prompt is counted at the joins alone.
    ///
    /// For the OpenAI encodings the inside of a known range, between its first and last safe cut
    /// (see [`Tokenizer::counts_add_at`]: pieces never span one, and counts add there), is
    /// taken from its count; everything else (the edges of each range, the text
    /// between ranges) is tokenized. Marks inside that inside would need its pieces, so a range
    /// holding one is tokenized whole. Other tokenizers count the whole text: they give no
    /// such guarantee. The tests hold the result equal to a full count.
    pub fn count_assembled(
        &self,
        text: &str,
        known: &[Known],
        marks: &[usize],
    ) -> Result<(usize, Vec<usize>), TokenizerError> {
        if !matches!(self, Tokenizer::O200k | Tokenizer::Cl100k) {
            return self.count_with_marks(text, marks);
        }
        let enc = self.openai();
        let mut walk = Walk {
            enc,
            text,
            marks,
            next_mark: 0,
            offsets: Vec::with_capacity(marks.len()),
            total: 0,
        };
        let mut done = 0usize;
        let cut_at = |at: usize| at == 0 || at == text.len() || openai::is_cut(text, at);
        for k in known {
            let range = &text[k.start..k.end];
            // The stretch whose count is reused: the whole range when both its ends are safe
            // cuts, else its inside between its first and last safe cut (the edges are then
            // tokenized with what surrounds them).
            let whole = cut_at(k.start) && cut_at(k.end);
            let (first, last) = if whole {
                (0, range.len())
            } else {
                match (openai::first_cut(range), openai::last_cut(range)) {
                    (Some(first), Some(last)) => (first, last),
                    _ => continue,
                }
            };
            let (inner_start, inner_end) = (k.start + first, k.start + last);
            // Marks are ascending: the first one past the inside's start tells.
            let after = marks.partition_point(|&m| m <= inner_start);
            let marked = marks.get(after).is_some_and(|&m| m < inner_end);
            if inner_start >= inner_end || k.start < done || marked {
                continue;
            }
            walk.to(done, inner_start);
            let edges = if whole {
                0
            } else {
                enc.count(&range[..first]) + enc.count(&range[last..])
            };
            let inside = k.tokens.checked_sub(edges).ok_or_else(|| {
                TokenizerError::Encode("a known count is smaller than its edges".into())
            })?;
            // Marks at the inside's start map to its first token.
            while walk.next_mark < marks.len() && marks[walk.next_mark] < inner_end {
                walk.offsets.push(walk.total);
                walk.next_mark += 1;
            }
            walk.total += inside;
            done = inner_end;
        }
        walk.to(done, text.len());
        let total = walk.total;
        walk.offsets.resize(marks.len(), total);
        Ok((total, walk.offsets))
    }

    /// Whether the count of `text` is the count of `text[..at]` plus that of `text[at..]`,
    /// by a rule proven for the tokenizer: true at the ends, and for the OpenAI encodings at
    /// a space after a character that is not whitespace or after a line feed a character that
    /// is neither whitespace nor `/`. False where nothing is proven.
    pub fn counts_add_at(&self, text: &str, at: usize) -> bool {
        if at == 0 || at == text.len() {
            return true;
        }
        matches!(self, Tokenizer::O200k | Tokenizer::Cl100k)
            && text.is_char_boundary(at)
            && openai::is_cut(text, at)
    }

    /// Whether a space before an ASCII digit is a token of its own, apart from the digit and
    /// whatever follows it: `count(" " + text)` is then `1 + count(text)` for any `text` that
    /// starts with an ASCII digit. True for the OpenAI encodings: in both patterns a match
    /// that takes a space takes after it only letters (the letter runs' optional first
    /// character), punctuation (` ?[^\s\p{L}\p{N}]+`) or more whitespace, never a digit,
    /// and matching from the digit on reads nothing before it; a lone space is a token.
    pub fn space_splits_before_digit(&self) -> bool {
        matches!(self, Tokenizer::O200k | Tokenizer::Cl100k)
    }

    /// Tokens of `whole`, which holds at byte `at` a text of `inner_len` bytes whose count is
    /// `inner_tokens`: what the model reads around a counted prompt (an answer prefix after
    /// it, a chat template around it). With `special`, special-token strings are recognised as
    /// [`Tokenizer::count_special`] does. For the OpenAI encodings only the inner text's edges
    /// (up to its first and from its last safe cut) are tokenized again with what surrounds
    /// them, unless its inside holds a special-token string; otherwise the whole is counted.
    pub fn count_around(
        &self,
        whole: &str,
        at: usize,
        inner_len: usize,
        inner_tokens: usize,
        special: bool,
    ) -> Result<usize, TokenizerError> {
        let count = |t: &str| {
            if special {
                self.count_special(t)
            } else {
                self.count(t)
            }
        };
        let inner = whole.get(at..at + inner_len);
        let cuts = match (self, inner) {
            (Tokenizer::O200k | Tokenizer::Cl100k, Some(inner)) => {
                openai::first_cut(inner).zip(openai::last_cut(inner))
            }
            _ => None,
        };
        let (Some(inner), Some((first, last))) = (inner, cuts) else {
            return count(whole);
        };
        let middle = &inner[first..last];
        let specials = self.builtin_specials().unwrap_or(&[]);
        if first >= last || (special && specials.iter().any(|s| middle.contains(s))) {
            return count(whole);
        }
        let enc = self.openai();
        let edges = enc.count(&inner[..first]) + enc.count(&inner[last..]);
        let middle_tokens = inner_tokens.checked_sub(edges).ok_or_else(|| {
            TokenizerError::Encode("a known count is smaller than its edges".into())
        })?;
        Ok(count(&whole[..at + first])? + middle_tokens + count(&whole[at + last..])?)
    }
}

impl Tokenizer {
    fn openai(&self) -> &'static openai::Encoding {
        match self {
            Tokenizer::Cl100k => openai::cl100k(),
            _ => openai::o200k(),
        }
    }
}

/// [`Tokenizer::count_assembled`]'s walk over the stretches it tokenizes, in text order.
struct Walk<'a> {
    enc: &'static openai::Encoding,
    text: &'a str,
    marks: &'a [usize],
    next_mark: usize,
    /// Token offset of each mark passed so far.
    offsets: Vec<usize>,
    /// Tokens before the walk's position.
    total: usize,
}

impl Walk<'_> {
    /// Tokenize text[from..to] (both safe cuts or ends of the text), mapping its marks.
    fn to(&mut self, from: usize, to: usize) {
        let first = self.next_mark;
        while self.next_mark < self.marks.len() && self.marks[self.next_mark] < to {
            self.next_mark += 1;
        }
        let local: Vec<usize> = self.marks[first..self.next_mark]
            .iter()
            .map(|m| m - from)
            .collect();
        let (mut before, mut m) = (self.total, 0usize);
        let offsets = &mut self.offsets;
        self.enc
            .for_each_span(&self.text[from..to], &local, |end, n| {
                while m < local.len() && local[m] < end {
                    offsets.push(before);
                    m += 1;
                }
                before += n;
            });
        offsets.resize(offsets.len() + (local.len() - m), before);
        self.total = before;
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str =
        "The quiet harbor keeps its own counsel.  Ships   arrive\n\nat dawn; 1234567 gulls!";

    #[test]
    fn builtin_counts_match_reference_values() {
        // Reference values from OpenAI tiktoken (encode_ordinary), pinned.
        assert_eq!(Tokenizer::O200k.count("hello world").unwrap(), 2);
        assert_eq!(Tokenizer::Cl100k.count("hello world").unwrap(), 2);
        assert_eq!(Tokenizer::Gpt2.count("hello world").unwrap(), 2);
        assert_eq!(Tokenizer::Words.count(SAMPLE).unwrap(), 13);
        assert_eq!(Tokenizer::Chars.count("héllo").unwrap(), 5);
    }

    /// Byte length of every token of `text`, from the reference encoders.
    fn token_lengths(tok: &Tokenizer, text: &str) -> Vec<usize> {
        match tok {
            Tokenizer::O200k => {
                let t = bpe_openai::o200k_base();
                t.encode(text)
                    .iter()
                    .map(|&id| t.bpe.token_len(id))
                    .collect()
            }
            Tokenizer::Gpt2 => {
                let t = tiktoken_rs::r50k_base_singleton();
                t.encode_ordinary(text)
                    .iter()
                    .map(|&id| t.decode_bytes(&[id]).unwrap().len())
                    .collect()
            }
            Tokenizer::Chars => text.chars().map(char::len_utf8).collect(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn marks_map_to_the_token_covering_them() {
        for tok in [Tokenizer::O200k, Tokenizer::Gpt2, Tokenizer::Chars] {
            let marks: Vec<usize> = SAMPLE
                .char_indices()
                .filter(|(_, c)| *c == ' ' || *c == '\n')
                .map(|(i, _)| i + 1)
                .collect();
            let (total, offsets) = tok.count_with_marks(SAMPLE, &marks).unwrap();
            let lens = token_lengths(&tok, SAMPLE);
            assert_eq!(total, lens.len(), "{}", tok.id());
            assert_eq!(total, tok.count(SAMPLE).unwrap());
            for (m, off) in marks.iter().zip(&offsets) {
                let start: usize = lens[..*off].iter().sum();
                let end = start + lens.get(*off).copied().unwrap_or(0);
                assert!(
                    start <= *m && *m < end.max(start + 1),
                    "{} mark {m}: token {off} spans {start}..{end}",
                    tok.id()
                );
            }
        }
        let (n, offs) = Tokenizer::Words
            .count_with_marks("ab  cd ef", &[0, 3, 4, 9])
            .unwrap();
        assert_eq!((n, offs), (3, vec![0, 1, 1, 3]));
    }

    #[test]
    fn cached_counts_equal_direct_counts() {
        let text = "Repeated words, repeated words; ünïcödé and 日本語 text, plus 12345678 digits and a verylongwordthatexceedsthecachedpiecelimitforsure.";
        for (tok, direct) in [
            (Tokenizer::O200k, bpe_openai::o200k_base()),
            (Tokenizer::Cl100k, bpe_openai::cl100k_base()),
        ] {
            for _ in 0..3 {
                assert_eq!(tok.count(text).unwrap(), direct.count(text));
            }
        }
    }

    #[test]
    fn unknown_and_malformed_are_errors() {
        assert!(Tokenizer::builtin("llama9").is_none());
        assert!(Tokenizer::builtin("cl100k_base").is_some());
        let err = Tokenizer::from_json_bytes(b"{not json", "bad.json")
            .err()
            .unwrap();
        assert!(err.to_string().contains("bad.json"), "{err}");
        assert!(!err.to_string().contains('\n'));
    }

    /// A BPE with dropout counts differently from run to run; an empty vocabulary counts
    /// nothing and made the fitter loop until memory ran out. Both are refused on loading.
    #[test]
    fn nondeterministic_and_degenerate_files_are_refused() {
        let empty = br#"{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],"normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null,"model":{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":null,"end_of_word_suffix":null,"fuse_unk":false,"byte_fallback":false,"vocab":{},"merges":[]}}"#;
        let err = Tokenizer::from_json_bytes(empty, "empty.json")
            .err()
            .unwrap();
        assert!(err.to_string().contains("counts no tokens"), "{err}");
        let dropout = String::from_utf8_lossy(empty).replace(
            r#""dropout":null,"unk_token":null"#,
            r#""dropout":0.5,"unk_token":null"#,
        );
        let err = Tokenizer::from_json_bytes(dropout.as_bytes(), "d.json")
            .err()
            .unwrap();
        assert!(err.to_string().contains("dropout"), "{err}");
    }

    /// `tokenizers` panics on some malformed components instead of returning an error; each
    /// must come back as one "not a valid tokenizer.json" line, never a panic.
    #[test]
    fn components_that_panic_inside_tokenizers_are_malformed_files() {
        let base: serde_json::Value = serde_json::from_slice(include_bytes!(
            "../../../tests/fixtures/tokenizer-metaspace.json"
        ))
        .unwrap();
        let precompiled = |map: serde_json::Value| serde_json::json!({"type": "Precompiled", "precompiled_charsmap": map});
        let normalizers = [
            precompiled("".into()),
            precompiled("not base64 at all!".into()),
            precompiled("AAAA".into()),
            precompiled("/////w==".into()),
            precompiled("ZnJlZSB0ZXh0IHRoYXQgaXMgbm8gdHJpZQ==".into()),
            serde_json::json!({"type": "Sequence", "normalizers": [precompiled("".into())]}),
        ];
        let mut caught = 0;
        for normalizer in normalizers {
            let mut json = base.clone();
            json["normalizer"] = normalizer.clone();
            let bytes = serde_json::to_vec(&json).unwrap();
            match Tokenizer::from_json_bytes(&bytes, "bad.json") {
                Err(e) => {
                    let s = e.to_string();
                    assert!(
                        s.contains("bad.json") && !s.contains('\n'),
                        "{normalizer}: {s}"
                    );
                    caught += usize::from(s.contains("its parser failed"));
                }
                // A charsmap that happens to parse must then count as the library does.
                Ok(t) => assert!(t.count(PROBE).unwrap() > 0, "{normalizer}"),
            }
        }
        // The panicking path itself is exercised (the empty charsmap panics in 0.22.2).
        assert!(caught > 0);
    }

    /// Random fields of a valid tokenizer.json replaced by odd values: loading never panics
    /// (NEEDLEWORK_FUZZ_CASES cases, 40 by default).
    #[test]
    fn fuzzed_tokenizer_files_never_panic() {
        let base: serde_json::Value = serde_json::from_slice(include_bytes!(
            "../../../tests/fixtures/tokenizer-metaspace.json"
        ))
        .unwrap();
        let cases: u64 = std::env::var("NEEDLEWORK_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(40);
        let paths: [&[&str]; 8] = [
            &["normalizer"],
            &["pre_tokenizer"],
            &["pre_tokenizer", "replacement"],
            &["decoder"],
            &["post_processor"],
            &["model", "unk_token"],
            &["model", "merges"],
            &["added_tokens"],
        ];
        let odd = [
            serde_json::json!(""),
            serde_json::json!({"type": "Precompiled", "precompiled_charsmap": "//8="}),
            serde_json::json!({"type": "Replace", "pattern": {"Regex": "("}, "content": "x"}),
            serde_json::json!({"type": "Split", "pattern": {"Regex": "[" }, "behavior": "Isolated", "invert": false}),
            serde_json::json!({"type": "Metaspace", "replacement": "", "prepend_scheme": "always", "split": true}),
            serde_json::json!([["no", "such"], ["tokens", "here"]]),
            serde_json::json!([{"id": 99999999, "content": "x", "special": true}]),
            serde_json::json!(null),
            serde_json::json!(-1),
        ];
        let mut rng = crate::rng::Rng::from_seed_u64(27, crate::rng::Stream::Content);
        for _ in 0..cases {
            let mut json = base.clone();
            let path = paths[rng.index(paths.len())];
            let mut slot = &mut json;
            for key in path {
                slot = &mut slot[*key];
            }
            *slot = odd[rng.index(odd.len())].clone();
            let bytes = serde_json::to_vec(&json).unwrap();
            let label = format!("{path:?}");
            if let Err(e) = Tokenizer::from_json_bytes(&bytes, &label) {
                assert!(!e.to_string().contains('\n'), "{label}: {e}");
            }
        }
    }
}
