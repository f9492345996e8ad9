//! The architecture's rules, checked on the source so they stay true: in both crates no module
//! cycle; in the shell, clap's types stay in the command-line layer (at most four modules
//! besides the ones that define them reach them, and the run, dataset, check and harness layers
//! none); the core words no command-line flag; no file grows past ~650 lines of non-test code;
//! no function needs `too_many_arguments`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The code of a file before its first `#[cfg(test)]` item, without `//` comments.
fn non_test_code(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .take_while(|l| !l.trim_start().starts_with("#[cfg(test)]"))
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => l[..i].to_string(),
            _ => l.to_string(),
        })
        .collect()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A module path, `["run", "prepare"]`; the crate root is empty.
type Module = Vec<String>;

/// One crate's modules: each file's module path, its code, and the paths it names.
struct Crate {
    modules: BTreeMap<Module, PathBuf>,
    refs: BTreeMap<Module, BTreeSet<Module>>,
}

/// The module a file is: `src/run/mod.rs` is `run`, `src/run/prepare.rs` is `run::prepare`.
fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "main" | "lib")
    ) {
        parts.pop();
    }
    parts
}

/// Every `a::b::c` path in a line, with `use` groups (`crate::{a, b::{c, d}}`) expanded.
fn paths_in(line: &str) -> Vec<Vec<String>> {
    fn expand(prefix: &[String], s: &str, out: &mut Vec<Vec<String>>) {
        // Split the top-level comma list of a group.
        let mut depth = 0;
        let mut start = 0;
        let bytes: Vec<char> = s.chars().collect();
        let mut items = Vec::new();
        for (i, c) in bytes.iter().enumerate() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(bytes[start..i].iter().collect::<String>());
                    start = i + 1;
                }
                _ => {}
            }
        }
        items.push(bytes[start..].iter().collect::<String>());
        for item in items {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            if let Some(open) = item.find('{') {
                let head: Vec<String> = item[..open]
                    .trim_end_matches("::")
                    .split("::")
                    .filter(|p| !p.is_empty())
                    .map(str::to_string)
                    .collect();
                let inner = item[open + 1..].trim_end().trim_end_matches('}');
                let mut p = prefix.to_vec();
                p.extend(head);
                expand(&p, inner, out);
            } else {
                let mut p = prefix.to_vec();
                p.extend(
                    item.split(" as ")
                        .next()
                        .unwrap()
                        .split("::")
                        .map(|x| x.trim().to_string()),
                );
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        for (i, _) in line.match_indices(start) {
            if i > 0 {
                let before = line[..i].chars().last().unwrap();
                if before.is_alphanumeric() || before == '_' || before == ':' {
                    continue;
                }
            }
            let rest = &line[i..];
            // The path's characters, then a `{…}` group when one follows.
            let mut end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            if rest[end..].starts_with('{') {
                let mut depth = 0;
                for (j, c) in rest.char_indices().skip(end) {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = j + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
            }
            expand(&[], &rest[..end], &mut out);
        }
    }
    out
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let files = rust_files(src);
        let modules: BTreeMap<Module, PathBuf> = files
            .iter()
            .map(|f| (module_of(src, f), f.clone()))
            .collect();
        let mut refs: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
        for (m, f) in &modules {
            let code = non_test_code(f).join("\n");
            // Statements may span lines: join each `use` onto one line.
            let joined = code.replace('\n', " ");
            let mut found = BTreeSet::new();
            for statement in joined.split(';') {
                for path in paths_in(statement) {
                    if let Some(target) = resolve(m, &path, &modules) {
                        found.insert(target);
                    }
                }
            }
            refs.insert(m.clone(), found);
        }
        Crate { modules, refs }
    }
}

/// The deepest module of `modules` that `path`, named inside `from`, reaches.
fn resolve(from: &Module, path: &[String], modules: &BTreeMap<Module, PathBuf>) -> Option<Module> {
    let mut base: Module;
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base = Vec::new();
            rest = &rest[1..];
        }
        Some("self") => {
            base = from.clone();
            rest = &rest[1..];
        }
        Some("super") => {
            base = from.clone();
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    let mut best = base.clone();
    for part in rest {
        base.push(part.clone());
        if modules.contains_key(&base) {
            best = base.clone();
        } else {
            break;
        }
    }
    Some(best).filter(|m| m != from && modules.contains_key(m))
}

fn is_within(m: &Module, of: &Module) -> bool {
    m.len() >= of.len() && m[..of.len()] == of[..]
}

/// A cycle among the modules of `c`, ignoring a module's references to its own ancestors and
/// descendants (a module and its parts are one unit).
fn find_cycle(c: &Crate) -> Option<Vec<Module>> {
    fn visit(
        m: &Module,
        c: &Crate,
        path: &mut Vec<Module>,
        done: &mut BTreeSet<Module>,
    ) -> Option<Vec<Module>> {
        if done.contains(m) {
            return None;
        }
        if let Some(i) = path.iter().position(|p| p == m) {
            let mut cycle = path[i..].to_vec();
            cycle.push(m.clone());
            return Some(cycle);
        }
        path.push(m.clone());
        for d in c.refs.get(m).into_iter().flatten() {
            if is_within(d, m) || is_within(m, d) {
                continue;
            }
            if let Some(cycle) = visit(d, c, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(m.clone());
        None
    }
    let mut done = BTreeSet::new();
    for m in c.modules.keys() {
        if let Some(cycle) = visit(m, c, &mut Vec::new(), &mut done) {
            return Some(cycle);
        }
    }
    None
}

fn shown(cycle: &[Module]) -> String {
    cycle
        .iter()
        .map(|m| {
            if m.is_empty() {
                "crate".into()
            } else {
                m.join("::")
            }
        })
        .collect::<Vec<_>>()
        .join(" -> ")
}

#[test]
fn neither_crate_has_a_module_cycle() {
    for src in [root().join("src"), root().join("generators/src")] {
        let c = Crate::read(&src);
        assert!(c.modules.len() > 20, "{}", src.display());
        assert!(
            c.refs.values().map(BTreeSet::len).sum::<usize>() > 40,
            "too few references found: the reader is broken"
        );
        if let Some(cycle) = find_cycle(&c) {
            panic!("module cycle in {}: {}", src.display(), shown(&cycle));
        }
    }
}

/// The types a module defines with clap's derives.
fn clap_types(file: &Path) -> Vec<String> {
    let code = non_test_code(file);
    let mut out = Vec::new();
    let mut derived = false;
    for line in &code {
        let t = line.trim();
        if t.starts_with("#[derive(")
            && ["Parser", "Args", "Subcommand", "ValueEnum"]
                .iter()
                .any(|d| t.contains(d))
        {
            derived = true;
        } else if derived
            && (t.starts_with("pub struct ")
                || t.starts_with("pub enum ")
                || t.starts_with("struct ")
                || t.starts_with("enum "))
        {
            let name = t
                .split_whitespace()
                .find(|w| !["pub", "struct", "enum"].contains(w))
                .unwrap_or("")
                .trim_end_matches('{')
                .to_string();
            out.push(name);
            derived = false;
        }
    }
    out
}

fn mentions_word(code: &str, word: &str) -> bool {
    code.match_indices(word).any(|(i, _)| {
        let before = code[..i].chars().last();
        let after = code[i + word.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

#[test]
fn clap_stays_in_the_command_line_layer() {
    let src = root().join("src");
    let c = Crate::read(&src);
    let definers: BTreeMap<Module, Vec<String>> = c
        .modules
        .iter()
        .map(|(m, f)| (m.clone(), clap_types(f)))
        .filter(|(_, types)| !types.is_empty())
        .collect();
    assert!(definers.len() >= 10, "{definers:?}");
    let types: Vec<&String> = definers.values().flatten().collect();
    let mut importers = Vec::new();
    for (m, f) in &c.modules {
        if m.is_empty() || definers.contains_key(m) {
            continue;
        }
        let code = non_test_code(f).join("\n");
        let by_path = c.refs[m].iter().any(|r| definers.contains_key(r));
        let by_name = types.iter().any(|t| mentions_word(&code, t));
        // `clap` itself, outside the definers (a Command built by hand).
        let by_crate = mentions_word(&code, "clap");
        if by_path || by_name || by_crate {
            importers.push(m.join("::"));
        }
    }
    assert!(
        importers.len() <= 4,
        "more than four modules besides clap's definers reach clap's types: {importers:?}"
    );
    for m in c.modules.keys() {
        let layer = m.first().map(String::as_str).unwrap_or("");
        if !["run", "dataset", "check", "harness"].contains(&layer) {
            continue;
        }
        let upward: Vec<String> = c.refs[m]
            .iter()
            .filter(|r| matches!(r.first().map(String::as_str), Some("cli" | "tasks")))
            .map(|r| r.join("::"))
            .collect();
        assert!(
            upward.is_empty() && !importers.contains(&m.join("::")),
            "{} reaches the command line: {upward:?}",
            m.join("::")
        );
    }
    // The configuration the run layer takes is plain data.
    let config = non_test_code(&src.join("run/config.rs")).join("\n");
    assert!(!mentions_word(&config, "clap") && !config.contains("crate::cli"));
}

#[test]
fn the_reader_finds_what_it_must() {
    let p = paths_in("use crate::{a::b, c::{d, e::f}}");
    assert_eq!(
        p,
        vec![
            vec!["crate", "a", "b"],
            vec!["crate", "c", "d"],
            vec!["crate", "c", "e", "f"]
        ]
    );
    let p = paths_in("let x = super::super::y::Z::new(crate::q::r(1));");
    assert!(p.contains(&vec![
        "super".into(),
        "super".into(),
        "y".into(),
        "Z".into(),
        "new".into()
    ]));
    assert!(p.contains(&vec!["crate".into(), "q".into(), "r".into()]));
}

#[test]
fn the_core_words_no_command_line_flags() {
    let mut found = Vec::new();
    for f in rust_files(&root().join("generators/src")) {
        for (n, line) in non_test_code(&f).iter().enumerate() {
            // A string literal holding `--word`.
            let mut in_string = false;
            let chars: Vec<char> = line.chars().collect();
            for i in 0..chars.len() {
                if chars[i] == '"' && (i == 0 || chars[i - 1] != '\\') {
                    in_string = !in_string;
                }
                if in_string
                    && chars[i] == '-'
                    && chars.get(i + 1) == Some(&'-')
                    && chars.get(i + 2).is_some_and(|c| c.is_ascii_lowercase())
                {
                    found.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
                    break;
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "flag names in the core:\n{}",
        found.join("\n")
    );
}

#[test]
fn files_stay_small_and_functions_take_few_arguments() {
    let mut files = rust_files(&root().join("src"));
    files.extend(rust_files(&root().join("generators/src")));
    assert!(files.len() > 30);
    for f in files {
        let code = non_test_code(&f);
        assert!(
            code.len() <= 650,
            "{} has {} lines of non-test code",
            f.display(),
            code.len()
        );
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(
            !text.contains(&["too_many", "_arguments"].concat()),
            "{} silences clippy's argument count",
            f.display()
        );
    }
}

/// A task is one unit: outside comments and test code, a task's name appears only in its two
/// modules (core and shell) and the two registries — no table of templates or harness names
/// elsewhere lists it. Checked for the tasks whose names are no English word (`sort`, `qa`
/// and `niah` occur as words, and in the names of other things, across the code).
#[test]
fn a_task_is_named_in_four_files_at_most() {
    let mut files = rust_files(&root().join("src"));
    files.extend(rust_files(&root().join("generators/src")));
    for task in ["vt", "cwe", "fwe", "posgen", "needlechain", "arith"] {
        let naming: Vec<String> = files
            .iter()
            .filter(|f| mentions_word(&non_test_code(f).join("\n"), task))
            .filter(|f| !f.to_string_lossy().ends_with("_tests.rs"))
            .map(|f| f.display().to_string())
            .collect();
        assert!(
            naming.len() <= 4,
            "{task} is named in {} files: {naming:?}",
            naming.len()
        );
    }
}
