//! Our own English prose generator: the default haystack.
//!
//! Text comes from the grammar and word lists in `haystacks/prose/`, so every seed yields prose
//! that exists nowhere else and that a model cannot have memorised. It reads like real text on
//! the surface a model could exploit: thousands of words at Zipf-like frequencies, people and
//! places, years, dates, counts, quantities and catalogue numbers, hyphenated compounds, and
//! sentences of many shapes and lengths, with "a"/"an" and subject–verb agreement right. Whatever
//! could compete with a needle is screened out per instance (see [`super::screen`]).

pub mod lexicon;
pub mod numbers;

use std::collections::BTreeMap;

use crate::rng::Rng;
use lexicon::{Noun, Ranked, Verb};

const GRAMMAR: &str = include_str!("../../../haystacks/prose/grammar.txt");
const NOUNS: &str = include_str!("../../../haystacks/prose/nouns.txt");
const MASS: &str = include_str!("../../../haystacks/prose/mass.txt");
const ADJECTIVES: &str = include_str!("../../../haystacks/prose/adjectives.txt");
const ADVERBS: &str = include_str!("../../../haystacks/prose/adverbs.txt");
const VERBS: &str = include_str!("../../../haystacks/prose/verbs.txt");
const IVERBS: &str = include_str!("../../../haystacks/prose/iverbs.txt");
const GIVEN: &str = include_str!("../../../haystacks/prose/given_names.txt");
const SURNAMES: &str = include_str!("../../../haystacks/prose/surnames.txt");
const PLACES: &str = include_str!("../../../haystacks/prose/places.txt");

/// Sentences per paragraph, inclusive.
const PARAGRAPH_SENTENCES: (u64, u64) = (3, 9);
/// Deepest rule nesting expanded (the grammar nests far less; this only stops a bad edit).
const MAX_DEPTH: usize = 24;

/// Marks resolved when a sentence is finished.
const ARTICLE_MARK: char = '\u{1}';
const CAP_MARK: char = '\u{2}';

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Base,
    Third,
    Past,
    Participle,
    Gerund,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Builtin {
    Noun,
    Nouns,
    Mass,
    Adj,
    Adv,
    Verb(Form),
    IVerb(Form),
    Topic,
    Topics,
    Hero,
    Home,
    Person,
    Given,
    Surname,
    Place,
    Country,
    River,
    Year,
    Decade,
    Date,
    Month,
    Weekday,
    Small,
    Count,
    Big,
    Percent,
    Quantity,
    Time,
    Record,
    Ordinal,
    Age,
    Span,
    Century,
    Price,
    Compound,
}

impl Builtin {
    fn parse(name: &str) -> Option<Builtin> {
        use Builtin::*;
        let verb = |f| Some(Verb(f));
        let iverb = |f| Some(IVerb(f));
        match name {
            "noun" => Some(Noun),
            "nouns" => Some(Nouns),
            "mass" => Some(Mass),
            "adj" => Some(Adj),
            "adv" => Some(Adv),
            "verb" => verb(Form::Base),
            "verbs" => verb(Form::Third),
            "verbed" => verb(Form::Past),
            "verben" => verb(Form::Participle),
            "verbing" => verb(Form::Gerund),
            "iverb" => iverb(Form::Base),
            "iverbs" => iverb(Form::Third),
            "iverbed" => iverb(Form::Past),
            "iverben" => iverb(Form::Participle),
            "iverbing" => iverb(Form::Gerund),
            "topic" => Some(Topic),
            "topics" => Some(Topics),
            "hero" => Some(Hero),
            "home" => Some(Home),
            "person" => Some(Person),
            "given" => Some(Given),
            "surname" => Some(Surname),
            "place" => Some(Place),
            "country" => Some(Country),
            "river" => Some(River),
            "year" => Some(Year),
            "decade" => Some(Decade),
            "date" => Some(Date),
            "month" => Some(Month),
            "weekday" => Some(Weekday),
            "n" => Some(Small),
            "num" => Some(Count),
            "big" => Some(Big),
            "pct" => Some(Percent),
            "qty" => Some(Quantity),
            "time" => Some(Time),
            "record" => Some(Record),
            "ordinal" => Some(Ordinal),
            "age" => Some(Age),
            "span" => Some(Span),
            "century" => Some(Century),
            "price" => Some(Price),
            "compound" => Some(Compound),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
enum Part {
    Literal(String),
    Rule(usize),
    Builtin(Builtin),
    Article,
    Capital,
}

/// The words the generator draws from.
#[derive(Debug)]
struct Lexicon {
    nouns: Ranked<Noun>,
    mass: Ranked<String>,
    adjectives: Ranked<String>,
    adverbs: Ranked<String>,
    verbs: Ranked<Verb>,
    iverbs: Ranked<Verb>,
    given: Ranked<String>,
    surnames: Vec<String>,
    starts: Vec<String>,
    ends: Vec<String>,
    countries: Vec<String>,
    rivers: Vec<String>,
}

fn owned(text: &str) -> Vec<String> {
    lexicon::entries(text)
        .into_iter()
        .map(str::to_string)
        .collect()
}

impl Lexicon {
    fn load() -> Result<Self, String> {
        let mut sections: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for line in PLACES.lines().filter(|l| !l.starts_with('#')) {
            if let Some((name, words)) = line.split_once(':') {
                sections.insert(name.trim(), owned(words));
            }
        }
        let mut section = |name: &str| {
            sections
                .remove(name)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("places.txt has no '{name}:' line"))
        };
        let nonempty = |name: &str, v: Vec<String>| {
            if v.is_empty() {
                Err(format!("word list '{name}' is empty"))
            } else {
                Ok(Ranked::new(v))
            }
        };
        let nouns = lexicon::nouns(NOUNS);
        let verbs = lexicon::verbs(VERBS)?;
        let iverbs = lexicon::verbs(IVERBS)?;
        if nouns.is_empty() || verbs.is_empty() || iverbs.is_empty() {
            return Err("a noun or verb list is empty".into());
        }
        Ok(Lexicon {
            nouns: Ranked::new(nouns),
            mass: nonempty("mass", owned(MASS))?,
            adjectives: nonempty("adjectives", owned(ADJECTIVES))?,
            adverbs: nonempty("adverbs", owned(ADVERBS))?,
            verbs: Ranked::new(verbs),
            iverbs: Ranked::new(iverbs),
            given: nonempty("given names", owned(GIVEN))?,
            surnames: owned(SURNAMES),
            starts: section("starts")?,
            ends: section("ends")?,
            countries: section("countries")?,
            rivers: section("rivers")?,
        })
    }

    /// A family name: from the list, or made from place parts ("Thornbury").
    fn surname(&self, rng: &mut Rng, out: &mut String) {
        if !self.surnames.is_empty() && rng.chance(1, 2) {
            out.push_str(rng.choose::<String>(&self.surnames));
        } else {
            self.compose(rng, out);
        }
    }

    fn compose(&self, rng: &mut Rng, out: &mut String) {
        out.push_str(rng.choose::<String>(&self.starts));
        out.push_str(rng.choose::<String>(&self.ends));
    }

    /// A town or village: "Ashford", "Upper Millbury", "Kelwick Green".
    fn place(&self, rng: &mut Rng, out: &mut String) {
        match rng.below(10) {
            0 => out.push_str("Upper "),
            1 => out.push_str("Little "),
            _ => {}
        }
        self.compose(rng, out);
        if rng.chance(1, 12) {
            out.push_str(" Green");
        }
    }

    /// Someone named: "Anna Thornbury", "Dr Hadley", "Ruth".
    fn person(&self, rng: &mut Rng, out: &mut String) {
        match rng.below(8) {
            0 => {
                out.push_str(["Mrs ", "Mr ", "Dr ", "Miss "][rng.index(4)]);
                self.surname(rng, out);
            }
            1 => out.push_str(self.given.pick(rng)),
            _ => {
                out.push_str(self.given.pick(rng));
                out.push(' ');
                self.surname(rng, out);
            }
        }
    }
}

/// The compiled grammar and vocabulary.
#[derive(Debug)]
pub struct Prose {
    rules: Vec<Vec<Vec<Part>>>,
    lex: Lexicon,
    sentence: usize,
    /// xxh3-128 of the grammar and every word list: the haystack's identity in provenance.
    pub content_hash: String,
}

/// The generator's position inside an essay: the paragraph's topic, person and town, and how
/// many sentences remain in it.
#[derive(Debug, Clone, Default)]
pub struct ProseState {
    topic: usize,
    hero: String,
    home: String,
    left_in_paragraph: u64,
}

impl Prose {
    /// Compile the built-in grammar. Fails only if the shipped files are broken (a test checks).
    pub fn builtin() -> Result<Self, String> {
        let lex = Lexicon::load()?;
        let mut names: BTreeMap<String, usize> = BTreeMap::new();
        let mut bodies: Vec<(String, String)> = Vec::new();
        for (lineno, line) in GRAMMAR.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, body) = line
                .split_once(" = ")
                .or_else(|| line.split_once(" ="))
                .ok_or_else(|| format!("grammar line {}: expected 'name = ...'", lineno + 1))?;
            if Builtin::parse(name.trim()).is_some() {
                return Err(format!(
                    "grammar rule '{}' has a built-in's name",
                    name.trim()
                ));
            }
            names.insert(name.trim().to_string(), bodies.len());
            bodies.push((name.trim().to_string(), body.to_string()));
        }
        let mut rules = Vec::with_capacity(bodies.len());
        for (name, body) in &bodies {
            let alternatives = body
                .split('|')
                .map(|alt| parse_alternative(alt.trim(), &names))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("grammar rule '{name}': {e}"))?;
            rules.push(alternatives);
        }
        let sentence = *names
            .get("sentence")
            .ok_or("grammar has no 'sentence' rule")?;
        let mut hashed = String::from(GRAMMAR);
        for text in [
            NOUNS, MASS, ADJECTIVES, ADVERBS, VERBS, IVERBS, GIVEN, SURNAMES, PLACES,
        ] {
            hashed.push('\u{0}');
            hashed.push_str(text);
        }
        let content_hash = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(hashed.as_bytes()));
        Ok(Prose {
            rules,
            lex,
            sentence,
            content_hash,
        })
    }

    /// The next sentence of the essay, and whether it opens a new paragraph.
    pub fn next_sentence(&self, state: &mut ProseState, rng: &mut Rng) -> (String, bool) {
        let new_paragraph = state.left_in_paragraph == 0;
        if new_paragraph {
            state.topic = self.lex.nouns.pick_index(rng);
            state.hero = self.lex.given.pick(rng).clone();
            state.home.clear();
            self.lex.place(rng, &mut state.home);
            state.left_in_paragraph =
                rng.range_inclusive(PARAGRAPH_SENTENCES.0, PARAGRAPH_SENTENCES.1);
        }
        state.left_in_paragraph -= 1;
        let mut raw = String::with_capacity(160);
        self.expand(self.sentence, state, rng, &mut raw, 0);
        (finish_sentence(&raw), new_paragraph)
    }

    fn expand(
        &self,
        rule: usize,
        state: &ProseState,
        rng: &mut Rng,
        out: &mut String,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        let alt = rng.choose(&self.rules[rule]);
        for part in alt {
            match part {
                Part::Literal(s) => out.push_str(s),
                Part::Rule(r) => self.expand(*r, state, rng, out, depth + 1),
                Part::Builtin(b) => self.draw(*b, state, rng, out),
                Part::Article => out.push(ARTICLE_MARK),
                Part::Capital => out.push(CAP_MARK),
            }
        }
    }

    fn draw(&self, b: Builtin, state: &ProseState, rng: &mut Rng, out: &mut String) {
        let lex = &self.lex;
        fn verb_form(v: &Verb, f: Form) -> &str {
            match f {
                Form::Base => &v.base,
                Form::Third => &v.third,
                Form::Past => &v.past,
                Form::Participle => &v.participle,
                Form::Gerund => &v.gerund,
            }
        }
        match b {
            Builtin::Noun => out.push_str(&lex.nouns.pick(rng).one),
            Builtin::Nouns => out.push_str(&lex.nouns.pick(rng).many),
            Builtin::Mass => out.push_str(lex.mass.pick(rng)),
            Builtin::Adj => out.push_str(lex.adjectives.pick(rng)),
            Builtin::Adv => out.push_str(lex.adverbs.pick(rng)),
            Builtin::Verb(f) => out.push_str(verb_form(lex.verbs.pick(rng), f)),
            Builtin::IVerb(f) => out.push_str(verb_form(lex.iverbs.pick(rng), f)),
            Builtin::Topic => out.push_str(&lex.nouns.items[state.topic].one),
            Builtin::Topics => out.push_str(&lex.nouns.items[state.topic].many),
            Builtin::Hero => out.push_str(&state.hero),
            Builtin::Home => out.push_str(&state.home),
            Builtin::Person => lex.person(rng, out),
            Builtin::Given => out.push_str(lex.given.pick(rng)),
            Builtin::Surname => lex.surname(rng, out),
            Builtin::Place => lex.place(rng, out),
            Builtin::Country => out.push_str(rng.choose::<String>(&lex.countries)),
            Builtin::River => out.push_str(rng.choose::<String>(&lex.rivers)),
            Builtin::Year => out.push_str(&numbers::year(rng).to_string()),
            Builtin::Decade => numbers::decade(rng, out),
            Builtin::Date => numbers::date(rng, out),
            Builtin::Month => out.push_str(numbers::MONTHS[rng.index(12)]),
            Builtin::Weekday => out.push_str(numbers::WEEKDAYS[rng.index(7)]),
            Builtin::Small => numbers::small(rng, out),
            Builtin::Count => numbers::count(rng, out),
            Builtin::Big => numbers::big(rng, out),
            Builtin::Percent => numbers::percent(rng, out),
            Builtin::Quantity => numbers::quantity(rng, out),
            Builtin::Time => numbers::time(rng, out),
            Builtin::Record => numbers::record(rng, out),
            Builtin::Ordinal => numbers::ordinal(rng, out),
            Builtin::Age => numbers::age(rng, out),
            Builtin::Span => numbers::span(rng, out),
            Builtin::Century => numbers::century(rng, out),
            Builtin::Price => numbers::price(rng, out),
            Builtin::Compound => numbers::compound(rng, out),
        }
    }

    /// Every word form the generator can draw from its lists (not numbers or composed names),
    /// for checks that vocabularies stay apart.
    pub fn vocabulary(&self) -> Vec<String> {
        let lex = &self.lex;
        let mut words: Vec<String> = Vec::new();
        for n in &lex.nouns.items {
            words.extend([n.one.clone(), n.many.clone()]);
        }
        for list in [&lex.mass, &lex.adjectives, &lex.adverbs, &lex.given] {
            words.extend(list.items.iter().cloned());
        }
        for v in lex.verbs.items.iter().chain(&lex.iverbs.items) {
            words.extend([
                v.base.clone(),
                v.third.clone(),
                v.past.clone(),
                v.participle.clone(),
                v.gerund.clone(),
            ]);
        }
        words.extend(lex.surnames.iter().cloned());
        words.extend(lex.countries.iter().cloned());
        words.extend(lex.rivers.iter().cloned());
        words
    }
}

fn parse_alternative(alt: &str, rules: &BTreeMap<String, usize>) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    let mut rest = alt;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            parts.push(Part::Literal(rest[..open].to_string()));
        }
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| format!("unclosed '{{' in '{alt}'"))?
            + open;
        let name = &rest[open + 1..close];
        parts.push(match name {
            "a" => Part::Article,
            "^" => Part::Capital,
            other => {
                if let Some(r) = rules.get(other) {
                    Part::Rule(*r)
                } else if let Some(b) = Builtin::parse(other) {
                    Part::Builtin(b)
                } else {
                    return Err(format!("unknown name '{{{other}}}'"));
                }
            }
        });
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest.to_string()));
    }
    Ok(parts)
}

/// Resolve article and capital marks, tidy spaces (none doubled, none before punctuation),
/// capitalise the first letter, and make sure the sentence ends with punctuation.
fn finish_sentence(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len() + 4);
    let mut capital = true;
    let mut i = 0usize;
    while let Some(c) = raw[i..].chars().next() {
        let after = i + c.len_utf8();
        match c {
            ARTICLE_MARK => {
                let next_word = raw[after..]
                    .trim_start_matches([' ', CAP_MARK, ARTICLE_MARK])
                    .split([' ', ',', '.'])
                    .next()
                    .unwrap_or("");
                let article = if lexicon::takes_an(next_word) {
                    "an"
                } else {
                    "a"
                };
                if capital {
                    out.push_str(if article == "an" { "An" } else { "A" });
                    capital = false;
                } else {
                    out.push_str(article);
                }
            }
            CAP_MARK => capital = true,
            ' ' => {
                let next = raw[after..].chars().next();
                let skip = out.is_empty()
                    || out.ends_with(' ')
                    || out.ends_with('"') && out.matches('"').count() % 2 == 1
                    || matches!(next, None | Some(' ' | ',' | '.' | ';' | ':' | '?' | '!'))
                    || next == Some('"') && out.matches('"').count() % 2 == 1;
                if !skip {
                    out.push(' ');
                }
            }
            _ if capital && c.is_alphabetic() => {
                out.extend(c.to_uppercase());
                capital = false;
            }
            _ if !capital => {
                // Up to the next space or mark nothing changes state (a character is copied
                // as it is): copy the run whole. The three are ASCII, so a byte search finds
                // a character boundary.
                let run = raw.as_bytes()[i..]
                    .iter()
                    .position(|&b| b == b' ' || b == ARTICLE_MARK as u8 || b == CAP_MARK as u8)
                    .unwrap_or(raw.len() - i);
                out.push_str(&raw[i..i + run]);
                i += run;
                continue;
            }
            _ => {
                if c.is_alphanumeric() {
                    capital = false;
                }
                out.push(c);
            }
        }
        i = after;
    }
    if !out.ends_with(['.', '?', '!', '"']) {
        out.push('.');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    #[test]
    fn builtin_grammar_compiles_and_reads_like_prose() {
        let prose = Prose::builtin().unwrap();
        let mut rng = Rng::from_seed_u64(3, Stream::Haystack);
        let mut state = ProseState::default();
        let mut paragraphs = 0;
        let mut distinct = std::collections::BTreeSet::new();
        for _ in 0..20_000 {
            let (s, new_par) = prose.next_sentence(&mut state, &mut rng);
            paragraphs += new_par as usize;
            let first = s.chars().find(|c| c.is_alphanumeric()).unwrap();
            assert!(first.is_uppercase() || first.is_ascii_digit(), "{s}");
            assert!(s.ends_with(['.', '?', '!', '"']), "{s}");
            assert!(!s.contains([ARTICLE_MARK, CAP_MARK]), "{s}");
            assert!(
                !s.contains("  ") && !s.contains(" ,") && !s.contains(" ."),
                "{s}"
            );
            assert!(s.split(' ').count() >= 2, "{s}");
            distinct.insert(s);
        }
        assert!(
            distinct.len() > 19_500,
            "too repetitive: {}",
            distinct.len()
        );
        assert!((2_000..6_000).contains(&paragraphs), "{paragraphs}");
    }

    #[test]
    fn finishing_resolves_marks_and_spaces() {
        let raw = format!("{ARTICLE_MARK} orchard  , then {ARTICLE_MARK} 8-mile road .");
        assert_eq!(finish_sentence(&raw), "An orchard, then an 8-mile road.");
        let raw = format!("\"{CAP_MARK}{ARTICLE_MARK} house  stood \", said Ann .");
        assert_eq!(finish_sentence(&raw), "\"A house stood\", said Ann.");
    }

    #[test]
    fn golden_sentences() {
        let prose = Prose::builtin().unwrap();
        let mut rng = Rng::from_seed_u64(11, Stream::Haystack);
        let mut state = ProseState::default();
        let text: Vec<String> = (0..4)
            .map(|_| prose.next_sentence(&mut state, &mut rng).0)
            .collect();
        assert_eq!(text.join(" "), GOLDEN);
    }

    const GOLDEN: &str = "The old vans which the hamlet of the house had seen see 18 tablecloths with a hard glove. Entry 93630 in the land register finds a high bean from Holgate. The old visitors which a hot house had measured hold the old queens with the common roads. The clouds of the house find Anna with water.";
}
