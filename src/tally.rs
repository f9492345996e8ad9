//! Right-and-total counts of scored rows, grouped by length and depth.
//!
//! A module of its own, below both `score` (which counts) and `heatmap` (which draws), so that
//! neither has to import the other's types.

use serde::Serialize;

/// Right and total for one group of rows; serialised as is into `scores.json`.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Tally {
    /// Rows scored.
    pub rows: u64,
    /// Rows whose prediction the row's metric accepts.
    pub correct: u64,
    /// `correct / rows`, kept up to date so readers of `scores.json` need not divide.
    pub accuracy: f64,
}

impl Tally {
    /// Count one scored row.
    pub fn add(&mut self, ok: bool) {
        self.merge(&Tally {
            rows: 1,
            correct: u64::from(ok),
            accuracy: 0.0,
        });
    }

    /// Fold another group into this one (a config's total is the merge of its cells).
    pub fn merge(&mut self, other: &Tally) {
        self.rows += other.rows;
        self.correct += other.correct;
        self.accuracy = self.correct as f64 / self.rows.max(1) as f64;
    }
}

/// One cell of the length × depth grid: what the heatmap draws and `scores.json` lists.
#[derive(Debug, Clone, Serialize)]
pub struct GridScore {
    /// Target length in tokens.
    pub length: u64,
    /// `None` for rows without a depth.
    pub depth: Option<f64>,
    /// Flattened into the cell in `scores.json`.
    #[serde(flatten)]
    pub tally: Tally,
}
