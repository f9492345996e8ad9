//! Our own English-like essay generator: the default haystack.
//!
//! Text comes from the grammar and word lists in `haystacks/`, so every seed yields prose that
//! exists nowhere else and that a model cannot have memorised. The grammar never produces digits,
//! hyphens or code-like phrases, so it cannot imitate a needle.

use std::collections::BTreeMap;

use crate::rng::Rng;

const GRAMMAR: &str = include_str!("../../haystacks/prose.grammar");
const WORD_LISTS: &[(&str, &str)] = &[
    ("noun", include_str!("../../haystacks/words/noun.txt")),
    ("people", include_str!("../../haystacks/words/people.txt")),
    (
        "adjective",
        include_str!("../../haystacks/words/adjective.txt"),
    ),
    ("adverb", include_str!("../../haystacks/words/adverb.txt")),
    ("mass", include_str!("../../haystacks/words/mass.txt")),
    ("verb", include_str!("../../haystacks/words/verb.txt")),
];

/// Sentences per paragraph, inclusive.
const PARAGRAPH_SENTENCES: (u64, u64) = (3, 8);

#[derive(Debug, Clone)]
enum Part {
    Literal(String),
    Rule(usize),
    Words(usize),
    Verb(VerbForm),
    Article,
    Topic,
}

#[derive(Debug, Clone, Copy)]
enum VerbForm {
    Base,
    Third,
    Past,
    Gerund,
}

#[derive(Debug, Clone)]
struct Verb {
    base: String,
    third: String,
    past: String,
    gerund: String,
}

/// The compiled grammar and word lists.
#[derive(Debug)]
pub struct Prose {
    rules: Vec<Vec<Vec<Part>>>,
    lists: Vec<Vec<String>>,
    verbs: Vec<Verb>,
    sentence: usize,
    topic_list: usize,
    /// xxh3-128 of the grammar and every word list: the haystack's identity in provenance.
    pub content_hash: String,
}

/// The generator's position inside an essay: which paragraph topic, how many sentences remain.
#[derive(Debug, Clone, Default)]
pub struct ProseState {
    topic: String,
    left_in_paragraph: u64,
}

impl Prose {
    /// Compile the built-in grammar. Fails only if the shipped grammar is broken (a test checks).
    pub fn builtin() -> Result<Self, String> {
        Self::compile(GRAMMAR, WORD_LISTS)
    }

    fn compile(grammar: &str, word_lists: &[(&str, &str)]) -> Result<Self, String> {
        let mut names: BTreeMap<String, usize> = BTreeMap::new();
        let mut bodies: Vec<(String, String)> = Vec::new();
        for (lineno, line) in grammar.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, body) = line
                .split_once(" = ")
                .ok_or_else(|| format!("grammar line {}: expected 'name = ...'", lineno + 1))?;
            names.insert(name.trim().to_string(), bodies.len());
            bodies.push((name.trim().to_string(), body.to_string()));
        }
        let mut lists = Vec::new();
        let mut list_ids: BTreeMap<&str, usize> = BTreeMap::new();
        let mut verbs = Vec::new();
        let mut hasher_input = String::from(grammar);
        for (name, text) in word_lists {
            hasher_input.push('\u{0}');
            hasher_input.push_str(text);
            let words: Vec<String> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_string)
                .collect();
            if *name == "verb" {
                for w in &words {
                    let (base, past) = w
                        .split_once(' ')
                        .ok_or_else(|| format!("verb line '{w}' needs 'base past'"))?;
                    verbs.push(Verb {
                        base: base.to_string(),
                        third: third_person(base),
                        past: past.to_string(),
                        gerund: gerund(base),
                    });
                }
            } else {
                list_ids.insert(name, lists.len());
                lists.push(words);
            }
        }
        let mut rules = Vec::with_capacity(bodies.len());
        for (name, body) in &bodies {
            let mut alternatives = Vec::new();
            for alt in body.split(" | ") {
                alternatives.push(
                    parse_alternative(alt.trim(), &names, &list_ids)
                        .map_err(|e| format!("grammar rule '{name}': {e}"))?,
                );
            }
            rules.push(alternatives);
        }
        let sentence = *names
            .get("sentence")
            .ok_or("grammar has no 'sentence' rule")?;
        let topic_list = *list_ids.get("noun").ok_or("no noun list")?;
        let content_hash = format!(
            "{:032x}",
            xxhash_rust::xxh3::xxh3_128(hasher_input.as_bytes())
        );
        Ok(Prose {
            rules,
            lists,
            verbs,
            sentence,
            topic_list,
            content_hash,
        })
    }

    /// The next sentence of the essay, and whether it opens a new paragraph.
    pub fn next_sentence(&self, state: &mut ProseState, rng: &mut Rng) -> (String, bool) {
        let new_paragraph = state.left_in_paragraph == 0;
        if new_paragraph {
            state.topic = rng.choose(&self.lists[self.topic_list]).clone();
            state.left_in_paragraph =
                rng.range_inclusive(PARAGRAPH_SENTENCES.0, PARAGRAPH_SENTENCES.1);
        }
        state.left_in_paragraph -= 1;
        let mut out = String::with_capacity(96);
        self.expand_rule(self.sentence, state, rng, &mut out, 0);
        (finish_sentence(&out), new_paragraph)
    }

    fn expand_rule(
        &self,
        rule: usize,
        state: &ProseState,
        rng: &mut Rng,
        out: &mut String,
        depth: usize,
    ) {
        if depth > 16 {
            return;
        }
        let alt = rng.choose(&self.rules[rule]);
        for part in alt {
            match part {
                Part::Literal(s) => out.push_str(s),
                Part::Rule(r) => self.expand_rule(*r, state, rng, out, depth + 1),
                Part::Words(l) => out.push_str(rng.choose::<String>(&self.lists[*l])),
                Part::Verb(form) => {
                    let v = rng.choose(&self.verbs);
                    out.push_str(match form {
                        VerbForm::Base => &v.base,
                        VerbForm::Third => &v.third,
                        VerbForm::Past => &v.past,
                        VerbForm::Gerund => &v.gerund,
                    })
                }
                Part::Article => out.push(ARTICLE_MARK),
                Part::Topic => out.push_str(&state.topic),
            }
        }
    }

    /// Every word the generator can emit, for checks that vocabularies stay apart.
    pub fn vocabulary(&self) -> Vec<String> {
        let mut words: Vec<String> = self.lists.iter().flatten().cloned().collect();
        for v in &self.verbs {
            words.extend([
                v.base.clone(),
                v.third.clone(),
                v.past.clone(),
                v.gerund.clone(),
            ]);
        }
        words
    }
}

const ARTICLE_MARK: char = '\u{1}';

fn parse_alternative(
    alt: &str,
    rules: &BTreeMap<String, usize>,
    lists: &BTreeMap<&str, usize>,
) -> Result<Vec<Part>, String> {
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
            "topic" => Part::Topic,
            "verb" => Part::Verb(VerbForm::Base),
            "verbs" => Part::Verb(VerbForm::Third),
            "verbed" => Part::Verb(VerbForm::Past),
            "verbing" => Part::Verb(VerbForm::Gerund),
            other => {
                if let Some(r) = rules.get(other) {
                    Part::Rule(*r)
                } else if let Some(l) = lists.get(other) {
                    Part::Words(*l)
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

/// Resolve article marks, capitalise, and make sure the sentence ends with punctuation.
fn finish_sentence(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len() + 4);
    for (i, c) in raw.char_indices() {
        if c == ARTICLE_MARK {
            let next_word = raw[i + c.len_utf8()..]
                .trim_start()
                .split(' ')
                .next()
                .unwrap_or("");
            out.push_str(if takes_an(next_word) { "an" } else { "a" });
        } else {
            out.push(c);
        }
    }
    if let Some(first) = out.chars().next() {
        let upper: String = first.to_uppercase().collect();
        out.replace_range(..first.len_utf8(), &upper);
    }
    if !out.ends_with(['.', '?', '!']) {
        out.push('.');
    }
    out
}

fn takes_an(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    if ["honest", "hour", "honor"]
        .iter()
        .any(|w| lower.starts_with(w))
    {
        return true;
    }
    if ["use", "usu", "uni", "one"]
        .iter()
        .any(|w| lower.starts_with(w))
    {
        return false;
    }
    lower.starts_with(['a', 'e', 'i', 'o', 'u'])
}

fn third_person(base: &str) -> String {
    if base.ends_with(['s', 'x', 'z', 'o']) || base.ends_with("sh") || base.ends_with("ch") {
        format!("{base}es")
    } else if base.ends_with('y') && !base[..base.len() - 1].ends_with(['a', 'e', 'i', 'o', 'u']) {
        format!("{}ies", &base[..base.len() - 1])
    } else {
        format!("{base}s")
    }
}

fn gerund(base: &str) -> String {
    if let Some(stem) = base.strip_suffix("ie") {
        format!("{stem}ying")
    } else if base.ends_with('e') && !base.ends_with("ee") && base.len() > 2 {
        format!("{}ing", &base[..base.len() - 1])
    } else {
        format!("{base}ing")
    }
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
        for _ in 0..5_000 {
            let (s, new_par) = prose.next_sentence(&mut state, &mut rng);
            paragraphs += new_par as usize;
            assert!(s.chars().next().unwrap().is_uppercase(), "{s}");
            assert!(s.ends_with(['.', '?', '!']), "{s}");
            assert!(!s.contains(ARTICLE_MARK));
            assert!(!s.contains("  "), "{s}");
            assert!(!s.chars().any(|c| c.is_ascii_digit() || c == '-'), "{s}");
            assert!(!s.contains(" a a") && !s.contains(" a o"), "{s}");
            assert!(s.split(' ').count() >= 4, "{s}");
            distinct.insert(s);
        }
        assert!(distinct.len() > 4_900, "too repetitive: {}", distinct.len());
        assert!((500..1_700).contains(&paragraphs), "{paragraphs}");
    }

    #[test]
    fn inflections() {
        assert_eq!(third_person("carry"), "carries");
        assert_eq!(third_person("watch"), "watches");
        assert_eq!(third_person("weigh"), "weighs");
        assert_eq!(gerund("share"), "sharing");
        assert_eq!(gerund("keep"), "keeping");
        assert!(takes_an("honest"));
        assert!(!takes_an("useful"));
        assert!(takes_an("orchard"));
    }

    #[test]
    fn golden_sentences() {
        let prose = Prose::builtin().unwrap();
        let mut rng = Rng::from_seed_u64(11, Stream::Haystack);
        let mut state = ProseState::default();
        let text: Vec<String> = (0..3)
            .map(|_| prose.next_sentence(&mut state, &mut rng).0)
            .collect();
        assert_eq!(text.join(" "), GOLDEN);
    }

    const GOLDEN: &str = "What would a brief courtyard look like without meaning? Some potters visit the courtyard carefully, while others protect it only once. Who decides when a courtyard has become ordinary?";
}
