//! The recipes a manifest records, read back for `gen verify`: a suite's entries (with the
//! config names it gave them) or the one recipe, each checked to be one a command makes, and
//! the head (command, recipe, suite) the remade manifest must hold.

use crate::dataset::head::{check_recorded, Head};
use crate::dataset::manifest::Manifest;
use crate::run::generate::single_head;
use crate::run::recipe::{Commands, Recipe};

/// Config-name override and recipe of each entry.
pub type Recorded = Vec<(Option<String>, Recipe)>;

/// The recipes of `m` and the head its remade manifest holds; why not, when gen does not make
/// them.
pub fn recorded_recipes(
    m: &Manifest,
    jsonl: bool,
    commands: &dyn Commands,
) -> Result<(Recorded, Head), String> {
    // The recipes: a suite's entries, or the one recipe. Each must be one a command makes.
    let recorded: Vec<(Option<String>, Recipe)> = match &m.suite {
        Some(s) => {
            check_recorded(s)?;
            if s.entries[0].recipe != m.recipe {
                return Err("its recipe is not its suite's first entry".into());
            }
            s.entries
                .iter()
                .map(|e| (e.config.clone(), e.recipe.clone()))
                .collect()
        }
        None => vec![(None, m.recipe.clone())],
    };
    for (_, r) in &recorded {
        r.check()?;
        // Every recipe gen makes is made by a command; one that none makes was edited.
        commands.command(r, jsonl && m.suite.is_none())?;
    }
    let head = match &m.suite {
        Some(s) => {
            let source = commands.suite_source(&m.command);
            if source.as_deref() != Some(s.source.as_str()) {
                return Err(format!(
                    "its command is not a gen suite {} command",
                    s.source
                ));
            }
            Head {
                command: m.command.clone(),
                recipe: m.recipe.clone(),
                suite: Some(s.clone()),
            }
        }
        None => single_head(m.recipe.clone(), jsonl, commands).map_err(|e| format!("{e:#}"))?,
    };
    Ok((recorded, head))
}
