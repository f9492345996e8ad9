//! `gen posgen`: position-generalisation sequences.

use std::borrow::Cow;

use anyhow::Result;
use clap::Args;
use needlework_generators::tasks::posgen::{self, Operation, PosgenParams, PosgenSplit, Variant};
use needlework_generators::tasks::TaskParams;

use super::TaskArgs;
use crate::cli::common::CommonArgs;
use crate::usage::usage;

#[derive(Debug, Args, Clone)]
pub struct PosgenArgs {
    /// recursive, cot or semi-recursive.
    #[arg(long, default_value = "recursive")]
    pub variant: Variant,
    /// Tokens are integers modulo this.
    #[arg(long, default_value_t = 17)]
    pub modulus: u64,
    /// j: how many previous tokens each token depends on.
    #[arg(long, default_value_t = 3)]
    pub near: usize,
    /// k: how many far tokens each token depends on.
    #[arg(long, default_value_t = 1)]
    pub far: usize,
    /// The operation combining the inputs (add: modular addition).
    #[arg(long, default_value = "add")]
    pub op: Operation,
    /// Positions of a training sequence.
    #[arg(long, default_value_t = 64)]
    pub train_len: usize,
    /// Positions of a test sequence.
    #[arg(long, default_value_t = 256)]
    pub test_len: usize,
    /// Let train and test sequences share seed tuples (disjoint by default).
    #[arg(long)]
    pub overlap: bool,
    /// State the rule in one line before the seed.
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl TaskArgs for PosgenArgs {
    const NAME: &'static str = posgen::NAME;
    const ABOUT: &'static str = posgen::ABOUT;

    /// `--split` picks train, test or both.
    fn params(&self) -> Result<TaskParams> {
        let split: PosgenSplit = self.common.split.parse().map_err(|_| {
            usage(format!(
                "invalid --split '{}' for posgen: expected train, test or both (their seed tuples are disjoint)",
                self.common.split
            ))
        })?;
        Ok(TaskParams::Posgen(PosgenParams {
            variant: self.variant,
            modulus: self.modulus,
            near: self.near,
            far: self.far,
            op: self.op,
            train_len: self.train_len,
            test_len: self.test_len,
            split,
            overlap: self.overlap,
            explain: self.explain,
        }))
    }

    fn common(&self) -> Result<Cow<'_, CommonArgs>> {
        Ok(Cow::Borrowed(&self.common))
    }
}
