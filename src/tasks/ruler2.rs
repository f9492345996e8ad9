//! `gen ruler2`: RULER v2's twelve tasks. The six MMLU variants read the user's MMLU directory,
//! the four qa variants a HotpotQA file, both given as `--data` (the recipe's haystack); the
//! two basic variants make their own lines and take no data.

use std::borrow::Cow;
use std::path::Path;

use anyhow::Result;
use clap::Args;
use needlework_generators::haystack::documents::DocFormat;
use needlework_generators::tasks::ruler2::{self, Ruler2Data, Ruler2Params, Ruler2Variant};
use needlework_generators::tasks::TaskParams;

use super::TaskArgs;
use crate::cli::common::CommonArgs;
use crate::usage::usage;

#[derive(Debug, Args, Clone)]
pub struct Ruler2Args {
    /// One of RULER v2's twelve tasks: mk_niah_basic|easy|medium|hard,
    /// mv_niah_basic|easy|medium|hard, qa_basic|easy|medium|hard.
    #[arg(long)]
    pub variant: String,
    /// mv: the items (or values) each id (or key) labels.
    #[arg(long, default_value_t = 4)]
    pub per_id: u32,
    /// mk_niah_medium and mk_niah_hard: worked examples drawn from the context.
    #[arg(long, default_value_t = 5)]
    pub shots: u32,
    /// The MMLU directory (the Hub's cais/mmlu `all` config: test-*.parquet and
    /// auxiliary_train-*.parquet, or test.jsonl and auxiliary_train.jsonl) for the mk/mv
    /// easy, medium and hard variants; the HotpotQA JSON file for the qa variants. It is the
    /// haystack, recorded by hash; the basic variants take none. Nothing is downloaded.
    #[arg(long)]
    pub data: Option<String>,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl Ruler2Args {
    fn variant(&self) -> Result<Ruler2Variant> {
        self.variant.parse::<Ruler2Variant>().map_err(|_| {
            usage(format!(
                "invalid --variant '{}': expected {}",
                self.variant,
                Ruler2Variant::expected()
            ))
        })
    }
}

impl TaskArgs for Ruler2Args {
    const NAME: &'static str = ruler2::NAME;
    const ABOUT: &'static str = ruler2::ABOUT;
    const HAYSTACK_FLAG: &'static str = "--data";

    fn params(&self) -> Result<TaskParams> {
        Ok(TaskParams::Ruler2(Ruler2Params {
            variant: self.variant()?,
            per_id: self.per_id,
            shots: self.shots,
        }))
    }

    /// The variant's data is its haystack: an MMLU directory, a HotpotQA file, or none.
    fn common(&self) -> Result<Cow<'_, CommonArgs>> {
        let variant = self.variant()?;
        let name = variant.as_str();
        if let Some(h) = &self.common.haystack {
            return Err(usage(format!(
                "--haystack {h} does not apply: ruler2's haystack is its --data ({})",
                needs(variant.data())
            )));
        }
        let data = self.data.as_deref().filter(|d| *d != "none");
        let data = match (variant.data(), data) {
            (Ruler2Data::None, None) => return Ok(Cow::Borrowed(&self.common)),
            (Ruler2Data::None, Some(d)) => {
                return Err(usage(format!(
                    "--data {d} does not apply: ruler2 {name} makes its own needle-shaped lines and reads no data"
                )))
            }
            (wanted, None) => {
                return Err(usage(format!(
                    "ruler2 {name} needs --data: {}",
                    needs(wanted)
                )))
            }
            (Ruler2Data::HotpotQa, Some(d)) => {
                hotpotqa_only(d, name)?;
                d
            }
            (Ruler2Data::Mmlu, Some(d)) => d,
        };
        let mut common = self.common.clone();
        common.haystack = Some(data.to_string());
        Ok(Cow::Owned(common))
    }
}

/// What a variant's `--data` is, for refusals.
fn needs(data: Ruler2Data) -> &'static str {
    match data {
        Ruler2Data::None => "the basic variants take no data",
        Ruler2Data::Mmlu => "the directory of your MMLU copy (the Hub's cais/mmlu `all` config: test-*.parquet and auxiliary_train-*.parquet, or test.jsonl and auxiliary_train.jsonl)",
        Ruler2Data::HotpotQa => "a HotpotQA JSON file (a list of questions, as the distractor setting's dev file)",
    }
}

/// The qa variants follow RULER v2's HotpotQA documents: a SQuAD file is refused here, before
/// anything is read in full (a file that is neither is refused when it is parsed).
fn hotpotqa_only(data: &str, variant: &str) -> Result<()> {
    let head = crate::run::paths::read_head(Path::new(data), 4096)
        .map_err(|e| usage(format!("invalid --data '{data}': {e}")))?;
    if DocFormat::detect(&head) == Some(DocFormat::Squad) {
        return Err(usage(format!(
            "invalid --data '{data}': ruler2 {variant} reads HotpotQA (a list of questions), and this is a SQuAD file"
        )));
    }
    Ok(())
}
