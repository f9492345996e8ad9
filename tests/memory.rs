//! Must show 9: a 1m-token instance is correct and the process stays under 1 GiB.
//! Its own test binary, so the children measured are only this test's.

mod common;

use std::path::Path;

use common::*;
use needlework_generators::Tokenizer;

#[test]
fn one_million_tokens_under_one_gib() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("m").display().to_string();
    gen_ok(&["niah", "--len", "1m", "--out", &out, "-q"]);
    // SAFETY: getrusage only writes into the struct we pass.
    let peak_kib = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage), 0);
        usage.ru_maxrss
    };
    eprintln!("peak RSS of gen --len 1m: {peak_kib} KiB");
    assert!(
        peak_kib > 0 && peak_kib < 1024 * 1024,
        "peak {peak_kib} KiB"
    );
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
