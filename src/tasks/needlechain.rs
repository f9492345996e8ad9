//! `gen needlechain`: contexts made only of relevant facts.

use std::borrow::Cow;

use anyhow::Result;
use clap::Args;
use needlework_generators::tasks::needlechain::{self, Kind, NeedlechainParams, Order, Question};
use needlework_generators::tasks::TaskParams;

use super::TaskArgs;
use crate::cli::common::CommonArgs;

#[derive(Debug, Args, Clone)]
pub struct NeedlechainArgs {
    /// salary (NeedleChain) or kinship (Ancestral Trace).
    #[arg(long, default_value = "salary")]
    pub kind: Kind,
    /// forward, backward, shuffled or parallel (salary only).
    #[arg(long, default_value = "forward")]
    pub order: Order,
    /// salary: single or total; kinship: eldest, ancestor or distance.
    #[arg(long)]
    pub question: Option<Question>,
    /// Exact number of facts (default: the largest chain that fits --len).
    #[arg(long)]
    pub chain: Option<u32>,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl TaskArgs for NeedlechainArgs {
    const NAME: &'static str = needlechain::NAME;
    const ABOUT: &'static str = needlechain::ABOUT;

    /// The question defaults by kind; a haystack dilutes the chain.
    fn params(&self) -> Result<TaskParams> {
        Ok(TaskParams::Needlechain(NeedlechainParams {
            kind: self.kind,
            order: self.order,
            question: self.question.unwrap_or(self.kind.default_question()),
            chain: self.chain,
            diluted: self.common.has_haystack(),
        }))
    }

    fn common(&self) -> Result<Cow<'_, CommonArgs>> {
        Ok(Cow::Borrowed(&self.common))
    }
}
