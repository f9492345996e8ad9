//! End-to-end tests of `gen export`: whatever the dataset directory is called, the files
//! written are the files meant — no value breaks out of its string literal or comment.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

/// A directory name with a newline, both quotes, a backslash and `#`, built to inject a YAML
/// key and a Python statement if written raw.
const EVIL: &str =
    "ds \"q\" 'a' #x\n# c\ntask: injected\nimport os; os.system(\"false\") #\\n\t\u{85}é🧵\\";

/// Generate a small dataset, then move it to a directory named [`EVIL`].
fn evil_dataset(t: &tempfile::TempDir) -> PathBuf {
    let plain = t.path().join("plain");
    generate(
        plain.to_str().unwrap(),
        &["niah", "--len", "1k", "--samples", "2"],
    );
    let evil = t.path().join(EVIL);
    std::fs::rename(&plain, &evil).unwrap();
    evil
}

/// The first double-quoted string literal of `line`, unescaped by the rules YAML and Python
/// share (the only escapes the exporter writes).
fn quoted(line: &str) -> String {
    let start = line.find('"').expect("a quoted value") + 1;
    let mut out = String::new();
    let mut chars = line[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return out,
            '\\' => {
                let e = chars.next().unwrap();
                let hex = |n: usize, chars: &mut std::str::Chars| {
                    let h: String = chars.take(n).collect();
                    char::from_u32(u32::from_str_radix(&h, 16).unwrap()).unwrap()
                };
                out.push(match e {
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    '"' => '"',
                    '\\' => '\\',
                    'x' => hex(2, &mut chars),
                    'u' => hex(4, &mut chars),
                    'U' => hex(8, &mut chars),
                    e => panic!("unexpected escape \\{e} in {line}"),
                });
            }
            c => out.push(c),
        }
    }
    panic!("unterminated literal in {line}")
}

fn python() -> Option<&'static str> {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("note: python3 not found; the Python-side checks are skipped");
    }
    ok.then_some("python3")
}

/// Run a Python snippet with `args`; `None` when the snippet reports it cannot run (a module
/// missing), after printing a note.
fn run_python(code: &str, args: &[&str]) -> Option<String> {
    let py = python()?;
    let o = Command::new(py)
        .arg("-c")
        .arg(code)
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    if stdout.starts_with("SKIP") {
        eprintln!("note: {}", stdout.trim());
        return None;
    }
    assert!(
        o.status.success(),
        "python failed: {}{}",
        stdout,
        String::from_utf8_lossy(&o.stderr)
    );
    Some(stdout)
}

/// No line of `text` is one the directory name tried to inject.
fn assert_no_injected_line(text: &str, file: &Path) {
    for line in text.lines() {
        let l = line.trim_start();
        assert!(
            !l.starts_with("task: injected")
                && !l.starts_with("import os; os.system")
                && !l.starts_with("# c"),
            "{} has an injected line: {line:?}\n{text}",
            file.display()
        );
    }
    assert!(
        !text.contains("#x\n# c"),
        "{} holds the raw directory name",
        file.display()
    );
}

/// Item 16: lm-eval YAML — no injected line, no raw path in a comment, and the shard pattern
/// round-trips to the real path (and loads as YAML with the same value, where PyYAML exists).
#[test]
fn lm_eval_yaml_escapes_the_dataset_path() {
    let t = tmp();
    let dir = evil_dataset(&t);
    gen_ok(&["export", "lm-eval", dir.to_str().unwrap()]);
    let real = dir.canonicalize().unwrap();
    let want = real.join("niah_single").join("test-*.parquet");
    let want = want.to_str().unwrap();
    let file = dir.join("lm_eval/needlework_niah_single.yaml");
    let yaml = std::fs::read_to_string(&file).unwrap();
    assert_no_injected_line(&yaml, &file);
    for line in yaml.lines().filter(|l| l.starts_with('#')) {
        assert!(!line.contains("ds \"q\""), "a path in a comment: {line}");
    }
    let data_line = yaml
        .lines()
        .find(|l| l.trim_start().starts_with("\"test\":") || l.trim_start().starts_with("test:"))
        .expect("a data_files line");
    assert_eq!(quoted(data_line.split_once(':').unwrap().1), want);
    assert_eq!(
        yaml.lines().filter(|l| l.starts_with("task:")).count(),
        1,
        "{yaml}"
    );
    let code = r#"
import sys
try:
    import yaml
except ImportError:
    print("SKIP: PyYAML not installed; YAML parse check skipped"); sys.exit(0)
class L(yaml.SafeLoader): pass
L.add_multi_constructor("!", lambda loader, suffix, node: None)
doc = yaml.load(open(sys.argv[1]), Loader=L)
assert doc["task"] == "needlework_niah_single", doc
assert doc["dataset_kwargs"]["data_files"]["test"] == sys.argv[2], doc["dataset_kwargs"]
print("ok")
"#;
    if let Some(out) = run_python(code, &[file.to_str().unwrap(), want]) {
        assert_eq!(out.trim(), "ok");
    }
    py_compile(&dir.join("lm_eval/utils.py"));
}

/// Item 16: the inspect and OpenCompass files — no injected line, they compile, and the
/// OpenCompass path round-trips.
#[test]
fn python_exports_escape_the_dataset_path() {
    let t = tmp();
    let dir = evil_dataset(&t);
    gen_ok(&["export", "inspect", dir.to_str().unwrap()]);
    gen_ok(&["export", "opencompass", dir.to_str().unwrap()]);
    let real = dir.canonicalize().unwrap();
    let inspect = dir.join("inspect/needlework_tasks.py");
    let text = std::fs::read_to_string(&inspect).unwrap();
    assert_no_injected_line(&text, &inspect);
    assert!(!text.contains("ds \"q\""), "the raw path is in the file");
    py_compile(&inspect);

    let oc = dir.join("opencompass/needlework_datasets.py");
    let text = std::fs::read_to_string(&oc).unwrap();
    assert_no_injected_line(&text, &oc);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("_config("))
        .unwrap();
    let want = real.join("niah_single").join("test-00000-of-00001.parquet");
    assert!(line.contains("\"needlework_niah_single\""), "{line}");
    py_compile(&oc);
    // The literal, read by Python itself, is the path.
    let code = r#"
import ast, sys
src = open(sys.argv[1]).read()
tree = ast.parse(src)
paths = [n.args[1].value for n in ast.walk(tree)
         if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "_config"]
assert paths == [sys.argv[2]], (paths, sys.argv[2])
print("ok")
"#;
    if let Some(out) = run_python(code, &[oc.to_str().unwrap(), want.to_str().unwrap()]) {
        assert_eq!(out.trim(), "ok");
    }
}

/// `python3 -m py_compile FILE` succeeds (skipped with a note without python3).
fn py_compile(file: &Path) {
    let Some(py) = python() else { return };
    let o = Command::new(py)
        .args(["-m", "py_compile"])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{} does not compile: {}",
        file.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Item 16: names from the manifest that would become YAML keys or Python identifiers are
/// refused when they are not plain (exit 2, one line, nothing written).
#[test]
fn unplain_manifest_names_are_refused() {
    let t = tmp();
    let dir = t.path().join("d");
    generate(dir.to_str().unwrap(), &["niah", "--len", "1k"]);
    let manifest = dir.join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    for bad in [
        "niah_single\\ntask: injected",
        "x\\\"); import os #",
        "class",
    ] {
        std::fs::write(
            &manifest,
            text.replace("\"niah_single\"", &format!("\"{bad}\"")),
        )
        .unwrap();
        for harness in ["lm-eval", "inspect", "opencompass"] {
            let o = gen(&["export", harness, dir.to_str().unwrap()]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{bad} {harness}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
            assert!(err.contains("config"), "{err}");
        }
        assert!(!dir.join("lm_eval").exists() && !dir.join("inspect").exists());
    }
}
