//! `posgen`: position-generalisation sequences (the PosGen tasks of the Resonance RoPE paper).
//!
//! Integer sequences mod m where every token is a function of earlier ones. Models trained on
//! short sequences are tested on long ones; positions past the training length are
//! out-of-distribution. Train and test seed tuples come from disjoint halves of the tuple space,
//! so a test sequence never starts like a training one (the original reuses train seeds).
//!
//! Seed tuples are drawn without replacement: sample i of a split takes position i of a keyed
//! permutation of the tuple space (train the even positions, test the odd ones), so no two
//! samples of a dataset share a seed tuple although every instance is made on its own. A run
//! asking for more samples than the space holds is refused before any work.

use serde_json::json;

use crate::fit::render::render_facts;
use crate::fit::search::largest_fitting;
use crate::fit::Fitted;
use crate::rng::{Coordinates, Seed, Stream};
use crate::tasks::{Params, Part};
use crate::template::{vars, Vars};
use crate::Frame;
use crate::{canonical_json, Cell, GenError, Instance, Metric, ParamError, Run, Task};
use serde::{Deserialize, Serialize};

/// The task's name: its command, its manifests' tag and the key of its random streams.
pub const NAME: &str = "posgen";
/// One line saying what the task is.
pub const ABOUT: &str =
    "position generalisation: integer sequences mod m where each token depends on earlier ones";
/// The task's built-in templates, (name, source), the first its default.
pub const TEMPLATES: &[(&str, &str)] =
    &[("default", include_str!("../../templates/posgen/default.j2"))];

choice! {
    /// How each token depends on earlier ones.
    pub enum Variant {
        /// The previous j + k tokens.
        Recursive = "recursive",
        /// The previous j tokens and the first k tokens.
        Cot = "cot",
        /// The previous j tokens and k tokens at p = ⌊(t − j − k) / 2⌋.
        SemiRecursive = "semi-recursive" | "semi_recursive",
    }
}

impl Variant {
    /// The name in `params` and config names (an identifier, so `semi_recursive`).
    fn content_name(self) -> &'static str {
        match self {
            Variant::Recursive => "recursive",
            Variant::Cot => "cot",
            Variant::SemiRecursive => "semi_recursive",
        }
    }
}

choice! {
    /// The operation combining a token's inputs.
    pub enum Operation {
        /// Modular addition.
        Add = "add",
    }
}

choice! {
    /// Which split a posgen dataset holds; `both` makes a train and a test part.
    pub enum PosgenSplit {
        /// Training sequences (`train_len` positions).
        Train = "train",
        /// Test sequences (`test_len` positions).
        Test = "test",
        /// Both, with disjoint seed tuples.
        Both = "both",
    }
}

/// posgen's parameters, spelled as manifests record them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PosgenParams {
    /// Dependency structure.
    pub variant: Variant,
    /// Tokens are integers mod this.
    pub modulus: u64,
    /// j: near dependencies.
    pub near: usize,
    /// k: far dependencies.
    pub far: usize,
    /// The operation combining the inputs.
    pub op: Operation,
    /// Positions of a training sequence.
    pub train_len: usize,
    /// Positions of a test sequence.
    pub test_len: usize,
    /// Which split(s) the dataset holds.
    pub split: PosgenSplit,
    /// Let train and test share seed tuples.
    pub overlap: bool,
    /// Add a one-line statement of the rule to the prompt.
    pub explain: bool,
}

impl Params for PosgenParams {
    type Built = Vec<PosGen>;

    /// Check every parameter and make one task per split: `both` gives train then test.
    fn build(&self) -> Result<Vec<PosGen>, ParamError> {
        let (modulus, near, far) = (self.modulus, self.near, self.far);
        if !(2..=1_000_000).contains(&modulus) {
            return Err(ParamError::new("modulus", modulus, "2 to 1000000"));
        }
        if near == 0 || near > 64 {
            return Err(ParamError::new("near", near, "1 to 64 near dependencies"));
        }
        if far > 64 {
            return Err(ParamError::new("far", far, "0 to 64 far dependencies"));
        }
        let seed_len = near + far;
        for (name, len) in [("train_len", self.train_len), ("test_len", self.test_len)] {
            if len <= seed_len || len > MAX_POSITIONS {
                return Err(ParamError::new(
                    name,
                    len,
                    format!(
                        "more than the {seed_len} seed tokens and at most {MAX_POSITIONS} positions"
                    ),
                ));
            }
        }
        let splits: &[PosgenSplit] = match self.split {
            PosgenSplit::Both => &[PosgenSplit::Train, PosgenSplit::Test],
            PosgenSplit::Train => &[PosgenSplit::Train],
            PosgenSplit::Test => &[PosgenSplit::Test],
        };
        Ok(splits
            .iter()
            .map(|split| PosGen {
                variant: self.variant,
                modulus,
                near,
                far,
                train_len: self.train_len,
                test_len: self.test_len,
                split: split.as_str().to_string(),
                overlap: self.overlap,
                explain: self.explain,
            })
            .collect())
    }

    fn parts(&self) -> Result<Vec<Part>, ParamError> {
        let both = self.split == PosgenSplit::Both;
        Ok(self
            .build()?
            .into_iter()
            .map(|task| Part {
                split: both.then(|| {
                    if task.split == "train" {
                        "train"
                    } else {
                        "test"
                    }
                }),
                task: Box::new(task),
            })
            .collect())
    }

    fn native_size(&self) -> bool {
        true
    }
}

/// Validated posgen parameters for one split.
#[derive(Debug, Clone)]
pub struct PosGen {
    /// Dependency structure.
    pub variant: Variant,
    /// Tokens are integers mod this.
    pub modulus: u64,
    /// j: near dependencies.
    pub near: usize,
    /// k: far dependencies.
    pub far: usize,
    /// Positions of a training sequence.
    pub train_len: usize,
    /// Positions of a test sequence.
    pub test_len: usize,
    /// Which split this part is: `train` or `test`.
    pub split: String,
    /// Let train and test share seed tuples.
    pub overlap: bool,
    /// Add a one-line statement of the rule to the prompt.
    pub explain: bool,
}

/// Longest sequence accepted.
pub const MAX_POSITIONS: usize = 1 << 20;

impl PosGen {
    fn content_params(&self) -> serde_json::Value {
        json!({
            "variant": self.variant.content_name(),
            "modulus": self.modulus,
            "near": self.near,
            "far": self.far,
            "op": "add",
            "train_len": self.train_len,
            "test_len": self.test_len,
            "overlap": self.overlap,
            "explain": self.explain,
            "split": self.split,
        })
    }

    /// The full sequence of `len` positions from `seed`.
    pub fn sequence(&self, seed: &[u64], len: usize) -> Vec<u64> {
        let (j, k, m) = (self.near, self.far, self.modulus);
        let mut x = seed.to_vec();
        for t in seed.len()..len {
            let mut v: u64 = (1..=j).map(|i| x[t - i]).sum();
            v += match self.variant {
                Variant::Recursive => (j + 1..=j + k).map(|i| x[t - i]).sum::<u64>(),
                Variant::Cot => x[..k].iter().sum::<u64>(),
                Variant::SemiRecursive => {
                    let p = (t - j - k) / 2;
                    x[p..p + k].iter().sum::<u64>()
                }
            };
            x.push(v % m);
        }
        x
    }

    /// Whether this part is the test split (the odd positions of the tuple permutation).
    fn is_test(&self) -> bool {
        self.split == "test"
    }

    /// How seed tuples are laid out: the last `permuted` tokens come from a permutation of
    /// their `space` = modulus^permuted values, which covers the whole tuple when
    /// modulus^(near + far) fits in 64 bits. Larger spaces draw their first tokens at random;
    /// the permuted tail alone keeps tuples distinct, and it holds at least 2^44 of them.
    fn tuple_space(&self) -> (usize, u64) {
        let seed_len = self.near + self.far;
        let (mut permuted, mut space) = (0usize, 1u64);
        while permuted < seed_len {
            match space.checked_mul(self.modulus) {
                Some(s) => (permuted, space) = (permuted + 1, s),
                None => break,
            }
        }
        (permuted, space)
    }

    /// How many distinct seed tuples this split can hold: the whole space with `overlap`, else
    /// its half (train the even positions of the permutation, test the odd ones).
    pub fn distinct_tuples(&self) -> u64 {
        let (_, space) = self.tuple_space();
        if self.overlap {
            space
        } else if self.is_test() {
            space / 2
        } else {
            space - space / 2
        }
    }

    /// The refusal of `samples` samples when this split holds fewer distinct seed tuples.
    fn too_many(&self, samples: u64) -> ParamError {
        let (permuted, space) = self.tuple_space();
        let seed_len = self.near + self.far;
        let mut expected = format!("at most {}: ", self.distinct_tuples());
        let tuples = if permuted == seed_len {
            space.to_string()
        } else {
            format!("{}^{seed_len}", self.modulus)
        };
        expected += &format!(
            "modulus {} with {seed_len} seed tokens (near + far) has {tuples} distinct seed tuples",
            self.modulus
        );
        if !self.overlap {
            expected += &format!(
                ", split between train ({}) and test ({}) so that they never share one (overlap lets each split use all {tuples})",
                space - space / 2,
                space / 2
            );
        }
        ParamError::new("samples", samples, expected)
    }

    /// The seed tuples of a run seeded `master`: one keyed permutation of the tuple space for
    /// both splits, keyed by what defines that space (master seed, modulus, tuple length), so
    /// the train and test halves are disjoint even when made by separate runs. With `overlap`
    /// each split has a permutation of its own over the whole space.
    fn tuples(&self, master: Seed) -> Tuples<'_> {
        let (permuted, space) = self.tuple_space();
        let key = canonical_json(&json!({
            "modulus": self.modulus,
            "seed_len": self.near + self.far,
            "split": if self.overlap { self.split.as_str() } else { "both" },
        }));
        let mut rng = Coordinates {
            task: "posgen-tuples",
            params: &key,
            seed: master,
            length: 0,
            depth: None,
            sample: 0,
        }
        .rng(Stream::Content);
        Tuples {
            task: self,
            master,
            params: canonical_json(&self.content_params()),
            permuted,
            permutation: Permutation::new(space, std::array::from_fn(|_| rng.next_u64())),
        }
    }

    /// The seed tuple of sample `sample` of this split: distinct for distinct samples, and never
    /// one of the other split's unless `overlap`. Every length of a run shows sample i with the
    /// same seed, so the accuracy curve over length measures length alone.
    pub fn seed_tuple(&self, master: impl Into<Seed>, sample: u64) -> Result<Vec<u64>, GenError> {
        self.tuples(master.into()).get(sample)
    }

    /// The template frame of every instance (the rule, when asked for, is the same for all).
    fn frame(&self, run: &Run) -> Result<Frame, GenError> {
        let rule = if self.explain {
            self.rule()
        } else {
            String::new()
        };
        run.frame(&vars([("rule", &rule), ("question", "")]), "")
    }

    /// The prompt of a seed tuple, and the tokens the smallest instance of it needs in the
    /// model's window: what the model reads, and the answer budget of one continuation token.
    fn prompt(
        &self,
        run: &Run,
        frame: &Frame,
        sequence: &[u64],
    ) -> Result<(Fitted, usize), GenError> {
        let seed_len = self.near + self.far;
        let fitted = render_facts(&run.tokenizer, frame, &[numbers(&sequence[..seed_len])])?;
        let needed = window_tokens(run, &fitted, &sequence[seed_len..seed_len + 1])?;
        Ok((fitted, needed))
    }

    fn rule(&self) -> String {
        let (j, k) = (self.near, self.far);
        let far = match self.variant {
            Variant::Recursive => format!("the {k} before those"),
            Variant::Cot => format!("the first {k} of the sequence"),
            Variant::SemiRecursive => format!(
                "{k} taken from about half-way back (position (t - {j} - {k}) / 2, rounded down)"
            ),
        };
        format!(
            "Each number is the sum, modulo {}, of the {j} numbers just before it and {far}.",
            self.modulus
        )
    }
}

/// Numbers as the prompt writes them: separated by single spaces.
fn numbers(values: &[u64]) -> String {
    values
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Tokens of the model's window for `continuation` after `fitted`: what the model reads plus
/// the answer budget for writing the continuation (per row, or `--reserve`, which the
/// continuation must then fit in).
fn window_tokens(run: &Run, fitted: &Fitted, continuation: &[u64]) -> Result<usize, GenError> {
    let target = numbers(continuation);
    if run.reserve > 0 && run.tokenizer.count(&target)? as u64 > run.reserve {
        return Ok(usize::MAX / 2);
    }
    Ok(fitted.prompt_tokens + run.answer_tokens(&target)? as usize)
}

/// The seed tuples of one split of one run (see [`PosGen::tuples`]).
struct Tuples<'a> {
    task: &'a PosGen,
    master: Seed,
    /// Canonical content parameters: the random leading tokens of huge spaces are drawn from
    /// each sample's own stream.
    params: String,
    /// Trailing tokens that come from the permutation.
    permuted: usize,
    permutation: Permutation,
}

impl Tuples<'_> {
    fn get(&self, sample: u64) -> Result<Vec<u64>, GenError> {
        let task = self.task;
        if sample >= task.distinct_tuples() {
            return Err(task.too_many(sample.saturating_add(1)).into());
        }
        let position = if task.overlap {
            sample
        } else {
            2 * sample + u64::from(task.is_test())
        };
        let m = task.modulus;
        let seed_len = task.near + task.far;
        let mut rng = Coordinates {
            task: NAME,
            params: &self.params,
            seed: self.master,
            length: 0,
            depth: None,
            sample,
        }
        .rng(Stream::Content);
        let mut tuple: Vec<u64> = (self.permuted..seed_len).map(|_| rng.below(m)).collect();
        let mut value = self.permutation.apply(position);
        let mut tail = vec![0u64; self.permuted];
        for digit in tail.iter_mut().rev() {
            *digit = value % m;
            value /= m;
        }
        tuple.extend(tail);
        Ok(tuple)
    }
}

/// Rounds of the Feistel network behind [`Permutation`].
const FEISTEL_ROUNDS: usize = 6;

/// A keyed bijection of `0..n`: a balanced Feistel network over the smallest even number of
/// bits that covers `n`, cycle-walked back into range. Instances are made independently (in
/// parallel, in any order), so each computes its own seed tuple from its index alone; distinct
/// indices give distinct values, which is sampling without replacement with no instance seeing
/// another.
struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; FEISTEL_ROUNDS],
}

impl Permutation {
    fn new(n: u64, keys: [u64; FEISTEL_ROUNDS]) -> Self {
        let bits = u64::BITS - n.saturating_sub(1).leading_zeros();
        Permutation {
            n,
            half_bits: bits.div_ceil(2).max(1),
            keys,
        }
    }

    /// One pass of the network over `0..2^(2 half_bits)`, a bijection of that range.
    fn feistel(&self, x: u64) -> u64 {
        let h = self.half_bits;
        let mask = (1u64 << h) - 1;
        let (mut left, mut right) = (x >> h, x & mask);
        for &key in &self.keys {
            let f = xxhash_rust::xxh3::xxh3_64_with_seed(&right.to_le_bytes(), key) & mask;
            (left, right) = (right, left ^ f);
        }
        (left << h) | right
    }

    /// The image of `x < n`: walking the network's cycle from `x` until it is back in range
    /// keeps the map a bijection of `0..n` (at most four steps on average, as n is more than a
    /// quarter of the network's range).
    fn apply(&self, x: u64) -> u64 {
        let mut y = self.feistel(x);
        while y >= self.n {
            y = self.feistel(y);
        }
        y
    }
}

impl Task for PosGen {
    /// The seed tuple.
    fn identity(&self, instance: &Instance) -> Vec<String> {
        crate::identity::fact_key(instance, "seed", "seed_tokens")
    }

    /// The seed is the whole prompt: there is no question to ask without it.
    fn has_context(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn variant(&self) -> String {
        self.variant.content_name().to_string()
    }

    fn params(&self) -> serde_json::Value {
        self.content_params()
    }

    fn uses_haystack(&self) -> bool {
        false
    }

    fn default_reserve(&self) -> u32 {
        0
    }

    fn example_vars(&self) -> Vars {
        vars([
            ("rule", "Each number is the sum of the three before it."),
            ("question", ""),
        ])
    }

    fn minimum_length(&self, run: &Run) -> Result<u64, GenError> {
        self.minimum_length_for(run, 1)
    }

    /// The largest need over the run's samples (their seed tuples differ in digits, so in
    /// tokens): the prompt, and the prompt with one continuation token, fit at this length.
    fn minimum_length_for(&self, run: &Run, samples: u64) -> Result<u64, GenError> {
        let frame = self.frame(run)?;
        let tuples = self.tuples(run.seed);
        let seed_len = self.near + self.far;
        let mut needed = 0usize;
        for sample in 0..samples.min(self.distinct_tuples()) {
            let sequence = self.sequence(&tuples.get(sample)?, seed_len + 1);
            needed = needed.max(self.prompt(run, &frame, &sequence)?.1);
        }
        Ok(needed as u64)
    }

    fn check_samples(&self, samples: u64) -> Result<(), ParamError> {
        if samples > self.distinct_tuples() {
            return Err(self.too_many(samples));
        }
        Ok(())
    }

    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
        let seed_tokens = self.seed_tuple(run.seed, cell.sample)?;
        let seed_len = self.near + self.far;
        let mut native = if self.split == "train" {
            self.train_len
        } else {
            self.test_len
        };
        let frame = self.frame(run)?;
        // The prompt is the seed (after the rule, when asked for); the model writes the rest.
        let first = self.sequence(&seed_tokens, seed_len + 1);
        let (fitted, needed) = self.prompt(run, &frame, &first)?;
        if cell.length > 0 {
            // --len sizes the model's window: what it reads and the budget for the
            // continuation it writes. The most positions whose window fits.
            let budget = cell.length as usize;
            if needed > budget {
                return Err(GenError::TooShort { budget, needed });
            }
            let longest = self.sequence(&seed_tokens, MAX_POSITIONS.min(budget + seed_len + 1));
            let (n, _) = largest_fitting(seed_len + 1, longest.len(), budget, |n| {
                Ok(((), window_tokens(run, &fitted, &longest[seed_len..n])?))
            })?;
            native = n;
        }
        let sequence = self.sequence(&seed_tokens, native);
        let continuation: Vec<String> = sequence[seed_len..].iter().map(u64::to_string).collect();
        let target = continuation.join(" ");
        let max_new_tokens = run.answer_tokens(&target)?;
        let mut p = self.content_params();
        p["seed_tokens"] = json!(seed_tokens);
        p["sequence"] = json!(sequence);
        p["ood_from"] = json!(self.train_len);
        p["positions"] = json!(native);
        let fitted = fitted.keep_needles(false);
        Ok(Instance {
            target,
            answers: continuation,
            metric: Metric::Exact,
            max_new_tokens,
            params: canonical_json(&p),
            ..Instance::fitted(self, run, cell, fitted)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(variant: &str) -> PosGen {
        PosgenParams {
            variant: variant.parse().unwrap(),
            modulus: 17,
            near: 3,
            far: 1,
            op: Operation::Add,
            train_len: 64,
            test_len: 256,
            split: PosgenSplit::Test,
            overlap: false,
            explain: false,
        }
        .build()
        .unwrap()
        .remove(0)
    }

    #[test]
    fn anchor_examples() {
        // The worked examples of the Resonance RoPE paper (m = 17, seed 0 1 2 3).
        let seed = [0, 1, 2, 3];
        assert_eq!(
            task("recursive").sequence(&seed, 10)[4..],
            [6, 12, 6, 10, 0, 11]
        );
        assert_eq!(task("cot").sequence(&seed, 10)[4..], [6, 11, 3, 3, 0, 6]);
        assert_eq!(
            task("semi-recursive").sequence(&seed, 10)[4..],
            [6, 11, 4, 5, 5, 16]
        );
    }

    fn split(base: &PosGen, split: &str, overlap: bool) -> PosGen {
        PosGen {
            split: split.into(),
            overlap,
            ..base.clone()
        }
    }

    #[test]
    fn permutations_are_bijections() {
        for n in [1u64, 2, 3, 5, 16, 17, 100, 289, 1000, 4913] {
            let p = Permutation::new(n, [1, 2, 3, 4, 5, n]);
            let mut seen: Vec<u64> = (0..n).map(|x| p.apply(x)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>(), "n = {n}");
        }
    }

    /// Sampling without replacement: before, 3,000 default samples held about 90 repeated
    /// seed tuples per split, and a tiny modulus repeated whole rows.
    #[test]
    fn seed_tuples_are_distinct_and_the_splits_disjoint() {
        let base = task("recursive");
        let (train, test) = (split(&base, "train", false), split(&base, "test", false));
        let mut all = std::collections::BTreeSet::new();
        for t in [&train, &test] {
            for sample in 0..3000 {
                let tuple = t.seed_tuple(5, sample).unwrap();
                assert!(tuple.iter().all(|&x| x < 17));
                assert!(all.insert(tuple), "{} sample {sample} repeats", t.split);
            }
        }
        // A tiny space is used up exactly: 2^4 tuples, 8 per split.
        let tiny = PosGen {
            modulus: 2,
            ..base.clone()
        };
        let mut all = std::collections::BTreeSet::new();
        for name in ["train", "test"] {
            let t = split(&tiny, name, false);
            assert_eq!(t.distinct_tuples(), 8);
            for sample in 0..8 {
                assert!(all.insert(t.seed_tuple(1, sample).unwrap()));
            }
            assert!(t.check_samples(8).is_ok());
            let e = t.check_samples(9).unwrap_err();
            assert_eq!((e.param, e.value.as_str()), ("samples", "9"));
            assert!(e.expected.starts_with("at most 8: "), "{}", e.expected);
            assert!(t.seed_tuple(1, 8).is_err());
        }
        assert_eq!(all.len(), 16);
        let overlapping = split(&tiny, "test", true);
        assert_eq!(overlapping.distinct_tuples(), 16);
        let mut own: Vec<_> = (0..16)
            .map(|s| overlapping.seed_tuple(1, s).unwrap())
            .collect();
        own.sort();
        own.dedup();
        assert_eq!(own.len(), 16);
    }

    #[test]
    fn huge_spaces_keep_a_permuted_tail() {
        let t = PosGen {
            modulus: 1_000_000,
            near: 40,
            far: 10,
            ..task("cot")
        };
        assert_eq!(t.tuple_space().0, 3);
        assert_eq!(t.distinct_tuples(), 500_000_000_000_000_000);
        let a = t.seed_tuple(3, 0).unwrap();
        let b = t.seed_tuple(3, 1).unwrap();
        assert_eq!(a.len(), 50);
        assert_ne!(a[47..], b[47..]);
    }
}
