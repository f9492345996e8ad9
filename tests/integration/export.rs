//! End-to-end tests of `gen export`: whatever the dataset directory is called, the files
//! written are the files meant — no value breaks out of its string literal or comment; two
//! datasets get distinct names; RULER's layout carries each row and RULER's task names.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

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

/// Lm-eval YAML — no injected line, no raw path in a comment, and the shard pattern
/// round-trips to the real path (and loads as YAML with the same value, where PyYAML exists).
#[test]
fn lm_eval_yaml_escapes_the_dataset_path() {
    let t = tmp();
    let dir = evil_dataset(&t);
    gen_ok(&["export", "lm-eval", dir.to_str().unwrap()]);
    let real = dir.canonicalize().unwrap();
    let want = real.join("niah_single").join("test-*.parquet");
    let want = want.to_str().unwrap();
    // The dataset's name in task names is the directory's name made plain.
    let name = EVIL_NAME;
    let task = format!("needlework_{name}_niah_single");
    let file = dir.join(format!("lm_eval/{task}.yaml"));
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
assert doc["task"] == sys.argv[3], doc
assert doc["dataset_kwargs"]["data_files"]["test"] == sys.argv[2], doc["dataset_kwargs"]
print("ok")
"#;
    if let Some(out) = run_python(code, &[file.to_str().unwrap(), want, &task]) {
        assert_eq!(out.trim(), "ok");
    }
    for f in std::fs::read_dir(dir.join("lm_eval")).unwrap() {
        let f = f.unwrap().path();
        let text = std::fs::read_to_string(&f).unwrap();
        assert_no_injected_line(&text, &f);
    }
    py_compile(&dir.join(format!("lm_eval/needlework_{name}_utils.py")));
}

/// [`EVIL`] made plain: what `gen export` names the dataset.
const EVIL_NAME: &str = "ds_q_a_x_c_task_injected_import_os_os_system_false_n";

/// The inspect and OpenCompass files — no injected line, they compile, and the
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

    let oc = dir.join(format!("opencompass/needlework_{EVIL_NAME}.py"));
    let text = std::fs::read_to_string(&oc).unwrap();
    assert_no_injected_line(&text, &oc);
    assert!(!text.contains("ds \"q\""), "the raw path is in the file");
    let want = real.join("niah_single").join("test-00000-of-00001.parquet");
    assert!(
        text.contains(&format!("\"needlework_{EVIL_NAME}_niah_single\"")),
        "{text}"
    );
    py_compile(&oc);
    let module = dir.join(format!("opencompass/needlework_{EVIL_NAME}_oc.py"));
    let code_text = std::fs::read_to_string(&module).unwrap();
    assert_no_injected_line(&code_text, &module);
    py_compile(&module);
    // The literal, read by Python itself, is the path; the types are dotted paths into the
    // module beside the config.
    let code = r#"
import ast, sys
tree = ast.parse(open(sys.argv[1]).read())
entries = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "dict"
           and any(k.arg == "abbr" for k in n.keywords)]
kw = lambda n, k: next(x.value.value for x in n.keywords if x.arg == k)
assert [kw(n, "path") for n in entries] == [sys.argv[2]], [kw(n, "path") for n in entries]
assert [kw(n, "type") for n in entries] == [sys.argv[3] + ".NeedleworkDataset"]
print("ok")
"#;
    let module_name = format!("needlework_{EVIL_NAME}_oc");
    if let Some(out) = run_python(
        code,
        &[oc.to_str().unwrap(), want.to_str().unwrap(), &module_name],
    ) {
        assert_eq!(out.trim(), "ok");
    }

    // RULER's layout: the name never reaches a file's content; the path only the folder's.
    gen_ok(&["export", "ruler", dir.to_str().unwrap()]);
    let file = dir.join("ruler/niah_single_2/validation.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("injected"), "{text}");
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

/// Names from the manifest that would become YAML keys or Python identifiers are
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
        for harness in ["lm-eval", "inspect", "opencompass", "ruler"] {
            let o = gen(&["export", harness, dir.to_str().unwrap()]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{bad} {harness}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
            assert!(err.contains("config"), "{err}");
        }
        assert!(!dir.join("lm_eval").exists() && !dir.join("inspect").exists());
        assert!(!dir.join("opencompass").exists() && !dir.join("ruler").exists());
    }
}

/// Every harness is written for a dataset of any shape; an unknown harness and a name that is
/// not plain are refused (exit 2, one line, nothing written).
#[test]
fn bad_harness_and_bad_names_are_refused() {
    let t = tmp();
    let dir = t.path().join("d");
    generate(dir.to_str().unwrap(), &["niah", "--len", "1k"]);
    let d = dir.to_str().unwrap();
    for (args, needle) in [
        (vec!["export", "harbour", d], "invalid harness"),
        (
            vec!["export", "lm-eval", d, "--name", "a-b"],
            "invalid --name",
        ),
        (vec!["export", "lm-eval", d, "--name", ""], "invalid --name"),
        (
            vec!["export", "opencompass", d, "--name", "x\ny"],
            "invalid --name",
        ),
        (
            vec!["export", "lm-eval", d, "--name", &"n".repeat(65)],
            "invalid --name",
        ),
    ] {
        let o = gen(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
    }
    for folder in ["lm_eval", "opencompass", "inspect", "ruler"] {
        assert!(!dir.join(folder).exists(), "{folder}");
    }
}

/// Every file name under `dir`, relative, sorted.
fn names_under(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Two datasets exported side by side share no lm-eval group, task or module name,
/// and no OpenCompass variable, abbreviation or module: their names come from the directories
/// (or `--name`). Per-length tasks and a group of them exist for `--limit`. Exporting again
/// replaces the folder: files of an earlier export under another name do not linger.
#[test]
fn two_datasets_get_distinct_names() {
    let t = tmp();
    let a = t.path().join("Niah-Run 1");
    let b = t.path().join("babilong.qa");
    generate(
        a.to_str().unwrap(),
        &["niah", "--len", "1k,2k", "--variant", "multivalue"],
    );
    generate(
        b.to_str().unwrap(),
        &["babilong", "--task", "qa1,qa2", "--len", "0,1k"],
    );
    for d in [&a, &b] {
        gen_ok(&["export", "lm-eval", d.to_str().unwrap()]);
        gen_ok(&["export", "opencompass", d.to_str().unwrap()]);
    }
    let la = names_under(&a.join("lm_eval"));
    let lb = names_under(&b.join("lm_eval"));
    assert_eq!(
        la,
        [
            "needlework_niah_run_1.yaml",
            "needlework_niah_run_1_by_length.yaml",
            "needlework_niah_run_1_niah_multivalue.yaml",
            "needlework_niah_run_1_niah_multivalue_len1024.yaml",
            "needlework_niah_run_1_niah_multivalue_len2048.yaml",
            "needlework_niah_run_1_utils.py",
        ]
    );
    assert!(lb.contains(&"needlework_babilong_qa_babilong_qa2_len0.yaml".to_string()));
    assert!(la.iter().all(|n| !lb.contains(n)), "{la:?} {lb:?}");
    let group = std::fs::read_to_string(a.join("lm_eval/needlework_niah_run_1.yaml")).unwrap();
    assert!(
        group.contains("group: needlework_niah_run_1\n")
            && group.contains("  - needlework_niah_run_1_niah_multivalue\n")
            && group.contains("metric: ruler"),
        "{group}"
    );
    let task = std::fs::read_to_string(
        a.join("lm_eval/needlework_niah_run_1_niah_multivalue_len2048.yaml"),
    )
    .unwrap();
    assert!(
        task.contains("process_docs: !function needlework_niah_run_1_utils.length_2048\n")
            && task.contains("!function needlework_niah_run_1_utils.process_length_results"),
        "{task}"
    );
    // BABILong rows have no RULER credit: no `ruler` metric is promised.
    let task = std::fs::read_to_string(b.join("lm_eval/needlework_babilong_qa_babilong_qa1.yaml"))
        .unwrap();
    assert!(!task.contains("ruler"), "{task}");
    let oa = names_under(&a.join("opencompass"));
    let ob = names_under(&b.join("opencompass"));
    assert_eq!(
        oa,
        ["needlework_niah_run_1.py", "needlework_niah_run_1_oc.py"]
    );
    assert_eq!(
        ob,
        ["needlework_babilong_qa.py", "needlework_babilong_qa_oc.py"]
    );
    let config = std::fs::read_to_string(b.join("opencompass/needlework_babilong_qa.py")).unwrap();
    assert!(
        config.contains("\nneedlework_babilong_qa_datasets = [\n")
            && config.contains("abbr=\"needlework_babilong_qa_babilong_qa2\"")
            && config.contains("type=\"needlework_babilong_qa_oc.NeedleworkEvaluator\""),
        "{config}"
    );
    // --name replaces the directory's name, and the folder is replaced as a whole.
    gen_ok(&["export", "lm-eval", b.to_str().unwrap(), "--name", "bab2"]);
    let lb = names_under(&b.join("lm_eval"));
    assert!(
        lb.iter().all(|n| n.starts_with("needlework_bab2")),
        "{lb:?}"
    );
    assert!(!b.join(".lm_eval.tmp").exists());
    for f in names_under(&b.join("lm_eval")) {
        py_compile_or_parse(&b.join("lm_eval").join(f));
    }
}

/// `python3 -m py_compile` for Python files; nothing for the others.
fn py_compile_or_parse(file: &Path) {
    if file.extension().is_some_and(|e| e == "py") {
        py_compile(file);
    }
}

/// One JSON object per line.
fn jsonl(file: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `gen export ruler` writes RULER's layout: one `<task>/validation.jsonl` per config,
/// named after the RULER task the config reproduces (by haystack, key and value types, and the
/// numbers of keys, values and queries), with RULER's fields in RULER's order.
#[test]
fn ruler_layout_and_task_names() {
    let t = tmp();
    let cases: [(&[&str], &str); 9] = [
        (&["--haystack", "noise"], "niah_single_1"),
        (&[], "niah_single_2"),
        (&["--value-type", "uuids"], "niah_single_3"),
        (&["--variant", "multikey"], "niah_multikey_1"),
        (&["--haystack", "needles"], "niah_multikey_2"),
        (
            &[
                "--haystack",
                "needles",
                "--key-type",
                "uuids",
                "--value-type",
                "uuids",
            ],
            "niah_multikey_3",
        ),
        (&["--variant", "multivalue"], "niah_multivalue"),
        (&["--variant", "multiquery"], "niah_multiquery"),
        // Not one of RULER's: the config keeps its own name.
        (&["--variant", "none"], "niah_none"),
    ];
    for (n, (extra, task)) in cases.iter().enumerate() {
        let dir = t.path().join(format!("d{n}"));
        let mut args = vec!["niah", "--len", "1k,2k", "--depths", "2"];
        args.extend_from_slice(extra);
        generate(dir.to_str().unwrap(), &args);
        let out = gen_ok(&["export", "ruler", dir.to_str().unwrap()]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains(&format!("-> {task} ")),
            "{extra:?}: {stdout}"
        );
        assert_eq!(
            names_under(&dir.join("ruler")),
            [format!("{task}/validation.jsonl")],
            "{extra:?}"
        );
        let lines = jsonl(&dir.join("ruler").join(task).join("validation.jsonl"));
        let rows = rows(&dir);
        assert_eq!(lines.len(), rows.len());
        let text =
            std::fs::read_to_string(dir.join("ruler").join(task).join("validation.jsonl")).unwrap();
        for (i, (line, row)) in lines.iter().zip(&rows).enumerate() {
            // RULER's fields, in RULER's order.
            let raw = text.lines().nth(i).unwrap();
            let at: Vec<usize> = [
                "index",
                "input",
                "outputs",
                "length",
                "length_w_model_temp",
                "answer_prefix",
                "token_position_answer",
                "others",
            ]
            .iter()
            .map(|k| raw.find(&format!("\"{k}\":")).unwrap())
            .collect();
            assert!(at.windows(2).all(|w| w[0] < w[1]) && at[0] == 1, "{raw}");
            assert_eq!(line.as_object().unwrap().len(), 8);
            assert_eq!(line["index"], i);
            assert_eq!(line["others"], serde_json::json!({"id": row.id}));
            assert_eq!(line["input"], row.input.as_str());
            assert_eq!(line["length"], row.length);
            assert_eq!(line["length_w_model_temp"], row.prompt_tokens);
            assert_eq!(line["token_position_answer"], row.needle_offsets[0]);
            let outputs = if row.metric == "all" {
                row.answers.clone()
            } else {
                vec![row.target.clone()]
            };
            assert_eq!(line["outputs"], serde_json::json!(outputs));
        }
    }
}

/// RULER's evaluation merges every `*.jsonl` named like `<name>-<digits>.jsonl` in the folder
/// it scores into `<name>.jsonl` and deletes it (a chunked run's predictions). No file of the
/// RULER layout, and no prediction file RULER writes for one of its tasks (`<task>.jsonl`), may
/// look like one: config names hold no `-`, and the layout's files are `validation.jsonl`.
#[test]
fn ruler_layout_is_safe_from_chunk_merging() {
    /// RULER's pattern `.*[^_]+-\d+\.jsonl` matched from the start of the name: somewhere a
    /// character other than `_`, then `-`, digits, `.jsonl`.
    fn is_ruler_chunk(name: &str) -> bool {
        let b = name.as_bytes();
        (1..b.len()).any(|i| {
            b[i] == b'-' && b[i - 1] != b'_' && {
                let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                digits > 0 && b[i + 1 + digits..].starts_with(b".jsonl")
            }
        })
    }
    assert!(is_ruler_chunk("niah_single_1-0.jsonl"));
    assert!(is_ruler_chunk("test-00000-of-00001.jsonl"));
    assert!(!is_ruler_chunk("niah_single_1.jsonl") && !is_ruler_chunk("validation.jsonl"));
    assert!(!is_ruler_chunk("a_-1.jsonl"));
    let t = tmp();
    let dir = t.path().join("d");
    generate(
        dir.to_str().unwrap(),
        &["babilong", "--task", "qa1,qa2", "--len", "0", "--jsonl"],
    );
    // The JSON Lines mirrors are no chunks either, wherever RULER is pointed.
    let mirrors: Vec<String> = names_under(&dir)
        .into_iter()
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    assert_eq!(mirrors.len(), 2, "{mirrors:?}");
    for m in &mirrors {
        let file = m.rsplit('/').next().unwrap();
        assert!(!is_ruler_chunk(file), "{m}");
    }
    gen_ok(&["export", "ruler", dir.to_str().unwrap()]);
    let names = names_under(&dir.join("ruler"));
    assert_eq!(
        names,
        [
            "babilong_qa1/validation.jsonl",
            "babilong_qa2/validation.jsonl"
        ]
    );
    for n in &names {
        let (task, file) = n.split_once('/').unwrap();
        assert!(
            !is_ruler_chunk(file) && !is_ruler_chunk(&format!("{task}.jsonl")),
            "{n}"
        );
    }
}

/// Where rows carry `prompt_tokens` (what the model reads), RULER's `length_w_model_temp` is
/// it; `length` stays the count of `input`.
#[test]
fn ruler_length_with_template_reads_prompt_tokens_by_name() {
    let t = tmp();
    let dir = t.path().join("d");
    generate(
        dir.to_str().unwrap(),
        &["niah", "--len", "1k", "--samples", "3"],
    );
    gen_ok(&["export", "ruler", dir.to_str().unwrap()]);
    let lines = jsonl(&dir.join("ruler/niah_single_2/validation.jsonl"));
    assert_eq!(lines.len(), 3);
    for (line, row) in lines.iter().zip(rows(&dir)) {
        assert_eq!(line["length"], row.length);
        // What the model reads: the input and the answer prefix, more than the input alone.
        assert_eq!(line["length_w_model_temp"], row.prompt_tokens);
        assert!(row.prompt_tokens > row.length);
    }
}

/// RULER's layout (`ruler/<task>/validation.jsonl`) is an export, not data: the dataset still
/// verifies after it; any other data file there is still reported.
#[test]
fn a_ruler_export_leaves_the_dataset_verifiable() {
    let t = tmp();
    let out = out_arg(t.path(), "d");
    generate(&out, &["niah", "--len", "1k"]);
    gen_ok(&["export", "ruler", &out]);
    gen_ok(&["verify", &out, "-q"]);
    std::fs::write(Path::new(&out).join("ruler/extra.jsonl"), "{}\n").unwrap();
    let res = gen(&["verify", &out, "-q"]);
    assert_eq!(res.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&res.stdout).contains("ruler/extra.jsonl")
            || String::from_utf8_lossy(&res.stderr).contains("ruler/extra.jsonl")
    );
}
