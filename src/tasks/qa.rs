//! `gen qa`: document QA over the user's SQuAD or HotpotQA file.

use std::borrow::Cow;

use anyhow::Result;
use clap::Args;
use needlework_generators::haystack::documents::DocFormat;
use needlework_generators::tasks::qa::{self, QaFormat, QaParams};
use needlework_generators::tasks::TaskParams;

use super::TaskArgs;
use crate::cli::common::CommonArgs;
use crate::usage::{refused, usage};

#[derive(Debug, Args, Clone)]
pub struct QaArgs {
    /// The SQuAD (v1.1/v2.0) or HotpotQA JSON file whose paragraphs and questions are used;
    /// it is the haystack, recorded by hash. Nothing is downloaded.
    #[arg(long)]
    pub data: String,
    /// squad or hotpotqa (default: detected from the file: SQuAD is an object, HotpotQA a list).
    #[arg(long)]
    pub format: Option<String>,
    /// Score by exact match with one of the gold answers (metric one_of) instead of "a gold
    /// answer occurs in the output" (metric any, RULER's).
    #[arg(long)]
    pub exact: bool,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl TaskArgs for QaArgs {
    const NAME: &'static str = qa::NAME;
    const ABOUT: &'static str = qa::ABOUT;
    const KEPT: &'static [&'static str] = &["--format"];
    const HAYSTACK_FLAG: &'static str = "--data";

    /// The file's format as given, else as its first bytes say.
    fn params(&self) -> Result<TaskParams> {
        let format = match &self.format {
            Some(f) => f.parse::<QaFormat>().map_err(refused)?,
            None => {
                let head = crate::run::paths::read_head(std::path::Path::new(&self.data), 4096)
                    .map_err(|e| usage(format!("invalid --data '{}': {e}", self.data)))?;
                let detected = DocFormat::detect(&head).ok_or_else(|| {
                    usage(format!(
                        "invalid --data '{}': expected SQuAD JSON (an object with \"data\") or HotpotQA JSON (a list of questions)",
                        self.data
                    ))
                })?;
                QaFormat::of(detected)
            }
        };
        Ok(TaskParams::Qa(QaParams {
            format,
            exact: self.exact,
        }))
    }

    /// qa's haystack is its `--data` file.
    fn common(&self) -> Result<Cow<'_, CommonArgs>> {
        let mut common = self.common.clone();
        if let Some(h) = common.haystack.replace(self.data.clone()) {
            return Err(usage(format!(
                "--haystack {h} does not apply: qa's haystack is its --data file (the paragraphs of {})",
                self.data
            )));
        }
        Ok(Cow::Owned(common))
    }
}
