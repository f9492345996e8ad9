//! `gen echo`: the throwaway task's command line.

use std::borrow::Cow;

use anyhow::Result;
use clap::Args;
use needlework_generators::tasks::echo::{self, EchoParams};
use needlework_generators::tasks::TaskParams;

use super::TaskArgs;
use crate::cli::common::CommonArgs;

#[derive(Debug, Args, Clone)]
pub struct EchoArgs {
    /// Digits of the number to copy.
    #[arg(long, default_value_t = 7)]
    pub digits: u32,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl TaskArgs for EchoArgs {
    const NAME: &'static str = echo::NAME;
    const ABOUT: &'static str = echo::ABOUT;

    fn params(&self) -> Result<TaskParams> {
        Ok(TaskParams::Echo(EchoParams {
            digits: self.digits,
        }))
    }

    fn common(&self) -> Result<Cow<'_, CommonArgs>> {
        Ok(Cow::Borrowed(&self.common))
    }
}
