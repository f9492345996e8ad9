//! `gen`: the command-line shell around `needlework-generators`.
//!
//! Arguments are parsed, then validated into one checked job before anything is written; bad
//! input exits 2 with one line, runtime failures exit 1, and no partial dataset is ever left.

mod cli;
mod command;
mod corpus;
mod dataset_files;
mod disjoint;
mod export;
mod find_inputs;
mod fresh;
mod generate;
mod head;
mod heatmap;
mod inspect;
mod manifest;
mod merge;
mod options;
mod parquet_read;
mod paths;
mod prepare;
mod private;
mod progress;
mod prompts;
mod recipe;
mod recorded;
mod row_group;
mod schema;
mod score;
mod sealed;
mod shard;
mod spec;
mod suite;
mod suite_file;
mod suite_options;
mod tally;
mod usage;
mod verify;
mod writer;

use std::process::ExitCode;

use clap::Parser;
use needlework_generators::{tasks, templates, tokenizer};

use cli::{Cli, Command};
use usage::{usage, UsageError};

/// The most worker threads `--threads` takes.
const MAX_THREADS: usize = 1024;

/// Print an error as one line: line breaks inside it become spaces.
fn one_line(msg: &str) -> String {
    msg.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn main() -> ExitCode {
    // A reader that stops early (`gen inspect DIR --prompts | head`) ends gen by SIGPIPE, as it
    // ends any Unix tool, instead of a panic in `println!` (Rust ignores SIGPIPE by default).
    #[cfg(unix)]
    // SAFETY: restoring a signal's default disposition at start-up, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Every argument must be text: the manifest records the command, and clap would accept a
    // non-UTF-8 path that `std::env::args` then panics on.
    if let Some(bad) = std::env::args_os().skip(1).find(|a| a.to_str().is_none()) {
        eprintln!(
            "error: argument '{}' is not valid UTF-8",
            one_line(&bad.to_string_lossy())
        );
        return ExitCode::from(2);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    ExitCode::from(2)
                } else {
                    ExitCode::SUCCESS
                };
            }
            // One line: clap's message (up to its first blank line, so a missing argument is
            // named), without its usage block.
            let rendered = e.render().to_string();
            let message: Vec<&str> = rendered
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .collect();
            let message = one_line(&message.join(" "));
            let message = if message.is_empty() {
                "error: bad arguments".to_string()
            } else {
                message
            };
            eprintln!("{message} (see gen --help)");
            return ExitCode::from(2);
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            if let Some(u) = e.downcast_ref::<UsageError>() {
                eprintln!("error: {}", one_line(&u.to_string()));
                ExitCode::from(2)
            } else {
                eprintln!("error: {}", one_line(&format!("{e:#}")));
                ExitCode::from(1)
            }
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Verify(args) => {
            if !args.dir.join("manifest.json").exists() {
                return Err(usage(format!(
                    "{} is not a needlework dataset: it has no manifest.json",
                    args.dir.display()
                )));
            }
            check_threads(args.threads)?;
            let ok = verify::verify(
                &args.dir,
                args.threads,
                args.quiet,
                &args.inputs,
                args.seed_file.as_deref(),
            )?;
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Reveal(args) => {
            let ok = sealed::reveal(&args.dir, &args.seed_file)?;
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Export(args) => {
            export::export(
                &args.harness,
                &args.dir,
                args.name.as_deref(),
                args.chat_template.as_ref(),
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Score(args) => {
            if !args.dir.join("manifest.json").exists() {
                return Err(usage(format!(
                    "{} is not a needlework dataset: it has no manifest.json",
                    args.dir.display()
                )));
            }
            let out = args.out.clone().unwrap_or_else(|| args.dir.join("scores"));
            let options = score::Options {
                quiet: args.quiet,
                only_present: args.only_present,
            };
            score::score(&args.dir, &args.predictions, &out, options)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Inspect(args) => {
            if !args.path.exists() {
                return Err(usage(format!(
                    "{}: no such file or directory",
                    args.path.display()
                )));
            }
            if args.path.is_dir() && args.path.join("manifest.json").exists() {
                // A dataset's manifest must be readable; a bare directory of Parquet files is
                // inspected as such.
                manifest::Manifest::read(&args.path)?;
            }
            if args.prompts {
                prompts::print_prompts(&args.path, args.chat_template.as_ref())?;
            } else if args.chat_template.is_some() {
                return Err(usage("--chat-template applies only with --prompts"));
            } else {
                inspect::inspect(&args.path)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Suite(args) => {
            let job = suite::build_suite_job(&args)?;
            generate::generate(job)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Merge(args) => {
            merge::merge(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::List(args) => {
            list(args.what.as_deref())?;
            Ok(ExitCode::SUCCESS)
        }
        generating => match options::task_command(&generating) {
            Some((options, common)) => generate_task(options?, &common),
            None => Err(anyhow::anyhow!("no command handles {generating:?}")),
        },
    }
}

/// Validate a generating command into a job, then run it.
fn generate_task(
    options: needlework_generators::tasks::TaskParams,
    common: &cli::CommonArgs,
) -> anyhow::Result<ExitCode> {
    check_threads(common.threads)?;
    let job = prepare::build_job(options, common)?;
    generate::generate(job)?;
    Ok(ExitCode::SUCCESS)
}

/// `--threads`, when given, is 1 to [`MAX_THREADS`].
fn check_threads(threads: Option<usize>) -> anyhow::Result<()> {
    match threads {
        Some(n) if n == 0 || n > MAX_THREADS => Err(usage(format!(
            "invalid --threads {n}: expected 1 to {MAX_THREADS}"
        ))),
        _ => Ok(()),
    }
}

fn list(what: Option<&str>) -> anyhow::Result<()> {
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
        for (name, _, about) in suite::BUILTIN_SUITES {
            println!("  {name:<12} {about}");
        }
        println!(
            "  {:<12} a suite file: shared keys, then [[task]] tables",
            "FILE.toml"
        );
    }
    if all || what == "templates" {
        println!("templates:");
        for (task, name, _) in templates::BUILTIN {
            println!("  {task}/{name}");
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
