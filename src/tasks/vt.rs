//! `gen vt`: variable tracking.

use std::borrow::Cow;

use anyhow::Result;
use clap::Args;
use needlework_generators::tasks::vt::{self, VtParams};
use needlework_generators::tasks::TaskParams;

use super::TaskArgs;
use crate::cli::common::CommonArgs;

#[derive(Debug, Args, Clone)]
pub struct VtArgs {
    /// Chains of assignments; the first chain's value is asked about.
    #[arg(long, default_value_t = 1)]
    pub chains: u32,
    /// Variable-to-variable assignments after each chain's first (its value).
    #[arg(long, default_value_t = 4)]
    pub hops: u32,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl TaskArgs for VtArgs {
    const NAME: &'static str = vt::NAME;
    const ABOUT: &'static str = vt::ABOUT;

    fn params(&self) -> Result<TaskParams> {
        Ok(TaskParams::Vt(VtParams {
            chains: self.chains,
            hops: self.hops,
        }))
    }

    fn common(&self) -> Result<Cow<'_, CommonArgs>> {
        Ok(Cow::Borrowed(&self.common))
    }
}
