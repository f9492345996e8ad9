//! Latent needles (NoLiMa's idea, our own tables): the needle and its question share no word,
//! so the needle cannot be found by matching; answering takes one associative hop.
//!
//! A needle puts a person beside a thing ("Mira once had dinner right beside the Charles
//! Bridge."); the question names only where the thing leads ("Which character has been to
//! Prague?"); the answer is the person. The hops come from association tables written for this
//! project (`haystacks/latent/*.txt`: landmark → city, artwork → city, dish → country, river →
//! country, instrument → family), the people from the prose haystack's given names.
//!
//! **The overlap rule.** A text's content words are its maximal runs of letters that are at
//! least four letters long, lower-cased and cut to a stem: one ending `-ing`, `-ed`, `-es` or
//! `-s` is dropped when four letters remain. Two content words clash when one stem begins with
//! the other, so equal words clash, and so do "bridge" and "bridges", "visits" and "visited",
//! "cook" and "cooking". No content word of a question, or of the other names of the place it
//! asks about (`aliases.txt`: "Czech" for Czechia), clashes with one of any needle sentence of
//! its instance.

use std::collections::{BTreeMap, BTreeSet};

use crate::haystack::Screen;
use crate::rng::Rng;
use crate::GenError;

/// The association tables, by name, in the order instances draw them from.
pub const TABLE_SOURCES: &[(&str, &str)] = &[
    (
        "landmark_city",
        include_str!("../../../haystacks/latent/landmark_city.txt"),
    ),
    (
        "artwork_city",
        include_str!("../../../haystacks/latent/artwork_city.txt"),
    ),
    (
        "dish_country",
        include_str!("../../../haystacks/latent/dish_country.txt"),
    ),
    (
        "river_country",
        include_str!("../../../haystacks/latent/river_country.txt"),
    ),
    (
        "instrument_family",
        include_str!("../../../haystacks/latent/instrument_family.txt"),
    ),
];

const ALIASES: &str = include_str!("../../../haystacks/latent/aliases.txt");
const WOMEN: &str = include_str!("../../../haystacks/prose/given_female.txt");
const MEN: &str = include_str!("../../../haystacks/prose/given_male.txt");
const SURNAMES: &str = include_str!("../../../haystacks/prose/surnames.txt");

/// Given names that are also common words or the places the tables name: a person called
/// Hope or Florence would blur the question.
const NOT_NAMES: &[&str] = &[
    "Hope", "Iris", "Wren", "Grace", "Frank", "June", "Opal", "Ruth", "Milan", "Florence",
];

/// The most people (needles) one latent instance names.
pub const MAX_PEOPLE: u32 = 20;

/// Draws in a row before a person or a distractor counts as impossible to find.
const MAX_TRIES: usize = 4096;

/// One row of a table: a thing and where it leads.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The thing, without its article (`Charles Bridge`).
    pub from: &'static str,
    /// The article the sentences put before it (`the ` or nothing).
    pub from_article: &'static str,
    /// Where it leads, without its article (`Prague`, `United States`).
    pub to: &'static str,
    /// The article the question puts before it.
    pub to_article: &'static str,
}

/// One association table with its sentences.
#[derive(Debug, Clone)]
pub struct Table {
    /// The table's name (`landmark_city`), recorded in `params.hop.table`.
    pub name: &'static str,
    /// The question, with `{to}`.
    pub question: &'static str,
    /// The answer prefix, with `{to}`.
    pub prefix: &'static str,
    /// Needle sentences, with `{name}` and `{from}`.
    pub needles: Vec<&'static str>,
    /// Extra terms kept out of the haystack whenever the table is used.
    pub screen: Vec<&'static str>,
    /// The rows.
    pub entries: Vec<Entry>,
}

fn split_article(s: &'static str) -> (&'static str, &'static str) {
    match s.strip_prefix("the ") {
        Some(rest) => ("the ", rest),
        None => ("", s),
    }
}

impl Table {
    /// Read a table file (the format is described at the top of `landmark_city.txt`); lines
    /// of no known form are skipped (a test checks that every line of the shipped tables is
    /// read).
    pub fn parse(name: &'static str, source: &'static str) -> Table {
        let mut t = Table {
            name,
            question: "",
            prefix: "",
            needles: Vec::new(),
            screen: Vec::new(),
            entries: Vec::new(),
        };
        for line in source.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(q) = line.strip_prefix("question:") {
                t.question = q.trim();
            } else if let Some(p) = line.strip_prefix("prefix:") {
                t.prefix = p.trim();
            } else if let Some(n) = line.strip_prefix("needle:") {
                t.needles.push(n.trim());
            } else if let Some(s) = line.strip_prefix("screen:") {
                t.screen
                    .extend(s.split(',').map(str::trim).filter(|w| !w.is_empty()));
            } else if let Some((from, to)) = line.split_once(" | ") {
                let (from_article, from) = split_article(from.trim());
                let (to_article, to) = split_article(to.trim());
                t.entries.push(Entry {
                    from,
                    from_article,
                    to,
                    to_article,
                });
            }
        }
        t
    }

    /// The question about `entry`'s destination.
    pub fn question(&self, entry: &Entry) -> String {
        self.question
            .replace("{to}", &format!("{}{}", entry.to_article, entry.to))
    }

    /// The answer prefix for `entry`'s destination.
    pub fn prefix(&self, entry: &Entry) -> String {
        self.prefix
            .replace("{to}", &format!("{}{}", entry.to_article, entry.to))
    }

    /// Needle sentence `needle` naming `name` beside `entry`'s thing.
    pub fn sentence(&self, needle: usize, name: &str, entry: &Entry) -> String {
        self.needles[needle]
            .replace("{name}", name)
            .replace("{from}", &format!("{}{}", entry.from_article, entry.from))
    }
}

/// The content words of `text`, each cut to its stem (see the module documentation).
pub fn content_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 4)
        .map(|w| stem(&w.to_lowercase()))
        .collect()
}

/// A lower-cased word without one ending `-ing`, `-ed`, `-es` or `-s`, when four letters
/// remain (`visited` and `visits` are both `visit`).
pub fn stem(word: &str) -> String {
    for ending in ["ing", "ed", "es", "s"] {
        if let Some(rest) = word.strip_suffix(ending) {
            if rest.chars().count() >= 4 {
                return rest.to_string();
            }
        }
    }
    word.to_string()
}

/// Whether two stems clash: one begins with the other.
pub fn clash(a: &str, b: &str) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// A pair of clashing content words of `a` and `b`, if there is one.
pub fn shared_word(a: &str, b: &str) -> Option<(String, String)> {
    let wb = content_words(b);
    content_words(a).into_iter().find_map(|x| {
        wb.iter()
            .find(|y| clash(&x, y))
            .map(|y| (x.clone(), y.clone()))
    })
}

/// The tables, the people and the places' other names: what latent instances draw from.
#[derive(Debug, Clone)]
pub struct Latent {
    /// The association tables.
    pub tables: Vec<Table>,
    /// Given names a person can have.
    pub names: Vec<&'static str>,
    /// Every name the prose haystack can give a person (but common words): the closed label
    /// set answers are scored against, so naming anyone else as well is wrong, and a word that
    /// merely contains the name ("several" for Vera) is not the name.
    pub labels: Vec<&'static str>,
    aliases: BTreeMap<&'static str, Vec<&'static str>>,
}

/// One person of an instance: their name, the table row their needle uses and its sentence.
#[derive(Debug, Clone)]
pub struct Person {
    /// The person's given name.
    pub name: &'static str,
    /// The row of the instance's table.
    pub entry: usize,
    /// The needle sentence.
    pub sentence: String,
}

/// What one latent instance holds: a table, its people (the answer first) and the question.
#[derive(Debug, Clone)]
pub struct Drawn {
    /// The table every needle uses.
    pub table: usize,
    /// The people; the first is the answer, the rest lead elsewhere.
    pub people: Vec<Person>,
    /// The question about the first person's destination.
    pub question: String,
    /// The answer prefix.
    pub prefix: String,
    /// The question and the asked place's other names: what no needle may share a content
    /// word with.
    pub guarded: String,
}

impl Default for Latent {
    fn default() -> Self {
        Self::new()
    }
}

impl Latent {
    /// Read the shipped tables, names and aliases.
    pub fn new() -> Latent {
        let tables = TABLE_SOURCES
            .iter()
            .map(|&(name, src)| Table::parse(name, src))
            .collect();
        let words = |src: &'static str| {
            src.lines()
                .filter(|l| !l.trim_start().starts_with('#'))
                .flat_map(str::split_whitespace)
                .collect::<BTreeSet<&'static str>>()
        };
        let mut given = words(WOMEN);
        given.extend(words(MEN));
        let labels = given
            .iter()
            .copied()
            .filter(|n| !NOT_NAMES.contains(n))
            .collect();
        // A name inside another name (Anna in Hanna, Ivan in Ivanova) would let substring
        // scoring credit the prose's other person: such names never answer.
        let others: Vec<String> = given
            .iter()
            .chain(&words(SURNAMES))
            .map(|w| w.to_lowercase())
            .collect();
        let names = given
            .into_iter()
            .filter(|n| n.len() >= 4 && n.chars().all(|c| c.is_ascii_alphabetic()))
            .filter(|n| !NOT_NAMES.contains(n))
            .filter(|n| {
                let lower = n.to_lowercase();
                !others.iter().any(|o| *o != lower && o.contains(&lower))
            })
            .collect();
        let mut aliases: BTreeMap<&'static str, Vec<&'static str>> = BTreeMap::new();
        for line in ALIASES.lines().map(str::trim) {
            if line.starts_with('#') {
                continue;
            }
            if let Some((place, words)) = line.split_once(':') {
                aliases
                    .entry(place.trim())
                    .or_default()
                    .extend(words.split(',').map(str::trim).filter(|w| !w.is_empty()));
            }
        }
        Latent {
            tables,
            names,
            labels,
            aliases,
        }
    }

    /// The other names of `place` (`Czech` for Czechia).
    pub fn aliases(&self, place: &str) -> &[&'static str] {
        self.aliases.get(place).map_or(&[], Vec::as_slice)
    }

    /// Try to add one person to `drawn` with a row of `entries` (the gold row for the first):
    /// a fresh name, unrelated to every other (neither contains the other, so substring
    /// scoring cannot credit one for another), named nowhere else, and a sentence that shares
    /// no content word with the question.
    fn add_person(&self, drawn: &mut Drawn, entry: usize, rng: &mut Rng) -> bool {
        let t = &self.tables[drawn.table];
        let name = *rng.choose(&self.names);
        let sentence = t.sentence(rng.index(t.needles.len()), name, &t.entries[entry]);
        let lower = name.to_lowercase();
        let fresh_name = drawn.people.iter().all(|p| {
            let other = p.name.to_lowercase();
            !other.contains(&lower)
                && !lower.contains(&other)
                && !Screen::new([name]).conflicts(&p.sentence)
                && !Screen::new([p.name]).conflicts(&sentence)
        });
        let fresh_entry = drawn.people.iter().all(|p| p.entry != entry);
        if !fresh_name || !fresh_entry || shared_word(&drawn.guarded, &sentence).is_some() {
            return false;
        }
        // The name appears once in its own sentence, and not inside the thing's name.
        if Screen::new([name]).conflicts(t.entries[entry].from) {
            return false;
        }
        drawn.people.push(Person {
            name,
            entry,
            sentence,
        });
        true
    }

    /// A row of the instance's table that leads somewhere other than the asked place (every
    /// table leads to several places; `None` only if one did not).
    fn other_entry(&self, drawn: &Drawn, rng: &mut Rng) -> Option<usize> {
        let t = &self.tables[drawn.table];
        let gold_to = t.entries[drawn.people[0].entry].to;
        (0..MAX_TRIES)
            .map(|_| rng.index(t.entries.len()))
            .find(|&e| t.entries[e].to != gold_to)
    }

    /// Draw one instance of `people` people: a table, the answer's row, then the others.
    pub fn draw(&self, people: usize, rng: &mut Rng) -> Result<Drawn, GenError> {
        let table = rng.index(self.tables.len());
        let t = &self.tables[table];
        let gold = rng.index(t.entries.len());
        let e = &t.entries[gold];
        let question = t.question(e);
        let mut drawn = Drawn {
            table,
            people: Vec::new(),
            guarded: format!("{question} {}", self.aliases(e.to).join(" ")),
            question,
            prefix: t.prefix(e),
        };
        for i in 0..people {
            let placed = (0..MAX_TRIES).any(|_| {
                let entry = if i == 0 {
                    Some(gold)
                } else {
                    self.other_entry(&drawn, rng)
                };
                entry.is_some_and(|entry| self.add_person(&mut drawn, entry, rng))
            });
            if !placed {
                return Err(GenError::BadParams(format!(
                    "niah cannot find {people} people for latent needles in the {} table: keep the number of keys to {MAX_PEOPLE} or fewer",
                    t.name
                )));
            }
        }
        Ok(drawn)
    }

    /// A distractor needle for a haystack of needles: another person beside a thing of the
    /// same table that leads elsewhere, or `None` when no fresh one was found.
    pub fn distractor(
        &self,
        drawn: &Drawn,
        used: &mut BTreeSet<&'static str>,
        rng: &mut Rng,
    ) -> Option<String> {
        let t = &self.tables[drawn.table];
        let gold = &drawn.people[0];
        for _ in 0..64 {
            let entry = self.other_entry(drawn, rng)?;
            let name = *rng.choose(&self.names);
            if used.contains(name) {
                continue;
            }
            let (a, b) = (name.to_lowercase(), gold.name.to_lowercase());
            let sentence = t.sentence(rng.index(t.needles.len()), name, &t.entries[entry]);
            if a.contains(&b)
                || b.contains(&a)
                || Screen::new([gold.name]).conflicts(&sentence)
                || shared_word(&drawn.guarded, &sentence).is_some()
            {
                continue;
            }
            used.insert(name);
            return Some(sentence);
        }
        None
    }

    /// What the haystack must not mention: every person, every thing and place of the
    /// instance, the asked place's other names, every thing of any table that leads to the
    /// asked place (all of Prague's landmarks and artworks), and the table's extra terms.
    pub fn screen(&self, drawn: &Drawn) -> Screen {
        let t = &self.tables[drawn.table];
        let gold_to = t.entries[drawn.people[0].entry].to;
        let mut screen = Screen::default();
        for p in &drawn.people {
            let e = &t.entries[p.entry];
            screen.add(p.name);
            screen.add(e.from);
            screen.add(e.to);
        }
        for alias in self.aliases(gold_to) {
            screen.add(alias);
        }
        for table in &self.tables {
            for e in table.entries.iter().filter(|e| e.to == gold_to) {
                screen.add(e.from);
            }
        }
        for term in &t.screen {
            screen.add(term);
        }
        screen
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    #[test]
    fn every_line_of_every_table_is_read() {
        let latent = Latent::new();
        let mut total = 0;
        for (t, &(name, src)) in latent.tables.iter().zip(TABLE_SOURCES) {
            let rows = src
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.contains(':'))
                .count();
            assert_eq!(t.entries.len(), rows, "{name}");
            assert!(!t.question.is_empty() && !t.prefix.is_empty(), "{name}");
            assert!(t.needles.len() >= 3, "{name}");
            let froms: BTreeSet<_> = t.entries.iter().map(|e| e.from).collect();
            assert_eq!(froms.len(), t.entries.len(), "{name}: a thing listed twice");
            let tos: BTreeSet<_> = t.entries.iter().map(|e| e.to).collect();
            assert!(tos.len() >= 5, "{name}");
            total += t.entries.len();
        }
        assert!(total >= 300, "{total} rows");
        assert!(latent.names.len() >= 150, "{}", latent.names.len());
        // A thing belongs to one table and leads one way.
        let mut seen = BTreeMap::new();
        for t in &latent.tables {
            for e in &t.entries {
                assert!(seen.insert(e.from, e.to).is_none(), "{}", e.from);
            }
        }
    }

    /// The overlap rule holds for every table row under every sentence of its table (so a
    /// draw never has to give up on the answer's row): no content word shared with the
    /// question or the asked place's other names.
    #[test]
    fn no_row_shares_a_word_with_its_question() {
        let latent = Latent::new();
        for t in &latent.tables {
            for e in &t.entries {
                let guarded = format!("{} {}", t.question(e), latent.aliases(e.to).join(" "));
                for k in 0..t.needles.len() {
                    let s = t.sentence(k, "Anna", e);
                    assert_eq!(
                        shared_word(&guarded, &s),
                        None,
                        "{}: {s} / {guarded}",
                        t.name
                    );
                }
            }
        }
    }

    #[test]
    fn the_rule_catches_shared_words_and_their_forms() {
        assert!(shared_word("Who visited Prague?", "Mira visits the castle").is_some());
        assert!(shared_word("the bridges", "a bridge").is_some());
        assert!(shared_word("Who plays?", "Mira played.").is_some());
        assert!(shared_word("Can you cook?", "Mira was cooking.").is_some());
        assert_eq!(
            shared_word(
                "Which one has been to Rome?",
                "Mira ate by the Trevi Fountain."
            ),
            None
        );
        // Short words do not count.
        assert_eq!(shared_word("has a cat", "a cat has"), None);
    }

    #[test]
    fn draws_keep_people_apart_and_the_answer_unique() {
        let latent = Latent::new();
        for seed in 0..300u64 {
            let mut rng = Rng::from_seed_u64(seed, Stream::Content);
            let d = latent.draw(1 + (seed % 8) as usize, &mut rng).unwrap();
            let t = &latent.tables[d.table];
            let gold_to = t.entries[d.people[0].entry].to;
            for (i, p) in d.people.iter().enumerate() {
                assert_eq!(
                    shared_word(&d.question, &p.sentence),
                    None,
                    "{}",
                    p.sentence
                );
                assert!(i == 0 || t.entries[p.entry].to != gold_to);
                for q in &d.people[i + 1..] {
                    let (a, b) = (p.name.to_lowercase(), q.name.to_lowercase());
                    assert!(!a.contains(&b) && !b.contains(&a), "{a} {b}");
                    assert_ne!(p.entry, q.entry);
                }
            }
            let screen = latent.screen(&d);
            assert!(screen.conflicts(&format!("They met {gold_to} again.")));
        }
    }
}
