//! `gen sort`: sorting at any length.

use std::borrow::Cow;

use anyhow::Result;
use clap::Args;
use needlework_generators::tasks::sort::{self, SortOutput, SortParams};
use needlework_generators::tasks::TaskParams;

use super::{parse_range, TaskArgs, DIGITS_FORMS};
use crate::cli::common::CommonArgs;
use crate::usage::usage;

#[derive(Debug, Args, Clone)]
pub struct SortArgs {
    /// Number of items (default: as many as fit --len; 20 with a haystack).
    #[arg(long)]
    pub items: Option<usize>,
    /// Digit count range of integers, like 3 or 1..5.
    #[arg(long, default_value = "1..3")]
    pub digits: String,
    /// Sort words instead of integers.
    #[arg(long)]
    pub words: bool,
    /// Allow repeated items.
    #[arg(long)]
    pub duplicates: bool,
    /// Largest first.
    #[arg(long)]
    pub descending: bool,
    /// values, or keys (labels ordered by their values: K:25,L:7,M:319 -> L,K,M).
    #[arg(long, default_value = "values")]
    pub output: SortOutput,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl TaskArgs for SortArgs {
    const NAME: &'static str = sort::NAME;
    const ABOUT: &'static str = sort::ABOUT;

    /// `--items` without a haystack fixes the size, so `--len` would only mislabel it.
    fn params(&self) -> Result<TaskParams> {
        let hidden = self.common.has_haystack();
        if self.items.is_some() && !hidden && self.common.len.is_some() {
            return Err(usage(
                "--len does not apply with --items and no haystack: the list has its own length (drop --items to fill --len, or add --haystack to hide the items in it)",
            ));
        }
        Ok(TaskParams::Sort(SortParams {
            words: self.words,
            digits: parse_range(&self.digits, "--digits", DIGITS_FORMS)?,
            duplicates: self.duplicates,
            descending: self.descending,
            output: self.output,
            items: self.items,
            hidden,
        }))
    }

    fn common(&self) -> Result<Cow<'_, CommonArgs>> {
        Ok(Cow::Borrowed(&self.common))
    }
}
