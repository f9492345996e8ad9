//! `gen cwe`: common words extraction.

use std::borrow::Cow;

use anyhow::Result;
use clap::Args;
use needlework_generators::tasks::cwe::{self, CweParams};
use needlework_generators::tasks::TaskParams;

use super::TaskArgs;
use crate::cli::common::CommonArgs;

#[derive(Debug, Args, Clone)]
pub struct CweArgs {
    /// How many common words (the answer).
    #[arg(long, default_value_t = 10)]
    pub common: u32,
    /// How often each common word appears.
    #[arg(long, default_value_t = 30)]
    pub common_repeats: u32,
    /// How often every other word appears (fewer than --common-repeats).
    #[arg(long, default_value_t = 3)]
    pub rare_repeats: u32,
    #[command(flatten)]
    pub common_args: CommonArgs,
}

impl TaskArgs for CweArgs {
    const NAME: &'static str = cwe::NAME;
    const ABOUT: &'static str = cwe::ABOUT;

    fn params(&self) -> Result<TaskParams> {
        Ok(TaskParams::Cwe(CweParams {
            common: self.common,
            common_repeats: self.common_repeats,
            rare_repeats: self.rare_repeats,
        }))
    }

    fn common(&self) -> Result<Cow<'_, CommonArgs>> {
        Ok(Cow::Borrowed(&self.common_args))
    }
}
