//! Where inserted facts stand and how full a row is, under inputs drawn at random: every needle
//! (and vt assignment, chain link, story fact, hidden item or number) follows a sentence end or
//! a line break, or opens the context, at every depth 0 to 100 and with every haystack; and a
//! fill over corpora in scripts without spaces or sentence marks (CJK, Arabic, emoji, combining
//! marks, a mix) still reaches `--len` within max(16, 0.2 %) under every kind of tokenizer.

use std::path::Path;

use crate::common::{fixture, generate, rows, tmp, tokenizer_kinds, Draw, TestRow};

/// Cases per randomized test (CI runs more through `NEEDLEWORK_FUZZ_CASES`).
fn cases(default: u64) -> u64 {
    std::env::var("NEEDLEWORK_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(default, |n| (n / 10).max(default))
}

/// Whether the text just before a fact starting at char `at` ends a sentence or a line, or the
/// fact opens the context (nothing of the haystack before it), or the fact itself ends a line.
fn stands_between_sentences(
    input: &[char],
    at: usize,
    context_start: usize,
    fact_end: Option<usize>,
) -> bool {
    let mut i = at;
    let mut saw_newline = false;
    while i > 0 && input[i - 1].is_whitespace() {
        saw_newline |= input[i - 1] == '\n';
        i -= 1;
    }
    if i <= context_start || saw_newline {
        return true;
    }
    if let Some(end) = fact_end {
        if input.get(end) == Some(&'\n') {
            return true;
        }
    }
    let closers = ['"', '\'', '”', '’', ')', ']', '»', '」', '』', '）', '*'];
    while i > 0 && closers.contains(&input[i - 1]) {
        i -= 1;
    }
    i > 0 && ".!?。！？…؟۔।".contains(input[i - 1])
}

/// Every fact of every row stands after a sentence end or a line break, or opens the context
/// (which starts at char `context_start`).
fn check_rows(label: &str, rows: &[TestRow], context_start: usize) {
    assert!(!rows.is_empty(), "{label}: no rows");
    for row in rows {
        let chars: Vec<char> = row.input.chars().collect();
        for (k, &off) in row.needle_offsets.iter().enumerate() {
            let at = off as usize;
            assert!(at <= chars.len(), "{label}: offset {at} past the input");
            // The fact runs to the next sentence end of its own.
            let end = (at..chars.len())
                .find(|&j| ".!?".contains(chars[j]))
                .map(|j| j + 1);
            let before: String = chars[at.saturating_sub(60)..at].iter().collect();
            let from: String = chars[at..(at + 40).min(chars.len())].iter().collect();
            assert!(
                stands_between_sentences(&chars, at, context_start, end),
                "{label} row {} fact {k} (depth {:?}): {before:?} | {from:?}",
                row.id,
                row.depth_percent
            );
        }
    }
}

/// The characters before the context in these rows: the template's head is the same text in
/// every row, so the shortest common prefix of all rows (and the first fact's position) bounds
/// it from above.
fn context_start(rows: &[TestRow]) -> usize {
    let first: Vec<char> = rows[0].input.chars().collect();
    let mut common = first.len();
    for r in &rows[1..] {
        let n = r
            .input
            .chars()
            .zip(&first)
            .take_while(|(a, b)| a == *b)
            .count();
        common = common.min(n);
    }
    // A row alone, or rows sharing their first sentence: at most the head of the template.
    common.min(
        rows.iter()
            .flat_map(|r| r.needle_offsets.first())
            .map(|&o| o as usize)
            .min()
            .unwrap_or(common),
    )
}

#[test]
fn every_inserted_fact_follows_a_sentence_end_at_every_depth() {
    let corpus = fixture("corpus");
    let haystacks = ["generated", "noise", corpus.as_str()];
    let tokenizers = ["chars"];
    let lens = ["2500", "4000", "6000", "9000"];
    let mut draw = Draw(0x51ac_e0f5_7a11_0001);
    let tmp = tmp();
    for case in 0..cases(8) {
        let hay = draw.pick(&haystacks);
        let tok = draw.pick(&tokenizers);
        let len = draw.pick(&lens);
        let seed = draw.below(1000).to_string();
        let depths = draw.pick(&["11", "5", "3", "100"]);
        let depth_flag = if depths == "100" {
            vec!["--depths", "100"]
        } else {
            vec!["--depths", depths]
        };
        let task = draw.below(7);
        let mut args: Vec<&str> = match task {
            0 => vec!["niah"],
            1 => vec![
                "niah",
                "--variant",
                draw.pick(&["multikey", "multivalue", "multiquery"]),
            ],
            2 => vec!["vt"],
            3 => vec!["babilong", "--task", draw.pick(&["qa1", "qa2", "qa3"])],
            4 => vec!["sort", "--items", "6"],
            5 => vec!["arith", "--op", "sum", "--count", "4"],
            _ => vec!["niah", "--variant", "multikey", "--haystack", "needles"],
        };
        if !args.contains(&"--haystack") {
            args.extend(["--haystack", hay]);
        }
        args.extend([
            "--tokenizer",
            tok,
            "--len",
            len,
            "--seed",
            &seed,
            "--samples",
            "2",
        ]);
        args.extend(depth_flag);
        let out = tmp.path().join(format!("c{case}"));
        generate(&out.display().to_string(), &args);
        let got = rows(&out);
        check_rows(&format!("{args:?}"), &got, context_start(&got));
    }
}

#[test]
fn depth_100_facts_never_follow_a_cut_sentence() {
    // The most used depth, with each haystack and several facts per row.
    let corpus = fixture("corpus");
    let tmp = tmp();
    for (i, args) in [
        vec![
            "niah",
            "--len",
            "2k,16k",
            "--depths",
            "11",
            "--samples",
            "3",
        ],
        vec![
            "niah",
            "--variant",
            "multikey",
            "--haystack",
            "noise",
            "--len",
            "2k",
            "--depths",
            "100",
            "--samples",
            "4",
        ],
        vec![
            "niah",
            "--haystack",
            corpus.as_str(),
            "--len",
            "1k,3k",
            "--depths",
            "100",
            "--samples",
            "4",
        ],
        vec!["vt", "--len", "2k,4k", "--depths", "100", "--samples", "4"],
        vec![
            "needlechain",
            "--haystack",
            "generated",
            "--len",
            "2k",
            "--samples",
            "3",
        ],
    ]
    .into_iter()
    .enumerate()
    {
        let mut all = args.clone();
        all.extend(["--tokenizer", "chars"]);
        let out = tmp.path().join(format!("d{i}"));
        generate(&out.display().to_string(), &all);
        let got = rows(&out);
        check_rows(&format!("{all:?}"), &got, context_start(&got));
    }
}

/// A corpus document of `n` sentences-worth of text in a script, without the marks a sentence
/// splitter would cut at when `marks` is false.
fn script_text(draw: &mut Draw, script: &str, n: usize, marks: bool) -> String {
    let cjk: Vec<char> =
        "山川水火木金土日月星雲雨風花草竹石田村町道橋海空光音色心手足目耳口人子女男"
            .chars()
            .collect();
    let arabic = [
        "كتاب",
        "مدينة",
        "نهر",
        "جبل",
        "شمس",
        "قمر",
        "طريق",
        "بيت",
        "سماء",
        "بحر",
    ];
    let emoji = ["🌲", "🌊", "🔥", "👩‍🚀", "🧑🏽‍🍳", "🏳️‍🌈", "🍎", "🎈", "🚲", "🐙"];
    let combining = [
        "a\u{0301}",
        "e\u{0300}\u{0323}",
        "o\u{0308}\u{0304}",
        "n\u{0303}",
        "u\u{031B}\u{0309}",
    ];
    let mut s = String::new();
    for _ in 0..n {
        let words = 8 + draw.below(30) as usize;
        for w in 0..words {
            let style = if script == "mixed" {
                ["cjk", "arabic", "emoji", "combining"][draw.below(4) as usize]
            } else {
                script
            };
            match style {
                "cjk" => {
                    for _ in 0..1 + draw.below(4) {
                        s.push(cjk[draw.below(cjk.len() as u64) as usize]);
                    }
                }
                "arabic" => {
                    if w > 0 {
                        s.push(' ');
                    }
                    s.push_str(arabic[draw.below(arabic.len() as u64) as usize]);
                }
                "emoji" => s.push_str(emoji[draw.below(emoji.len() as u64) as usize]),
                _ => {
                    for _ in 0..2 + draw.below(5) {
                        s.push_str(combining[draw.below(combining.len() as u64) as usize]);
                    }
                }
            }
        }
        if marks {
            s.push_str(match script {
                "cjk" => "。",
                "arabic" => ".",
                _ => "! ",
            });
        }
    }
    s
}

fn write_corpus(dir: &Path, draw: &mut Draw, script: &str) {
    std::fs::create_dir_all(dir).unwrap();
    for d in 0..3 {
        let marks = draw.chance(40);
        let mut doc = String::new();
        for _ in 0..4 {
            doc.push_str(&script_text(draw, script, 40, marks));
            doc.push_str("\n\n");
        }
        std::fs::write(dir.join(format!("doc{d}.txt")), doc).unwrap();
    }
}

#[test]
fn unicode_corpora_fill_every_tokenizer_within_tolerance() {
    let tokenizers = tokenizer_kinds();
    let scripts = ["cjk", "arabic", "emoji", "combining", "mixed"];
    let mut draw = Draw(0xf111_0c0d_e5ca_1e02);
    let tmp = tmp();
    for case in 0..cases(10) {
        let script = scripts[(case as usize) % scripts.len()];
        let corpus = tmp.path().join(format!("corpus{case}"));
        write_corpus(&corpus, &mut draw, script);
        let tok = &tokenizers[draw.below(tokenizers.len() as u64) as usize];
        let len = ["1500", "2k", "3000", "5k"][draw.below(4) as usize];
        let seed = draw.below(10_000).to_string();
        let task = draw.below(3);
        let mut args: Vec<&str> = match task {
            0 => vec!["niah"],
            1 => vec!["niah", "--variant", "multivalue"],
            _ => vec!["vt"],
        };
        let c = corpus.display().to_string();
        args.extend([
            "--haystack",
            &c,
            "--tokenizer",
            tok,
            "--len",
            len,
            "--seed",
            &seed,
            "--depths",
            "3",
        ]);
        let out = tmp.path().join(format!("f{case}"));
        generate(&out.display().to_string(), &args);
        for row in rows(&out) {
            let target = row.target_length as usize;
            let filled = (row.prompt_tokens + row.max_new_tokens) as usize;
            let tol = (target / 500).max(16);
            assert!(
                filled <= target && filled + tol >= target,
                "{script} {args:?}: {filled} of {target} (tolerance {tol})"
            );
        }
    }
}
