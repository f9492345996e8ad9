//! The check layer: `gen verify` remakes a dataset from its manifest and compares it byte for
//! byte; a private split is checked without its seed, and revealed.

pub mod recorded;
pub mod sealed;
pub mod verify;
