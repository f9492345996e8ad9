//! The architecture's rules, checked on the source so they stay true: the shell's modules form
//! no cycle, the core words no command-line flag in its messages, no file grows past ~650
//! lines of non-test code, and no function needs `too_many_arguments`.

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

#[test]
fn shell_modules_form_no_cycle() {
    let src = root().join("src");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in rust_files(&src) {
        let module = f.file_stem().unwrap().to_string_lossy().to_string();
        if module == "main" {
            continue;
        }
        let deps = edges.entry(module.clone()).or_default();
        for line in non_test_code(&f) {
            for (i, _) in line.match_indices("crate::") {
                let name: String = line[i + 7..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && name != module {
                    deps.insert(name);
                }
            }
        }
    }
    assert!(edges.len() > 10, "{edges:?}");
    // Depth-first search for a back edge.
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if done.contains(m) {
            return;
        }
        if let Some(i) = path.iter().position(|p| p == m) {
            panic!("module cycle: {} -> {m}", path[i..].join(" -> "));
        }
        path.push(m.to_string());
        for d in edges.get(m).into_iter().flatten() {
            visit(d, edges, path, done);
        }
        path.pop();
        done.insert(m.to_string());
    }
    let mut done = BTreeSet::new();
    for m in edges.keys() {
        visit(m, &edges, &mut Vec::new(), &mut done);
    }
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
