//! A progress bar on stderr, shown only when stderr is a terminal, not quiet, and the run has
//! lasted over a second.
//!
//! The bar runs over target tokens, not rows: a suite's rows differ a thousandfold in length
//! (4k beside 128k), so an estimate by rows is wrong by that much at the start of a sweep.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Progress of generating or verifying rows, safe to advance from rayon's threads.
pub struct Progress {
    bar: Option<ProgressBar>,
    started: Instant,
    shown: std::sync::atomic::AtomicBool,
    tokens: AtomicU64,
    rows: AtomicU64,
    total_rows: u64,
    verb: String,
}

impl Progress {
    /// A bar for `total_rows` rows of `work` target tokens in all, labelled `verb`; hidden (and
    /// free) when quiet or not a terminal.
    pub fn new(total_rows: u64, work: u64, quiet: bool, verb: &str) -> Progress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(work.max(1)), ProgressDrawTarget::hidden());
            bar.set_style(
                ProgressStyle::with_template("{prefix} [{bar:30}] {msg}, ETA {eta}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar.set_prefix(verb.to_string());
            bar
        });
        Progress {
            bar,
            started: Instant::now(),
            shown: false.into(),
            tokens: AtomicU64::new(0),
            rows: AtomicU64::new(0),
            total_rows,
            verb: verb.to_string(),
        }
    }

    /// One row done, of `tokens` tokens against a target of `work` (the rate shown is tokens
    /// per second, which says more than rows per second when lengths differ a thousandfold).
    pub fn advance(&self, tokens: u64, work: u64) {
        let Some(bar) = &self.bar else { return };
        let total = self.tokens.fetch_add(tokens, Ordering::Relaxed) + tokens;
        let rows = self.rows.fetch_add(1, Ordering::Relaxed) + 1;
        let elapsed = self.started.elapsed();
        if elapsed > Duration::from_secs(1) && !self.shown.swap(true, Ordering::Relaxed) {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        let rate = total as f64 / elapsed.as_secs_f64().max(1e-9);
        bar.set_message(format!(
            "{rows}/{} rows, {:.0} tokens/s",
            self.total_rows, rate
        ));
        bar.inc(work.max(1));
    }

    /// Name the config being made (one bar runs over all of a dataset's configs).
    pub fn stage(&self, config: &str) {
        if let Some(bar) = &self.bar {
            bar.set_prefix(format!("{} {config}", self.verb));
        }
    }

    /// Clear the bar so the summary line that follows stands alone.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
