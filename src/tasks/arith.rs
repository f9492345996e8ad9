//! `gen arith`: arithmetic at any number of digits.

use std::borrow::Cow;

use anyhow::Result;
use clap::Args;
use needlework_generators::tasks::arith::{self, ArithParams, Carries, Layout, Op};
use needlework_generators::tasks::TaskParams;

use super::{parse_range, TaskArgs, DIGITS_FORMS};
use crate::cli::common::CommonArgs;
use crate::usage::usage;

#[derive(Debug, Args, Clone)]
pub struct ArithArgs {
    /// add, sub, mul, or sum (numbers hidden in a haystack).
    #[arg(long, default_value = "add")]
    pub op: Op,
    /// Digits per operand, like 40 or 1..40 (the count is drawn first, then the digits).
    #[arg(long, default_value = "1..10")]
    pub digits: String,
    /// any, none or max (add and sub).
    #[arg(long, default_value = "any")]
    pub carries: Carries,
    /// plain, reversed, reversed-answer, padded or hints.
    #[arg(long, default_value = "plain")]
    pub layout: Layout,
    /// How many numbers --op sum hides.
    #[arg(long)]
    pub count: Option<usize>,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl TaskArgs for ArithArgs {
    const NAME: &'static str = arith::NAME;
    const ABOUT: &'static str = arith::ABOUT;

    /// `--count` belongs to `--op sum`.
    fn params(&self) -> Result<TaskParams> {
        if self.count.is_some() && self.op != Op::Sum {
            return Err(usage(format!(
                "--count does not apply to --op {}: it sets how many numbers --op sum hides",
                self.op
            )));
        }
        Ok(TaskParams::Arith(ArithParams {
            op: self.op,
            digits: parse_range(&self.digits, "--digits", DIGITS_FORMS)?,
            carries: self.carries,
            layout: self.layout,
            count: self.count,
        }))
    }

    fn common(&self) -> Result<Cow<'_, CommonArgs>> {
        Ok(Cow::Borrowed(&self.common))
    }
}
