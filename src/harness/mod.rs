//! The harness layer: what evaluators run and read — harness files (`gen export`), scores
//! and heatmaps (`gen score`), the prompts a model reads, and `gen inspect`.

pub mod export;
pub mod heatmap;
pub mod inspect;
pub mod predictions;
pub mod prompts;
pub mod score;
pub mod tally;
