//! The integration tests, one binary: each module runs the real `gen` binary on one area of
//! its promises. `memory.rs` stands apart (it measures the peak memory of its own children).

mod babilong;
mod chat;
mod common;
mod export;
mod formats;
mod fresh;
mod fuzz;
mod golden;
mod graphwalks;
mod hardening_shell;
mod hardening_templates;
mod layering;
mod lengthgen;
mod minimums;
mod needlechain;
mod niah;
mod niah_hard;
mod parquet_read;
mod placement;
mod qa;
mod roundtrip;
mod ruler2;
mod ruler_tasks;
mod safety;
mod schedulers;
mod score;
mod screen;
mod screen_adversarial;
mod suite;
mod suite_fresh;
mod trust;
