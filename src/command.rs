//! The command a recipe is made by, as the manifest and the card record it.
//!
//! It is rendered from the recipe, never copied from the invocation, so every spelling of one
//! recipe (`--len 1k` or `--len 1024`, `--depths 3` or `--depths 0,50,100`, flags in any order,
//! defaults given or not) records the same command and equal recipes give byte-identical
//! dataset directories. Every flag is written out, then each is dropped in turn when the
//! command without it still makes exactly the recipe, so the command is short and canonical.
//! `verify` renders it again: a recipe that no command makes is one gen does not make.

use clap::Parser;
use needlework_generators::tasks::niah::VARIANTS;
use needlework_generators::tasks::TaskParams;

use crate::cli::Cli;
use crate::options::task_command;
use crate::prepare::{complete, plan, InputNames};
use crate::recipe::{build_parts, Recipe};
use crate::spec::parse_depths;

/// One flag of a rendered command: its name and its value (`None` for a switch).
type Flag = (&'static str, Option<String>);

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

/// `a..b`, or `a` when both ends are equal.
fn range<T: PartialEq + std::fmt::Display>((a, b): (T, T)) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}..{b}")
    }
}

fn value(name: &'static str, v: impl ToString) -> Flag {
    (name, Some(v.to_string()))
}

fn switch(name: &'static str, on: bool) -> Option<Flag> {
    on.then_some((name, None))
}

/// The task's flags, every one written out; niah's `--variant` shortcut first.
fn task_flags(options: &TaskParams) -> Vec<Flag> {
    let mut f: Vec<Option<Flag>> = Vec::new();
    match options {
        TaskParams::Niah(p) => {
            let shortcut = VARIANTS
                .iter()
                .find(|v| (v.1, v.2, v.3, v.4) == (p.keys, p.values, p.queries, p.absent));
            f.push(shortcut.map(|v| value("--variant", v.0)));
            f.extend([
                Some(value("--keys", p.keys)),
                Some(value("--values", p.values)),
                Some(value("--queries", p.queries)),
                Some(value("--key-type", p.key_type)),
                Some(value("--value-type", p.value_type)),
                switch("--absent", p.absent),
                Some(value("--spread", p.spread)),
                Some(value("--confusers", p.confusers)),
                Some(value("--needle", p.needle)),
            ]);
        }
        TaskParams::Needlechain(p) => f.extend([
            Some(value("--kind", p.kind)),
            Some(value("--order", p.order)),
            Some(value("--question", p.question)),
            p.chain.map(|c| value("--chain", c)),
        ]),
        TaskParams::Posgen(p) => f.extend([
            Some(value("--variant", p.variant)),
            Some(value("--modulus", p.modulus)),
            Some(value("--near", p.near)),
            Some(value("--far", p.far)),
            Some(value("--op", p.op)),
            Some(value("--train-len", p.train_len)),
            Some(value("--test-len", p.test_len)),
            switch("--overlap", p.overlap),
            switch("--explain", p.explain),
        ]),
        TaskParams::Sort(p) => f.extend([
            p.items.map(|n| value("--items", n)),
            Some(value("--digits", range(p.digits))),
            switch("--words", p.words),
            switch("--duplicates", p.duplicates),
            switch("--descending", p.descending),
            Some(value("--output", p.output)),
        ]),
        TaskParams::Arith(p) => f.extend([
            Some(value("--op", p.op)),
            Some(value("--digits", range(p.digits))),
            Some(value("--carries", p.carries)),
            Some(value("--layout", p.layout)),
            p.count.map(|n| value("--count", n)),
        ]),
        TaskParams::Qa(p) => f.extend([
            Some(value("--format", p.format.as_str())),
            switch("--exact", p.exact),
        ]),
        TaskParams::Babilong(p) => f.extend([
            Some(value(
                "--task",
                p.tasks
                    .iter()
                    .map(|n| format!("qa{n}"))
                    .collect::<Vec<_>>()
                    .join(","),
            )),
            Some(value("--vocab", p.vocab)),
            p.facts.map(|r| value("--facts", range(r))),
            Some(value(
                "--fact-window",
                format!("{}..{}", p.fact_window.0, p.fact_window.1),
            )),
        ]),
        TaskParams::Vt(p) => f.extend([
            Some(value("--chains", p.chains)),
            Some(value("--hops", p.hops)),
        ]),
        TaskParams::Cwe(p) => f.extend([
            Some(value("--common", p.common)),
            Some(value("--common-repeats", p.common_repeats)),
            Some(value("--rare-repeats", p.rare_repeats)),
        ]),
        TaskParams::Fwe(p) => {
            f.extend([Some(value("--alpha", p.alpha)), Some(value("--top", p.top))])
        }
    }
    f.into_iter().flatten().collect()
}

/// Every flag of the recipe written out, but `--depths` only when they are not the task's
/// default (`--depths` does not apply at `--len 0`, where the default does).
fn full(recipe: &Recipe, jsonl: bool, default_depths: Option<Vec<f64>>) -> Vec<Flag> {
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
    let mut f: Vec<Option<Flag>> = task_flags(&r.options).into_iter().map(Some).collect();
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
        Some(value(
            if matches!(r.options, TaskParams::Qa(_)) {
                "--data"
            } else {
                "--haystack"
            },
            &r.haystack,
        )),
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
    f.into_iter().flatten().collect()
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
    let (options, common) =
        task_command(&cli.command).ok_or_else(|| anyhow::anyhow!("not a generating command"))?;
    let (mut recipe, _) = plan(options?, &common, InputNames::AsRecorded)?;
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
    let mut flags = full(recipe, jsonl, default_depths);
    if !makes(task, &flags, recipe, &spelled) {
        let why = match recipe_of(&argv(task, &flags), recipe) {
            Err(e) => format!("{e:#}"),
            Ok(_) => "the command holding all its choices makes another recipe (its lists out of order, or choices that contradict each other)".into(),
        };
        return Err(why.lines().next().unwrap_or_default().to_string());
    }
    // Drop what the defaults give; shortcuts (niah's --variant) are tried last, so they stay
    // in place of the flags they stand for.
    let order: Vec<&'static str> = flags
        .iter()
        .map(|f| f.0)
        // qa's --format stays: without it the command would read the file to detect it.
        .filter(|&n| n != "--jsonl" && n != "--format")
        .collect();
    let (shortcuts, explicit): (Vec<_>, Vec<_>) = order
        .into_iter()
        .partition(|&n| n == "--variant" && matches!(recipe.options, TaskParams::Niah(_)));
    for name in explicit.into_iter().chain(shortcuts) {
        let Some(i) = flags.iter().position(|f| f.0 == name) else {
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
        let (options, common) = task_command(&cli.command).unwrap();
        plan(options.unwrap(), &common, InputNames::AsRecorded)
            .unwrap()
            .0
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
