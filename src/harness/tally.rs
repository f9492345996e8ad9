//! Scores of scored rows (full marks, their sum and mean, RULER's partial credit), grouped by length
//! and depth.
//!
//! A module of its own, below both `score` (which counts) and `heatmap` (which draws), so that
//! neither has to import the other's types.

use serde::Serialize;

/// The scores of one group of rows; serialised as is into `scores.json`.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Tally {
    /// Rows scored.
    pub rows: u64,
    /// Rows whose prediction the row's metric accepts in full.
    pub correct: u64,
    /// The mean row score: `correct / rows` where rows are right or wrong, the mean of the
    /// graded metrics' numbers otherwise; kept up to date so readers need not divide.
    pub accuracy: f64,
    /// The sum of the row scores.
    #[serde(skip)]
    pub total: f64,
    /// RULER's partial credit over the rows of the group that have one (metric `all` or
    /// `any`); left out of `scores.json` when no row has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ruler: Option<Partial>,
}

/// RULER's partial credit (`string_match_all`, or `string_match_part` for `any` rows) summed
/// over a group of rows.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Partial {
    /// Rows with a partial credit.
    pub rows: u64,
    /// The sum of their credits (each between 0 and 1).
    pub credit: f64,
    /// `credit / rows`: RULER's task score divided by 100, before RULER's rounding.
    pub score: f64,
}

impl Partial {
    fn merge(&mut self, other: &Partial) {
        self.rows += other.rows;
        self.credit += other.credit;
        self.score = self.credit / self.rows.max(1) as f64;
    }
}

impl Tally {
    /// Count one scored row: its score by its own metric (0 to 1), and its RULER credit when
    /// its metric has one.
    pub fn add(&mut self, score: f64, ruler: Option<f64>) {
        self.merge(&Tally {
            rows: 1,
            correct: u64::from(score == 1.0),
            accuracy: 0.0,
            total: score,
            ruler: ruler.map(|credit| Partial {
                rows: 1,
                credit,
                score: credit,
            }),
        });
    }

    /// Fold another group into this one (a config's total is the merge of its cells).
    pub fn merge(&mut self, other: &Tally) {
        self.rows += other.rows;
        self.correct += other.correct;
        self.total += other.total;
        self.accuracy = self.total / self.rows.max(1) as f64;
        if let Some(o) = &other.ruler {
            self.ruler.get_or_insert_with(Partial::default).merge(o);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_credit_is_kept_only_where_rows_have_one() {
        let mut t = Tally::default();
        t.add(1.0, Some(1.0));
        t.add(0.0, Some(0.25));
        t.add(0.5, None);
        assert_eq!((t.rows, t.correct), (3, 1));
        assert_eq!(t.accuracy, 0.5);
        let r = t.ruler.unwrap();
        assert_eq!((r.rows, r.credit, r.score), (2, 1.25, 0.625));
        let mut none = Tally::default();
        none.add(1.0, None);
        assert!(none.ruler.is_none());
        assert!(!serde_json::to_string(&none).unwrap().contains("ruler"));
        none.merge(&t);
        assert_eq!(none.ruler.unwrap().rows, 2);
    }
}
