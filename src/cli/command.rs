//! The command a recipe is made by, as the manifest and the card record it.
//!
//! It is rendered from the recipe, never copied from the invocation, so every spelling of one
//! recipe (`--len 1k` or `--len 1024`, `--depths 3` or `--depths 0,50,100`, flags in any order,
//! defaults given or not) records the same command and equal recipes give byte-identical
//! dataset directories. Every flag is written out, then each is dropped in turn when the
//! command without it still makes exactly the recipe, so the command is short and canonical.
//! `verify` renders it again: a recipe that no command makes is one gen does not make.

use clap::Parser;

use crate::cli::grid::parse_depths;
use crate::cli::{Cli, Command};
use crate::run::prepare::{complete, plan, InputNames};
use crate::run::recipe::{build_parts, Commands, Recipe};
use crate::tasks::{flags_of, Flag};

/// `1k`, `32k`, `1m`, or the exact integer.
pub fn length(v: u64) -> String {
    const M: u64 = 1 << 20;
    match v {
        0 => "0".into(),
        v if v % M == 0 => format!("{}m", v / M),
        v if v % 1024 == 0 => format!("{}k", v / 1024),
        v => v.to_string(),
    }
}

/// `N` when the depths are the even grid of N, `D%` for one explicit depth, else the list.
/// Floats print in their shortest form that reads back bit-exactly.
pub fn depths(d: &[f64]) -> String {
    let grid = parse_depths(&d.len().to_string()).unwrap_or_default();
    if grid.len() == d.len() && grid.iter().zip(d).all(|(a, b)| a.to_bits() == b.to_bits()) {
        return d.len().to_string();
    }
    match d {
        [one] => format!("{one}%"),
        _ => d.iter().map(f64::to_string).collect::<Vec<_>>().join(","),
    }
}

fn value(name: &str, v: impl ToString) -> Flag {
    (name.to_string(), Some(v.to_string()))
}

fn switch(name: &str, on: bool) -> Option<Flag> {
    on.then(|| (name.to_string(), None))
}

/// Every flag of the recipe written out, but `--depths` only when they are not the task's
/// default (`--depths` does not apply at `--len 0`, where the default does).
fn full(recipe: &Recipe, jsonl: bool, default_depths: Option<Vec<f64>>) -> (Vec<Flag>, usize) {
    let r = recipe;
    let depths_given = r.depths.as_ref().filter(|d| {
        default_depths.as_ref().is_none_or(|dd| {
            dd.len() != d.len()
                || dd
                    .iter()
                    .zip(d.iter())
                    .any(|(a, b)| a.to_bits() != b.to_bits())
        })
    });
    let task = flags_of(&r.options);
    let mut f: Vec<Option<Flag>> = task.flags.into_iter().map(Some).collect();
    let native = r.lengths == [0] && r.options.native_size();
    let lengths: Vec<String> = r.lengths.iter().map(|&l| length(l)).collect();
    f.extend([
        (!native).then(|| value("--len", lengths.join(","))),
        depths_given.map(|d| value("--depths", depths(d))),
        Some(value("--samples", r.samples)),
        (r.private.is_none()).then(|| value("--seed", r.seed)),
        switch("--private", r.private.is_some()),
        Some(value("--tokenizer", &r.tokenizer)),
        Some(value("--reserve", r.reserve)),
        Some(value(task.haystack_flag, &r.haystack)),
        Some(value("--template", &r.template)),
        r.chat_template
            .as_ref()
            .map(|c| value("--chat-template", c)),
        r.system.as_ref().map(|m| value("--system", m)),
        Some(value("--split", &r.split)),
        Some(value("--compression", &r.compression)),
        r.rows_per_file.map(|n| value("--rows-per-file", n)),
        Some(value("--canary", &r.canary)),
        r.controls.as_ref().map(|c| value("--controls", c)),
        switch("--jsonl", jsonl),
    ]);
    f.extend(
        r.disjoint_from
            .iter()
            .map(|e| Some(value("--disjoint-from", &e.path))),
    );
    (f.into_iter().flatten().collect(), task.shortcuts)
}

/// `gen TASK --flag value ...`; a value that starts with `-` is joined as `--flag=value`.
fn argv(task: &str, flags: &[Flag]) -> Vec<String> {
    let mut out = vec!["gen".to_string(), task.to_string()];
    for (name, v) in flags {
        match v {
            Some(v) if v.starts_with('-') => out.push(format!("{name}={v}")),
            Some(v) => out.extend([name.to_string(), v.clone()]),
            None => out.push(name.to_string()),
        }
    }
    out
}

/// The recipe a command makes, its inputs' identities taken from `like` (reading no input).
fn recipe_of(argv: &[String], like: &Recipe) -> anyhow::Result<Recipe> {
    let cli = Cli::try_parse_from(argv)?;
    let Command::Task(t) = cli.command else {
        anyhow::bail!("not a generating command");
    };
    let (params, config) = t.resolve().map_err(|e| crate::tasks::worded(e, t.name()))?;
    let (mut recipe, _) = plan(params, &config, InputNames::AsRecorded)
        .map_err(|e| crate::tasks::worded(e, t.name()))?;
    // What a command cannot say (the commitment to a private seed, what the excluded
    // datasets held) is the recipe's own.
    if recipe.private.is_some() {
        recipe.private.clone_from(&like.private);
    }
    if recipe.disjoint_from.len() == like.disjoint_from.len() {
        for (r, l) in recipe.disjoint_from.iter_mut().zip(&like.disjoint_from) {
            r.identity.clone_from(&l.identity);
        }
    }
    complete(
        &mut recipe,
        &like.tokenizer_id,
        &like.haystack_id,
        &like.template_hash,
    );
    recipe
        .chat_template_hash
        .clone_from(&like.chat_template_hash);
    Ok(recipe)
}

/// The command line as the run and check layers ask it: canonical commands, recorded suites.
pub struct CommandLine;

impl Commands for CommandLine {
    fn command(&self, recipe: &Recipe, jsonl: bool) -> Result<Vec<String>, String> {
        canonical_command(recipe, jsonl)
    }

    fn suite_source(&self, command: &[String]) -> Option<String> {
        match Cli::try_parse_from(command).ok()?.command {
            Command::Suite(a) => Some(a.suite),
            _ => None,
        }
    }
}

/// Whether `flags` make exactly `recipe` (compared as the manifest spells it).
fn makes(task: &str, flags: &[Flag], recipe: &Recipe, spelled: &str) -> bool {
    recipe_of(&argv(task, flags), recipe)
        .is_ok_and(|r| serde_json::to_string(&r).is_ok_and(|s| s == spelled))
}

/// The command that makes `recipe` (with `--jsonl` when the dataset has mirrors), canonical:
/// the same for every spelling of the recipe. An error names why when no command makes it.
pub fn canonical_command(recipe: &Recipe, jsonl: bool) -> Result<Vec<String>, String> {
    let task = recipe.options.name();
    let spelled = serde_json::to_string(recipe).map_err(|e| e.to_string())?;
    let parts = build_parts(&recipe.options, &recipe.split).map_err(|e| e.to_string())?;
    let default_depths = parts.first().and_then(|(_, t)| t.default_depths());
    let (mut flags, shortcuts) = full(recipe, jsonl, default_depths);
    if !makes(task, &flags, recipe, &spelled) {
        let why = match recipe_of(&argv(task, &flags), recipe) {
            Err(e) => format!("{e:#}"),
            Ok(_) => "the command holding all its choices makes another recipe (its lists out of order, or choices that contradict each other)".into(),
        };
        return Err(why.lines().next().unwrap_or_default().to_string());
    }
    // Drop what the defaults give; shortcuts (niah's --variant) are tried last, so they stay
    // in place of the flags they stand for.
    let kept = flags_of(&recipe.options).kept;
    let names: Vec<String> = flags.iter().map(|f| f.0.clone()).collect();
    let (short, explicit) = names.split_at(shortcuts);
    for name in explicit.iter().chain(short) {
        if name == "--jsonl" || kept.contains(&name.as_str()) {
            continue;
        }
        let Some(i) = flags.iter().position(|f| f.0 == *name) else {
            continue;
        };
        let mut without = flags.clone();
        without.remove(i);
        if makes(task, &without, recipe, &spelled) {
            flags = without;
        }
    }
    Ok(argv(task, &flags))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recipe(args: &[&str]) -> Recipe {
        let argv: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let like = Recipe {
            tokenizer_id: "o200k_base".into(),
            haystack_id: "generated:x".into(),
            template_hash: "t".into(),
            ..recipe_of_plain(&argv)
        };
        recipe_of(&argv, &like).unwrap()
    }

    fn recipe_of_plain(argv: &[String]) -> Recipe {
        let cli = Cli::try_parse_from(argv).unwrap();
        let Command::Task(t) = cli.command else {
            panic!("not a task")
        };
        let (params, config) = t.resolve().unwrap();
        plan(params, &config, InputNames::AsRecorded).unwrap().0
    }

    #[test]
    fn every_spelling_gives_one_command() {
        for (spellings, expected) in [
            (
                vec![
                    vec!["gen", "niah", "--len", "1k"],
                    vec!["gen", "niah", "--len", "1024", "--samples", "1"],
                    vec![
                        "gen",
                        "niah",
                        "--variant",
                        "single",
                        "--len=1024",
                        "--depths",
                        "1",
                    ],
                    vec![
                        "gen",
                        "niah",
                        "--len",
                        "1k",
                        "--depths",
                        "50%",
                        "--tokenizer",
                        "o200k_base",
                    ],
                ],
                "gen niah --len 1k",
            ),
            (
                vec![
                    vec![
                        "gen", "niah", "--len", "1k..4k", "--depths", "3", "--keys", "4",
                    ],
                    vec![
                        "gen",
                        "niah",
                        "--depths",
                        "0, 50,100",
                        "--variant",
                        "multikey",
                        "--len",
                        "4096,1k,2k",
                    ],
                ],
                "gen niah --variant multikey --len 1k,2k,4k --depths 3",
            ),
            (
                vec![
                    vec![
                        "gen",
                        "posgen",
                        "--variant",
                        "semi_recursive",
                        "--split",
                        "both",
                    ],
                    vec![
                        "gen",
                        "posgen",
                        "--variant",
                        "semi-recursive",
                        "--split",
                        "both",
                        "--modulus",
                        "17",
                    ],
                ],
                "gen posgen --variant semi-recursive --split both",
            ),
            (
                vec![
                    vec![
                        "gen",
                        "babilong",
                        "--task",
                        "qa2,qa1,qa2",
                        "--len",
                        "0,500",
                        "--facts",
                        "20",
                    ],
                    vec![
                        "gen",
                        "babilong",
                        "--task",
                        "qa2,qa1",
                        "--len",
                        "500,0",
                        "--facts",
                        "20..20",
                        "--fact-window",
                        "0.0..100",
                    ],
                ],
                "gen babilong --task qa2,qa1 --facts 20 --len 0,500",
            ),
            (
                vec![
                    vec![
                        "gen",
                        "niah",
                        "--canary",
                        "8C1F6A2E-3B4D-4E5F-9A0B-1C2D3E4F5A6B",
                    ],
                    vec![
                        "gen",
                        "niah",
                        "--canary",
                        "8c1f6a2e-3b4d-4e5f-9a0b-1c2d3e4f5a6b",
                        "--len",
                        "4k",
                    ],
                ],
                "gen niah --canary 8c1f6a2e-3b4d-4e5f-9a0b-1c2d3e4f5a6b",
            ),
            (
                vec![
                    vec!["gen", "ruler2", "--variant", "mv_niah_basic", "--len", "4k"],
                    vec![
                        "gen",
                        "ruler2",
                        "--variant=mv_niah_basic",
                        "--per-id",
                        "4",
                        "--data",
                        "none",
                    ],
                ],
                "gen ruler2 --variant mv_niah_basic",
            ),
            (
                vec![
                    vec![
                        "gen",
                        "ruler2",
                        "--variant",
                        "mk_niah_hard",
                        "--data",
                        "mmlu/all",
                        "--shots",
                        "3",
                    ],
                    vec![
                        "gen",
                        "ruler2",
                        "--shots=3",
                        "--data=mmlu/all",
                        "--variant",
                        "mk_niah_hard",
                        "--len",
                        "4096",
                    ],
                ],
                "gen ruler2 --variant mk_niah_hard --shots 3 --data mmlu/all",
            ),
        ] {
            for s in spellings {
                let r = recipe(&s);
                let c = canonical_command(&r, false).unwrap().join(" ");
                assert_eq!(c, expected, "{s:?}");
            }
        }
    }

    #[test]
    fn recipes_no_command_makes_are_named() {
        let mut r = recipe(&["gen", "niah", "--len", "1k,2k"]);
        r.lengths = vec![2048, 1024];
        assert!(canonical_command(&r, false).is_err());
        let mut r = recipe(&["gen", "niah", "--len", "1k"]);
        r.compression = "lz4".into();
        let e = canonical_command(&r, false).unwrap_err();
        assert!(e.contains("--compression"), "{e}");
    }
}
