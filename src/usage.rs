//! Bad usage or bad input: the errors that exit 2 with one line, as opposed to runtime
//! failures (exit 1). Every module words its refusals through [`usage`]; a task parameter the
//! core refuses travels as [`refused`], named by its field, and the command line words it as
//! the flag that sets it.

use needlework_generators::ParamError;

/// Bad usage or bad input: exit code 2.
#[derive(Debug)]
pub enum UsageError {
    /// A refusal in its final words.
    Message(String),
    /// A task parameter the core refused, named as its field (`key_type`).
    Param(ParamError),
}

impl UsageError {
    /// The refusal, a parameter worded with `flag` (the flag that sets a field).
    pub fn worded(&self, flag: &dyn Fn(&str) -> String) -> String {
        match self {
            UsageError::Message(m) => m.clone(),
            UsageError::Param(e) => {
                // Numbers and ranges (`0`, `9..3`) stand bare, names are quoted.
                let numeric =
                    !e.value.is_empty() && e.value.chars().all(|c| c.is_ascii_digit() || c == '.');
                let value = if numeric {
                    e.value.clone()
                } else {
                    format!("'{}'", e.value)
                };
                format!("invalid {} {value}: expected {}", flag(e.param), e.expected)
            }
        }
    }
}

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.worded(&|p| format!("--{}", p.replace('_', "-"))))
    }
}

impl std::error::Error for UsageError {}

/// Wrap a message as a usage error (exit 2).
pub fn usage(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(UsageError::Message(e.to_string()))
}

/// A parameter the core refused, as a usage error (exit 2) the command line words.
pub fn refused(e: ParamError) -> anyhow::Error {
    anyhow::Error::new(UsageError::Param(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_worded_as_flags() {
        let e = UsageError::Param(ParamError::new("train_len", 3, "more than 4"));
        assert_eq!(e.to_string(), "invalid --train-len 3: expected more than 4");
        let e = UsageError::Param(ParamError::new("tasks", "qa21", "qa1 to qa20"));
        let worded = e.worded(&|p| {
            if p == "tasks" {
                "--task".into()
            } else {
                p.into()
            }
        });
        assert_eq!(worded, "invalid --task 'qa21': expected qa1 to qa20");
    }
}
