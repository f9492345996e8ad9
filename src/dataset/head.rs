//! What a manifest records beside its files: the command, the recipe, and for a dataset made by
//! `gen suite`, the suite with every entry's recipe. A suite's `recipe` is its first entry's, so
//! tools that read one recipe (canary, tokenizer, chat template: shared by every entry) read
//! the dataset-wide values; `suite` is absent from one-command manifests, which stay as they
//! were.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::run::recipe::{build_parts, Recipe};

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

/// Folders that `gen export`, `gen score` and later tools write into a dataset: not data, and
/// left out of `verify`; no config may take one of these names.
pub const NOT_DATA: &[&str] = &["inspect", "lm_eval", "opencompass", "ruler", "scores"];

/// Config names: letters, digits and underscores (they become folder, YAML and Python names).
pub fn valid_config(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Why config `name` cannot stand beside `earlier` configs of one dataset, if it cannot: the
/// index of the earlier config it collides with (the same name, or one differing only in case:
/// one folder on case-insensitive file systems and on the Hub), or none when it names a folder
/// gen writes into every dataset ([`NOT_DATA`], in any case), which `gen export` and
/// `gen score` would replace with their own files.
pub fn config_clash(name: &str, earlier: &[&str]) -> Option<(Option<usize>, String)> {
    if let Some(reserved) = NOT_DATA.iter().find(|r| r.eq_ignore_ascii_case(name)) {
        return Some((
            None,
            format!(
                "config name '{name}' is reserved: gen export and gen score write the folder {reserved}/ into a dataset (reserved: {})",
                NOT_DATA.join(", ")
            ),
        ));
    }
    let i = earlier.iter().position(|e| e.eq_ignore_ascii_case(name))?;
    let why = if earlier[i] == name {
        format!("config '{name}' is made twice")
    } else {
        format!(
            "config '{name}' differs from config '{}' only in case, so both would be one folder on case-insensitive file systems and on the Hub",
            earlier[i]
        )
    };
    Some((Some(i), why))
}

/// Check a suite's recorded entries as `verify` reads them back: every config named once, and
/// one canary, compression and file size for the whole dataset (as `gen suite` makes them).
pub fn check_recorded(s: &Suite) -> Result<(), String> {
    let Some(first) = s.entries.first() else {
        return Err("its suite has no entries".into());
    };
    let mut seen: Vec<String> = Vec::new();
    for e in &s.entries {
        let r = &e.recipe;
        if r.canary != first.recipe.canary
            || r.compression != first.recipe.compression
            || r.rows_per_file != first.recipe.rows_per_file
            || r.tokenizer_id != first.recipe.tokenizer_id
            || r.seed != first.recipe.seed
            || r.private != first.recipe.private
            || r.disjoint_from != first.recipe.disjoint_from
            || r.controls != first.recipe.controls
        {
            return Err("its suite entries differ in canary, compression, rows per file, tokenizer, seed, private seed, excluded datasets or controls, which gen suite makes one for the dataset".into());
        }
        let parts = build_parts(&r.options, &r.split).map_err(|e| format!("{e:#}"))?;
        let mut made: Vec<String> = Vec::new();
        for (_, t) in &parts {
            let c = e
                .config
                .clone()
                .unwrap_or_else(|| r.config_name(t.as_ref()));
            if !made.contains(&c) {
                made.push(c);
            }
        }
        let own: BTreeSet<String> = parts
            .iter()
            .map(|(_, t)| r.config_name(t.as_ref()))
            .collect();
        if e.config.as_deref().is_some_and(|c| !valid_config(c))
            || (e.config.is_some() && own.len() > 1)
        {
            return Err("a suite entry's config name is not one gen suite gives".into());
        }
        for c in made {
            let earlier: Vec<&str> = seen.iter().map(String::as_str).collect();
            if let Some((_, why)) = config_clash(&c, &earlier) {
                return Err(format!("{why}, which gen suite refuses"));
            }
            seen.push(c);
        }
    }
    Ok(())
}
