//! The output directory is safe: inputs inside it are never deleted, two runs never write one
//! directory at once, leftovers of killed runs are cleaned, and every bad input exits 2 with
//! one line on stderr and leaves nothing behind.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// Exit 2, exactly one line on stderr, containing every one of `needles`.
fn assert_one_line(res: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert_eq!(res.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{n:?} not in {stderr}");
    }
}

/// The PID of a process that has exited (and been reaped): no process has it.
fn dead_pid() -> u32 {
    let mut child = Command::new(GEN)
        .arg("--version")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    child.wait().unwrap();
    assert!(!Path::new(&format!("/proc/{pid}")).exists() || !cfg!(target_os = "linux"));
    pid
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `--force` never deletes an input that lives inside the directory it replaces.
#[test]
fn force_refuses_to_replace_a_directory_holding_an_input() {
    let t = tmp();
    let out = out_arg(t.path(), "ds");
    generate(&out, &["niah", "--len", "1k"]);
    let ds = t.path().join("ds");
    let corpus = ds.join("corpus.txt");
    std::fs::copy(fixture("corpus/clocks.txt"), &corpus).unwrap();
    let template = ds.join("mine.j2");
    std::fs::copy(
        root().join("generators/templates/niah/default.j2"),
        &template,
    )
    .unwrap();
    let tokenizer = ds.join("tokenizer.json");
    std::fs::copy(fixture("tokenizer-bytelevel.json"), &tokenizer).unwrap();
    let c = corpus.display().to_string();
    let tm = template.display().to_string();
    let tk = tokenizer.display().to_string();
    for (flag, value, name) in [
        ("--haystack", c.clone(), "corpus.txt"),
        ("--haystack", format!("{}", ds.display()), "ds"),
        ("--template", tm.clone(), "mine.j2"),
        ("--tokenizer", tk.clone(), "tokenizer.json"),
    ] {
        let res = gen(&[
            "niah", "--len", "1500", flag, &value, "--out", &out, "--force", "-q",
        ]);
        assert_one_line(&res, &[flag, name, "inside", "ds"]);
        assert!(corpus.exists() && template.exists() && tokenizer.exists());
    }
    // The same inputs reached through a relative path with `..` are still found inside.
    let sneaky = format!("{}/../ds/corpus.txt", ds.display());
    let res = gen(&[
        "niah",
        "--len",
        "1500",
        "--haystack",
        &sneaky,
        "--out",
        &out,
        "--force",
        "-q",
    ]);
    assert_one_line(&res, &["--haystack", "inside"]);
    assert!(corpus.exists());
    // An input outside --out is fine.
    gen_ok(&[
        "niah",
        "--len",
        "1500",
        "--haystack",
        &fixture("corpus/clocks.txt"),
        "--out",
        &out,
        "--force",
        "-q",
    ]);
}

/// A lock file whose advisory lock a live process holds refuses a second run; one nobody
/// holds is taken over, whatever PID it names (a dead one, or a live one: a retried
/// container is PID 1 again); the lock is gone after a run.
#[test]
fn a_directory_being_written_by_a_live_gen_is_refused() {
    let t = tmp();
    let out = out_arg(t.path(), "ds");
    let lock = t.path().join(".ds.lock");
    let me = std::process::id();
    std::fs::write(&lock, format!("{me}\n")).unwrap();
    let held = std::fs::File::open(&lock).unwrap();
    held.try_lock().unwrap();
    let res = gen(&["niah", "--len", "1k", "--out", &out, "-q"]);
    assert_one_line(&res, &["another gen", &format!("PID {me}"), "ds"]);
    assert!(!t.path().join("ds").exists());
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), format!("{me}\n"));
    drop(held);

    for pid in [dead_pid(), me, 1] {
        std::fs::write(&lock, format!("{pid}\n")).unwrap();
        // A killed run's staging folder under the same PID is cleaned up too.
        std::fs::create_dir_all(t.path().join(format!(".ds.tmp-{pid}"))).unwrap();
        gen_ok(&["niah", "--len", "1k", "--out", &out, "-q", "--force"]);
        assert!(t.path().join("ds/manifest.json").exists());
        assert_eq!(names(t.path()), ["ds"], "the lock and staging are gone");
    }
}

/// With two real processes: while a slow run writes `--out`, a second run into the
/// same directory is refused (exit 2, naming the first's PID), and the first finishes.
#[test]
fn two_concurrent_runs_into_one_directory() {
    let t = tmp();
    let out = out_arg(t.path(), "ds");
    let lock = t.path().join(".ds.lock");
    let slow = Command::new(GEN)
        .args([
            "niah",
            "--len",
            "128k",
            "--depths",
            "10",
            "--samples",
            "10",
            "--threads",
            "1",
            "--out",
            &out,
            "-q",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let slow_pid = slow.id();
    let start = Instant::now();
    while !lock.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no lock appeared"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let res = gen(&["niah", "--len", "1k", "--out", &out, "--force", "-q"]);
    let done = slow.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert_one_line(&res, &["another gen", &format!("PID {slow_pid}"), "ds"]);
    assert_eq!(
        rows(Path::new(&out)).len(),
        100,
        "the slow run's dataset is in place"
    );
    assert_eq!(names(t.path()), ["ds"]);
}

/// Staging and set-aside folders of dead runs are removed before a run starts; a
/// set-aside previous dataset is never lost without --force, and the refusal names it.
#[test]
fn leftovers_of_killed_runs_are_cleaned() {
    let t = tmp();
    let out = out_arg(t.path(), "ds");
    generate(&out, &["niah", "--len", "1k"]);
    let dead = dead_pid();
    for leftover in [
        format!(".ds.tmp-{dead}"),
        ".ds.old".into(),
        format!(".ds.old-{dead}"),
    ] {
        let d = t.path().join(leftover);
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("part-00000.parquet"), "half").unwrap();
    }
    // A staging folder named by a live PID is a leftover too: every writer holds the
    // advisory lock while its folder exists, and nobody holds it (a retried container's
    // writer is PID 1 again, alive).
    let me = std::process::id();
    std::fs::create_dir(t.path().join(format!(".ds.tmp-{me}"))).unwrap();
    std::fs::create_dir(t.path().join(".ds.tmp-1")).unwrap();
    gen_ok(&["niah", "--len", "1k", "--out", &out, "--force", "-q"]);
    assert_eq!(names(t.path()), ["ds"]);

    // Killed between its two renames: the previous dataset is only in .ds.old.
    std::fs::rename(
        t.path().join("ds"),
        t.path().join(format!(".ds.old-{dead}")),
    )
    .unwrap();
    let res = gen(&["niah", "--len", "1k", "--out", &out, "-q"]);
    assert_one_line(&res, &[&format!(".ds.old-{dead}")]);
    assert!(t
        .path()
        .join(format!(".ds.old-{dead}/manifest.json"))
        .exists());
    assert!(!t.path().join("ds").exists());
    // --force replaces it, as it would have replaced ds.
    gen_ok(&["niah", "--len", "1k", "--out", &out, "--force", "-q"]);
    assert_eq!(names(t.path()), ["ds"]);
}

/// An --out that is a file.
#[test]
fn out_naming_a_file_is_refused() {
    let t = tmp();
    let file = t.path().join("afile");
    std::fs::write(&file, "x").unwrap();
    let f = file.display().to_string();
    for force in [false, true] {
        let mut args = vec!["niah", "--len", "1k", "--out", &f, "-q"];
        if force {
            args.push("--force");
        }
        let res = gen(&args);
        assert_one_line(&res, &["--out", "afile", "not a directory"]);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    }
}

/// A non-UTF-8 argument is refused with one line, not a panic.
#[cfg(unix)]
#[test]
fn non_utf8_arguments_are_refused() {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    let t = tmp();
    let bad = t.path().join(OsString::from_vec(b"bad\xff".to_vec()));
    for args in [
        vec![
            OsString::from("niah"),
            "--len".into(),
            "1k".into(),
            "--out".into(),
            bad.clone().into_os_string(),
        ],
        vec![
            "niah".into(),
            "--split".into(),
            OsString::from_vec(b"t\xff".to_vec()),
        ],
        vec!["verify".into(), bad.clone().into_os_string()],
    ] {
        let res = Command::new(GEN)
            .args(&args)
            .current_dir(t.path())
            .output()
            .unwrap();
        assert_one_line(&res, &["UTF-8"]);
    }
    assert_eq!(names(t.path()), Vec::<String>::new());
}

/// --out . or any ancestor of the current directory is never replaced.
#[test]
fn the_current_directory_and_its_ancestors_are_never_replaced() {
    let t = tmp();
    let cwd = t.path().join("a/b");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::write(cwd.join("keep.txt"), "x").unwrap();
    let parent = t.path().join("a").display().to_string();
    for out in [".", "..", "../b", parent.as_str()] {
        for force in [false, true] {
            let mut args = vec!["niah", "--len", "1k", "--out", out, "-q"];
            if force {
                args.push("--force");
            }
            let res = Command::new(GEN)
                .args(&args)
                .current_dir(&cwd)
                .output()
                .unwrap();
            assert_one_line(&res, &["--out", "current directory"]);
            assert!(cwd.join("keep.txt").exists());
        }
    }
    assert_eq!(names(t.path()), ["a"]);
    assert_eq!(names(&t.path().join("a")), ["b"]);
}

/// Split names are at most 64 characters.
#[test]
fn long_split_names_are_refused() {
    let t = tmp();
    let long = "a".repeat(300);
    assert_refused(
        &["niah", "--len", "1k", "--split", &long],
        &out_arg(t.path(), "ds"),
        "--split",
    );
    let ok = "a".repeat(64);
    generate(
        &out_arg(t.path(), "ok"),
        &["niah", "--len", "1k", "--split", &ok],
    );
}

/// --threads is 1 to 1024, for generation and verify.
#[test]
fn threads_out_of_range_are_refused() {
    let t = tmp();
    let out = out_arg(t.path(), "ds");
    for n in ["0", "100000"] {
        assert_refused(&["niah", "--len", "1k", "--threads", n], &out, "--threads");
    }
    generate(&out, &["niah", "--len", "1k"]);
    for n in ["0", "1025", "100000"] {
        let res = gen(&["verify", &out, "--threads", n, "-q"]);
        assert_one_line(&res, &["--threads", n]);
    }
    gen_ok(&["verify", &out, "--threads", "2", "-q"]);
}

/// A missing required argument is named on the one line.
#[test]
fn a_missing_required_argument_is_named() {
    let t = tmp();
    let res = gen(&["score", &t.path().display().to_string()]);
    assert_one_line(&res, &["--predictions"]);
}

/// A missing or invalid manifest exits 2 with one line, for every reading command.
#[test]
fn missing_or_invalid_manifests_exit_2() {
    let t = tmp();
    let out = out_arg(t.path(), "ds");
    generate(&out, &["niah", "--len", "1k"]);
    let preds = t.path().join("p.jsonl");
    std::fs::write(&preds, "").unwrap();
    let p = preds.display().to_string();
    for text in [None, Some("{"), Some("{\"format\": 1}"), Some("[]")] {
        let manifest = Path::new(&out).join("manifest.json");
        match text {
            None => std::fs::remove_file(&manifest).unwrap(),
            Some(s) => std::fs::write(&manifest, s).unwrap(),
        }
        for args in [
            vec!["verify", &out, "-q"],
            vec!["export", "lm-eval", &out],
            vec!["score", &out, "--predictions", &p, "-q"],
            vec!["inspect", &out],
        ] {
            if text.is_none() && args[0] == "inspect" {
                continue; // a bare directory of Parquet files is inspected as such
            }
            let res = gen(&args);
            assert_one_line(&res, &["manifest"]);
        }
    }
}

/// A failing write (here: over the file size limit, like a full disk) names the file.
#[cfg(target_os = "linux")]
#[test]
fn write_errors_name_the_file() {
    let t = tmp();
    let out = out_arg(t.path(), "ds");
    // SIGXFSZ ignored (inherited through exec), so the write fails with EFBIG instead.
    let script = format!(
        "trap '' XFSZ; ulimit -f 8; exec '{GEN}' niah --len 32k --depths 4 --compression none --out '{out}' -q"
    );
    let res = Command::new("sh").args(["-c", &script]).output().unwrap();
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert_eq!(res.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(".parquet") && stderr.contains("ds.tmp-"),
        "{stderr}"
    );
    assert_eq!(names(t.path()), Vec::<String>::new(), "nothing left behind");
}

/// Review hole 3: `--out /proc/x` exited 1 with a message about a lock file. An `--out` that
/// cannot be made (on a pseudo file system, below a file, in a read-only directory) is bad
/// input: exit 2, one line naming it, nothing written.
#[test]
fn an_out_that_cannot_be_made_exits_2() {
    let t = tmp();
    if Path::new("/proc/self").exists() {
        let res = gen(&["niah", "--len", "1k", "--out", "/proc/x", "-q"]);
        assert_one_line(&res, &["--out /proc/x"]);
    }
    let file = t.path().join("f");
    std::fs::write(&file, "a file").unwrap();
    let below = file.join("x");
    let res = gen(&[
        "niah",
        "--len",
        "1k",
        "--out",
        below.to_str().unwrap(),
        "-q",
    ]);
    assert_one_line(&res, &["--out", "f/x", "is a file, not a directory"]);
    let deeper = file.join("x/y");
    let res = gen(&[
        "niah",
        "--len",
        "1k",
        "--out",
        deeper.to_str().unwrap(),
        "-q",
    ]);
    assert_one_line(&res, &["is a file, not a directory"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "a file");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let ro = t.path().join("ro");
        std::fs::create_dir(&ro).unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
        // Root writes anywhere: the check means something only for other users.
        if std::fs::write(ro.join("probe"), "").is_err() {
            let out = ro.join("x");
            let res = gen(&["niah", "--len", "1k", "--out", out.to_str().unwrap(), "-q"]);
            assert_one_line(&res, &["--out", "ro/x"]);
            assert_eq!(names(&ro), Vec::<String>::new());
        }
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// Review hole 5: a haystack directory holding a link to itself was walked again and again,
/// reading its files once per turn. Each folder is read once; a folder reached twice is
/// refused at once (exit 2, one line naming it), and links to other folders still work.
#[cfg(unix)]
#[test]
fn a_corpus_directory_with_a_link_loop_is_refused_at_once() {
    use std::os::unix::fs::symlink;
    let t = tmp();
    let corpus = t.path().join("corpus");
    std::fs::create_dir_all(corpus.join("sub")).unwrap();
    std::fs::copy(fixture("corpus/rivers.txt"), corpus.join("a.txt")).unwrap();
    std::fs::copy(fixture("corpus/clocks.txt"), corpus.join("sub/b.txt")).unwrap();
    // A link to another folder, outside the corpus: followed.
    let other = t.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::copy(fixture("corpus/rivers.txt"), other.join("c.txt")).unwrap();
    symlink(&other, corpus.join("linked")).unwrap();
    let c = corpus.display().to_string();
    let ok = out_arg(t.path(), "ok");
    generate(&ok, &["niah", "--len", "1k", "--haystack", &c]);
    // A loop back to the corpus itself.
    symlink(&corpus, corpus.join("sub/loop")).unwrap();
    let start = Instant::now();
    let res = gen(&[
        "niah",
        "--len",
        "1k",
        "--haystack",
        &c,
        "--out",
        &out_arg(t.path(), "never"),
        "-q",
    ]);
    assert_one_line(&res, &["reached twice", "sub/loop"]);
    assert!(start.elapsed() < Duration::from_secs(20));
    assert!(!t.path().join("never").exists());
    std::fs::remove_file(corpus.join("sub/loop")).unwrap();
    // Two links to one folder (no loop) would read its files twice: refused too.
    symlink(&other, corpus.join("again")).unwrap();
    let res = gen(&[
        "niah",
        "--len",
        "1k",
        "--haystack",
        &c,
        "--out",
        &out_arg(t.path(), "never"),
        "-q",
    ]);
    assert_one_line(&res, &["reached twice"]);
}

/// Review hole 3, for `gen score --out` too: a directory that cannot be made exits 2 with one
/// line naming it (it exited 1).
#[test]
fn a_score_out_that_cannot_be_made_exits_2() {
    let t = tmp();
    let out = out_arg(t.path(), "d");
    generate(&out, &["niah", "--len", "1k"]);
    let id = rows(Path::new(&out))[0].id.clone();
    let predictions = t.path().join("p.jsonl");
    std::fs::write(
        &predictions,
        format!("{{\"id\": \"{id}\", \"prediction\": \"1\"}}\n"),
    )
    .unwrap();
    let p = predictions.display().to_string();
    let below = predictions.join("x").display().to_string();
    let res = gen(&["score", &out, "--predictions", &p, "--out", &below, "-q"]);
    assert_one_line(&res, &["--out", "p.jsonl/x"]);
    if Path::new("/proc/self").exists() {
        let res = gen(&["score", &out, "--predictions", &p, "--out", "/proc/x", "-q"]);
        assert_one_line(&res, &["--out /proc/x"]);
    }
}

/// A reader that stops early (`gen inspect DIR --prompts | head -1`) ends gen quietly: no panic
/// message about a failed print, whatever the command prints.
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_gen_without_a_panic() {
    use std::io::Read;
    let t = tmp();
    let out = out_arg(t.path(), "d");
    generate(
        &out,
        &["niah", "--len", "1k", "--depths", "11", "--samples", "20"],
    );
    for args in [
        vec!["inspect", out.as_str(), "--prompts"],
        vec!["inspect", out.as_str()],
        // Short output races the hang-up: several tries make a panic all but certain to show.
        vec!["list"],
        vec!["list"],
        vec!["list"],
        vec!["list"],
    ] {
        let mut child = Command::new(GEN)
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Hang up before gen prints anything (and, for long output, after one byte).
        let mut stdout = child.stdout.take().unwrap();
        if args.len() > 2 {
            let _ = stdout.read(&mut [0u8; 1]);
        }
        drop(stdout);
        let res = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&res.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.contains("failed printing"), "{args:?}: {err}");
    }
}
