//! babilong's parameters: which bAbI tasks, which names, story sizes and the depth window.

use serde::{Deserialize, Serialize};

use super::{spec, Babilong, MAX_FACTS, TASKS};
use crate::tasks::Params;
use crate::ParamError;

choice! {
    /// Which names a story uses.
    pub enum Vocabulary {
        /// bAbI's six places, three objects and four actors.
        Babi = "babi",
        /// Names drawn per instance from our larger lists.
        Fresh = "fresh",
    }
}

/// babilong's parameters, spelled as manifests record them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BabilongParams {
    /// bAbI task numbers (the N of `qaN`), one config each, in order.
    pub tasks: Vec<u8>,
    /// Classic or fresh names.
    pub vocab: Vocabulary,
    /// Story sizes in facts (inclusive), or None for bAbI's sizes per task.
    pub facts: Option<(u32, u32)>,
    /// Depth window (percent) every fact stays in.
    pub fact_window: (f64, f64),
}

/// What `--facts` accepts for one task, in words.
fn accepted_facts(rules: &spec::TaskSpec) -> String {
    let (qa, min, max) = (rules.qa, rules.min_facts, rules.max_facts);
    if min == max {
        format!("{min} for qa{qa}, whose stories always have {min} facts")
    } else if max < MAX_FACTS {
        format!("a size or range within {min}..{max} for qa{qa}, whose stories have {min} to {max} facts")
    } else {
        format!("a size or range within {min}..{max} for qa{qa} (its question needs at least {min} facts)")
    }
}

/// A bAbI task number with the story sizes (facts, inclusive) asked for, or `None` for
/// bAbI's own.
pub type StorySizes = (u8, Option<(u32, u32)>);

impl BabilongParams {
    /// Check every parameter; the story sizes of each task, in `tasks` order.
    pub fn story_sizes(&self) -> Result<Vec<StorySizes>, ParamError> {
        if self.tasks.is_empty() {
            return Err(ParamError::new("tasks", "", "at least one of qa1 to qa20"));
        }
        let (lo, hi) = self.fact_window;
        if !(0.0..=100.0).contains(&lo) || !(0.0..=100.0).contains(&hi) || hi - lo < 1.0 {
            return Err(ParamError::new(
                "fact_window",
                format!("{lo}..{hi}"),
                "two percents 0-100, the second at least 1 above the first",
            ));
        }
        let mut sizes = Vec::with_capacity(self.tasks.len());
        for (i, &qa) in self.tasks.iter().enumerate() {
            let Some(rules) = spec::find(qa) else {
                return Err(ParamError::new(
                    "tasks",
                    format!("qa{qa}"),
                    format!("qa1 to qa{}", TASKS.len()),
                ));
            };
            if self.tasks[..i].contains(&qa) {
                return Err(ParamError::new(
                    "tasks",
                    format!("qa{qa}"),
                    "each task once",
                ));
            }
            let facts = match self.facts {
                None => None,
                Some((a, b)) if a < rules.min_facts || b < a || b > rules.max_facts => {
                    let asked = if a == b {
                        a.to_string()
                    } else {
                        format!("{a}..{b}")
                    };
                    return Err(ParamError::new("facts", asked, accepted_facts(rules)));
                }
                Some(range) => Some(range),
            };
            sizes.push((qa, facts));
        }
        Ok(sizes)
    }
}

impl Params for BabilongParams {
    type Built = Vec<Babilong>;

    /// Check every parameter and make one task per bAbI task, in `tasks` order.
    fn build(&self) -> Result<Vec<Babilong>, ParamError> {
        self.story_sizes()?
            .into_iter()
            .map(|(qa, facts)| Babilong::checked(qa, self.vocab, facts, self.fact_window))
            .collect()
    }

    fn zero_length(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(tasks: &[u8], facts: Option<(u32, u32)>, window: (f64, f64)) -> BabilongParams {
        BabilongParams {
            tasks: tasks.to_vec(),
            vocab: Vocabulary::Babi,
            facts,
            fact_window: window,
        }
    }

    #[test]
    fn refusals_name_the_parameter() {
        let full = (0.0, 100.0);
        for (p, param) in [
            (params(&[21], None, full), "tasks"),
            (params(&[], None, full), "tasks"),
            (params(&[1, 1], None, full), "tasks"),
            (params(&[16], Some((5, 5)), full), "facts"),
            (params(&[3], Some((2, 9)), full), "facts"),
            (params(&[1], Some((9, 3)), full), "facts"),
            (params(&[1], None, (60.0, 40.0)), "fact_window"),
            (params(&[1], None, (40.0, 40.5)), "fact_window"),
        ] {
            assert_eq!(p.story_sizes().unwrap_err().param, param, "{p:?}");
        }
        let e = params(&[15], Some((5, 5)), full).story_sizes().unwrap_err();
        assert_eq!(e.value, "5");
        assert_eq!(e.expected, "8 for qa15, whose stories always have 8 facts");
        let e = params(&[5], Some((1, 9)), full).story_sizes().unwrap_err();
        assert_eq!(e.value, "1..9");
        assert!(e
            .expected
            .starts_with("a size or range within 4..5000 for qa5"));
        assert_eq!(
            params(&[14], Some((3, 12)), full).story_sizes().unwrap(),
            vec![(14, Some((3, 12)))]
        );
        let sizes = params(&[2, 1], Some((4, 6)), (10.0, 90.0)).story_sizes();
        assert_eq!(sizes.unwrap(), vec![(2, Some((4, 6))), (1, Some((4, 6)))]);
        assert_eq!(
            params(&[4], None, full).story_sizes().unwrap(),
            vec![(4, None)]
        );
    }
}
