//! `gen babilong`: bAbI reasoning stories hidden in text of any length.

use std::borrow::Cow;

use anyhow::Result;
use clap::Args;
use needlework_generators::tasks::babilong::{self, BabilongParams, Vocabulary};
use needlework_generators::tasks::TaskParams;

use super::{parse_range, Flag, TaskArgs};
use crate::cli::common::CommonArgs;
use crate::cli::grid::parse_depths;
use crate::usage::usage;

#[derive(Debug, Args, Clone)]
pub struct BabilongArgs {
    /// bAbI tasks, one config each: qa1,qa2,... (qa1-qa20), or all.
    #[arg(long = "task", id = "tasks", default_value = "qa1")]
    pub task: String,
    /// babi (bAbI's six places, three objects, four actors) or fresh (new names per instance).
    #[arg(long, default_value = "babi")]
    pub vocab: Vocabulary,
    /// Story size in facts, like 20 or 10..50 (default: bAbI's sizes per task).
    #[arg(long)]
    pub facts: Option<String>,
    /// Keep every fact within this depth window in percent, like 40..60.
    #[arg(long, default_value = "0..100")]
    pub fact_window: String,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl TaskArgs for BabilongArgs {
    const NAME: &'static str = babilong::NAME;
    const ABOUT: &'static str = babilong::ABOUT;

    /// `--task qa1,qa2` or `all` (repeats dropped), and the depth window.
    fn params(&self) -> Result<TaskParams> {
        let mut tasks: Vec<u8> = Vec::new();
        for t in self.task.split(',').map(str::trim) {
            let numbers: Vec<u8> = if t == "all" {
                babilong::TASKS.to_vec()
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
        let facts = match &self.facts {
            None => None,
            Some(f) => Some(parse_range(f, "--facts", "a story size like 20 or 10..50")?),
        };
        let fact_window = {
            let bad = || {
                usage(format!(
                    "invalid --fact-window '{}': expected a depth window in percent like 40..60",
                    self.fact_window
                ))
            };
            let (lo, hi) = self.fact_window.split_once("..").ok_or_else(bad)?;
            let lo: f64 = lo.trim().parse().map_err(|_| bad())?;
            let hi: f64 = hi.trim().parse().map_err(|_| bad())?;
            (lo, hi)
        };
        let params = TaskParams::Babilong(BabilongParams {
            tasks,
            vocab: self.vocab,
            facts,
            fact_window,
        });
        if let Some(d) = &self.common.depths {
            let depths = parse_depths(d).map_err(usage)?;
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

    fn common(&self) -> Result<Cow<'_, CommonArgs>> {
        Ok(Cow::Borrowed(&self.common))
    }

    /// `--task qa1,qa2`: the tasks by their bAbI names; the window always as a range.
    fn shortcuts(params: &TaskParams) -> Vec<Flag> {
        let TaskParams::Babilong(p) = params else {
            return Vec::new();
        };
        let tasks = p.tasks.iter().map(|n| format!("qa{n}")).collect::<Vec<_>>();
        vec![("--task".to_string(), Some(tasks.join(",")))]
    }
}
