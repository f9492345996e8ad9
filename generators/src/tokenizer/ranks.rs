//! Byte-pair encoding from rank tables laid out at build time (see `build.rs`).
//!
//! Counting a piece the cache has not seen needs the encoding's ranks. bpe-openai's encoder
//! takes 40–90 ms and 35–70 MB to deserialize on every run; these tables are part of the
//! binary and need no loading. Pieces are merged as tiktoken merges them: repeatedly join the
//! adjacent pair whose joined bytes have the lowest rank, the leftmost on a tie, until no
//! joined pair is a token. That is quadratic in the piece's length, so long pieces go to
//! bpe-openai's linear encoder instead (loaded on first use), which the tests hold equal.

use std::sync::LazyLock;

include!("rank_hash.rs");

/// Pieces longer than this (bytes) are counted by bpe-openai.
const LONGEST_MERGED: usize = 256;

/// One encoding's ranks: token bytes by rank and an open-addressing index over them.
pub(super) struct Ranks {
    /// The build-time layout: counts, offsets and slots as little-endian u32 words, then bytes.
    data: &'static [u8],
    tokens: usize,
    bits: u32,
    /// Byte offset of the token bytes.
    bytes_at: usize,
    /// The encoder for long pieces.
    long: &'static LazyLock<&'static bpe_openai::Tokenizer>,
}

static O200K_LONG: LazyLock<&'static bpe_openai::Tokenizer> = LazyLock::new(bpe_openai::o200k_base);
static CL100K_LONG: LazyLock<&'static bpe_openai::Tokenizer> =
    LazyLock::new(bpe_openai::cl100k_base);

/// o200k_base's ranks.
pub(super) static O200K: LazyLock<Ranks> = LazyLock::new(|| {
    Ranks::new(
        include_bytes!(concat!(env!("OUT_DIR"), "/o200k.ranks")),
        &O200K_LONG,
    )
});

/// cl100k_base's ranks.
pub(super) static CL100K: LazyLock<Ranks> = LazyLock::new(|| {
    Ranks::new(
        include_bytes!(concat!(env!("OUT_DIR"), "/cl100k.ranks")),
        &CL100K_LONG,
    )
});

impl Ranks {
    fn new(data: &'static [u8], long: &'static LazyLock<&'static bpe_openai::Tokenizer>) -> Self {
        let word = |i: usize| {
            u32::from_le_bytes([
                data[4 * i],
                data[4 * i + 1],
                data[4 * i + 2],
                data[4 * i + 3],
            ])
        };
        let (tokens, bits) = (word(0) as usize, word(1));
        Ranks {
            data,
            tokens,
            bits,
            bytes_at: 4 * (2 + tokens + 1 + (1usize << bits)),
            long,
        }
    }

    fn word(&self, i: usize) -> u32 {
        let at = 4 * i;
        u32::from_le_bytes([
            self.data[at],
            self.data[at + 1],
            self.data[at + 2],
            self.data[at + 3],
        ])
    }

    /// The bytes of the token of `rank`.
    fn token(&self, rank: usize) -> &'static [u8] {
        let (start, end) = (self.word(2 + rank) as usize, self.word(3 + rank) as usize);
        &self.data[self.bytes_at + start..self.bytes_at + end]
    }

    /// The rank of `bytes` if they are a token.
    pub(super) fn rank(&self, bytes: &[u8]) -> Option<u32> {
        let mask = (1usize << self.bits) - 1;
        let mut slot = (rank_hash(bytes) >> (64 - self.bits)) as usize;
        let slots_at = 2 + self.tokens + 1;
        loop {
            let entry = self.word(slots_at + slot);
            if entry == 0 {
                return None;
            }
            let rank = entry - 1;
            if self.token(rank as usize) == bytes {
                return Some(rank);
            }
            slot = (slot + 1) & mask;
        }
    }

    /// The number of tokens `piece` (one pre-tokenized piece) encodes to.
    pub(super) fn count(&self, piece: &[u8]) -> usize {
        if piece.len() <= 1 {
            return piece.len();
        }
        if piece.len() > LONGEST_MERGED {
            return self.long.bpe.count(piece);
        }
        if self.rank(piece).is_some() {
            return 1;
        }
        // Part starts (the piece's end closes the last part) and, per part, the rank of the
        // part joined with the next one (u32::MAX: not a token, or no next part).
        let mut starts: Vec<usize> = (0..=piece.len()).collect();
        let mut joined: Vec<u32> = (0..piece.len())
            .map(|i| self.pair_rank(piece, i, i + 2, &starts))
            .collect();
        loop {
            let (mut best, mut at) = (u32::MAX, usize::MAX);
            for (i, &r) in joined.iter().enumerate() {
                if r < best {
                    (best, at) = (r, i);
                }
            }
            if best == u32::MAX {
                return joined.len();
            }
            // Part `at` absorbs part `at + 1`.
            starts.remove(at + 1);
            joined.remove(at + 1);
            joined[at] = self.pair_rank(piece, at, at + 2, &starts);
            if at > 0 {
                joined[at - 1] = self.pair_rank(piece, at - 1, at + 1, &starts);
            }
        }
    }

    /// The rank of parts `first..last` joined (u32::MAX when `last` is past the final part or
    /// the bytes are not a token).
    fn pair_rank(&self, piece: &[u8], first: usize, last: usize, starts: &[usize]) -> u32 {
        match starts.get(last) {
            Some(&end) => self.rank(&piece[starts[first]..end]).unwrap_or(u32::MAX),
            None => u32::MAX,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, Stream};

    /// Every ordinary token of the reference is in the table under its own rank, and the
    /// table holds no other.
    #[test]
    fn tables_hold_every_token_of_the_references() {
        for (ranks, reference) in [
            (&*O200K, bpe_openai::o200k_base()),
            (&*CL100K, bpe_openai::cl100k_base()),
        ] {
            assert_eq!(ranks.tokens, reference.bpe.num_tokens());
            for id in 0..ranks.tokens as u32 {
                let bytes = reference.bpe.token_bytes(id);
                assert_eq!(ranks.rank(bytes), Some(id), "{bytes:?}");
            }
            assert_eq!(ranks.rank(b"<|endoftext|>"), None);
        }
    }

    /// Random byte strings (any bytes, near-token mutations) count as bpe-openai counts them.
    #[test]
    fn merged_counts_equal_the_reference_encoder() {
        let mut rng = Rng::from_seed_u64(11, Stream::Haystack);
        for (ranks, reference) in [
            (&*O200K, bpe_openai::o200k_base()),
            (&*CL100K, bpe_openai::cl100k_base()),
        ] {
            for case in 0..20_000u32 {
                let piece: Vec<u8> = match case % 4 {
                    // Glued tokens, the shapes real merges see.
                    0 | 1 => (0..1 + rng.below(4))
                        .flat_map(|_| {
                            let id = rng.below(ranks.tokens as u64) as u32;
                            reference.bpe.token_bytes(id).to_vec()
                        })
                        .collect(),
                    // Letters.
                    2 => (0..1 + rng.below(40))
                        .map(|_| b"etaoinshrdlucmfwyp "[rng.below(19) as usize])
                        .collect(),
                    // Any bytes.
                    _ => (0..1 + rng.below(24))
                        .map(|_| rng.below(256) as u8)
                        .collect(),
                };
                assert_eq!(
                    ranks.count(&piece),
                    reference.bpe.count(&piece),
                    "{piece:?}"
                );
            }
            let long = vec![b'x'; LONGEST_MERGED + 100];
            assert_eq!(ranks.count(&long), reference.bpe.count(&long));
        }
    }
}
