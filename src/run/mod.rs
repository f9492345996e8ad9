//! The run layer: a checked configuration in, a dataset out. Inputs are read and checked
//! (`prepare`), rows are made in parallel and written in order (`generate`), one machine's
//! share of them when sharded (`shard`, `merge`), fresh and private splits kept so
//! (`fresh`, `private`, `disjoint`). Nothing here knows a command-line flag type: the
//! command line hands down a [`config::Config`] and the core's task parameters.

pub mod config;
pub mod corpus;
pub mod disjoint;
pub mod find_inputs;
pub mod fresh;
pub mod generate;
pub mod merge;
pub mod mmlu;
pub mod paths;
pub mod prepare;
pub mod private;
pub mod progress;
pub mod recipe;
pub mod shard;
