//! `gen fwe`: frequent words extraction.

use std::borrow::Cow;

use anyhow::Result;
use clap::Args;
use needlework_generators::tasks::fwe::{self, FweParams};
use needlework_generators::tasks::TaskParams;

use super::TaskArgs;
use crate::cli::common::CommonArgs;

#[derive(Debug, Args, Clone)]
pub struct FweArgs {
    /// The Zipf exponent of the word counts (1 to 4).
    #[arg(long, default_value_t = 2.0)]
    pub alpha: f64,
    /// How many of the most frequent coded words are asked for.
    #[arg(long, default_value_t = 3)]
    pub top: u32,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl TaskArgs for FweArgs {
    const NAME: &'static str = fwe::NAME;
    const ABOUT: &'static str = fwe::ABOUT;

    fn params(&self) -> Result<TaskParams> {
        Ok(TaskParams::Fwe(FweParams {
            alpha: self.alpha,
            top: self.top,
        }))
    }

    fn common(&self) -> Result<Cow<'_, CommonArgs>> {
        Ok(Cow::Borrowed(&self.common))
    }
}
