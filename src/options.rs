//! Task arguments → the core's typed parameter structs (checked when the job is built, by
//! `TaskParams::parts`), with the core's refusals worded in command-line terms
//! (`invalid --queries 3: ...`).

use std::borrow::Cow;

use anyhow::Result;
use needlework_generators::tasks::arith::ArithParams;
use needlework_generators::tasks::babilong::params::BabilongParams;
use needlework_generators::tasks::cwe::CweParams;
use needlework_generators::tasks::fwe::FweParams;
use needlework_generators::tasks::needlechain::NeedlechainParams;
use needlework_generators::tasks::niah::NiahParams;
use needlework_generators::tasks::posgen::{PosgenParams, PosgenSplit};
use needlework_generators::tasks::qa::{QaFormat, QaParams};
use needlework_generators::tasks::sort::SortParams;
use needlework_generators::tasks::vt::VtParams;
use needlework_generators::tasks::TaskParams;
use needlework_generators::ParamError;

use crate::cli::{
    ArithArgs, BabilongArgs, Command, CommonArgs, CweArgs, FweArgs, NeedlechainArgs, NiahArgs,
    PosgenArgs, QaArgs, SortArgs, VtArgs,
};
use crate::spec;
use crate::usage::usage;

/// The flag that sets a parameter: the field name in kebab case, except where the flag reads
/// better in the singular (`--task qa1,qa2` sets `tasks`).
pub fn flag(param: &str) -> String {
    match param {
        "tasks" => "--task".to_string(),
        other => format!("--{}", other.replace('_', "-")),
    }
}

/// A core refusal as one command-line line (exit 2). Numbers and ranges (`0`, `9..3`) stand
/// bare, names are quoted.
pub fn worded(e: ParamError) -> anyhow::Error {
    let numeric = !e.value.is_empty() && e.value.chars().all(|c| c.is_ascii_digit() || c == '.');
    let value = if numeric {
        e.value
    } else {
        format!("'{}'", e.value)
    };
    usage(format!(
        "invalid {} {value}: expected {}",
        flag(e.param),
        e.expected
    ))
}

/// A generating command's task parameters and common options; `None` for the other commands.
/// qa's `--data` is its haystack, so its common options are its own with that filled in.
pub fn task_command(command: &Command) -> Option<(Result<TaskParams>, Cow<'_, CommonArgs>)> {
    let b = Cow::Borrowed;
    Some(match command {
        Command::Niah(a) => (niah(a), b(&a.common)),
        Command::Needlechain(a) => (needlechain(a), b(&a.common)),
        Command::Posgen(a) => (posgen(a), b(&a.common)),
        Command::Sort(a) => (sort(a), b(&a.common)),
        Command::Arith(a) => (arith(a), b(&a.common)),
        Command::Babilong(a) => (babilong(a), b(&a.common)),
        Command::Vt(a) => (vt(a), b(&a.common)),
        Command::Cwe(a) => (cwe(a), b(&a.common_args)),
        Command::Fwe(a) => (fwe(a), b(&a.common)),
        Command::Qa(a) => {
            let mut common = a.common.clone();
            let params = match common.haystack.replace(a.data.clone()) {
                Some(h) => Err(usage(format!(
                    "--haystack {h} does not apply: qa's haystack is its --data file (the paragraphs of {})",
                    a.data
                ))),
                None => qa(a),
            };
            (params, Cow::Owned(common))
        }
        _ => return None,
    })
}

/// `gen qa`: the file's format as given, else as its first bytes say.
pub fn qa(a: &QaArgs) -> Result<TaskParams> {
    let format = match &a.format {
        Some(f) => f.parse::<QaFormat>().map_err(worded)?,
        None => {
            let head = crate::paths::read_head(std::path::Path::new(&a.data), 4096)
                .map_err(|e| usage(format!("invalid --data '{}': {e}", a.data)))?;
            let detected = needlework_generators::haystack::documents::DocFormat::detect(&head)
                .ok_or_else(|| {
                    usage(format!(
                        "invalid --data '{}': expected SQuAD JSON (an object with \"data\") or HotpotQA JSON (a list of questions)",
                        a.data
                    ))
                })?;
            QaFormat::of(detected)
        }
    };
    Ok(TaskParams::Qa(QaParams {
        format,
        exact: a.exact,
    }))
}

/// Whether `--haystack` names a haystack (a diluted chain, hidden sort items).
fn has_haystack(common: &CommonArgs) -> bool {
    common.haystack.as_deref().is_some_and(|h| h != "none")
}

/// Parse `N` or `A..B` into an inclusive range.
pub fn parse_range(s: &str, option: &str, expected: &str) -> Result<(u32, u32)> {
    let bad = || usage(format!("invalid {option} '{s}': expected {expected}"));
    let (a, b) = s.split_once("..").unwrap_or((s, s));
    let a: u32 = a.trim().parse().map_err(|_| bad())?;
    let b: u32 = b.trim().parse().map_err(|_| bad())?;
    Ok((a, b))
}

/// `gen niah`: the variant's parameters with every explicit option laid over them.
pub fn niah(a: &NiahArgs) -> Result<TaskParams> {
    let base = NiahParams::variant(a.variant);
    let keys = a.keys.unwrap_or(base.keys);
    Ok(TaskParams::Niah(NiahParams {
        keys,
        values: a.values.unwrap_or(base.values),
        queries: a.queries.unwrap_or(base.queries.min(keys)),
        key_type: a.key_type,
        value_type: a.value_type,
        absent: a.absent || base.absent,
        spread: a.spread,
        confusers: a.confusers,
        needle: a.needle,
    }))
}

/// `gen needlechain`; the question defaults by kind.
pub fn needlechain(a: &NeedlechainArgs) -> Result<TaskParams> {
    Ok(TaskParams::Needlechain(NeedlechainParams {
        kind: a.kind,
        order: a.order,
        question: a.question.unwrap_or(a.kind.default_question()),
        chain: a.chain,
        diluted: has_haystack(&a.common),
    }))
}

/// `gen posgen`; `--split` picks train, test or both.
pub fn posgen(a: &PosgenArgs) -> Result<TaskParams> {
    let split: PosgenSplit = a.common.split.parse().map_err(|_| {
        usage(format!(
            "invalid --split '{}' for posgen: expected train, test or both (their seed tuples are disjoint)",
            a.common.split
        ))
    })?;
    Ok(TaskParams::Posgen(PosgenParams {
        variant: a.variant,
        modulus: a.modulus,
        near: a.near,
        far: a.far,
        op: a.op,
        train_len: a.train_len,
        test_len: a.test_len,
        split,
        overlap: a.overlap,
        explain: a.explain,
    }))
}

const DIGITS_FORMS: &str = "a digit count like 40 or a range like 1..40";

/// `gen sort`; `--items` without a haystack fixes the size, so `--len` would only mislabel it.
pub fn sort(a: &SortArgs) -> Result<TaskParams> {
    if a.items.is_some() && !has_haystack(&a.common) && a.common.len.is_some() {
        return Err(usage(
            "--len does not apply with --items and no haystack: the list has its own length (drop --items to fill --len, or add --haystack to hide the items in it)",
        ));
    }
    Ok(TaskParams::Sort(SortParams {
        words: a.words,
        digits: parse_range(&a.digits, "--digits", DIGITS_FORMS)?,
        duplicates: a.duplicates,
        descending: a.descending,
        output: a.output,
        items: a.items,
        hidden: has_haystack(&a.common),
    }))
}

/// `gen arith`; `--count` belongs to `--op sum`.
pub fn arith(a: &ArithArgs) -> Result<TaskParams> {
    if a.count.is_some() && a.op != needlework_generators::tasks::arith::Op::Sum {
        return Err(usage(format!(
            "--count does not apply to --op {}: it sets how many numbers --op sum hides",
            a.op
        )));
    }
    Ok(TaskParams::Arith(ArithParams {
        op: a.op,
        digits: parse_range(&a.digits, "--digits", DIGITS_FORMS)?,
        carries: a.carries,
        layout: a.layout,
        count: a.count,
    }))
}

/// `gen babilong`: `--task qa1,qa2` or `all` (repeats dropped), and the depth window.
pub fn babilong(a: &BabilongArgs) -> Result<TaskParams> {
    let mut tasks: Vec<u8> = Vec::new();
    for t in a.task.split(',').map(str::trim) {
        let numbers: Vec<u8> = if t == "all" {
            needlework_generators::tasks::babilong::TASKS.to_vec()
        } else {
            let qa = t
                .strip_prefix("qa")
                .and_then(|n| n.parse::<u8>().ok())
                .filter(|n| (1..=20).contains(n))
                .ok_or_else(|| {
                    usage(format!(
                        "invalid --task '{t}': expected qa1 to qa20 (comma-separated) or all"
                    ))
                })?;
            vec![qa]
        };
        for qa in numbers {
            if !tasks.contains(&qa) {
                tasks.push(qa);
            }
        }
    }
    let facts = match &a.facts {
        None => None,
        Some(f) => Some(parse_range(f, "--facts", "a story size like 20 or 10..50")?),
    };
    let fact_window = {
        let bad = || {
            usage(format!(
                "invalid --fact-window '{}': expected a depth window in percent like 40..60",
                a.fact_window
            ))
        };
        let (lo, hi) = a.fact_window.split_once("..").ok_or_else(bad)?;
        let lo: f64 = lo.trim().parse().map_err(|_| bad())?;
        let hi: f64 = hi.trim().parse().map_err(|_| bad())?;
        (lo, hi)
    };
    let params = TaskParams::Babilong(BabilongParams {
        tasks,
        vocab: a.vocab,
        facts,
        fact_window,
    });
    if let Some(d) = &a.common.depths {
        let depths = spec::parse_depths(d).map_err(usage)?;
        if let Some(x) = depths
            .iter()
            .find(|&&x| x < fact_window.0 || x > fact_window.1)
        {
            return Err(usage(format!(
                "--depths {x} lies outside --fact-window {}..{}: the first supporting fact goes inside the window",
                fact_window.0, fact_window.1
            )));
        }
    }
    Ok(params)
}

/// `gen vt`.
pub fn vt(a: &VtArgs) -> Result<TaskParams> {
    Ok(TaskParams::Vt(VtParams {
        chains: a.chains,
        hops: a.hops,
    }))
}

/// `gen cwe`.
pub fn cwe(a: &CweArgs) -> Result<TaskParams> {
    Ok(TaskParams::Cwe(CweParams {
        common: a.common,
        common_repeats: a.common_repeats,
        rare_repeats: a.rare_repeats,
    }))
}

/// `gen fwe`.
pub fn fwe(a: &FweArgs) -> Result<TaskParams> {
    Ok(TaskParams::Fwe(FweParams {
        alpha: a.alpha,
        top: a.top,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_worded_as_their_flags() {
        assert_eq!(flag("key_type"), "--key-type");
        assert_eq!(flag("tasks"), "--task");
        assert_eq!(flag("fact_window"), "--fact-window");
        let e = worded(ParamError::new("train_len", 3, "more than 4"));
        assert_eq!(e.to_string(), "invalid --train-len 3: expected more than 4");
        let e = worded(ParamError::new("tasks", "qa21", "qa1 to qa20"));
        assert_eq!(e.to_string(), "invalid --task 'qa21': expected qa1 to qa20");
    }
}
