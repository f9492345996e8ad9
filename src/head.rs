//! What a manifest records beside its files: the command, the recipe, and for a dataset made by
//! `gen suite`, the suite with every entry's recipe. A suite's `recipe` is its first entry's, so
//! tools that read one recipe (canary, tokenizer, chat template: shared by every entry) read
//! the dataset-wide values; `suite` is absent from one-command manifests, which stay as they
//! were.

use serde::{Deserialize, Serialize};

use crate::recipe::Recipe;

/// A dataset made by `gen suite`: where its entries came from, and each entry's recipe.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Suite {
    /// A built-in suite's name, or the suite file as recorded (relative, like other inputs).
    pub source: String,
    /// xxh3-128 of the suite's TOML text (built-in or file): which text the entries came from.
    pub hash: String,
    /// Entries of the suite that were not made, and why (a task not in this build, no data).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
    /// Every entry, in generation order; the first is the manifest's `recipe`.
    pub entries: Vec<SuiteEntry>,
}

/// One recipe of a suite.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SuiteEntry {
    /// The config name the suite gives the entry (`niah_single_1`); absent: the task's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// The entry's recipe, as a one-command manifest holds it.
    pub recipe: Recipe,
}

/// A suite entry that was not made.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Skipped {
    /// The config it would have made.
    pub config: String,
    /// Why it was not.
    pub why: String,
}

/// What a manifest records beside its files.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Head {
    /// The command as the manifest records it.
    pub command: Vec<String>,
    /// The recipe (a suite's first entry).
    pub recipe: Recipe,
    /// The suite, for a dataset made by `gen suite`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<Suite>,
}
