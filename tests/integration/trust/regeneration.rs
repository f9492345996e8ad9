//! Every recipe regenerates exactly, and a recipe makes the same directory wherever, however
//! and by whatever spelling it runs.

use crate::common::*;
use std::path::Path;
use std::process::Command;

use super::*;

/// Floats read back from manifest.json were one ulp off, so `--depths 20` (and many
/// other grids, decimal depths and fact windows) failed verify on untouched data.
#[test]
fn every_depth_grid_regenerates_exactly() {
    let t = tmp();
    for n in 2..=60 {
        let out = out_arg(t.path(), &format!("niah-{n}"));
        let depths = n.to_string();
        generate(
            &out,
            &[
                "niah",
                "--len",
                "400",
                "--haystack",
                "noise",
                "--depths",
                &depths,
                "--tokenizer",
                "words",
            ],
        );
        assert_verifies(&out);
    }
    let cases: Vec<Vec<&str>> = vec![
        vec!["niah", "--len", "1k", "--depths", "12.5,33.3,66.7,99.9,0.1"],
        vec![
            "niah",
            "--len",
            "1k",
            "--depths",
            "0.30000000000000004,17.77",
        ],
        vec![
            "babilong", "--task", "qa1,qa2", "--len", "2k", "--depths", "20",
        ],
        vec![
            "babilong",
            "--task",
            "qa1",
            "--len",
            "2k",
            "--fact-window",
            "12.3..87.6",
        ],
        vec![
            "babilong",
            "--task",
            "qa1",
            "--len",
            "2k",
            "--fact-window",
            "33.3..66.7",
            "--depths",
            "40.1,50,66.6",
        ],
        vec![
            "sort",
            "--haystack",
            "generated",
            "--items",
            "5",
            "--len",
            "1k",
            "--depths",
            "13",
        ],
        vec![
            "arith", "--op", "sum", "--count", "4", "--len", "1k", "--depths", "11",
        ],
        vec![
            "needlechain",
            "--chain",
            "4",
            "--haystack",
            "noise",
            "--len",
            "1k",
            "--depths",
            "9",
        ],
    ];
    for (i, args) in cases.iter().enumerate() {
        let out = out_arg(t.path(), &format!("case-{i}"));
        generate(&out, args);
        assert_verifies(&out);
    }
}

/// The manifest and card recorded the invocation (`--out`, `--threads`, absolute
/// paths), so the same recipe gave different directories. Now every file is identical.
#[test]
fn the_same_recipe_makes_the_same_directory() {
    let t = tmp();
    let corpus = fixture("corpus.jsonl");
    let haystack = format!("{corpus}:body");
    let a = out_arg(t.path(), "a");
    let b = t.path().join("elsewhere/b").display().to_string();
    let common = [
        "niah",
        "--len",
        "1k,2k",
        "--depths",
        "3",
        "--haystack",
        &haystack,
        "--jsonl",
    ];
    let mut first = common.to_vec();
    first.extend(["--threads", "1", "--out", &a, "-q"]);
    gen_ok(&first);
    let mut second = common.to_vec();
    second.extend(["--threads=2", "--out", &b]);
    gen_ok(&second);
    let files = |dir: &str| all_files(Path::new(dir));
    let (fa, fb) = (files(&a), files(&b));
    assert_eq!(
        fa.len(),
        4,
        "{:?}",
        fa.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for ((na, ba), (nb, bb)) in fa.iter().zip(&fb) {
        assert_eq!(na, nb);
        assert!(ba == bb, "{na} differs between the two runs");
    }
    let manifest =
        String::from_utf8_lossy(&fa.iter().find(|f| f.0 == "manifest.json").unwrap().1).to_string();
    for leak in ["--out", "--threads", "-q", t.path().to_str().unwrap()] {
        assert!(
            !manifest.contains(leak),
            "manifest holds {leak}: {manifest}"
        );
    }
}

/// Found by the adversarial review: the canary came from the recorded path strings, so the same
/// inputs reached from another working directory gave different files.
#[test]
fn the_canary_does_not_depend_on_how_paths_are_spelled() {
    let t = tmp();
    let project = t.path().join("p");
    std::fs::create_dir_all(project.join("w")).unwrap();
    std::fs::copy(fixture("corpus/rivers.txt"), project.join("w/rivers.txt")).unwrap();
    let run = |cwd: &Path, haystack: &str, out: &str| {
        let res = Command::new(GEN)
            .current_dir(cwd)
            .args([
                "niah",
                "--len",
                "1k",
                "--haystack",
                haystack,
                "--out",
                out,
                "-q",
            ])
            .output()
            .unwrap();
        assert!(
            res.status.success(),
            "{}",
            String::from_utf8_lossy(&res.stderr)
        );
    };
    let (x1, x2) = (out_arg(t.path(), "x1"), out_arg(t.path(), "x2"));
    run(&project.join("w"), "rivers.txt", &x1);
    run(&project, "w/rivers.txt", &x2);
    let parquet = "niah_single/test-00000-of-00001.parquet";
    assert_eq!(
        std::fs::read(Path::new(&x1).join(parquet)).unwrap(),
        std::fs::read(Path::new(&x2).join(parquet)).unwrap()
    );
    // Recorded relative to where each run started, so verify is told where the corpus is.
    let corpus = project.join("w/rivers.txt").display().to_string();
    for x in [&x1, &x2] {
        assert!(gen(&["verify", x, "-q", "--haystack", &corpus])
            .status
            .success());
    }
}

/// Review hole 6: `--len 1k` and `--len 1024` gave different manifests and cards. The manifest
/// records the command rendered from the recipe, so every spelling of one recipe makes the
/// same directory, every file byte for byte.
#[test]
fn every_spelling_of_a_recipe_makes_the_same_directory() {
    let t = tmp();
    let pairs: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["niah", "--len", "1k", "--depths", "3", "--jsonl"],
            vec![
                "niah",
                "--jsonl",
                "--depths",
                "0, 50,100",
                "--len=1024",
                "--samples",
                "1",
                "--seed",
                "0",
                "--tokenizer",
                "o200k_base",
                "--variant",
                "single",
                "--template",
                "default",
                "--haystack",
                "generated",
                "--reserve",
                "128",
                "--compression",
                "zstd",
                "--split",
                "test",
            ],
        ),
        (
            vec![
                "niah",
                "--variant",
                "multikey",
                "--len",
                "1k..2k",
                "--depths",
                "50%",
            ],
            vec!["niah", "--keys", "4", "--len", "2048,1k", "--depths", "1"],
        ),
        (
            vec!["posgen", "--variant", "semi_recursive", "--samples", "2"],
            vec![
                "posgen",
                "--samples",
                "2",
                "--variant",
                "semi-recursive",
                "--near",
                "3",
            ],
        ),
        (
            vec![
                "babilong",
                "--task",
                "qa2,qa1,qa2",
                "--facts",
                "20",
                "--len",
                "0,1k",
            ],
            vec![
                "babilong",
                "--len",
                "1024,0",
                "--task",
                "qa2,qa1",
                "--facts",
                "20..20",
                "--fact-window",
                "0.0..100",
            ],
        ),
        (
            vec![
                "niah",
                "--len",
                "1k",
                "--canary",
                "8C1F6A2E-3B4D-4E5F-9A0B-1C2D3E4F5A6B",
            ],
            vec![
                "niah",
                "--len",
                "1k",
                "--canary",
                "8c1f6a2e-3b4d-4e5f-9a0b-1c2d3e4f5a6b",
            ],
        ),
        (
            vec!["sort", "--items", "5", "--digits", "3"],
            vec![
                "sort", "--digits", "3..3", "--items", "5", "--output", "values",
            ],
        ),
    ];
    for (k, (a, b)) in pairs.iter().enumerate() {
        let (da, db) = (
            out_arg(t.path(), &format!("{k}a")),
            out_arg(t.path(), &format!("{k}b")),
        );
        generate(&da, a);
        generate(&db, b);
        let (fa, fb) = (all_files(Path::new(&da)), all_files(Path::new(&db)));
        assert_eq!(
            fa.iter().map(|f| &f.0).collect::<Vec<_>>(),
            fb.iter().map(|f| &f.0).collect::<Vec<_>>()
        );
        for ((name, x), (_, y)) in fa.iter().zip(&fb) {
            assert!(
                x == y,
                "{a:?} and {b:?}: {name} differs:\n{}\n{}",
                String::from_utf8_lossy(x),
                String::from_utf8_lossy(y)
            );
        }
        assert_verifies(&da);
    }
}

/// Found as an adversary: a corpus file named like a built-in (`./generated`) was recorded
/// as `generated` and read back as the built-in haystack, so its untouched dataset failed
/// verify. Such a path is recorded as `./generated`.
#[test]
fn an_input_file_named_like_a_built_in_is_recorded_as_a_path() {
    let t = tmp();
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::copy(fixture("corpus/rivers.txt"), work.join("generated")).unwrap();
    std::fs::copy(
        root().join("generators/templates/niah/plain.j2"),
        work.join("default"),
    )
    .unwrap();
    let made = Command::new(GEN)
        .current_dir(&work)
        .args(["niah", "--len", "1k", "--haystack", "./generated"])
        .args(["--template", "./default", "--out", "d", "-q"])
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let manifest = std::fs::read_to_string(work.join("d/manifest.json")).unwrap();
    assert!(
        manifest.contains("\"haystack\": \"./generated\""),
        "{manifest}"
    );
    assert!(
        manifest.contains("\"template\": \"./default\""),
        "{manifest}"
    );
    assert_verifies(&work.join("d").display().to_string());
}

/// Key and value spaces that run out end in a clear refusal or in repeated distractors, never
/// in an endless search (words give 3,599 key pairs; these hung before).
#[test]
fn used_up_key_spaces_never_hang() {
    let t = tmp();
    let out = out_arg(t.path(), "many");
    assert_exit_2(
        &[
            "niah",
            "--keys",
            "1000",
            "--values",
            "4",
            "--value-type",
            "words",
            "--len",
            "128k",
            "--out",
            &out,
        ],
        "3,599 pairs",
    );
    assert!(!Path::new(&out).exists());
    let out = out_arg(t.path(), "distractors");
    generate(
        &out,
        &[
            "niah",
            "--haystack",
            "needles",
            "--key-type",
            "words",
            "--value-type",
            "words",
            "--len",
            "32k",
        ],
    );
    assert_verifies(&out);
    for r in rows(Path::new(&out)) {
        let key = r.params["needles"][0]["key"].as_str().unwrap().to_string();
        let value = r.params["needles"][0]["value"]
            .as_str()
            .unwrap()
            .to_string();
        // The asked key is in its own needle and in the question, nowhere else.
        assert_eq!(r.input.matches(&key).count(), 2, "{}", r.id);
        assert_eq!(r.input.matches(&format!("{key} is {value}")).count(), 1);
    }
}
