//! Lock-free exact counting for the OpenAI encodings (o200k_base, cl100k_base).
//!
//! `bpe_openai::Tokenizer::split` borrows its regex scratch space from a pool shared by all
//! threads on every piece, which serialises threads on the pool's lock. Here the same
//! pre-tokenization regex (the pattern strings and the look-ahead rule copied from bpe-openai
//! 0.3.2, which tiktoken's counts are checked against) is compiled once and every thread keeps
//! its own scratch cache, so matching takes no lock. Pieces are then counted by bpe-openai's
//! own byte-pair encoding, through a small per-thread direct-mapped cache of short pieces.
//! The tests hold the splits and counts equal to bpe-openai's and tiktoken's.

use std::cell::RefCell;
use std::sync::LazyLock;

use bpe_openai::byte_pair_encoding::BytePairEncoding;
use regex_automata::meta::{Cache, Regex};
use regex_automata::{Anchored, Input};

/// One OpenAI encoding: its pre-tokenizer and its byte-pair encoding.
pub(super) struct Encoding {
    /// Index into the per-thread state (0 = o200k, 1 = cl100k).
    slot: usize,
    /// The pre-tokenization patterns, as one multi-pattern regex.
    pre: Regex,
    /// Per pattern: whether its last character is a pseudo look-ahead to drop from the piece.
    lookahead: [bool; 3],
    bpe: &'static BytePairEncoding,
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
    Encoding::new(0, &main, &bpe_openai::o200k_base().bpe)
});

static CL100K: LazyLock<Encoding> = LazyLock::new(|| {
    // bpe-openai 0.3.2's cl100k_base pattern.
    let main = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+$";
    Encoding::new(1, main, &bpe_openai::cl100k_base().bpe)
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
    fn new(slot: usize, main: &str, bpe: &'static BytePairEncoding) -> Self {
        let pre = Regex::new_many(&[main, LOOKAHEAD_PATTERN, WHITESPACE_PATTERN])
            .unwrap_or_else(|e| panic!("the built-in pre-tokenization pattern compiles: {e}"));
        Encoding {
            slot,
            pre,
            lookahead: [false, true, false],
            bpe,
        }
    }

    /// Pre-tokenize `text` and call `visit(piece end byte, piece tokens)` for each piece in
    /// order. Exactly bpe-openai's split and count, without taking a lock.
    pub(super) fn for_each_piece(&self, text: &str, mut visit: impl FnMut(usize, usize)) {
        LOCAL.with(|local| {
            let mut local = local.borrow_mut();
            let local = &mut local[self.slot];
            let cache = local.regex.get_or_insert_with(|| self.pre.create_cache());
            let pieces = local.pieces.get_or_insert_with(PieceCache::new);
            let mut last = 0usize;
            while last < text.len() {
                let end = match self.piece_end(cache, text, last) {
                    Some(end) => end,
                    // bpe-openai's iterator stops where no pattern matches (the patterns cover
                    // every character, so this does not happen).
                    None => break,
                };
                visit(end, pieces.count(self.bpe, &text.as_bytes()[last..end]));
                last = end;
            }
        })
    }

    /// The number of tokens in `text`.
    pub(super) fn count(&self, text: &str) -> usize {
        let mut total = 0usize;
        self.for_each_piece(text, |_, n| total += n);
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

/// Per-thread state, per encoding: the regex's scratch space and the piece-count cache.
#[derive(Default)]
struct Local {
    regex: Option<Cache>,
    pieces: Option<PieceCache>,
}

thread_local! {
    static LOCAL: RefCell<[Local; 2]> = Default::default();
}

/// Longest piece kept in the short-piece table, in bytes (one 16-byte entry: length, count,
/// then the bytes).
const SHORT_BYTES: usize = 14;
/// log2 of the number of four-entry sets of the short-piece table (32,768 entries in 512 KiB,
/// three times the distinct pieces of the generated haystack).
const SHORT_SET_BITS: u32 = 13;
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
    fn new() -> Self {
        PieceCache {
            short: vec![Set([0u128; WAYS]); 1 << SHORT_SET_BITS].into_boxed_slice(),
            long_keys: vec![[0u8; LONG_BYTES + 1]; 1 << LONG_SLOT_BITS].into_boxed_slice(),
            long_counts: vec![0u8; 1 << LONG_SLOT_BITS].into_boxed_slice(),
        }
    }

    fn count(&mut self, bpe: &BytePairEncoding, piece: &[u8]) -> usize {
        let n = piece.len();
        // Every byte is a token of these encodings.
        if n <= 1 {
            n
        } else if n <= SHORT_BYTES {
            let mut buf = [0u8; 16];
            buf[0] = n as u8;
            buf[2..2 + n].copy_from_slice(piece);
            let key = u128::from_le_bytes(buf);
            let h = ((key as u64) ^ ((key >> 64) as u64).wrapping_mul(MIX)).wrapping_mul(MIX);
            let set = &mut self.short[(h >> (64 - SHORT_SET_BITS)) as usize];
            for entry in set.0 {
                if entry & KEY_MASK == key {
                    return (entry >> 8) as u8 as usize;
                }
            }
            let count = bpe.count(piece);
            // A piece of at most 14 bytes has at most 14 tokens: the count fits its byte.
            set.0.copy_within(..WAYS - 1, 1);
            set.0[0] = key | ((count as u128) << 8);
            count
        } else if n <= LONG_BYTES {
            let slot = long_slot(piece);
            let key = &mut self.long_keys[slot];
            if key[0] as usize == n && &key[1..=n] == piece {
                return self.long_counts[slot] as usize;
            }
            let count = bpe.count(piece);
            key[0] = n as u8;
            key[1..=n].copy_from_slice(piece);
            self.long_counts[slot] = count as u8;
            count
        } else {
            bpe.count(piece)
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
    use crate::tokenizer::Tokenizer;
    use proptest::prelude::*;

    /// Our pieces of `text` (by their end bytes) and their counts.
    fn ours(enc: &Encoding, text: &str) -> (Vec<usize>, usize) {
        let (mut ends, mut total) = (Vec::new(), 0usize);
        enc.for_each_piece(text, |end, n| {
            ends.push(end);
            total += n;
        });
        (ends, total)
    }

    /// The previous path, bpe-openai's own split and count, and tiktoken-rs's count.
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
            // Twice: the second count reads the piece caches.
            assert_eq!(total, reference.count(text), "count of {text:?}");
            assert_eq!(enc.count(text), total, "cached count of {text:?}");
            assert_eq!(total, tiktoken.count_ordinary(text), "tiktoken of {text:?}");
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
                    assert_eq!(enc.count(w), enc.bpe.count(w.as_bytes()), "{w}");
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
