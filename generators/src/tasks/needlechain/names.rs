//! People's names for chains: distinct, drawn in an order that longer chains extend, and from
//! a space that grows with the chain.

use std::collections::BTreeMap;

use crate::rng::Rng;

/// Letters of the middle initials that widen the name space once first and family name pairs
/// run out.
const INITIALS: &[u8; 26] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// The people of one instance, drawn one after another so that the i-th person never depends
/// on how many follow: a longer chain extends a shorter one, and prompt length grows steadily
/// with the chain (so the largest chain that fits a budget can be searched for). Every name is
/// a first and a family name from the first person on: switching from first names to full
/// names at some size would rename everyone at once and make the prompt jump by a thousand
/// tokens, stranding every budget in the jump. When the pairs run out, one and then two middle
/// initials open spaces 26 and 676 times larger, so chains of millions of people still have
/// distinct names. Each space is shuffled lazily (a partial Fisher–Yates shuffle whose moved
/// entries sit in a map): no name repeats and none is ever redrawn, however full the space.
pub(super) struct NameDraw<'a> {
    first: &'a [&'static str],
    family: &'a [&'static str],
    rng: Rng,
    /// Middle initials in the names of the current space.
    initials: u32,
    /// Names already drawn from the current space.
    taken: u64,
    /// Positions of the shuffle that hold another position's name.
    moved: BTreeMap<u64, u64>,
}

impl<'a> NameDraw<'a> {
    pub(super) fn new(first: &'a [&'static str], family: &'a [&'static str], rng: Rng) -> Self {
        NameDraw {
            first,
            family,
            rng,
            initials: 0,
            taken: 0,
            moved: BTreeMap::new(),
        }
    }

    /// Names in the current space.
    fn space(&self) -> u64 {
        (self.first.len() as u64 * self.family.len() as u64)
            .saturating_mul(26u64.saturating_pow(self.initials))
    }

    pub(super) fn next_name(&mut self) -> String {
        if self.taken >= self.space() {
            self.initials += 1;
            self.taken = 0;
            self.moved.clear();
        }
        let i = self.taken;
        let j = i + self.rng.below(self.space() - i);
        let pick = self.moved.get(&j).copied().unwrap_or(j);
        let displaced = self.moved.remove(&i).unwrap_or(i);
        if j != i {
            self.moved.insert(j, displaced);
        }
        self.taken += 1;
        self.name(pick)
    }

    /// The name at `index` of the current space: family name, then first name, then initials.
    fn name(&self, index: u64) -> String {
        let (families, firsts) = (self.family.len() as u64, self.first.len() as u64);
        let mut rest = index / families / firsts;
        let mut out = String::from(self.first[(index / families % firsts) as usize]);
        for _ in 0..self.initials {
            out.push(' ');
            out.push(char::from(INITIALS[(rest % 26) as usize]));
            out.push('.');
            rest /= 26;
        }
        out.push(' ');
        out.push_str(self.family[(index % families) as usize]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;
    use std::collections::BTreeSet;

    /// Names never repeat, a longer draw extends a shorter one, and the space widens with one
    /// and then two middle initials once the plain pairs are spent.
    #[test]
    fn names_are_distinct_prefix_stable_and_unbounded() {
        let first = ["Ada", "Bo"];
        let family = ["Cole", "Dunn", "Eng"];
        let draw = |n: usize| -> Vec<String> {
            let mut d = NameDraw::new(&first, &family, Rng::from_seed_u64(9, Stream::Names));
            (0..n).map(|_| d.next_name()).collect()
        };
        let long = draw(6 + 6 * 26 + 40);
        assert_eq!(draw(50)[..], long[..50]);
        let distinct: BTreeSet<&String> = long.iter().collect();
        assert_eq!(distinct.len(), long.len());
        let words = |n: &String| n.split(' ').count();
        assert!(long[..6].iter().all(|n| words(n) == 2), "{:?}", &long[..6]);
        assert!(long[6..162]
            .iter()
            .all(|n| words(n) == 3 && n.contains(". ")));
        assert!(long[162..].iter().all(|n| words(n) == 4));
    }
}
