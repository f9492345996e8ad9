//! `gen list`: what this build can make — tasks, tokenizers, haystacks, templates, suites
//! and niah's needles.

use needlework_generators::{tasks, tokenizer};

use crate::cli::suite::file::{about, BUILTIN_SUITES};
use crate::usage::usage;

/// `gen list [WHAT]`.
pub fn list(what: Option<&str>) -> anyhow::Result<()> {
    let all = what.is_none();
    let what = what.unwrap_or("");
    if !all
        && !matches!(
            what,
            "tasks" | "tokenizers" | "haystacks" | "templates" | "suites" | "needles"
        )
    {
        return Err(usage(format!(
            "invalid list '{what}': expected tasks, tokenizers, haystacks, templates, suites or needles"
        )));
    }
    if all || what == "tasks" {
        println!("tasks:");
        for (name, about) in tasks::TASKS {
            println!("  {name:<12} {about}");
        }
    }
    if all || what == "tokenizers" {
        println!("tokenizers:");
        for (name, about) in tokenizer::BUILTIN_TOKENIZERS {
            println!("  {name:<12} {about}");
        }
        println!(
            "  {:<12} any Hugging Face tokenizer.json, loaded offline",
            "PATH"
        );
    }
    if all || what == "haystacks" {
        println!("haystacks:");
        for (name, about) in [
            (
                "generated",
                "our own prose with names, numbers and dates, new for every seed (default)",
            ),
            ("noise", "a few plain sentences, repeated"),
            (
                "needles",
                "distractor needles of the same form as the real one (niah)",
            ),
            (
                "PATH",
                "a .txt file, a directory of .txt, file.jsonl[:field], file.parquet[:column]",
            ),
        ] {
            println!("  {name:<12} {about}");
        }
    }
    if all || what == "suites" {
        println!("suites:");
        for (name, text) in BUILTIN_SUITES {
            println!("  {name:<12} {}", about(text));
        }
        println!(
            "  {:<12} a suite file: shared keys, then [[task]] tables",
            "FILE.toml"
        );
    }
    if all || what == "templates" {
        println!("templates:");
        for (task, _) in tasks::TASKS {
            for (name, _) in tasks::templates(task) {
                println!("  {task}/{name}");
            }
        }
    }
    if all || what == "needles" {
        use needlework_generators::tasks::niah::latent::Latent;
        println!("needles (niah --needle):");
        println!(
            "  {:<12} \"One of the access codes assigned to KEY is VALUE.\" (default; niah/default)",
            "code"
        );
        println!(
            "  {:<12} no word shared with the question; one associative hop (niah/latent)",
            "latent"
        );
        for t in Latent::new().tables {
            println!("    {:<18} {} rows", t.name, t.entries.len());
        }
        println!(
            "  --confusers N  near-miss facts beside code needles: near_key, superseded, negated"
        );
    }
    Ok(())
}
