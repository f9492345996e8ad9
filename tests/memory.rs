//! A 1m-token instance is correct and the process stays under 1 GiB.
//! Its own test binary, so the children measured are only this test's. The memory bound is
//! checked where getrusage reports it (unix); the row is checked everywhere.

#[allow(dead_code)]
#[path = "integration/common/mod.rs"]
mod common;

use std::path::Path;

use common::*;
use needlework_generators::Tokenizer;

/// The largest resident set of any finished child of this process, in KiB (`None` where the
/// OS does not report it).
#[cfg(unix)]
fn children_peak_rss_kib() -> Option<u64> {
    // SAFETY: getrusage only writes into the struct we pass.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage), 0);
        usage
    };
    let raw = u64::try_from(usage.ru_maxrss).ok()?;
    // Darwin reports ru_maxrss in bytes; Linux and the BSDs in KiB.
    if cfg!(any(target_os = "macos", target_os = "ios")) {
        Some(raw / 1024)
    } else {
        Some(raw)
    }
}

/// Windows has no getrusage (and the test does not link libc there): no measurement.
#[cfg(not(unix))]
fn children_peak_rss_kib() -> Option<u64> {
    None
}

#[test]
fn one_million_tokens_under_one_gib() {
    let t = tmp();
    let out = t.path().join("m").display().to_string();
    generate(&out, &["niah", "--len", "1m"]);
    match children_peak_rss_kib() {
        Some(peak_kib) => {
            eprintln!("peak RSS of gen --len 1m: {peak_kib} KiB");
            assert!(
                peak_kib > 0 && peak_kib < 1024 * 1024,
                "peak {peak_kib} KiB"
            );
        }
        None => eprintln!("peak RSS is not measured on this OS; checking the row only"),
    }
    let rows = rows(Path::new(&out));
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    let budget = 1_048_576 - 128;
    assert_eq!(r.length as usize, Tokenizer::O200k.count(&r.input).unwrap());
    assert!(
        r.length <= budget && r.length >= budget - budget / 500,
        "{}",
        r.length
    );
    assert!(r.input.contains(&r.answers[0]));
    assert!((r.needle_depths[0] - 50.0).abs() < 0.1);
}
