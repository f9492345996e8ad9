//! `echo`: a throwaway task that shows what adding a task takes (CI adds it to a copy of the
//! repository and counts the files it touched): copy a number back.

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::fit::render::render_facts;
use crate::rng::Stream;
use crate::tasks::Params;
use crate::template::{vars, Vars};
use crate::{canonical_json, Cell, GenError, Instance, Metric, ParamError, Run, Task};

/// The task's name: its command, its manifests' tag and the key of its random streams.
pub const NAME: &str = "echo";
/// One line saying what the task is.
pub const ABOUT: &str = "copy a number back (a throwaway task)";
/// The task's built-in templates, (name, source), the first its default.
pub const TEMPLATES: &[(&str, &str)] =
    &[("default", include_str!("../../templates/echo/default.j2"))];

/// echo's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EchoParams {
    /// Digits of the number.
    pub digits: u32,
}

impl Params for EchoParams {
    type Built = Echo;

    fn build(&self) -> Result<Echo, ParamError> {
        if !(1..=18).contains(&self.digits) {
            return Err(ParamError::new("digits", self.digits, "1 to 18"));
        }
        Ok(Echo {
            params: self.clone(),
        })
    }
}

/// Checked echo parameters.
pub struct Echo {
    params: EchoParams,
}

impl Echo {
    fn number(&self, run: &Run, cell: &Cell) -> String {
        let params = canonical_json(&json!(self.params));
        let mut rng = run.coordinates(NAME, &params, cell).rng(Stream::Content);
        let low = 10u64.pow(self.params.digits - 1);
        rng.range_inclusive(low, low * 10 - 1).to_string()
    }
}

impl Task for Echo {
    fn name(&self) -> &'static str {
        NAME
    }

    fn variant(&self) -> String {
        format!("d{}", self.params.digits)
    }

    fn params(&self) -> serde_json::Value {
        json!(self.params)
    }

    fn uses_haystack(&self) -> bool {
        false
    }

    fn default_reserve(&self) -> u32 {
        32
    }

    fn example_vars(&self) -> Vars {
        vars([("question", "Which number is written above?")])
    }

    fn minimum_length(&self, run: &Run) -> Result<u64, GenError> {
        let cell = Cell {
            length: 0,
            depth: None,
            sample: 0,
            slot: 0,
        };
        let frame = run.frame(&self.example_vars(), "")?;
        let fitted = render_facts(&run.tokenizer, &frame, &[self.number(run, &cell)])?;
        Ok(fitted.prompt_tokens as u64 + run.reserve)
    }

    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
        let number = self.number(run, cell);
        let question = "Which number is written above?".to_string();
        let frame = run.frame(&vars([("question", &question)]), "")?;
        let fitted = render_facts(&run.tokenizer, &frame, std::slice::from_ref(&number))?;
        Ok(Instance {
            question,
            target: number.clone(),
            answers: vec![number],
            metric: Metric::Exact,
            params: canonical_json(&json!(self.params)),
            ..Instance::fitted(self, run, cell, fitted.keep_needles(false))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::{builtin_template, TaskParams};
    use crate::{Template, Tokenizer};

    #[test]
    fn the_number_is_in_the_prompt_and_the_prompt_fits() {
        let parts = TaskParams::Echo(EchoParams { digits: 7 }).parts().unwrap();
        let task = &parts[0].task;
        let run = Run {
            tokenizer: Tokenizer::builtin("o200k").unwrap(),
            haystack: None,
            template: Template::compile(NAME, builtin_template(NAME, "default").unwrap()).unwrap(),
            seed: 3.into(),
            reserve: 32,
            reader: Default::default(),
        };
        let cell = Cell {
            length: 256,
            depth: None,
            sample: 1,
            slot: 1,
        };
        let i = task.generate(&run, &cell).unwrap();
        assert!(i.input.contains(&i.target) && i.target.len() == 7);
        assert!(i.prompt_tokens + u64::from(i.max_new_tokens) <= 256);
        assert_eq!(task.generate(&run, &cell).unwrap(), i);
    }
}
