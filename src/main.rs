//! `gen`: the command-line shell around `needlework-generators`.
//!
//! The layers, top down: `cli` and `tasks` (clap's definitions and the conversion of raw
//! arguments into one checked, clap-free configuration), `run` (prepare, generate, shards,
//! fresh splits), `dataset` (the files and how they are written and read), `check` (verify)
//! and `harness` (export, score, inspect). Bad input exits 2 with one line, runtime failures
//! exit 1, and no partial dataset is ever left.

// One module-file style: a module with children is `name/mod.rs`.
#![warn(clippy::self_named_module_files)]

mod check;
mod cli;
mod dataset;
mod harness;
mod run;
mod tasks;
mod usage;

use std::process::ExitCode;

use clap::Parser;

use cli::command::CommandLine;
use cli::{Cli, Command};
use usage::{usage, UsageError};

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
    let task = match &cli.command {
        Command::Task(t) => Some(t.name()),
        _ => None,
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            let e = match task {
                Some(t) => tasks::worded(e, t),
                None => e,
            };
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

/// Whether a run found everything intact: exit 0, else 1.
fn intact(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// A dataset directory's manifest must be there before a command reads it.
fn dataset_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    if dir.join("manifest.json").exists() {
        Ok(())
    } else {
        Err(usage(format!(
            "{} is not a needlework dataset: it has no manifest.json",
            dir.display()
        )))
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Task(t) => {
            let (params, config) = t.resolve()?;
            let job = run::prepare::build_job(params, &config)?;
            run::generate::generate(job, &CommandLine)?;
        }
        Command::Suite(args) => {
            let job = cli::suite::build_suite_job(&args)?;
            run::generate::generate(job, &CommandLine)?;
        }
        Command::Merge(args) => run::merge::merge(&args.options())?,
        Command::Verify(args) => {
            // verify checks the directory itself, after the output lock.
            let options = check::verify::VerifyOptions {
                threads: cli::common::threads(args.threads)?,
                quiet: args.quiet,
                inputs: args.inputs.paths(),
                seed_file: args.seed_file.as_deref(),
                commands: &CommandLine,
            };
            return Ok(intact(check::verify::verify(&args.dir, &options)?));
        }
        Command::Reveal(args) => {
            return Ok(intact(check::sealed::reveal(&args.dir, &args.seed_file)?));
        }
        Command::Export(args) => harness::export::export(
            &args.harness,
            &args.dir,
            args.name.as_deref(),
            args.chat_template.as_ref(),
        )?,
        Command::Score(args) => {
            dataset_dir(&args.dir)?;
            let out = args.out.clone().unwrap_or_else(|| args.dir.join("scores"));
            let options = harness::score::Options {
                quiet: args.quiet,
                only_present: args.only_present,
            };
            harness::score::score(&args.dir, &args.predictions, &out, options)?;
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
                dataset::manifest::Manifest::read(&args.path)?;
            }
            if args.prompts {
                harness::prompts::print_prompts(&args.path, args.chat_template.as_ref())?;
            } else if args.chat_template.is_some() {
                return Err(usage("--chat-template applies only with --prompts"));
            } else {
                harness::inspect::inspect(&args.path)?;
            }
        }
        Command::List(args) => cli::list::list(args.what.as_deref())?,
    }
    Ok(ExitCode::SUCCESS)
}
