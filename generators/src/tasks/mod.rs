//! One module per task.

pub mod needlechain;
pub mod niah;

/// Names and one-line descriptions of the tasks `gen` can generate.
pub const TASKS: &[(&str, &str)] = &[
    (
        "niah",
        "needle in a haystack: find the values of keys hidden in long text (RULER's NIAH family)",
    ),
    (
        "needlechain",
        "a context made only of relevant facts: salary chains (NeedleChain) or kinship chains (Ancestral Trace)",
    ),
];
