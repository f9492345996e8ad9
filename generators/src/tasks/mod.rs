//! One module per task.

pub mod arith;
pub mod babilong;
pub mod needlechain;
pub mod niah;
pub mod posgen;
pub mod sort;

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
    (
        "posgen",
        "position generalisation: integer sequences mod m where each token depends on earlier ones",
    ),
    ("sort", "sort N numbers or words (or labels by value), optionally hidden in a haystack"),
    (
        "babilong",
        "bAbI reasoning stories (qa1-qa20) simulated afresh and hidden in text of any length (BABILong)",
    ),
    ("arith", "add, subtract or multiply at any digit count and layout; or sum numbers hidden in text"),
];
