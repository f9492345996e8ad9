//! Lock-free exact counting for the OpenAI encodings (o200k_base, cl100k_base).
//!
//! `bpe_openai::Tokenizer::split` borrows its regex scratch space from a pool shared by all
//! threads on every piece, which serialises threads on the pool's lock. Here the same
//! pre-tokenization regex (the pattern strings and the look-ahead rule copied from bpe-openai
//! 0.3.2, which tiktoken's counts are checked against) is compiled once and every thread keeps
//! its own scratch cache, so matching takes no lock. Text is counted in chunks between safe
//! cuts ([`is_cut`]), each looked up in a per-thread table; only a chunk not seen is split by
//! the regex, and only a piece not seen is byte-pair encoded (`ranks.rs`). The tests hold the
//! splits, the cuts and the counts equal to bpe-openai's and tiktoken's.

use std::cell::RefCell;
use std::sync::LazyLock;

use regex_automata::meta::{Cache, Regex};
use regex_automata::{Anchored, Input};

use super::ranks::{Ranks, CL100K as CL100K_RANKS, O200K as O200K_RANKS};

/// One OpenAI encoding: its pre-tokenizer and its byte-pair encoding.
pub(super) struct Encoding {
    /// Index into the per-thread state (0 = o200k, 1 = cl100k).
    slot: usize,
    /// The pre-tokenization patterns, as one multi-pattern regex.
    pre: Regex,
    /// Per pattern: whether its last character is a pseudo look-ahead to drop from the piece.
    lookahead: [bool; 3],
    ranks: &'static LazyLock<Ranks>,
}

/// bpe-openai's rewrite of tiktoken's `\s+(?!\S)`: `\s+\s` with the last character dropped
/// from the piece, tried after the main pattern and before plain `\s+`.
const LOOKAHEAD_PATTERN: &str = "\\s+\\s";
const WHITESPACE_PATTERN: &str = "\\s+";

static O200K: LazyLock<Encoding> = LazyLock::new(|| {
    // bpe-openai 0.3.2's o200k_base pattern, alternative by alternative.
    let main = [
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "\\p{N}{1,3}",
        " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
        "\\s*[\\r\\n]+",
        "\\s+$",
    ]
    .join("|");
    Encoding::new(0, &main, &O200K_RANKS)
});

static CL100K: LazyLock<Encoding> = LazyLock::new(|| {
    // bpe-openai 0.3.2's cl100k_base pattern.
    let main = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+$";
    Encoding::new(1, main, &CL100K_RANKS)
});

/// o200k_base.
pub(super) fn o200k() -> &'static Encoding {
    &O200K
}

/// cl100k_base.
pub(super) fn cl100k() -> &'static Encoding {
    &CL100K
}

impl Encoding {
    fn new(slot: usize, main: &str, ranks: &'static LazyLock<Ranks>) -> Self {
        let pre = Regex::new_many(&[main, LOOKAHEAD_PATTERN, WHITESPACE_PATTERN])
            .unwrap_or_else(|e| panic!("the built-in pre-tokenization pattern compiles: {e}"));
        Encoding {
            slot,
            pre,
            lookahead: [false, true, false],
            ranks,
        }
    }

    /// Call `visit(span end byte, span tokens)` for consecutive spans of `text` in order: the
    /// chunks between safe cuts (see [`next_cut`]), each counted through a per-thread cache, so
    /// that repeated words cost a table lookup and no regex; a chunk with a byte of `marks`
    /// (ascending) strictly inside it is walked piece by piece instead, so a mark maps to the
    /// piece it falls in exactly as a plain piece walk maps it.
    pub(super) fn for_each_span(
        &self,
        text: &str,
        marks: &[usize],
        mut visit: impl FnMut(usize, usize),
    ) {
        LOCAL.with(|local| {
            let mut local = local.borrow_mut();
            let Local {
                regex,
                pieces,
                chunks,
            } = &mut local[self.slot];
            let cache = regex.get_or_insert_with(|| self.pre.create_cache());
            let pieces = pieces.get_or_insert_with(|| PieceCache::new(PIECE_SET_BITS));
            let chunks = chunks.get_or_insert_with(|| PieceCache::new(SHORT_SET_BITS));
            let mut next_mark = 0usize;
            let mut start = 0usize;
            while start < text.len() {
                let end = next_cut(text, start);
                while next_mark < marks.len() && marks[next_mark] <= start {
                    next_mark += 1;
                }
                let chunk = &text[start..end];
                if next_mark < marks.len() && marks[next_mark] < end {
                    self.walk_pieces(cache, pieces, chunk, |e, n| visit(start + e, n));
                } else {
                    let n = chunks.count_in(text.as_bytes(), (start, end), |_| {
                        let mut n = 0usize;
                        self.walk_pieces(cache, pieces, chunk, |_, k| n += k);
                        n
                    });
                    visit(end, n);
                }
                start = end;
            }
        })
    }

    /// Pre-tokenize `text` and call `visit(piece end byte, piece tokens)` for each piece:
    /// exactly bpe-openai's split and count, without taking a lock.
    fn walk_pieces(
        &self,
        cache: &mut Cache,
        pieces: &mut PieceCache,
        text: &str,
        mut visit: impl FnMut(usize, usize),
    ) {
        let mut last = 0usize;
        while last < text.len() {
            let end = match self.piece_end(cache, text, last) {
                Some(end) => end,
                // bpe-openai's iterator stops where no pattern matches (the patterns cover
                // every character, so this does not happen).
                None => break,
            };
            visit(
                end,
                pieces.count_in(text.as_bytes(), (last, end), |p| self.ranks.count(p)),
            );
            last = end;
        }
    }

    /// The number of tokens in `text`.
    pub(super) fn count(&self, text: &str) -> usize {
        let mut total = 0usize;
        self.for_each_span(text, &[], |_, n| total += n);
        total
    }

    /// End of the piece starting at `start`, as bpe-openai's `Splits` iterator finds it: an
    /// anchored leftmost-first match on the rest of the text, minus the look-ahead character.
    fn piece_end(&self, cache: &mut Cache, text: &str, start: usize) -> Option<usize> {
        let input = Input::new(&text[start..]).anchored(Anchored::Yes);
        let m = self.pre.search_half_with(cache, &input)?;
        let mut end = start + m.offset();
        if self.lookahead[m.pattern().as_usize()] {
            let dropped = text[start..end].chars().next_back()?.len_utf8();
            end -= dropped;
        }
        // A pattern always consumes a character besides the look-ahead one (\s+\s); guard the
        // loop anyway.
        (end > start).then_some(end)
    }
}

/// The first safe cut after `start`: the smallest q > `start` that [`is_cut`], or the end of
/// `text`.
pub(super) fn next_cut(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    // Only a space, or a byte after a line feed, can start a cut: test those alone.
    (start + 1..bytes.len())
        .find(|&q| (bytes[q] == b' ' || bytes[q - 1] == b'\n') && is_cut(text, q))
        .unwrap_or(text.len())
}

/// Whether 0 < q < len is a safe cut: a space after a character that is not whitespace, or a
/// character that is neither whitespace nor `/` after a line feed.
///
/// Both encodings' pre-tokenizers (tiktoken's patterns for o200k_base and cl100k_base, and
/// bpe-openai's rewrite of them) split text at such a q, and the pieces of text[..q] and
/// text[q..] are those of each part alone, so counts add there. Why, for a space after a
/// non-space: a match starting before q that reached past it would take the non-space
/// character at q - 1 and then the space at q in one match. In every alternative a space can
/// only be the first character of a match (the optional leading `[^\r\n\p{L}\p{N}]` or ` ` of
/// the letter and punctuation alternatives), the whitespace alternatives take no other
/// character, and the letter, number, contraction and punctuation runs after their first
/// character exclude whitespace (`[\r\n/]*` takes none of a space). For a line feed before a
/// character c that is neither whitespace nor `/`: no letter or number alternative takes a line
/// feed, and those that do (the punctuation run's `[\r\n/]*` tail, `\s*[\r\n]+`, the whitespace
/// runs) take nothing but line breaks, whitespace or `/` after it, so none takes c; a
/// whitespace run ending in that line feed is matched first by `\s*[\r\n]+` through the line
/// feed, in the whole text as at the end of text[..q], so the look-ahead `\s+(?!\S)` (which
/// would end such a run earlier before c than at the end) is never reached. So every attempt
/// started before q ends by q in the whole text just as in text[..q] (the look-ahead and `$`
/// are otherwise only asked about positions before q), and matching from q on reads only
/// text[q..] (no pattern looks behind). The tests check every cut against whole-text counts
/// on fuzzed and generated text.
pub(super) fn is_cut(text: &str, q: usize) -> bool {
    let bytes = text.as_bytes();
    if q == 0 || q >= bytes.len() {
        return false;
    }
    match (bytes[q - 1], bytes[q]) {
        (_, b' ') => !ends_in_whitespace(&text[..q]),
        (b'\n', b'/') => false,
        (b'\n', next) if next < 0x80 => !matches!(next, b'\t'..=b'\r' | b' '),
        (b'\n', _) => !text[q..].chars().next().is_some_and(char::is_whitespace),
        _ => false,
    }
}

/// The last safe cut of `text` other than its end, if any.
pub(super) fn last_cut(text: &str) -> Option<usize> {
    (1..text.len()).rev().find(|&q| is_cut(text, q))
}

/// The first safe cut of `text` other than its start and end, if any.
pub(super) fn first_cut(text: &str) -> Option<usize> {
    Some(next_cut(text, 0)).filter(|&q| q < text.len())
}

/// Whether the last character of `text` is whitespace (`\s`, Unicode White_Space).
fn ends_in_whitespace(text: &str) -> bool {
    match text.as_bytes().last() {
        Some(&b) if b < 0x80 => matches!(b, b'\t'..=b'\r' | b' '),
        _ => text.chars().next_back().is_some_and(char::is_whitespace),
    }
}

/// Per-thread state, per encoding: the regex's scratch space and the piece-count cache.
#[derive(Default)]
struct Local {
    regex: Option<Cache>,
    /// Token counts of pieces (byte-pair encoded alone).
    pieces: Option<PieceCache>,
    /// Token counts of chunks between safe cuts (pre-tokenized and encoded alone).
    chunks: Option<PieceCache>,
}

thread_local! {
    static LOCAL: RefCell<[Local; 2]> = Default::default();
}

/// Longest piece kept in the short-piece table, in bytes (one 16-byte entry: length, count,
/// then the bytes).
const SHORT_BYTES: usize = 14;
/// log2 of the number of four-entry sets of the chunk table's short entries (32,768 entries in
/// 512 KiB): every chunk is looked up. At 16,384 entries (256 KiB, once measured the best) the
/// prose haystack's flatter, wider vocabulary missed often enough to spend 1.4 times the regex
/// work (callgrind, niah 128k); the larger table takes most of that back.
const SHORT_SET_BITS: u32 = 13;
/// The same for the piece table (65,536 entries in 1 MiB), which only chunks the chunk table
/// misses reach: at 16,384 entries the haystack's long tail of words was evicted and merged
/// again (58,544 merges for 8M tokens of niah, 24,795 with this size; about 2 % faster).
const PIECE_SET_BITS: u32 = 14;
/// Entries per set of the short-piece table: one 64-byte cache line.
const WAYS: usize = 4;

/// One set of the short-piece table, on its own cache line.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Set([u128; WAYS]);
/// Longest piece kept in the long-piece table, in bytes.
const LONG_BYTES: usize = 31;
/// log2 of the number of slots of the long-piece table.
const LONG_SLOT_BITS: u32 = 12;

/// Small caches of pieces' token counts. Prose repeats the same words endlessly, so most pieces
/// are counted once per thread. Short pieces live in a four-way set-associative table of 16-byte
/// entries compared as one integer; longer ones in a direct-mapped table. A new piece replaces
/// an old one in its set or slot. Only exact byte matches are read back, so results never
/// depend on what the caches hold.
struct PieceCache {
    /// log2 of the number of sets of `short`.
    set_bits: u32,
    /// Per set, two entries: byte 0 the length (0 = empty; pieces are never empty), byte 1 the
    /// count, bytes 2.. the piece padded with zeros; the most recently inserted first.
    short: Box<[Set]>,
    /// Length, then the bytes.
    long_keys: Box<[[u8; LONG_BYTES + 1]]>,
    long_counts: Box<[u8]>,
}

/// Every bit of a short entry but its count byte.
const KEY_MASK: u128 = !(0xFF << 8);
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

impl PieceCache {
    fn new(set_bits: u32) -> Self {
        PieceCache {
            set_bits,
            short: vec![Set([0u128; WAYS]); 1 << set_bits].into_boxed_slice(),
            long_keys: vec![[0u8; LONG_BYTES + 1]; 1 << LONG_SLOT_BITS].into_boxed_slice(),
            long_counts: vec![0u8; 1 << LONG_SLOT_BITS].into_boxed_slice(),
        }
    }

    /// The count of `piece`, from the table or from `compute` (then remembered).
    fn count(&mut self, piece: &[u8], compute: impl FnOnce(&[u8]) -> usize) -> usize {
        let n = piece.len();
        // Every byte is a token of these encodings, and a one-byte text is one piece.
        if n <= 1 {
            n
        } else if n <= SHORT_BYTES {
            let mut buf = [0u8; 16];
            buf[0] = n as u8;
            buf[2..2 + n].copy_from_slice(piece);
            self.count_short(u128::from_le_bytes(buf), piece, compute)
        } else if n <= LONG_BYTES {
            let slot = long_slot(piece);
            let key = &mut self.long_keys[slot];
            if key[0] as usize == n && &key[1..=n] == piece {
                return self.long_counts[slot] as usize;
            }
            let count = compute(piece);
            key[0] = n as u8;
            key[1..=n].copy_from_slice(piece);
            self.long_counts[slot] = count as u8;
            count
        } else {
            compute(piece)
        }
    }

    /// The count of a piece of 2..=14 bytes whose table key (length, zero count byte, bytes)
    /// is `key`.
    fn count_short(
        &mut self,
        key: u128,
        piece: &[u8],
        compute: impl FnOnce(&[u8]) -> usize,
    ) -> usize {
        let h = ((key as u64) ^ ((key >> 64) as u64).wrapping_mul(MIX)).wrapping_mul(MIX);
        let set = &mut self.short[(h >> (64 - self.set_bits)) as usize];
        for entry in set.0 {
            if entry & KEY_MASK == key {
                return (entry >> 8) as u8 as usize;
            }
        }
        let count = compute(piece);
        // A piece of at most 14 bytes has at most 14 tokens: the count fits its byte.
        set.0.copy_within(..WAYS - 1, 1);
        set.0[0] = key | ((count as u128) << 8);
        count
    }

    /// [`PieceCache::count`] of `text[start..end]`: a short key is read as one 16-byte load
    /// from the text where it has room, instead of a copy of variable length.
    fn count_in(
        &mut self,
        text: &[u8],
        (start, end): (usize, usize),
        compute: impl FnOnce(&[u8]) -> usize,
    ) -> usize {
        let n = end - start;
        match text.get(start..start + 16) {
            Some(window) if (2..=SHORT_BYTES).contains(&n) => {
                let mut word = [0u8; 16];
                word.copy_from_slice(window);
                let bytes = u128::from_le_bytes(word) & ((1u128 << (8 * n)) - 1);
                self.count_short((bytes << 16) | n as u128, &text[start..end], compute)
            }
            _ => self.count(&text[start..end], compute),
        }
    }
}

/// The slot of a piece of 15..=31 bytes: a one-shot multiplicative hash of its first, middle
/// and last eight bytes and its length.
fn long_slot(piece: &[u8]) -> usize {
    let n = piece.len();
    let word = |at: usize| {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(&piece[at..at + 8]);
        u64::from_le_bytes(buf)
    };
    let mut h = word(0) ^ ((n as u64) << 59);
    h = h.wrapping_mul(MIX) ^ word(n / 2 - 4);
    h = h.wrapping_mul(MIX) ^ word(n - 8);
    (h.wrapping_mul(MIX) >> (64 - LONG_SLOT_BITS)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::haystack::{Haystack, HaystackKind};
    use crate::rng::{Rng, Stream};
    use crate::tokenizer::{Known, Tokenizer};
    use proptest::prelude::*;

    /// Our pieces of `text` (by their end bytes) and their counts, walked without the chunk
    /// cache.
    fn ours(enc: &Encoding, text: &str) -> (Vec<usize>, usize) {
        let (mut ends, mut total) = (Vec::new(), 0usize);
        let mut cache = enc.pre.create_cache();
        let mut pieces = PieceCache::new(SHORT_SET_BITS);
        enc.walk_pieces(&mut cache, &mut pieces, text, |end, n| {
            ends.push(end);
            total += n;
        });
        (ends, total)
    }

    /// The previous path, bpe-openai's own split and count, and tiktoken-rs's count; and at
    /// every safe cut, the reference counts of the two sides add up to the whole.
    fn check(text: &str) {
        for (enc, reference, tiktoken) in [
            (
                o200k(),
                bpe_openai::o200k_base(),
                tiktoken_rs::o200k_base_singleton(),
            ),
            (
                cl100k(),
                bpe_openai::cl100k_base(),
                tiktoken_rs::cl100k_base_singleton(),
            ),
        ] {
            let mut pos = 0usize;
            let want: Vec<usize> = reference
                .split(text)
                .map(|p| {
                    pos += p.len();
                    pos
                })
                .collect();
            let (ends, total) = ours(enc, text);
            assert_eq!(ends, want, "pieces of {text:?}");
            assert_eq!(total, reference.count(text), "count of {text:?}");
            // Twice: the second count reads the chunk and piece caches.
            assert_eq!(enc.count(text), total, "chunked count of {text:?}");
            assert_eq!(enc.count(text), total, "cached count of {text:?}");
            assert_eq!(total, tiktoken.count_ordinary(text), "tiktoken of {text:?}");
            // Each cut is checked against two fresh counts; long texts are checked in slices.
            let mut start = 0usize;
            while start < text.len() && text.len() <= 4096 {
                let cut = next_cut(text, start);
                assert!(
                    cut == text.len() || want.contains(&cut),
                    "a piece spans the cut at {cut} of {text:?}"
                );
                let (left, right) = text.split_at(cut);
                assert_eq!(
                    tiktoken.count_ordinary(left) + tiktoken.count_ordinary(right),
                    total,
                    "counts do not add at the cut at {cut} of {text:?}"
                );
                start = cut;
            }
            // Marks anywhere map as the piece walk maps them.
            let marks: Vec<usize> = (0..=text.len()).step_by(3).collect();
            let mut got = Vec::new();
            let mut before = 0usize;
            let mut m = 0usize;
            enc.for_each_span(text, &marks, |end, n| {
                while m < marks.len() && marks[m] < end {
                    got.push(before);
                    m += 1;
                }
                before += n;
            });
            let mut reference_offsets = Vec::new();
            let (mut before, mut m, mut last) = (0usize, 0usize, 0usize);
            for &end in &ends {
                while m < marks.len() && marks[m] < end {
                    reference_offsets.push(before);
                    m += 1;
                }
                before += reference.bpe.count(&text.as_bytes()[last..end]);
                last = end;
            }
            got.resize(marks.len(), total);
            reference_offsets.resize(marks.len(), total);
            assert_eq!(got, reference_offsets, "mark offsets in {text:?}");
        }
    }

    /// Fragments that exercise every alternative of the patterns and their edges.
    const FRAGMENTS: &[&str] = &[
        " ",
        "  ",
        "   ",
        "\t",
        "\n",
        "\n\n",
        "\r\n",
        "\r",
        " \n",
        "  \n",
        "\t\n",
        " \r\n ",
        "\u{a0}",
        "\u{3000}",
        "\u{2028}",
        "\u{85}",
        "\u{b}",
        "\u{c}",
        "'s",
        "'S",
        "'t",
        "'T",
        "'re",
        "'RE",
        "'Re",
        "'ve",
        "'VE",
        "'m",
        "'M",
        "'ll",
        "'LL",
        "'Ll",
        "'d",
        "'D",
        "'",
        "''",
        "’s",
        "1",
        "12",
        "123",
        "1234",
        "12345",
        "٣٤",
        "①",
        "Ⅻ",
        "½",
        "the",
        "The",
        "THE",
        "house",
        "McDonald",
        "iPhone",
        "ǅemal",
        "ʰa",
        "ünïcödé",
        "e\u{301}",
        "\u{301}",
        "A\u{308}",
        "日本語",
        "漢字かなカナ",
        "한국어",
        "العربية",
        "हिन्दी",
        "Ελληνικά",
        "Кириллица",
        "😀",
        "👍🏽",
        "👨\u{200d}👩\u{200d}👧",
        "🇫🇷",
        "❤\u{fe0f}",
        ".",
        "...",
        "!?",
        ",",
        "—",
        "/",
        "//",
        "\"",
        "(",
        ")",
        "$",
        "%",
        "@#",
        "©",
        "-",
        "_",
        "\u{0}",
        "\u{7f}",
        "\u{200b}",
        "\u{feff}",
        "<|endoftext|>",
        "http://a.b/c",
        "a/b\n/",
        ".\n",
        "!\r\n",
    ];

    fn text_strategy() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            6 => prop::sample::select(FRAGMENTS).prop_map(str::to_string),
            2 => any::<char>().prop_map(String::from),
            1 => "[a-zA-Z ]{1,12}",
            1 => "[0-9]{1,7}",
            1 => "[ \t\r\n]{1,6}",
        ];
        prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// Fuzzed text: our lock-free split and cached count equal bpe-openai's and tiktoken's.
        #[test]
        fn fuzzed_text_splits_and_counts_like_the_references(text in text_strategy()) {
            check(&text);
        }
    }

    /// The generated prose haystack, whole and in thousands of slices at random char
    /// boundaries.
    #[test]
    fn prose_haystack_counts_like_the_references() {
        let tok = Tokenizer::O200k;
        let hay = Haystack::prepare(HaystackKind::Generated, None, &tok).unwrap();
        let mut stream = hay
            .stream(&tok, Rng::from_seed_u64(7, Stream::Haystack), None)
            .unwrap();
        let mut text = String::new();
        while text.len() < 200_000 {
            text.push_str(&stream.next_unit().unwrap().text);
        }
        check(&text);
        let mut rng = Rng::from_seed_u64(8, Stream::Haystack);
        for _ in 0..3000 {
            let mut a = rng.below(text.len() as u64) as usize;
            let mut b = (a + 1 + rng.below(400) as usize).min(text.len());
            while !text.is_char_boundary(a) {
                a -= 1;
            }
            while !text.is_char_boundary(b) {
                b += 1;
            }
            check(&text[a..b]);
        }
    }

    /// A random text of `parts` stretches: fragments, words and generated sentences behind
    /// random separators, so stretch edges fall on cuts and off them.
    fn random_parts(rng: &mut Rng, prose: &[String], parts: usize) -> Vec<String> {
        const SEPS: &[&str] = &["", " ", " ", " ", "\n\n", "\n", "  ", "\t", "\u{a0}"];
        (0..parts)
            .map(|_| {
                let sep = SEPS[rng.below(SEPS.len() as u64) as usize];
                let body: String = match rng.below(3) {
                    0 => FRAGMENTS[rng.below(FRAGMENTS.len() as u64) as usize].to_string(),
                    1 => prose[rng.below(prose.len() as u64) as usize].clone(),
                    _ => (0..1 + rng.below(4))
                        .map(|_| FRAGMENTS[rng.below(FRAGMENTS.len() as u64) as usize])
                        .collect::<Vec<_>>()
                        .join(" "),
                };
                format!("{sep}{body}")
            })
            .collect()
    }

    fn tiktoken(tok: &Tokenizer) -> &'static tiktoken_rs::CoreBPE {
        match tok {
            Tokenizer::Cl100k => tiktoken_rs::cl100k_base_singleton(),
            _ => tiktoken_rs::o200k_base_singleton(),
        }
    }

    fn prose_sentences() -> Vec<String> {
        let tok = Tokenizer::O200k;
        let hay = Haystack::prepare(HaystackKind::Generated, None, &tok).unwrap();
        let mut stream = hay
            .stream(&tok, Rng::from_seed_u64(3, Stream::Haystack), None)
            .unwrap();
        (0..300)
            .map(|_| stream.next_unit().unwrap().text.into_owned())
            .collect()
    }

    /// Thousands of assembled texts with random known stretches and marks: the count reusing
    /// the stretches' counts equals a full count, and every mark maps to the same token.
    #[test]
    fn assembled_counts_equal_full_counts() {
        let prose = prose_sentences();
        let mut rng = Rng::from_seed_u64(12, Stream::Haystack);
        for tok in [Tokenizer::O200k, Tokenizer::Cl100k] {
            for case in 0..3000 {
                let n = 1 + rng.below(12) as usize;
                let parts = random_parts(&mut rng, &prose, n);
                let text = parts.concat();
                let mut known = Vec::new();
                let mut at = 0usize;
                for part in &parts {
                    if rng.below(3) > 0 {
                        let tokens = tok.count(part).unwrap();
                        known.push(Known {
                            start: at,
                            end: at + part.len(),
                            tokens,
                        });
                    }
                    at += part.len();
                }
                let mut marks: Vec<usize> = (0..rng.below(6))
                    .map(|_| rng.below(text.len() as u64 + 1) as usize)
                    .filter(|&m| text.is_char_boundary(m))
                    .collect();
                if case % 2 == 0 {
                    // Marks on the stretch edges, as the fitter places them.
                    marks.extend(known.iter().map(|k| k.start));
                }
                marks.sort_unstable();
                let want = tok.count_with_marks(&text, &marks).unwrap();
                let got = tok.count_assembled(&text, &known, &marks).unwrap();
                assert_eq!(got, want, "{} {text:?} {known:?} {marks:?}", tok.id());
                // And against tiktoken, which shares none of this code.
                assert_eq!(got.0, tiktoken(&tok).count_ordinary(&text), "{text:?}");
            }
        }
    }

    /// What surrounds a counted text (an answer prefix, a chat template with special tokens)
    /// is counted at the edges only, and equals a full count.
    #[test]
    fn counts_around_a_known_text_equal_full_counts() {
        let prose = prose_sentences();
        let mut rng = Rng::from_seed_u64(13, Stream::Haystack);
        const AROUND: &[&str] = &[
            "",
            " ",
            "\n",
            "\n\n",
            "Answer:",
            " Answer:",
            "\nAnswer: The code is",
            "<|endoftext|>",
            "<|im_start|>user\n",
            "<|im_end|>\n<|im_start|>assistant\n",
            "'s",
            "123",
            "\u{a0}",
        ];
        for tok in [Tokenizer::O200k, Tokenizer::Cl100k] {
            for _ in 0..3000 {
                let n = 1 + rng.below(8) as usize;
                let mut inner = random_parts(&mut rng, &prose, n).concat();
                if rng.below(8) == 0 {
                    inner.push_str(" <|endoftext|> tail");
                }
                let pick = |rng: &mut Rng| AROUND[rng.below(AROUND.len() as u64) as usize];
                let (before, after) = (pick(&mut rng), pick(&mut rng));
                let whole = format!("{before}{inner}{after}");
                for special in [false, true] {
                    let inner_tokens = tok.count(&inner).unwrap();
                    // tiktoken, which shares none of this code.
                    let want = if special {
                        tiktoken(&tok).encode_with_special_tokens(&whole).len()
                    } else {
                        tiktoken(&tok).count_ordinary(&whole)
                    };
                    let got = tok
                        .count_around(&whole, before.len(), inner.len(), inner_tokens, special)
                        .unwrap();
                    assert_eq!(got, want, "{} special {special}: {whole:?}", tok.id());
                }
            }
        }
    }

    /// More distinct pieces than the caches hold, counted twice: evicted and colliding pieces
    /// are recounted, never mixed up.
    #[test]
    fn cache_eviction_keeps_counts_exact() {
        let mut rng = Rng::from_seed_u64(9, Stream::Haystack);
        let words: Vec<String> = (0..200_000)
            .map(|_| {
                let n = 2 + rng.below(30) as usize;
                (0..n)
                    .map(|_| (b'a' + rng.below(26) as u8) as char)
                    .collect()
            })
            .collect();
        for enc in [o200k(), cl100k()] {
            for _ in 0..2 {
                for w in &words {
                    assert_eq!(enc.count(w), enc.ranks.count(w.as_bytes()), "{w}");
                }
            }
        }
    }

    /// Several threads counting at once get the counts one thread gets.
    #[test]
    fn concurrent_counts_equal_single_thread_counts() {
        let texts: Vec<String> = (0..64)
            .map(|i| {
                FRAGMENTS
                    .iter()
                    .cycle()
                    .skip(i * 7)
                    .take(200 + i * 13)
                    .copied()
                    .collect()
            })
            .collect();
        let want: Vec<[usize; 2]> = texts
            .iter()
            .map(|t| {
                [
                    bpe_openai::o200k_base().count(t.as_str()),
                    bpe_openai::cl100k_base().count(t.as_str()),
                ]
            })
            .collect();
        std::thread::scope(|s| {
            for k in 0..4 {
                let (texts, want) = (&texts, &want);
                s.spawn(move || {
                    for round in 0..5 {
                        for i in 0..texts.len() {
                            let i = (i * (k + 3) + round) % texts.len();
                            let got = [o200k().count(&texts[i]), cl100k().count(&texts[i])];
                            assert_eq!(got, want[i], "thread {k} text {i}");
                        }
                    }
                });
            }
        });
    }
}
