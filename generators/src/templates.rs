//! The templates shipped with needlework (`templates/<task>/<name>.j2`), embedded so the binary
//! needs no files at run time.

/// (task, name, source) of every built-in template; the first per task is its default.
pub const BUILTIN: &[(&str, &str, &str)] = &[
    (
        "niah",
        "default",
        include_str!("../templates/niah/default.j2"),
    ),
    ("niah", "plain", include_str!("../templates/niah/plain.j2")),
    (
        "niah",
        "latent",
        include_str!("../templates/niah/latent.j2"),
    ),
    (
        "needlechain",
        "default",
        include_str!("../templates/needlechain/default.j2"),
    ),
    (
        "posgen",
        "default",
        include_str!("../templates/posgen/default.j2"),
    ),
    (
        "sort",
        "default",
        include_str!("../templates/sort/default.j2"),
    ),
    (
        "babilong",
        "default",
        include_str!("../templates/babilong/default.j2"),
    ),
    (
        "babilong",
        "babilong",
        include_str!("../templates/babilong/babilong.j2"),
    ),
    (
        "arith",
        "default",
        include_str!("../templates/arith/default.j2"),
    ),
    ("vt", "default", include_str!("../templates/vt/default.j2")),
    (
        "cwe",
        "default",
        include_str!("../templates/cwe/default.j2"),
    ),
    (
        "fwe",
        "default",
        include_str!("../templates/fwe/default.j2"),
    ),
    ("qa", "default", include_str!("../templates/qa/default.j2")),
];

/// The built-in template `name` of `task`.
pub fn builtin(task: &str, name: &str) -> Option<&'static str> {
    BUILTIN
        .iter()
        .find(|(t, n, _)| *t == task && *n == name)
        .map(|(_, _, s)| *s)
}

/// Names of the built-in templates of `task`.
pub fn names(task: &str) -> Vec<&'static str> {
    BUILTIN
        .iter()
        .filter(|(t, _, _)| *t == task)
        .map(|(_, n, _)| *n)
        .collect()
}
