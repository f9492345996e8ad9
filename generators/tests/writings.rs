//! Writings by format, topic and style have their format's shape, their style's register, and
//! are distinct for every seed: checked over hundreds of pieces per format.

use std::collections::{BTreeMap, BTreeSet};

use needlework_generators::haystack::prose::writings::{
    self, word_count, Format, Request, Style, Topic, TWEET_CHARS,
};
use needlework_generators::haystack::prose::Prose;

/// Pieces checked per format for shape.
const PIECES: u64 = 400;

fn piece(prose: &Prose, format: Format, i: u64) -> (Request, String) {
    let request = Request {
        format,
        topic: Topic::ALL[i as usize % Topic::ALL.len()],
        style: Style::ALL[(i / Topic::ALL.len() as u64) as usize % Style::ALL.len()],
    };
    let text = prose.write(request, &mut request.rng(i)).unwrap();
    (request, text)
}

fn given_names() -> BTreeSet<String> {
    [
        include_str!("../haystacks/prose/given_female.txt"),
        include_str!("../haystacks/prose/given_male.txt"),
    ]
    .iter()
    .flat_map(|t| t.lines().filter(|l| !l.starts_with('#')))
    .flat_map(str::split_whitespace)
    .map(str::to_string)
    .collect()
}

fn paragraphs(text: &str) -> Vec<&str> {
    text.split("\n\n")
        .filter(|p| !p.trim().is_empty())
        .collect()
}

/// A title: one short line, no sentence end.
fn is_title(line: &str) -> bool {
    let n = word_count(line);
    (1..=12).contains(&n) && !line.ends_with(['.', ',']) && !line.contains('\n')
}

fn check_shape(format: Format, text: &str, names: &BTreeSet<String>) -> Result<(), String> {
    let lines: Vec<&str> = text.lines().collect();
    let paras = paragraphs(text);
    match format {
        Format::Email => {
            let subject = lines[0]
                .strip_prefix("Subject: ")
                .ok_or("no subject line")?;
            if word_count(subject) == 0 || !lines[1].is_empty() {
                return Err("subject line empty or not followed by a blank line".into());
            }
            let greeting = lines[2];
            let opens = [
                "Dear ",
                "Hello ",
                "Hi ",
                "Hey ",
                "Hiya ",
                "Greetings",
                "Good morrow",
                "Most esteemed",
                "To whom",
            ];
            if !opens.iter().any(|o| greeting.starts_with(o)) || !greeting.ends_with([',', '!']) {
                return Err(format!("greeting '{greeting}'"));
            }
            let name = lines[lines.len() - 1];
            let signoff = lines[lines.len() - 2];
            let name_ok = (1..=3).contains(&name.split(' ').count())
                && name
                    .split(' ')
                    .all(|w| w.chars().next().is_some_and(char::is_uppercase));
            if !signoff.ends_with(',') || !name_ok {
                return Err(format!("sign-off '{signoff}' / name '{name}'"));
            }
            if paras.len() < 5 {
                return Err(format!(
                    "{} blocks: subject, greeting, body, close, sign-off",
                    paras.len()
                ));
            }
        }
        Format::ShortStory => {
            if !is_title(lines[0]) || paras.len() < 4 {
                return Err(format!(
                    "title '{}' and {} paragraphs",
                    lines[0],
                    paras.len()
                ));
            }
            let words: Vec<&str> = text
                .split(|c: char| !c.is_alphabetic())
                .filter(|w| !w.is_empty())
                .collect();
            let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
            for w in &words {
                if names.contains(*w) {
                    *seen.entry(w).or_default() += 1;
                }
            }
            let recurring = seen.values().filter(|&&n| n >= 2).count();
            if recurring < 2 {
                return Err(format!("characters: {seen:?}"));
            }
            let events = [
                "One ",
                "Later that day",
                "That evening",
                "The next ",
                "A week later",
                "At first",
                "Then",
                "By ",
                "Before long",
                "Some days later",
            ];
            let turns = paras[1..]
                .iter()
                .filter(|p| events.iter().any(|e| p.starts_with(e)))
                .count();
            if turns == 0 {
                return Err("no paragraph opens with a turn of events".into());
            }
        }
        Format::BlogPost => {
            let title = lines[0].strip_prefix("# ").ok_or("no heading")?;
            if !is_title(title) || paras.len() < 3 {
                return Err(format!("heading '{title}', {} paragraphs", paras.len()));
            }
        }
        Format::Tweet => {
            if text.contains('\n') || text.chars().count() > TWEET_CHARS {
                return Err("tweet on several lines or over 280 characters".into());
            }
            let tag = text.rsplit(' ').next().unwrap_or("");
            if !tag.starts_with('#') || tag.len() < 3 {
                return Err(format!("tweet ends with '{tag}', not a hashtag"));
            }
        }
        Format::Poem => {
            if !is_title(lines[0]) || !lines[1].is_empty() {
                return Err(format!("title '{}'", lines[0]));
            }
            let stanzas = paragraphs(text)[1..].to_vec();
            if stanzas.is_empty() || (word_count(text) > 80 && stanzas.len() < 2) {
                return Err(format!(
                    "{} stanzas in {} words",
                    stanzas.len(),
                    word_count(text)
                ));
            }
            for stanza in &stanzas {
                let n = stanza.lines().count();
                if n > 6 {
                    return Err(format!("stanza of {n} lines"));
                }
                for line in stanza.lines() {
                    let w = word_count(line);
                    if !(1..=14).contains(&w) || line.chars().count() > 90 {
                        return Err(format!("line '{line}' is not a poem's line"));
                    }
                }
            }
            if !text.ends_with('.') {
                return Err("the last line does not close the poem".into());
            }
        }
        Format::Essay => {
            if !is_title(lines[0]) || paras.len() < 5 {
                return Err(format!("title '{}', {} paragraphs", lines[0], paras.len()));
            }
            let thesis = [
                "argue",
                "claim",
                "thesis",
                "contends",
                "contention",
                "maintains",
                "maintain",
                "evaluates",
                "my point is",
                "reckon",
                "show that",
            ];
            if !thesis.iter().any(|t| paras[1].to_lowercase().contains(t)) {
                return Err(format!("no thesis in '{}'", paras[1]));
            }
            let endings = [
                "In conclusion",
                "To conclude",
                "In sum",
                "All in all",
                "So yeah",
                "Bottom line",
                "Wherefore",
                "Thus it is plain",
                "To sum up",
            ];
            let last = paras[paras.len() - 1];
            if !endings.iter().any(|e| last.starts_with(e)) {
                return Err(format!("no conclusion: '{last}'"));
            }
        }
        Format::Riddle => {
            if lines.len() < 3 {
                return Err(format!("{} lines", lines.len()));
            }
            let (question, clues) = lines.split_last().ok_or("empty riddle")?;
            if !question.ends_with('?') {
                return Err(format!("last line '{question}' is not its question"));
            }
            if let Some(bad) = clues.iter().find(|c| !c.ends_with(['.', '!'])) {
                return Err(format!("clue '{bad}'"));
            }
        }
    }
    Ok(())
}

#[test]
fn every_format_has_its_shape_and_length_over_hundreds_of_pieces() {
    let prose = Prose::builtin().unwrap();
    let names = given_names();
    for &format in Format::ALL {
        let (least, most) = format.words();
        let mut lengths = Vec::new();
        for i in 0..PIECES {
            let (request, text) = piece(&prose, format, i);
            let n = word_count(&text);
            assert!(
                (least..=most).contains(&n),
                "{request:?}: {n} words, not {least}..={most}:\n{text}"
            );
            if let Err(e) = check_shape(format, &text, &names) {
                panic!("{request:?} seed {i}: {e}\n---\n{text}");
            }
            lengths.push(n);
        }
        // Lengths are drawn per piece across the range, not fixed.
        let (lo, hi) = (
            *lengths.iter().min().unwrap(),
            *lengths.iter().max().unwrap(),
        );
        assert!(
            (hi - lo) * 2 >= most - least,
            "{format}: lengths only {lo}..{hi} of {least}..{most}"
        );
    }
}

#[test]
fn pieces_of_one_request_are_distinct_and_reproducible() {
    let prose = Prose::builtin().unwrap();
    let mut total = 0;
    for &format in Format::ALL {
        for &topic in Topic::ALL {
            for &style in Style::ALL {
                let request = Request {
                    format,
                    topic,
                    style,
                };
                let pieces: BTreeSet<String> = (0..8)
                    .map(|seed| prose.write(request, &mut request.rng(seed)).unwrap())
                    .collect();
                assert_eq!(pieces.len(), 8, "{request:?}: repeated pieces");
                total += pieces.len();
            }
        }
    }
    assert_eq!(
        total,
        8 * Format::ALL.len() * Topic::ALL.len() * Style::ALL.len()
    );
    // The same request and seed always give the same piece; another request another piece.
    let a = writings::write(Format::Poem, Topic::Sea, Style::Archaic, 5).unwrap();
    assert_eq!(
        a,
        writings::write(Format::Poem, Topic::Sea, Style::Archaic, 5).unwrap()
    );
    assert_ne!(
        a,
        writings::write(Format::Poem, Topic::Sea, Style::Formal, 5).unwrap()
    );
    assert_ne!(
        a,
        writings::write(Format::Poem, Topic::Sea, Style::Archaic, 6).unwrap()
    );
}

/// Words and phrases only one style's rules write (none is in the general word lists).
fn markers(style: Style) -> &'static [&'static str] {
    match style {
        Style::Formal => &[
            "furthermore",
            "moreover",
            "consequently",
            "nevertheless",
            "with regard to",
            "sincerely",
            "faithfully",
            "prudent",
            "advisable",
            "imperative",
            "noteworthy",
            "contends",
            "contention",
            "further to our",
            "correspondence",
            "do not hesitate",
            "due consideration",
            "one must acknowledge",
            "it should be noted",
            "might you",
            "thereafter",
            "in due course",
            "whom it may concern",
            "i should be grateful",
        ],
        Style::Informal => &[
            "n't",
            "'m",
            "'re",
            "'ve",
            "'ll",
            "gonna",
            "reckon",
            "yeah",
            "totally",
            "super ",
            "lol",
            "okay",
            "ok but",
            "hiya",
            "hey",
            "talk soon",
            "folks",
            "turns out",
            "kind of",
            "see ya",
            "no idea why",
            "stuff like",
            "obsessed",
        ],
        Style::Humorous => &[
            "nobody asked for",
            "i have questions",
            "do not ask me how",
            "in my defence",
            "regret nothing",
            "with opinions",
            "with the confidence of",
            "about as well as",
            "brace yourself",
            "mild chaos",
            "bewildered",
            "still laughing",
            "send help",
            "against all good sense",
            "silly case",
            "hilarious",
            "sentience",
            "no cheating",
            "why am i like this",
            "basically a",
            "staged a",
            "ridiculous",
            "dignified",
            "goose at a wedding",
            "toddler with a trumpet",
            "cat in a bathtub",
            "penguin on roller skates",
            "squirrel with a plan",
            "walrus in a waistcoat",
            "picnic in a hurricane",
            "duck at a tax office",
            "tuba at a funeral",
            "sandcastle at high tide",
            "allegedly",
            "lasted about a day",
            "has a rule about",
        ],
        Style::Technical => &[
            "calibrated",
            "tolerance",
            "parameter",
            "measurements show",
            "throughput",
            "specification",
            "recalibration",
            "configuration",
            "procedure",
            "the data indicate",
            "readings",
            "hypothesis",
            "rated at",
            "capacity",
            "data set",
            "discrepancies",
            "revision",
            "controlled conditions",
            "operates at",
            "output per",
        ],
        Style::Archaic => &[
            "thou",
            "thee",
            "thy",
            "thine",
            "hath",
            "doth",
            "ere ",
            "whilst",
            "verily",
            "forsooth",
            "hark",
            "alas",
            "methinks",
            "prithee",
            "'tis",
            "'twas",
            "betwixt",
            "o'er",
            "anon",
            "wherefore",
            "herein",
            "canst",
            "good morrow",
            "hearken",
            "naught",
            "perchance",
            "amongst",
            " lo,",
        ],
    }
}

fn has_marker(text: &str, style: Style) -> Option<&'static str> {
    let lower = format!(" {} ", text.to_lowercase());
    markers(style).iter().copied().find(|m| {
        let m = m.trim_end();
        let mut from = 0;
        while let Some(at) = lower[from..].find(m) {
            let start = from + at;
            let end = start + m.len();
            let before = lower[..start].chars().last().unwrap_or(' ');
            let after = lower[end..].chars().next().unwrap_or(' ');
            // A marker of letters counts as a whole word; one with an apostrophe anywhere.
            if m.starts_with('\'')
                || m.starts_with(' ')
                || !before.is_alphabetic() && !after.is_alphabetic()
            {
                return true;
            }
            from = end;
        }
        false
    })
}

#[test]
fn styles_change_register_and_word_choice() {
    let prose = Prose::builtin().unwrap();
    // Markers must be the styles' own: none may be a word of the general lists.
    let vocabulary: BTreeSet<String> = prose
        .vocabulary()
        .iter()
        .map(|w| w.to_lowercase())
        .collect();
    for &style in Style::ALL {
        for m in markers(style) {
            assert!(
                !vocabulary.contains(m.trim()),
                "marker '{m}' is a general word"
            );
        }
    }
    for &format in Format::ALL {
        for &style in Style::ALL {
            let mut own = 0;
            let n = 80u64;
            for i in 0..n {
                let request = Request {
                    format,
                    topic: Topic::ALL[i as usize % Topic::ALL.len()],
                    style,
                };
                let text = prose.write(request, &mut request.rng(1000 + i)).unwrap();
                own += has_marker(&text, style).is_some() as u64;
                for &other in Style::ALL.iter().filter(|&&o| o != style) {
                    if let Some(m) = has_marker(&text, other) {
                        panic!("{request:?} uses '{m}', a {other} word:\n{text}");
                    }
                }
            }
            // Long forms always show their style; the short ones nearly always.
            let floor = match format {
                Format::Tweet | Format::Riddle | Format::Poem => 0.6,
                _ => 0.95,
            };
            assert!(
                own as f64 >= floor * n as f64,
                "{format} {style}: only {own} of {n} pieces show the style"
            );
        }
    }
}
