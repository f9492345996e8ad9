//! `gen`: the command-line shell around `needlework-generators`.
//!
//! Arguments are parsed, then validated into one checked job before anything is written; bad
//! input exits 2 with one line, runtime failures exit 1, and no partial dataset is ever left.

mod cli;
mod corpus;
mod export;
mod generate;
mod heatmap;
mod inspect;
mod manifest;
mod options;
mod parquet_read;
mod paths;
mod prepare;
mod progress;
mod recipe;
mod schema;
mod score;
mod spec;
mod tally;
mod usage;
mod verify;
mod writer;

use std::process::ExitCode;

use clap::Parser;
use needlework_generators::{tasks, templates, tokenizer};

use cli::{Cli, Command};
use usage::{usage, UsageError};

fn main() -> ExitCode {
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
            // One line: clap's first line, without its usage block.
            let rendered = e.render().to_string();
            let first = rendered.lines().next().unwrap_or("error: bad arguments");
            eprintln!("{} (see gen --help)", first.trim_end());
            return ExitCode::from(2);
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            if let Some(u) = e.downcast_ref::<UsageError>() {
                eprintln!("error: {u}");
                ExitCode::from(2)
            } else {
                let msg = format!("{e:#}");
                eprintln!(
                    "error: {}",
                    msg.split_whitespace().collect::<Vec<_>>().join(" ")
                );
                ExitCode::from(1)
            }
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let command: Vec<String> = std::iter::once("gen".to_string())
        .chain(std::env::args().skip(1))
        .collect();
    match cli.command {
        Command::Niah(args) => generate_task(options::niah(&args)?, &args.common, command),
        Command::Needlechain(args) => {
            generate_task(options::needlechain(&args)?, &args.common, command)
        }
        Command::Posgen(args) => generate_task(options::posgen(&args)?, &args.common, command),
        Command::Sort(args) => generate_task(options::sort(&args)?, &args.common, command),
        Command::Arith(args) => generate_task(options::arith(&args)?, &args.common, command),
        Command::Babilong(args) => generate_task(options::babilong(&args)?, &args.common, command),
        Command::Verify(args) => {
            if !args.dir.join("manifest.json").exists() {
                return Err(usage(format!(
                    "{} is not a needlework dataset: it has no manifest.json",
                    args.dir.display()
                )));
            }
            let ok = verify::verify(&args.dir, args.threads, args.quiet, &args.inputs)?;
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Export(args) => {
            export::export(&args.harness, &args.dir)?;
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
            inspect::inspect(&args.path)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::List(args) => {
            list(args.what.as_deref())?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Validate a generating command into a job, then run it.
fn generate_task(
    options: needlework_generators::tasks::TaskParams,
    common: &cli::CommonArgs,
    command: Vec<String>,
) -> anyhow::Result<ExitCode> {
    let job = prepare::build_job(options, common)?;
    generate::generate(job, command)?;
    Ok(ExitCode::SUCCESS)
}

fn list(what: Option<&str>) -> anyhow::Result<()> {
    let all = what.is_none();
    let what = what.unwrap_or("");
    if !all && !matches!(what, "tasks" | "tokenizers" | "haystacks" | "templates") {
        return Err(usage(format!(
            "invalid list '{what}': expected tasks, tokenizers, haystacks or templates"
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
                "our own essay-like prose, new for every seed (default)",
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
    if all || what == "templates" {
        println!("templates:");
        for (task, name, _) in templates::BUILTIN {
            println!("  {task}/{name}");
        }
    }
    Ok(())
}
