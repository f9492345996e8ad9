//! `gen graphwalks`: BFS depths and parents in a long directed edge list.

use std::borrow::Cow;

use anyhow::Result;
use clap::Args;
use needlework_generators::tasks::graphwalks::{
    self, Degree, EdgeOrder, GraphwalksParams, Problem,
};
use needlework_generators::tasks::TaskParams;

use super::{parse_range, TaskArgs};
use crate::cli::common::CommonArgs;

#[derive(Debug, Args, Clone)]
pub struct GraphwalksArgs {
    /// The question: bfs (the nodes at exactly a depth from a start node), parents (the
    /// sources of edges into a node), or both (one config each).
    #[arg(long, default_value = "both")]
    pub problem: Problem,
    /// BFS depths a question draws from, like 2 or 1..3.
    #[arg(long, default_value = "1..3")]
    pub bfs_depth: String,
    /// Each node's out-degree, LAW:MEAN with LAW fixed, poisson or geometric (a mean alone is
    /// Poisson).
    #[arg(long, default_value = "poisson:3")]
    pub degree: Degree,
    /// grouped (each node's out-edges together) or shuffled (every line at a random place).
    #[arg(long, default_value = "grouped")]
    pub edge_order: EdgeOrder,
    /// Answer sizes a question may have, MIN..MAX (the start node is drawn again until one
    /// fits).
    #[arg(long, default_value = "1..1000")]
    pub answer_size: String,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl TaskArgs for GraphwalksArgs {
    const NAME: &'static str = graphwalks::NAME;
    const ABOUT: &'static str = graphwalks::ABOUT;

    fn params(&self) -> Result<TaskParams> {
        Ok(TaskParams::Graphwalks(GraphwalksParams {
            problem: self.problem,
            bfs_depth: parse_range(
                &self.bfs_depth,
                "--bfs-depth",
                "a depth like 2 or a range like 1..3",
            )?,
            degree: self.degree,
            edge_order: self.edge_order,
            answer_size: parse_range(
                &self.answer_size,
                "--answer-size",
                "a size like 5 or a range like 1..1000",
            )?,
        }))
    }

    fn common(&self) -> Result<Cow<'_, CommonArgs>> {
        Ok(Cow::Borrowed(&self.common))
    }
}
