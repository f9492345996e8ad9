//! `posgen`: position-generalisation sequences (the PosGen tasks of the Resonance RoPE paper).
//!
//! Integer sequences mod m where every token is a function of earlier ones. Models trained on
//! short sequences are tested on long ones; positions past the training length are
//! out-of-distribution. Train and test seed tuples come from disjoint halves of the tuple space,
//! so a test sequence never starts like a training one (the original reuses train seeds).

use serde_json::json;

use crate::fit::render_facts;
use crate::rng::{Coordinates, Stream};
use crate::template::{vars, Vars};
use crate::{canonical_json, Cell, GenError, Instance, Metric, ParamError, Run, Task};
use serde::{Deserialize, Serialize};

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

impl PosgenParams {
    /// Check every parameter and make one task per split: `both` gives train then test.
    pub fn build(&self) -> Result<Vec<PosGen>, ParamError> {
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

    /// Which half of the seed-tuple space a tuple belongs to: 0 train, 1 test.
    fn half(&self, seed_tokens: &[u64], master: u64) -> u64 {
        let mut h = crate::hash::FieldHasher::new();
        h.str("posgen-split").u64(master);
        for &t in seed_tokens {
            h.u64(t);
        }
        u64::from_str_radix(&h.hex()[..8], 16).unwrap_or(0) & 1
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

impl Task for PosGen {
    fn name(&self) -> &'static str {
        "posgen"
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
        let frame = run.template.frame(&self.example_vars())?;
        let n = run
            .tokenizer
            .count(&format!("{}{}", frame.prefix, frame.suffix))?;
        Ok(n as u64 + 2 * (self.near + self.far) as u64 + run.reserve)
    }

    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
        let params = canonical_json(&self.content_params());
        let coords = Coordinates {
            task: "posgen",
            params: &params,
            seed: run.seed,
            length: cell.length,
            depth: None,
            sample: cell.sample,
        };
        // The seed tuple depends on the sample only (not the split), drawn until it falls in
        // this split's half of the tuple space.
        let tuple_coords = Coordinates {
            length: 0,
            ..coords.clone()
        };
        let mut rng = tuple_coords.rng(Stream::Content);
        let want_half = u64::from(self.split == "test");
        let seed_len = self.near + self.far;
        let seed_tokens = loop {
            let t: Vec<u64> = (0..seed_len).map(|_| rng.below(self.modulus)).collect();
            if self.overlap || self.half(&t, run.seed) == want_half {
                break t;
            }
        };
        let mut native = if self.split == "train" {
            self.train_len
        } else {
            self.test_len
        };
        let rule = if self.explain {
            self.rule()
        } else {
            String::new()
        };
        let frame = run
            .template
            .frame(&vars([("rule", &rule), ("question", "")]))?;
        let tok = &run.tokenizer;
        // The prompt is the seed; its size does not depend on the sequence length, so --len
        // only bounds the prompt and the sequence keeps its native length.
        let seed_text = seed_tokens
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(" ");
        let fitted = render_facts(tok, &frame, &[seed_text])?;
        let budget = cell.length.saturating_sub(run.reserve) as usize;
        if cell.length > 0 {
            // --len sizes the whole sequence (seed and continuation): the most positions whose
            // text fits the budget.
            let longest = self.sequence(&seed_tokens, MAX_POSITIONS.min(budget + seed_len + 1));
            let text_of = |n: usize| {
                longest[..n]
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let (n, _) = crate::fit::largest_fitting(seed_len + 1, longest.len(), budget, |n| {
                Ok(((), tok.count(&text_of(n))?))
            })?;
            native = n;
        }
        let sequence = self.sequence(&seed_tokens, native);
        let continuation: Vec<String> = sequence[seed_len..].iter().map(u64::to_string).collect();
        let target = continuation.join(" ");
        let target_tokens = tok.count(&target)?;
        let mut p = self.content_params();
        p["seed_tokens"] = json!(seed_tokens);
        p["sequence"] = json!(sequence);
        p["ood_from"] = json!(self.train_len);
        p["positions"] = json!(native);
        Ok(Instance {
            input: fitted.input,
            target,
            answers: continuation,
            metric: Metric::Exact,
            max_new_tokens: (target_tokens + 16) as u32,
            length: fitted.length as u64,
            params: canonical_json(&p),
            ..Instance::at(self, run, cell)
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

    #[test]
    fn halves_split_the_tuple_space() {
        let t = task("cot");
        let mut counts = [0u32; 2];
        for a in 0..17 {
            for b in 0..17 {
                counts[t.half(&[a, b, 1, 2], 9) as usize] += 1;
            }
        }
        assert!(counts[0] > 100 && counts[1] > 100, "{counts:?}");
    }
}
