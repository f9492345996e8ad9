//! `--shard-index env` and `--num-shards env`: the shard a batch scheduler's worker makes,
//! read from the one variable its scheduler sets, so an array job's script needs no
//! arithmetic. The part is the one `--shard-index I` makes for the index read (the recorded
//! command leaves the shard flags out), so it merges with parts made either way.
//!
//! The environment is read once, here, into plain numbers; nothing below the CLI sees it.

use anyhow::Result;

use crate::run::shard::{Shard, MAX_SHARDS};
use crate::usage::usage;

/// What `--shard-index` and `--num-shards` accept: a number, or `env` for the scheduler's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardValue {
    /// Given on the command line.
    Given(u64),
    /// Read from the scheduler's variable.
    FromEnv,
}

/// clap's parser of the two flags' values.
pub fn parse_shard_value(s: &str) -> std::result::Result<ShardValue, String> {
    if s == "env" {
        return Ok(ShardValue::FromEnv);
    }
    s.parse::<u64>()
        .map(ShardValue::Given)
        .map_err(|_| format!("expected a whole number or env (the batch scheduler's), not '{s}'"))
}

/// One scheduler's variables: the worker's index and, where it has one, the worker count.
struct Scheduler {
    /// How the docs and errors name it.
    name: &'static str,
    /// The variable holding this worker's index.
    index: &'static str,
    /// The variable holding how many workers there are; Kubernetes sets none.
    count: Option<&'static str>,
}

/// Every scheduler `env` reads, in the order errors list them.
const SCHEDULERS: [Scheduler; 5] = [
    Scheduler {
        name: "a Slurm job array",
        index: "SLURM_ARRAY_TASK_ID",
        count: Some("SLURM_ARRAY_TASK_COUNT"),
    },
    Scheduler {
        name: "a Kubernetes Indexed Job",
        index: "JOB_COMPLETION_INDEX",
        count: None,
    },
    Scheduler {
        name: "an AWS Batch array job",
        index: "AWS_BATCH_JOB_ARRAY_INDEX",
        count: Some("AWS_BATCH_JOB_ARRAY_SIZE"),
    },
    Scheduler {
        name: "a Google Cloud Batch job",
        index: "BATCH_TASK_INDEX",
        count: Some("BATCH_TASK_COUNT"),
    },
    Scheduler {
        name: "a Cloud Run job",
        index: "CLOUD_RUN_TASK_INDEX",
        count: Some("CLOUD_RUN_TASK_COUNT"),
    },
];

/// The shard the two flags ask for, reading the process environment only when one is `env`.
pub fn shard_of(
    num_shards: Option<ShardValue>,
    shard_index: Option<ShardValue>,
) -> Result<Option<Shard>> {
    resolve(num_shards, shard_index, &|name| {
        std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
    })
}

/// [`shard_of`] over any environment (`get` returns a variable's value).
pub fn resolve(
    num_shards: Option<ShardValue>,
    shard_index: Option<ShardValue>,
    get: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Shard>> {
    use ShardValue::{FromEnv, Given};
    let wants_env = num_shards == Some(FromEnv) || shard_index == Some(FromEnv);
    let (count, index) = match (num_shards, shard_index) {
        (Some(Given(n)), Some(Given(i))) => (n, i),
        (None, None) => return Ok(None),
        (Some(n), Some(i)) if wants_env => {
            let found = Found::read(get)?;
            let (count, count_from) = match n {
                Given(n) => (n, format!("--num-shards {n}")),
                FromEnv => {
                    let (n, shown) = found.count()?;
                    if n == 0 || n > MAX_SHARDS {
                        return Err(usage(format!(
                            "invalid --num-shards env: {shown} gives {n} shards, expected 1 to {MAX_SHARDS}"
                        )));
                    }
                    (n, format!("--num-shards {n} from {shown}"))
                }
            };
            let (index, index_from) = match i {
                Given(i) => (i, format!("--shard-index {i}")),
                FromEnv => (
                    found.index,
                    format!(
                        "--shard-index env: {} gives index {}",
                        found.shown, found.index
                    ),
                ),
            };
            if count > 0 && count <= MAX_SHARDS && index >= count {
                return Err(usage(format!(
                    "invalid {index_from}, expected 0 to {} ({count_from})",
                    count - 1
                )));
            }
            (count, index)
        }
        _ => {
            return Err(usage(
                "--num-shards and --shard-index go together: give both or neither",
            ))
        }
    };
    Shard::asked(Some(count), Some(index))
}

/// The one scheduler whose index variable is set, and the index it gives.
struct Found {
    scheduler: &'static Scheduler,
    /// The worker's index, 0-based (Slurm's is made so from its array's minimum and step).
    index: u64,
    /// How errors name where the index came from: `SLURM_ARRAY_TASK_ID=7`.
    shown: String,
    /// The count variable's value, read with the index.
    count: Option<String>,
}

impl Found {
    /// Read the environment: exactly one scheduler's index variable must be set.
    fn read(get: &dyn Fn(&str) -> Option<String>) -> Result<Found> {
        let set: Vec<(&'static Scheduler, String)> = SCHEDULERS
            .iter()
            .filter_map(|s| get(s.index).map(|v| (s, v)))
            .collect();
        let names = || {
            SCHEDULERS
                .iter()
                .map(|s| s.index)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (scheduler, raw) = match set.as_slice() {
            [] => {
                return Err(usage(format!(
                    "--shard-index env / --num-shards env: no scheduler's index is set (one of {}): run inside an array task, or give the numbers",
                    names()
                )))
            }
            [one] => one.clone(),
            several => {
                let shown: Vec<String> = several
                    .iter()
                    .map(|(s, v)| format!("{}={v}", s.index))
                    .collect();
                return Err(usage(format!(
                    "--shard-index env / --num-shards env: several schedulers' indexes are set ({}): unset all but one, or give the numbers",
                    shown.join(", ")
                )));
            }
        };
        let number = |name: &str, value: &str| -> Result<u64> {
            value.trim().parse::<u64>().map_err(|_| {
                usage(format!(
                    "invalid {name}='{value}' (read for --shard-index env / --num-shards env): expected a whole number"
                ))
            })
        };
        let id = number(scheduler.index, &raw)?;
        let count = scheduler.count.and_then(get);
        let shown = format!("{}={raw}", scheduler.index);
        if scheduler.index != "SLURM_ARRAY_TASK_ID" {
            return Ok(Found {
                scheduler,
                index: id,
                shown,
                count,
            });
        }
        // Slurm numbers an array's tasks by --array=MIN-MAX:STEP; the shard is the task's
        // place in that range.
        let read = |name: &str| get(name).map(|v| number(name, &v)).transpose();
        let min = read("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let step = read("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1);
        let max = read("SLURM_ARRAY_TASK_MAX")?;
        if step == 0 || id < min || (id - min) % step != 0 {
            return Err(usage(format!(
                "--shard-index env: {shown} is not on its array's range (SLURM_ARRAY_TASK_MIN={min}, SLURM_ARRAY_TASK_STEP={step}): submit the array as --array=0-N-1"
            )));
        }
        let range = || format!("SLURM_ARRAY_TASK_MIN={min}, SLURM_ARRAY_TASK_STEP={step}");
        let count = match count {
            Some(c) => Some(number("SLURM_ARRAY_TASK_COUNT", &c)?),
            None => None,
        };
        if let (Some(max), Some(n)) = (max, count) {
            // A list such as --array=1,4,9 has gaps: its task ids are not one range.
            let span = max.checked_sub(min).and_then(|d| (d / step).checked_add(1));
            if span != Some(n) {
                return Err(usage(format!(
                    "--shard-index env: the Slurm array is not one range (SLURM_ARRAY_TASK_COUNT={n}, but {}, SLURM_ARRAY_TASK_MAX={max}): submit it as --array=0-N-1",
                    range()
                )));
            }
        }
        if count == Some(1) {
            // `sbatch --array=7` to rerun task 7 makes a one-task array whose only task is
            // index 0 of 1: the whole dataset, not shard 7.
            return Err(usage(format!(
                "--shard-index env: {shown} is the only task of its array (SLURM_ARRAY_TASK_COUNT=1), so it names no shard of a larger one: requeue a failed task with `scontrol requeue JOBID_{id}`, which keeps its array's variables, or give --num-shards N --shard-index I"
            )));
        }
        Ok(Found {
            scheduler,
            index: (id - min) / step,
            shown: format!("{shown} (array from {min} by {step})"),
            count: count.map(|n| n.to_string()),
        })
    }

    /// The worker count the scheduler gives, and how errors name it (`BATCH_TASK_COUNT=6`).
    fn count(&self) -> Result<(u64, String)> {
        let s = self.scheduler;
        let Some(name) = s.count else {
            return Err(usage(format!(
                "--num-shards env: {} sets no worker count (only {}): give --num-shards N, the Job's completions",
                s.name, s.index
            )));
        };
        let Some(value) = &self.count else {
            return Err(usage(format!(
                "--num-shards env: {name} is not set, though {} is: give --num-shards N",
                self.shown
            )));
        };
        let n = value.trim().parse::<u64>().map_err(|_| {
            usage(format!(
                "invalid {name}='{value}' (read for --num-shards env): expected a whole number"
            ))
        })?;
        Ok((n, format!("{name}={value}")))
    }
}

#[cfg(test)]
mod tests {
    use super::ShardValue::{FromEnv, Given};
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    fn both_env(pairs: &[(&str, &str)]) -> Result<Option<Shard>> {
        resolve(Some(FromEnv), Some(FromEnv), &env(pairs))
    }

    fn message(r: Result<Option<Shard>>) -> String {
        let e = r.expect_err("should be refused");
        assert!(
            e.downcast_ref::<crate::usage::UsageError>().is_some(),
            "a refusal is a usage error (exit 2): {e}"
        );
        e.to_string()
    }

    #[test]
    fn each_scheduler_gives_its_index_and_count() {
        // (variables, index, count)
        type Case = (&'static [(&'static str, &'static str)], u64, u64);
        let cases: [Case; 6] = [
            (
                &[
                    ("SLURM_ARRAY_TASK_ID", "3"),
                    ("SLURM_ARRAY_TASK_MIN", "0"),
                    ("SLURM_ARRAY_TASK_MAX", "7"),
                    ("SLURM_ARRAY_TASK_COUNT", "8"),
                ],
                3,
                8,
            ),
            // --array=1-8: task 4 is the fourth, index 3.
            (
                &[
                    ("SLURM_ARRAY_TASK_ID", "4"),
                    ("SLURM_ARRAY_TASK_MIN", "1"),
                    ("SLURM_ARRAY_TASK_MAX", "8"),
                    ("SLURM_ARRAY_TASK_COUNT", "8"),
                ],
                3,
                8,
            ),
            // --array=10-40:10: task 30 is index 2 of 4.
            (
                &[
                    ("SLURM_ARRAY_TASK_ID", "30"),
                    ("SLURM_ARRAY_TASK_MIN", "10"),
                    ("SLURM_ARRAY_TASK_MAX", "40"),
                    ("SLURM_ARRAY_TASK_STEP", "10"),
                    ("SLURM_ARRAY_TASK_COUNT", "4"),
                ],
                2,
                4,
            ),
            (
                &[
                    ("AWS_BATCH_JOB_ARRAY_INDEX", "0"),
                    ("AWS_BATCH_JOB_ARRAY_SIZE", "2"),
                ],
                0,
                2,
            ),
            (
                &[("BATCH_TASK_INDEX", "5"), ("BATCH_TASK_COUNT", "6")],
                5,
                6,
            ),
            (
                &[("CLOUD_RUN_TASK_INDEX", "1"), ("CLOUD_RUN_TASK_COUNT", "3")],
                1,
                3,
            ),
        ];
        for (pairs, index, count) in cases {
            assert_eq!(
                both_env(pairs).unwrap(),
                Some(Shard { index, count }),
                "{pairs:?}"
            );
        }
        // Kubernetes gives the index only; the count comes from the flag.
        let k8s = env(&[("JOB_COMPLETION_INDEX", "2")]);
        assert_eq!(
            resolve(Some(Given(4)), Some(FromEnv), &k8s).unwrap(),
            Some(Shard { index: 2, count: 4 })
        );
        // And a count from the environment with an index given.
        let gcp = env(&[("BATCH_TASK_INDEX", "0"), ("BATCH_TASK_COUNT", "6")]);
        assert_eq!(
            resolve(Some(FromEnv), Some(Given(5)), &gcp).unwrap(),
            Some(Shard { index: 5, count: 6 })
        );
    }

    #[test]
    fn numbers_alone_never_read_the_environment() {
        let panics = |_: &str| -> Option<String> { panic!("the environment was read") };
        assert_eq!(
            resolve(Some(Given(3)), Some(Given(1)), &panics).unwrap(),
            Some(Shard { index: 1, count: 3 })
        );
        assert_eq!(resolve(None, None, &panics).unwrap(), None);
    }

    #[test]
    fn no_several_or_bad_variables_are_refused_by_name() {
        let m = message(both_env(&[]));
        assert!(m.contains("no scheduler's index is set"), "{m}");
        assert!(
            m.contains("JOB_COMPLETION_INDEX") && m.contains("CLOUD_RUN_TASK_INDEX"),
            "{m}"
        );

        let m = message(both_env(&[
            ("SLURM_ARRAY_TASK_ID", "1"),
            ("BATCH_TASK_INDEX", "1"),
        ]));
        assert!(
            m.contains("several") && m.contains("SLURM_ARRAY_TASK_ID=1, BATCH_TASK_INDEX=1"),
            "{m}"
        );

        let m = message(both_env(&[
            ("CLOUD_RUN_TASK_INDEX", "x1"),
            ("CLOUD_RUN_TASK_COUNT", "3"),
        ]));
        assert!(m.contains("CLOUD_RUN_TASK_INDEX='x1'"), "{m}");
        let m = message(both_env(&[
            ("CLOUD_RUN_TASK_INDEX", "1"),
            ("CLOUD_RUN_TASK_COUNT", "-3"),
        ]));
        assert!(m.contains("CLOUD_RUN_TASK_COUNT='-3'"), "{m}");

        // Out of range, named with the variable it came from.
        let m = message(both_env(&[
            ("BATCH_TASK_INDEX", "6"),
            ("BATCH_TASK_COUNT", "6"),
        ]));
        assert!(
            m.contains("BATCH_TASK_INDEX=6") && m.contains("expected 0 to 5"),
            "{m}"
        );
        let m = message(resolve(
            Some(Given(2)),
            Some(FromEnv),
            &env(&[("JOB_COMPLETION_INDEX", "2")]),
        ));
        assert!(
            m.contains("JOB_COMPLETION_INDEX=2") && m.contains("expected 0 to 1"),
            "{m}"
        );
        let m = message(both_env(&[
            ("BATCH_TASK_INDEX", "0"),
            ("BATCH_TASK_COUNT", "0"),
        ]));
        assert!(m.contains("BATCH_TASK_COUNT=0 gives 0 shards"), "{m}");
        // An index given beside a count read: the count's variable is named.
        let m = message(resolve(
            Some(FromEnv),
            Some(Given(5)),
            &env(&[("BATCH_TASK_INDEX", "0"), ("BATCH_TASK_COUNT", "3")]),
        ));
        assert!(
            m.contains("--shard-index 5") && m.contains("from BATCH_TASK_COUNT=3"),
            "{m}"
        );

        // Kubernetes has no count variable.
        let m = message(both_env(&[("JOB_COMPLETION_INDEX", "0")]));
        assert!(
            m.contains("Kubernetes") && m.contains("--num-shards N"),
            "{m}"
        );
        // A count variable missing where one exists.
        let m = message(both_env(&[("AWS_BATCH_JOB_ARRAY_INDEX", "0")]));
        assert!(m.contains("AWS_BATCH_JOB_ARRAY_SIZE is not set"), "{m}");
    }

    #[test]
    fn slurm_tasks_off_their_range_or_lists_with_gaps_are_refused() {
        // --array=1,4,9: MIN 1, MAX 9, COUNT 3, no step.
        let list = [
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "9"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ];
        let m = message(both_env(&list));
        assert!(m.contains("not one range"), "{m}");
        // ... also when the count is given on the command line.
        let m = message(resolve(Some(Given(4)), Some(FromEnv), &env(&list)));
        assert!(m.contains("not one range"), "{m}");
        // A maximum below the minimum, or one whose span overflows.
        for (min, max) in [("5", "3"), ("0", "18446744073709551615")] {
            let m = message(both_env(&[
                ("SLURM_ARRAY_TASK_ID", "5"),
                ("SLURM_ARRAY_TASK_MIN", min),
                ("SLURM_ARRAY_TASK_MAX", max),
                ("SLURM_ARRAY_TASK_COUNT", "1"),
            ]));
            assert!(
                m.contains("not one range") || m.contains("only task"),
                "{m}"
            );
        }
        // `sbatch --array=7` to rerun task 7: a one-task array names no shard.
        let m = message(both_env(&[
            ("SLURM_ARRAY_TASK_ID", "7"),
            ("SLURM_ARRAY_TASK_MIN", "7"),
            ("SLURM_ARRAY_TASK_MAX", "7"),
            ("SLURM_ARRAY_TASK_COUNT", "1"),
        ]));
        assert!(
            m.contains("only task of its array") && m.contains("scontrol requeue"),
            "{m}"
        );
        // Below the minimum, or between steps.
        let m = message(both_env(&[
            ("SLURM_ARRAY_TASK_ID", "15"),
            ("SLURM_ARRAY_TASK_MIN", "10"),
            ("SLURM_ARRAY_TASK_STEP", "10"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]));
        assert!(m.contains("not on its array's range"), "{m}");
        let m = message(both_env(&[
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]));
        assert!(m.contains("not on its array's range"), "{m}");
    }

    #[test]
    fn randomized_environments_agree_with_the_numbers_they_stand_for() {
        // A small self-contained stream (splitmix64): the cases are fixed by the seed.
        let mut state = 0x5eed_u64;
        let mut next = move |bound: u64| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % bound
        };
        for _ in 0..2000 {
            let count = 1 + next(1200);
            let index = next(count + 2); // sometimes out of range
            let which = next(5) as usize;
            let s = &SCHEDULERS[which];
            let (min, step) = if which == 0 {
                (next(3), 1 + next(3))
            } else {
                (0, 1)
            };
            let id = (min + index * step).to_string();
            let max = (min + (count - 1) * step).to_string();
            let (min_s, step_s, count_s) = (min.to_string(), step.to_string(), count.to_string());
            let mut pairs = vec![(s.index, id.as_str())];
            if which == 0 {
                pairs.extend([
                    ("SLURM_ARRAY_TASK_MIN", min_s.as_str()),
                    ("SLURM_ARRAY_TASK_STEP", step_s.as_str()),
                    ("SLURM_ARRAY_TASK_MAX", max.as_str()),
                ]);
            }
            if let Some(c) = s.count {
                pairs.push((c, count_s.as_str()));
            }
            let flag_count = if s.count.is_some() {
                FromEnv
            } else {
                Given(count)
            };
            let got = resolve(Some(flag_count), Some(FromEnv), &env(&pairs));
            // A one-task Slurm array is refused: it names no shard of a larger one.
            let want = if which == 0 && count == 1 {
                Err(usage("one-task array"))
            } else {
                Shard::asked(Some(count), Some(index))
            };
            match (got, want) {
                (Ok(g), Ok(w)) => assert_eq!(g, w, "{pairs:?}"),
                (Err(g), Err(_)) => assert!(
                    g.downcast_ref::<crate::usage::UsageError>().is_some(),
                    "{g}"
                ),
                (g, w) => panic!("{pairs:?}: env gave {g:?}, numbers {w:?}"),
            }
        }
    }
}
