//! Every task's command line, one file each: its clap arguments and their conversion into the
//! core's parameter struct. The registry below makes the subcommands, and renders a recipe's
//! parameters back into flags generically (every parameter field is the flag of the same id),
//! so a task file holds only what is its own: its arguments, their conversion, and its
//! shortcuts (flags that stand for several fields, as niah's `--variant`).
//!
//! Adding a task is one file here and one line in [`tasks!`]; the dispatch over the core's
//! `TaskParams` is exhaustive, so a task the core has and the shell lacks does not compile.

mod arith;
mod babilong;
mod cwe;
mod fwe;
mod graphwalks;
mod needlechain;
mod niah;
mod posgen;
mod qa;
mod ruler2;
mod sort;
mod vt;

use std::borrow::Cow;

use anyhow::Result;
use clap::{Args, Subcommand};
use needlework_generators::tasks::TaskParams;

use crate::cli::common::CommonArgs;
use crate::run::config::Config;
use crate::usage::{usage, UsageError};

/// One flag of a rendered command: its name and its value (`None` for a switch).
pub type Flag = (String, Option<String>);

/// A task's command line: its arguments, their conversion, and how its parameters are
/// written back as flags where the generic rendering does not do it.
pub trait TaskArgs: Args {
    /// The task's name: the subcommand, the core's task.
    const NAME: &'static str;
    /// The subcommand's one-line help: the core's description of the task.
    const ABOUT: &'static str;
    /// The core's parameters these arguments ask for (checked when the job is built).
    fn params(&self) -> Result<TaskParams>;
    /// The common options; a task may fill some in from its own (qa's `--data` is its
    /// haystack).
    fn common(&self) -> Result<Cow<'_, CommonArgs>>;
    /// Flags that stand for several parameters at once (niah's `--variant`) or spell one
    /// their own way (babilong's `--task qa1,qa2`), rendered before the generic ones; they
    /// are dropped last, so they stay in place of what they stand for.
    fn shortcuts(params: &TaskParams) -> Vec<Flag> {
        let _ = params;
        Vec::new()
    }
    /// Flags a canonical command always keeps (qa's `--format`: without it the command would
    /// read the file to detect it).
    const KEPT: &'static [&'static str] = &[];
    /// The flag that names the recipe's haystack.
    const HAYSTACK_FLAG: &'static str = "--haystack";
}

/// Declares the registry: `Variant(module::Args)`, one line per task, in `gen --help` order.
/// The variant names are the core's `TaskParams` variants.
macro_rules! tasks {
    ($($variant:ident($args:ty),)+) => {
        /// The generating subcommands, one per task.
        #[derive(Debug, Subcommand)]
        pub enum TaskCommand {
            $(
                #[command(about = <$args as TaskArgs>::ABOUT)]
                $variant(Box<$args>),
            )+
        }

        impl TaskCommand {
            /// The task's name (the subcommand's).
            pub fn name(&self) -> &'static str {
                match self {
                    $(TaskCommand::$variant(_) => <$args as TaskArgs>::NAME,)+
                }
            }

            /// The task's parameters and the checked configuration of its common options.
            pub fn resolve(&self) -> Result<(TaskParams, Config)> {
                match self {
                    $(TaskCommand::$variant(a) => {
                        let params = a.params()?;
                        let config = a.common()?.config(&params, <$args as TaskArgs>::HAYSTACK_FLAG)?;
                        Ok((params, config))
                    })+
                }
            }
        }

        /// Every flag of `params` written out: the task's shortcuts, then one flag per
        /// parameter, in the order the task's arguments are declared.
        pub fn flags_of(params: &TaskParams) -> Rendered {
            match params {
                $(TaskParams::$variant(_) => rendered::<$args>(params),)+
            }
        }
    };
}

tasks! {
    Niah(niah::NiahArgs),
    Needlechain(needlechain::NeedlechainArgs),
    Posgen(posgen::PosgenArgs),
    Sort(sort::SortArgs),
    Arith(arith::ArithArgs),
    Babilong(babilong::BabilongArgs),
    Vt(vt::VtArgs),
    Cwe(cwe::CweArgs),
    Fwe(fwe::FweArgs),
    Qa(qa::QaArgs),
    Graphwalks(graphwalks::GraphwalksArgs),
    Ruler2(ruler2::Ruler2Args),
}

/// A recipe's task flags, as [`flags_of`] renders them.
pub struct Rendered {
    /// The shortcuts, then every parameter's flag.
    pub flags: Vec<Flag>,
    /// How many of `flags` are shortcuts (the first ones).
    pub shortcuts: usize,
    /// Flags never dropped from a canonical command.
    pub kept: &'static [&'static str],
    /// The flag that names the haystack.
    pub haystack_flag: &'static str,
}

/// [`flags_of`] for the task whose arguments are `A`.
fn rendered<A: TaskArgs>(params: &TaskParams) -> Rendered {
    let mut flags = A::shortcuts(params);
    let shortcuts = flags.len();
    let fields = serde_json::to_value(params).unwrap_or_default();
    let own = A::augment_args(clap::Command::new("task"));
    let common: Vec<String> = common_ids();
    for arg in own.get_arguments() {
        let id = arg.get_id().as_str();
        let Some(long) = arg.get_long() else { continue };
        let flag = format!("--{long}");
        if common.iter().any(|c| c == id) || flags.iter().any(|(f, _)| *f == flag) {
            continue;
        }
        match fields.get(id) {
            None | Some(serde_json::Value::Null) | Some(serde_json::Value::Bool(false)) => {}
            Some(serde_json::Value::Bool(true)) => flags.push((flag, None)),
            Some(v) => flags.push((flag, Some(value_text(v)))),
        }
    }
    Rendered {
        flags,
        shortcuts,
        kept: A::KEPT,
        haystack_flag: A::HAYSTACK_FLAG,
    }
}

/// A parameter's value as its flag takes it: numbers in their shortest form, names as they
/// are, a pair of numbers as a range (`1..40`, or `7` when both ends are equal), other lists
/// comma-joined.
fn value_text(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.to_string(),
            (None, Some(i), _) => i.to_string(),
            (None, None, Some(f)) => f.to_string(),
            _ => n.to_string(),
        },
        Value::Array(items) if items.len() == 2 && items.iter().all(Value::is_number) => {
            let (a, b) = (value_text(&items[0]), value_text(&items[1]));
            if a == b {
                a
            } else {
                format!("{a}..{b}")
            }
        }
        Value::Array(items) => items.iter().map(value_text).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// The task subcommands, as clap describes them.
fn subcommands() -> clap::Command {
    TaskCommand::augment_subcommands(clap::Command::new("gen"))
}

/// The ids of the options every generating command takes.
pub fn common_ids() -> Vec<String> {
    CommonArgs::augment_args(clap::Command::new("common"))
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect()
}

/// The long flags `task` takes besides the common ones, as their ids (the parameter
/// fields they set: `key_type`, babilong's `tasks`); empty for an unknown task.
pub fn task_ids(task: &str) -> Vec<String> {
    let cmd = subcommands();
    let Some(sub) = cmd.find_subcommand(task) else {
        return Vec::new();
    };
    let common = common_ids();
    sub.get_arguments()
        .filter(|a| a.get_long().is_some())
        .map(|a| a.get_id().to_string())
        .filter(|k| !common.contains(k))
        .collect()
}

/// The flag that sets `param` of `task` (its argument of that id), or the parameter's name
/// in kebab case where the task has none.
pub fn flag_of(task: &str, param: &str) -> String {
    subcommands()
        .find_subcommand(task)
        .and_then(|sub| {
            sub.get_arguments()
                .find(|a| a.get_id().as_str() == param)
                .and_then(|a| a.get_long())
                .map(|l| format!("--{l}"))
        })
        .unwrap_or_else(|| format!("--{}", param.replace('_', "-")))
}

/// The forms `--digits` takes.
const DIGITS_FORMS: &str = "a digit count like 40 or a range like 1..40";

/// A refusal of one of `task`'s parameters worded as the flag that sets it; other errors
/// as they are.
pub fn worded(e: anyhow::Error, task: &str) -> anyhow::Error {
    match e.downcast_ref::<UsageError>() {
        Some(u @ UsageError::Param(_)) => usage(u.worded(&|p| flag_of(task, p))),
        _ => e,
    }
}

/// Parse `N` or `A..B` into an inclusive range.
pub fn parse_range(s: &str, option: &str, expected: &str) -> Result<(u32, u32)> {
    let bad = || usage(format!("invalid {option} '{s}': expected {expected}"));
    let (a, b) = s.split_once("..").unwrap_or((s, s));
    let a: u32 = a.trim().parse().map_err(|_| bad())?;
    let b: u32 = b.trim().parse().map_err(|_| bad())?;
    Ok((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::CommandFactory;
    use needlework_generators::tasks::TASKS;

    /// Every task of the core has a subcommand of its name whose default arguments make
    /// parameters of that task, parts named after it, and a rendering that names only flags
    /// the subcommand takes: the registry lines of both crates agree.
    #[test]
    fn every_core_task_has_its_subcommand() {
        let cmd = Cli::command();
        for (name, _) in TASKS {
            let sub = cmd
                .find_subcommand(name)
                .unwrap_or_else(|| panic!("no subcommand {name}"));
            let mut argv = vec!["gen".to_string(), name.to_string()];
            if *name == "qa" {
                argv.extend([
                    "--data".into(),
                    "x.json".into(),
                    "--format".into(),
                    "squad".into(),
                ]);
            }
            if *name == "ruler2" {
                argv.extend(["--variant".into(), "mk_niah_basic".into()]);
            }
            let cli = <Cli as clap::Parser>::try_parse_from(&argv).unwrap();
            let crate::cli::Command::Task(t) = cli.command else {
                panic!("{name} is not a task command")
            };
            let (params, _) = t.resolve().unwrap();
            assert_eq!(params.name(), *name);
            let json = serde_json::to_value(&params).unwrap();
            assert_eq!(json["task"], *name);
            for part in params.parts().unwrap() {
                assert_eq!(part.task.name(), *name);
            }
            let longs: Vec<String> = sub
                .get_arguments()
                .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
                .collect();
            for (flag, _) in flags_of(&params).flags {
                assert!(longs.contains(&flag), "{name}: {flag}");
            }
        }
    }

    #[test]
    fn parameters_are_worded_as_their_flags() {
        assert_eq!(flag_of("niah", "key_type"), "--key-type");
        assert_eq!(flag_of("babilong", "tasks"), "--task");
        assert_eq!(flag_of("babilong", "fact_window"), "--fact-window");
        assert_eq!(flag_of("posgen", "train_len"), "--train-len");
    }

    #[test]
    fn values_are_written_as_flags_take_them() {
        use serde_json::json;
        assert_eq!(value_text(&json!([1, 40])), "1..40");
        assert_eq!(value_text(&json!([7, 7])), "7");
        assert_eq!(value_text(&json!([40.0, 60.5])), "40..60.5");
        assert_eq!(value_text(&json!(2.0)), "2");
        assert_eq!(value_text(&json!("semi-recursive")), "semi-recursive");
    }
}
