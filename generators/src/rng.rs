//! Per-instance random streams.
//!
//! Every instance owns its streams, derived by hashing the master seed with the instance's
//! coordinates, so any instance can be regenerated alone, in any order, on any thread. The
//! bounded sampling and shuffling below are our own so that their values never change with a
//! crate update; golden tests pin them.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use sha2::{Digest, Sha256};
use xxhash_rust::xxh3::xxh3_128_with_seed;

/// The master seed every stream derives from: a public number (anyone holding it regenerates
/// the dataset), or a private 256-bit secret drawn from the operating system, which never
/// appears in a dataset and whose streams are derived with SHA-256 so that no row reveals it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Seed {
    master: Master,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Master {
    Public(u64),
    Private([u8; 32]),
}

impl Seed {
    /// A public seed: the streams of every dataset made before private seeds existed.
    pub const fn public(seed: u64) -> Seed {
        Seed {
            master: Master::Public(seed),
        }
    }

    /// A private 256-bit seed.
    pub const fn private(secret: [u8; 32]) -> Seed {
        Seed {
            master: Master::Private(secret),
        }
    }

    /// The public number, if the seed is public.
    pub const fn as_public(&self) -> Option<u64> {
        match self.master {
            Master::Public(s) => Some(s),
            Master::Private(_) => None,
        }
    }

    /// Whether the seed is a private secret.
    pub const fn is_private(&self) -> bool {
        matches!(self.master, Master::Private(_))
    }
}

impl From<u64> for Seed {
    fn from(seed: u64) -> Seed {
        Seed::public(seed)
    }
}

/// A private seed never prints: an error message or a log line must not leak it.
impl std::fmt::Debug for Seed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.master {
            Master::Public(s) => write!(f, "Seed::public({s})"),
            Master::Private(_) => write!(f, "Seed::private(<secret>)"),
        }
    }
}

/// The domain tag of a private seed's commitment.
pub const COMMITMENT_TAG: &str = "needlework-private-seed-commitment-v1";

/// The public commitment to a private seed: SHA-256 over the domain tag, the salt and the
/// seed, hex. It binds the dataset to one seed (no other seed gives the same commitment) and,
/// the seed being 256 random bits, reveals nothing of it.
pub fn commitment(salt: &[u8; 32], secret: &[u8; 32]) -> String {
    let mut h = Sha256::new();
    h.update(COMMITMENT_TAG.as_bytes());
    h.update(salt);
    h.update(secret);
    hex(&h.finalize())
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Which part of an instance a stream feeds. Separate streams keep, for example, the needle
/// values of an instance identical whatever haystack or tokenizer is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Keys, values, names, numbers: the task's own content.
    Content = 1,
    /// The filler text (generated prose, start position in a corpus, distractors).
    Haystack = 2,
    /// Where secondary needles and facts go.
    Placement = 3,
    /// Names of people, drawn one after another, so a longer list extends a shorter one.
    Names = 4,
    /// Relations between consecutive facts of a chain, drawn one after another.
    Relations = 5,
}

/// Identifies one instance: everything its random streams derive from.
#[derive(Clone, Debug, PartialEq)]
pub struct Coordinates<'a> {
    /// Task name, e.g. `niah`.
    pub task: &'a str,
    /// Canonical JSON of the task parameters that shape content.
    pub params: &'a str,
    /// Master seed given by the user (or drawn for a private split).
    pub seed: Seed,
    /// Requested length in tokens.
    pub length: u64,
    /// Requested depth in percent, when the task has one.
    pub depth: Option<f64>,
    /// Index within the (length, depth) cell.
    pub sample: u64,
}

impl<'a> Coordinates<'a> {
    /// The first sample at no length and no depth: the instance a task draws when it sizes
    /// its content before any work (the shortest or longest length it can fill).
    pub fn sizing(task: &'a str, params: &'a str, seed: Seed) -> Self {
        Coordinates {
            task,
            params,
            seed,
            length: 0,
            depth: None,
            sample: 0,
        }
    }

    /// A 256-bit key for this instance, stable across platforms and versions of this crate's
    /// dependencies (xxh3 is a fixed algorithm).
    ///
    /// A private seed's keys are SHA-256 of the secret and the coordinates, so the streams (and
    /// the rows drawn from them) reveal nothing of the secret; a public seed's keys are as they
    /// always were, so public datasets keep their bytes.
    pub fn key(&self) -> [u8; 32] {
        let mut buf = Vec::with_capacity(64 + self.params.len());
        let private = match self.seed.master {
            Master::Public(s) => {
                push_field(&mut buf, b"needlework-rng-v1");
                push_field(&mut buf, self.task.as_bytes());
                push_field(&mut buf, self.params.as_bytes());
                push_field(&mut buf, &s.to_le_bytes());
                false
            }
            Master::Private(secret) => {
                push_field(&mut buf, b"needlework-rng-private-v1");
                push_field(&mut buf, &secret);
                push_field(&mut buf, self.task.as_bytes());
                push_field(&mut buf, self.params.as_bytes());
                true
            }
        };
        push_field(&mut buf, &self.length.to_le_bytes());
        match self.depth {
            Some(d) => push_field(&mut buf, &d.to_bits().to_le_bytes()),
            None => push_field(&mut buf, b"-"),
        }
        push_field(&mut buf, &self.sample.to_le_bytes());
        if private {
            let digest = Sha256::digest(&buf);
            buf.iter_mut().for_each(|b| *b = 0);
            let mut key = [0u8; 32];
            key.copy_from_slice(&digest);
            return key;
        }
        let lo = xxh3_128_with_seed(&buf, 0x6e65_6564_6c65).to_le_bytes();
        let hi = xxh3_128_with_seed(&buf, 0x776f_726b).to_le_bytes();
        let mut key = [0u8; 32];
        key[..16].copy_from_slice(&lo);
        key[16..].copy_from_slice(&hi);
        key
    }

    /// The random stream of one part of this instance.
    pub fn rng(&self, stream: Stream) -> Rng {
        Rng::from_key(self.key(), stream)
    }
}

fn push_field(buf: &mut Vec<u8>, bytes: &[u8]) {
    buf.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    buf.extend_from_slice(bytes);
}

/// A ChaCha8 stream with value-stable helpers.
#[derive(Clone)]
pub struct Rng(ChaCha8Rng);

impl Rng {
    /// One stream of an instance key.
    pub fn from_key(key: [u8; 32], stream: Stream) -> Self {
        let mut inner = ChaCha8Rng::from_seed(key);
        inner.set_stream(stream as u64);
        Rng(inner)
    }

    /// A stream from a plain seed, for run-wide content such as a noise corpus order.
    pub fn from_seed_u64(seed: u64, stream: Stream) -> Self {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        Self::from_key(key, stream)
    }

    /// The next raw 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A uniform integer in `0..n` (Lemire's multiply-and-reject; exact, no modulo bias).
    /// Returns 0 for `n == 0` so callers never panic on an empty range.
    pub fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = (self.next_u64() as u128) * (n as u128);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// A uniform index into a slice of length `len`.
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// A uniform integer in the inclusive range `lo..=hi` (`hi < lo` gives `lo`).
    pub fn range_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo;
        if span == u64::MAX {
            return self.next_u64();
        }
        lo + self.below(span + 1)
    }

    /// A uniform float in `[0, 1)` with 53 random bits.
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `true` with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// A uniformly chosen element.
    pub fn choose<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    /// Fisher–Yates shuffle, from the last element down.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.index(i + 1);
            items.swap(i, j);
        }
    }

    /// `k` distinct indices from `0..n` in draw order (Floyd's algorithm would reorder; this
    /// partial Fisher–Yates keeps the order meaningful). `k` is clamped to `n`.
    pub fn sample_indices(&mut self, n: usize, k: usize) -> Vec<usize> {
        let k = k.min(n);
        let mut pool: Vec<usize> = (0..n).collect();
        for i in 0..k {
            let j = i + self.index(n - i);
            pool.swap(i, j);
        }
        pool.truncate(k);
        pool
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coords(sample: u64) -> Coordinates<'static> {
        Coordinates {
            task: "niah",
            params: "{}",
            seed: Seed::public(7),
            length: 32768,
            depth: Some(50.0),
            sample,
        }
    }

    #[test]
    fn golden_stream_values() {
        // Pinned: a change here changes every dataset ever generated.
        let mut rng = coords(0).rng(Stream::Content);
        let raw: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        let below: Vec<u64> = (0..8).map(|_| rng.below(10)).collect();
        let mut items: Vec<u32> = (0..10).collect();
        rng.shuffle(&mut items);
        let picked = rng.sample_indices(100, 5);
        let golden = format!("{raw:?} {below:?} {items:?} {picked:?}");
        assert_eq!(golden, GOLDEN, "random stream drifted");
    }

    const GOLDEN: &str = "[17391016327409750179, 18367837435877105838, 2161000652498875194] [6, 7, 3, 8, 5, 1, 3, 9] [9, 0, 6, 7, 5, 1, 2, 3, 8, 4] [48, 29, 82, 23, 51]";

    #[test]
    fn streams_and_coordinates_are_independent() {
        let a = coords(0).rng(Stream::Content).next_u64();
        let b = coords(0).rng(Stream::Haystack).next_u64();
        let c = coords(1).rng(Stream::Content).next_u64();
        let d = Coordinates {
            depth: None,
            ..coords(0)
        }
        .rng(Stream::Content)
        .next_u64();
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
        assert_eq!(a, coords(0).rng(Stream::Content).next_u64());
    }

    #[test]
    fn private_seeds_give_other_streams() {
        let public = coords(0).rng(Stream::Content).next_u64();
        let private = |secret: [u8; 32]| {
            Coordinates {
                seed: Seed::private(secret),
                ..coords(0)
            }
            .rng(Stream::Content)
            .next_u64()
        };
        assert_ne!(private([1; 32]), private([2; 32]));
        assert_ne!(private([7; 32]), public);
        assert_eq!(private([1; 32]), private([1; 32]));
        assert_eq!(
            format!("{:?}", Seed::private([9; 32])),
            "Seed::private(<secret>)"
        );
    }

    #[test]
    fn commitments_bind_the_seed_and_the_salt() {
        let c = commitment(&[0; 32], &[1; 32]);
        assert_eq!(c.len(), 64);
        assert_ne!(c, commitment(&[0; 32], &[2; 32]));
        assert_ne!(c, commitment(&[3; 32], &[1; 32]));
        assert_eq!(c, commitment(&[0; 32], &[1; 32]));
    }

    #[test]
    fn below_is_in_range_and_uniform_enough() {
        let mut rng = Rng::from_seed_u64(1, Stream::Content);
        let mut counts = [0u32; 7];
        for _ in 0..70_000 {
            let v = rng.below(7);
            assert!(v < 7);
            counts[v as usize] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
        assert_eq!(rng.below(0), 0);
        assert_eq!(rng.below(1), 0);
        assert_eq!(rng.range_inclusive(5, 5), 5);
        assert_eq!(rng.range_inclusive(9, 3), 9);
    }

    #[test]
    fn sample_indices_are_distinct() {
        let mut rng = Rng::from_seed_u64(2, Stream::Placement);
        let picked = rng.sample_indices(20, 20);
        let mut sorted = picked.clone();
        sorted.sort();
        assert_eq!(sorted, (0..20).collect::<Vec<_>>());
        assert_eq!(rng.sample_indices(3, 10).len(), 3);
    }
}
