//! The dataset layer: what a dataset directory holds and how it is read and written — Parquet
//! shards and their row groups, the schema, the manifest and card, and which files a loader
//! could read.

pub mod files;
pub mod head;
pub mod lock;
pub mod manifest;
pub mod parquet_read;
pub mod row_group;
pub mod schema;
pub mod writer;
