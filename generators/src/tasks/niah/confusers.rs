//! Confusers (LV-Eval's confusing facts, our own wording): near-miss facts placed beside the
//! needles that a careless reader takes for the answer, while the gold answer stays what it
//! was.
//!
//! - `near_key`: a needle-shaped sentence for another key one edit away from an asked key, with
//!   its own value. An edit is one step of Levenshtein distance at the character level, chosen
//!   so the key keeps its type's shape: word keys get one letter substituted, inserted or
//!   deleted (never the hyphen, never a whole word); 7-digit numbers one digit substituted (the
//!   first stays non-zero); UUIDs one hex digit substituted (not the version or variant digit).
//!   The near key equals no key, value or asked key of the instance, and holds no gold value.
//! - `superseded`: an asked key with a value it was once said to have, withdrawn.
//! - `negated`: an asked key with a value it does not have.
//!
//! Every confuser value is fresh (no key or value of the instance), and neither contains a gold
//! value nor is contained in one, so substring scoring (metric `all`) never credits a
//! confuser's value. An absent asked key (answer `none`) gets only near keys: a withdrawn or
//! denied code would still be a statement about the asked key.

use std::collections::BTreeSet;

use super::{ItemType, Niah};
use crate::rng::Rng;
use crate::GenError;

choice! {
    /// What kind of near-miss fact a confuser is.
    pub enum ConfuserKind {
        /// Another key, one edit from an asked key, with its own value.
        NearKey = "near_key",
        /// An asked key with a value said to be withdrawn.
        Superseded = "superseded",
        /// An asked key with a value it explicitly does not have.
        Negated = "negated",
    }
}

/// The most confusers one instance holds.
pub const MAX_CONFUSERS: u32 = 50;

/// One near-miss fact.
#[derive(Debug, Clone, PartialEq)]
pub struct Confuser {
    /// Which kind.
    pub kind: ConfuserKind,
    /// The key it names (a near key, or the asked key).
    pub key: String,
    /// The value it states (never a gold value).
    pub value: String,
    /// The sentence as placed in the context.
    pub sentence: String,
}

const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
const HEX: &[u8] = b"0123456789abcdef";

/// `key` with one character replaced by another of `alphabet` at a position `allowed` accepts.
fn substitute(
    key: &str,
    alphabet: &[u8],
    allowed: impl Fn(usize, char) -> bool,
    rng: &mut Rng,
) -> Option<String> {
    let chars: Vec<char> = key.chars().collect();
    let positions: Vec<usize> = (0..chars.len()).filter(|&i| allowed(i, chars[i])).collect();
    if positions.is_empty() {
        return None;
    }
    let p = *rng.choose(&positions);
    let choices: Vec<char> = alphabet
        .iter()
        .map(|&b| b as char)
        .filter(|&c| c != chars[p] && !(p == 0 && c == '0' && alphabet == b"0123456789"))
        .collect();
    let mut out = chars;
    out[p] = *rng.choose(&choices);
    Some(out.into_iter().collect())
}

/// A key one edit from `key` that keeps the shape of `kind` (see the module documentation).
/// `None` when `key` has no such neighbour (a key not of `kind`'s shape).
pub fn near_key(key: &str, kind: ItemType, rng: &mut Rng) -> Option<String> {
    match kind {
        ItemType::Numbers => substitute(key, b"0123456789", |_, c| c.is_ascii_digit(), rng),
        // Positions 14 and 19 hold the version (4) and variant digits.
        ItemType::Uuids => substitute(
            key,
            HEX,
            |i, c| c.is_ascii_hexdigit() && i != 14 && i != 19,
            rng,
        ),
        ItemType::Words => {
            let chars: Vec<char> = key.chars().collect();
            let letter = |i: usize| chars.get(i).is_some_and(|c| c.is_ascii_alphabetic());
            match rng.below(3) {
                0 => substitute(key, LETTERS, |_, c| c.is_ascii_alphabetic(), rng),
                1 => {
                    // Insert beside a letter, so the new letter joins a word.
                    let spots: Vec<usize> = (0..=chars.len())
                        .filter(|&i| (i > 0 && letter(i - 1)) || letter(i))
                        .collect();
                    if spots.is_empty() {
                        return None;
                    }
                    let at = *rng.choose(&spots);
                    let mut out = chars.clone();
                    out.insert(at, *rng.choose(LETTERS) as char);
                    Some(out.into_iter().collect())
                }
                _ => {
                    // Delete a letter whose word keeps at least one other.
                    let spots: Vec<usize> = (0..chars.len())
                        .filter(|&i| letter(i) && ((i > 0 && letter(i - 1)) || letter(i + 1)))
                        .collect();
                    if spots.is_empty() {
                        return None;
                    }
                    let mut out = chars.clone();
                    out.remove(*rng.choose(&spots));
                    Some(out.into_iter().collect())
                }
            }
        }
    }
}

/// The sentence of a confuser, in our own words.
pub fn sentence(kind: ConfuserKind, key: &str, value: &str) -> String {
    match kind {
        ConfuserKind::NearKey => Niah::needle_sentence(key, value),
        ConfuserKind::Superseded => format!(
            "For a while {value} was listed as an access code for {key}, but that entry was later withdrawn as a mistake."
        ),
        ConfuserKind::Negated => format!(
            "Despite a rumour to the contrary, {value} is not an access code assigned to {key}."
        ),
    }
}

/// Whether one of `a` and `b` contains the other, ignoring case (as scoring does).
fn overlaps(a: &str, b: &str) -> bool {
    let (a, b) = (a.to_lowercase(), b.to_lowercase());
    a.contains(&b) || b.contains(&a)
}

impl Niah {
    /// Draw the instance's confusers about `asked` keys, after everything else (so an instance
    /// without confusers draws exactly what it always did). `used` holds every key and value
    /// of the instance and gains the confusers'; `gold` holds the asked keys' values.
    pub(super) fn confusers(
        &self,
        asked: &[String],
        gold: &[String],
        rng: &mut Rng,
        used: &mut BTreeSet<String>,
    ) -> Result<Vec<Confuser>, GenError> {
        let exhausted = || {
            GenError::BadParams(format!(
                "niah cannot draw {} confusers: the near keys of the asked keys or the {} values are used up (use fewer confusers)",
                self.params.confusers, self.params.value_type
            ))
        };
        let mut out = Vec::new();
        for _ in 0..self.params.confusers {
            let kind = if self.params.absent {
                ConfuserKind::NearKey
            } else {
                *rng.choose(ConfuserKind::ALL)
            };
            let target = rng.choose(asked).clone();
            let key = match kind {
                ConfuserKind::NearKey => (0..super::MAX_DRAWS)
                    .find_map(|_| {
                        near_key(&target, self.params.key_type, rng).filter(|k| {
                            !used.contains(k)
                                && !asked.contains(k)
                                && gold.iter().all(|g| !overlaps(g, k))
                        })
                    })
                    .ok_or_else(exhausted)?,
                _ => target,
            };
            used.insert(key.clone());
            let value = (0..super::MAX_DRAWS)
                .find_map(|_| {
                    let v = self.item(self.params.value_type, rng);
                    let clear = !used.contains(&v) && gold.iter().all(|g| !overlaps(g, &v));
                    clear.then_some(v)
                })
                .ok_or_else(exhausted)?;
            used.insert(value.clone());
            out.push(Confuser {
                kind,
                sentence: sentence(kind, &key, &value),
                key,
                value,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    /// Levenshtein distance over characters (the test's own).
    fn distance(a: &str, b: &str) -> usize {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for i in 1..=a.len() {
            let mut cur = vec![i; b.len() + 1];
            for j in 1..=b.len() {
                let sub = prev[j - 1] + usize::from(a[i - 1] != b[j - 1]);
                cur[j] = sub.min(prev[j] + 1).min(cur[j - 1] + 1);
            }
            prev = cur;
        }
        prev[b.len()]
    }

    #[test]
    fn near_keys_are_one_edit_away_and_keep_their_shape() {
        let mut rng = Rng::from_seed_u64(5, Stream::Content);
        for key in [
            "cobalt-heron",
            "1234567",
            "3f2a9c1e-0b7d-4e5f-8a6b-1c2d3e4f5a6b",
        ] {
            let kind = match key.len() {
                7 => ItemType::Numbers,
                36 => ItemType::Uuids,
                _ => ItemType::Words,
            };
            for _ in 0..2000 {
                let k = near_key(key, kind, &mut rng).unwrap();
                assert_eq!(distance(key, &k), 1, "{key} -> {k}");
                match kind {
                    ItemType::Numbers => {
                        assert_eq!(k.len(), 7);
                        assert!(!k.starts_with('0'));
                    }
                    ItemType::Uuids => {
                        assert_eq!((&k[14..15], k.len()), ("4", 36));
                        assert_eq!(&k[19..20], &key[19..20]);
                        assert_eq!(k.matches('-').count(), 4);
                    }
                    ItemType::Words => {
                        let parts: Vec<&str> = k.split('-').collect();
                        assert_eq!(parts.len(), 2, "{k}");
                        assert!(parts
                            .iter()
                            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase())));
                    }
                }
            }
        }
    }
}
