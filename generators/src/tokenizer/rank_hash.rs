// Shared by build.rs, which lays out the rank tables, and by ranks.rs, which reads them: both
// must place a token in the same slot.

/// Odd 64-bit multiplier (the golden ratio's fraction) that spreads bits upward.
const RANK_MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// A one-shot hash of a token's bytes: eight bytes at a time, length folded in.
fn rank_hash(bytes: &[u8]) -> u64 {
    let mut h = (bytes.len() as u64).wrapping_mul(RANK_MIX);
    for chunk in bytes.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = (h ^ u64::from_le_bytes(word)).wrapping_mul(RANK_MIX);
        h ^= h >> 29;
    }
    h.wrapping_mul(RANK_MIX)
}
