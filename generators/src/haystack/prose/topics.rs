//! Topics: what a paragraph of the haystack, or a piece of writing, is about.
//!
//! Each topic has its own words (`haystacks/prose/topics.txt`). A haystack paragraph takes one
//! topic and mixes its words into the general ones, so a few content words recur within the
//! paragraph and then give way to the next topic's, as in real text; a piece of writing keeps
//! its topic throughout.

use super::lexicon::{self, Noun, Ranked, Verb};

choice! {
    /// A topic of the prose engine (the `topic` of a writing request).
    pub enum Topic {
        /// Seeds, beds and tools.
        Gardening = "gardening",
        /// Kitchens and recipes.
        Cooking = "cooking",
        /// Journeys, tickets and luggage.
        Travel = "travel",
        /// Boats, tides and harbours.
        Sea = "sea",
        /// Stars, planets and telescopes.
        Astronomy = "astronomy",
        /// Songs, instruments and concerts.
        Music = "music",
        /// Bicycles, hills and races.
        Cycling = "cycling",
        /// Trains, stations and signals.
        Railways = "railways",
        /// Brushes, canvases and galleries.
        Painting = "painting",
        /// Rain, wind and forecasts.
        Weather = "weather",
        /// Nests, song and migration.
        Birds = "birds",
        /// Beans, cups and cafes.
        Coffee = "coffee",
        /// Novels, shelves and readers.
        Books = "books",
        /// Peaks, ridges and trails.
        Mountains = "mountains",
        /// Buildings, arches and plans.
        Architecture = "architecture",
        /// Programs, servers and keyboards.
        Computers = "computers",
    }
}

/// Weights inside a topic's lists fall gently: every word of a topic is meant to turn up.
const TOPIC_ZIPF_OFFSET: f64 = 6.0;
const TOPIC_ZIPF_EXPONENT: f64 = 1.0;

/// One topic's words.
#[derive(Debug)]
pub struct TopicWords {
    /// How a sentence names the topic ("the sea").
    pub name: String,
    /// Countable things.
    pub nouns: Ranked<Noun>,
    /// Uncountable things.
    pub mass: Ranked<String>,
    /// Describing words.
    pub adjectives: Ranked<String>,
    /// Transitive verbs.
    pub verbs: Ranked<Verb>,
    /// Intransitive verbs.
    pub iverbs: Ranked<Verb>,
    /// Who deals with the topic.
    pub people: Ranked<Noun>,
    /// Where it happens.
    pub places: Ranked<Noun>,
}

impl TopicWords {
    /// Every word form of the topic, for vocabulary checks.
    pub fn forms(&self) -> Vec<String> {
        let mut out = vec![self.name.clone()];
        for n in self
            .nouns
            .items
            .iter()
            .chain(&self.people.items)
            .chain(&self.places.items)
        {
            out.extend([n.one.clone(), n.many.clone()]);
        }
        out.extend(self.mass.items.iter().cloned());
        out.extend(self.adjectives.items.iter().cloned());
        for v in self.verbs.items.iter().chain(&self.iverbs.items) {
            out.extend(v.forms());
        }
        out
    }
}

fn ranked<T>(items: Vec<T>) -> Ranked<T> {
    Ranked::zipf(items, TOPIC_ZIPF_OFFSET, TOPIC_ZIPF_EXPONENT)
}

/// Parse `topics.txt`: one [`TopicWords`] per [`Topic`], in [`Topic::ALL`] order. Every topic
/// must have a section with every field, and every section must be a topic.
pub fn parse(text: &str) -> Result<Vec<TopicWords>, String> {
    let mut sections: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for (lineno, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            sections.push((name.trim().to_string(), Vec::new()));
            continue;
        }
        let (field, words) = line
            .split_once(':')
            .ok_or_else(|| format!("topics.txt line {}: expected 'field: words'", lineno + 1))?;
        let section = sections
            .last_mut()
            .ok_or_else(|| format!("topics.txt line {}: a field before any [topic]", lineno + 1))?;
        section
            .1
            .push((field.trim().to_string(), words.trim().to_string()));
    }
    for (name, _) in &sections {
        name.parse::<Topic>()
            .map_err(|e| format!("topics.txt section [{name}]: {e}"))?;
    }
    Topic::ALL
        .iter()
        .map(|topic| {
            let fields = &sections
                .iter()
                .find(|(n, _)| n == topic.as_str())
                .ok_or_else(|| format!("topics.txt has no [{topic}] section"))?
                .1;
            let field = |key: &str| -> Result<String, String> {
                let joined: Vec<&str> = fields
                    .iter()
                    .filter(|(k, _)| k == key)
                    .map(|(_, v)| v.as_str())
                    .collect();
                if joined.is_empty() {
                    return Err(format!("topics.txt [{topic}] has no '{key}:' line"));
                }
                Ok(joined.join("\n"))
            };
            let nonempty = |key: &str, n: usize| {
                if n == 0 {
                    Err(format!("topics.txt [{topic}] '{key}:' is empty"))
                } else {
                    Ok(())
                }
            };
            let nouns = lexicon::nouns(&field("nouns")?);
            let people = lexicon::nouns(&field("people")?);
            let places = lexicon::nouns(&field("places")?);
            let mass: Vec<String> = lexicon::entries(&field("mass")?)
                .into_iter()
                .map(str::to_string)
                .collect();
            let adjectives: Vec<String> = lexicon::entries(&field("adjectives")?)
                .into_iter()
                .map(str::to_string)
                .collect();
            let verbs = lexicon::verbs(&field("verbs")?)?;
            let iverbs = lexicon::verbs(&field("iverbs")?)?;
            for (key, n) in [
                ("nouns", nouns.len()),
                ("people", people.len()),
                ("places", places.len()),
                ("mass", mass.len()),
                ("adjectives", adjectives.len()),
                ("verbs", verbs.len()),
                ("iverbs", iverbs.len()),
            ] {
                nonempty(key, n)?;
            }
            Ok(TopicWords {
                name: field("name")?,
                nouns: ranked(nouns),
                mass: ranked(mass),
                adjectives: ranked(adjectives),
                verbs: ranked(verbs),
                iverbs: ranked(iverbs),
                people: ranked(people),
                places: ranked(places),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHIPPED: &str = include_str!("../../../haystacks/prose/topics.txt");

    #[test]
    fn every_topic_has_a_full_vocabulary_of_its_own() {
        let topics = parse(SHIPPED).unwrap();
        assert_eq!(topics.len(), Topic::ALL.len());
        assert!(Topic::ALL.len() >= 13);
        for (t, w) in Topic::ALL.iter().zip(&topics) {
            assert!(
                w.nouns.items.len() >= 20,
                "{t}: {} nouns",
                w.nouns.items.len()
            );
            assert!(w.forms().len() >= 90, "{t}: {} forms", w.forms().len());
        }
    }

    #[test]
    fn malformed_topic_files_are_refused() {
        assert!(parse("[gardening]\nname: x")
            .unwrap_err()
            .contains("no 'nouns:'"));
        assert!(parse("[knitting]\nname: x")
            .unwrap_err()
            .contains("knitting"));
        assert!(parse("name: x").unwrap_err().contains("before any"));
        assert!(parse("[gardening]\njunk")
            .unwrap_err()
            .contains("field: words"));
        let missing = SHIPPED.replace("[coffee]", "[coffee-gone]");
        assert!(parse(&missing).is_err());
    }
}
