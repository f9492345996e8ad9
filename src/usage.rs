//! Bad usage or bad input: the errors that exit 2 with one line, as opposed to runtime
//! failures (exit 1). Every module words its refusals through [`usage`].

/// Bad usage or bad input: exit code 2.
#[derive(Debug)]
pub struct UsageError(String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Wrap a message as a usage error (exit 2).
pub fn usage(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(UsageError(e.to_string()))
}
