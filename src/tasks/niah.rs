//! `gen niah`: needle in a haystack.

use std::borrow::Cow;

use anyhow::Result;
use clap::Args;
use needlework_generators::tasks::niah::{
    self, ItemType, NeedleKind, NiahParams, NiahVariant, Spread, VARIANTS,
};
use needlework_generators::tasks::TaskParams;

use super::{Flag, TaskArgs};
use crate::cli::common::CommonArgs;

#[derive(Debug, Args, Clone)]
pub struct NiahArgs {
    /// single, multikey, multivalue, multiquery or none.
    #[arg(long, default_value = "single")]
    pub variant: NiahVariant,
    /// Keys inserted (needles per value).
    #[arg(long)]
    pub keys: Option<u32>,
    /// Values per key.
    #[arg(long)]
    pub values: Option<u32>,
    /// Keys asked about (at most --keys).
    #[arg(long)]
    pub queries: Option<u32>,
    /// words, numbers or uuids.
    #[arg(long, default_value = "words")]
    pub key_type: ItemType,
    /// numbers, words or uuids.
    #[arg(long, default_value = "numbers")]
    pub value_type: ItemType,
    /// Ask about a key that is not in the text (answer: none).
    #[arg(long)]
    pub absent: bool,
    /// Where needles after the first go: random or even.
    #[arg(long, default_value = "random")]
    pub spread: Spread,
    /// Near-miss facts per instance: a key one edit from an asked key, or an asked key with a
    /// withdrawn or denied value (0 to 50).
    #[arg(long, default_value_t = 0)]
    pub confusers: u32,
    /// code (access codes) or latent (a person beside a landmark, dish, river, artwork or
    /// instrument; the question names only where it leads, sharing no word with the needle).
    #[arg(long, default_value = "code")]
    pub needle: NeedleKind,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl TaskArgs for NiahArgs {
    const NAME: &'static str = niah::NAME;
    const ABOUT: &'static str = niah::ABOUT;

    /// The variant's parameters with every explicit option laid over them.
    fn params(&self) -> Result<TaskParams> {
        let base = NiahParams::variant(self.variant);
        let keys = self.keys.unwrap_or(base.keys);
        Ok(TaskParams::Niah(NiahParams {
            keys,
            values: self.values.unwrap_or(base.values),
            queries: self.queries.unwrap_or(base.queries.min(keys)),
            key_type: self.key_type,
            value_type: self.value_type,
            absent: self.absent || base.absent,
            spread: self.spread,
            confusers: self.confusers,
            needle: self.needle,
        }))
    }

    fn common(&self) -> Result<Cow<'_, CommonArgs>> {
        Ok(Cow::Borrowed(&self.common))
    }

    /// `--variant` for the named variant whose keys, values, queries and absence these are.
    fn shortcuts(params: &TaskParams) -> Vec<Flag> {
        let TaskParams::Niah(p) = params else {
            return Vec::new();
        };
        VARIANTS
            .iter()
            .find(|v| (v.1, v.2, v.3, v.4) == (p.keys, p.values, p.queries, p.absent))
            .map(|v| ("--variant".to_string(), Some(v.0.to_string())))
            .into_iter()
            .collect()
    }
}
