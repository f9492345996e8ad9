//! The prose grammar: rules of weighted alternatives, compiled once from `grammar.txt`.
//!
//! A rule `name.style` replaces `name` in writings of that style, so one grammar writes the
//! neutral haystack and every register; inside a replacement, `{name}` means the plain rule, so a
//! style can keep the plain alternatives and add its own.

use std::collections::BTreeMap;

use super::writings::Style;
use crate::rng::Rng;

/// A verb form a built-in asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// "carry".
    Base,
    /// "carries" ("carrieth" in archaic writing).
    Third,
    /// "carried".
    Past,
    /// "carried", "written".
    Participle,
    /// "carrying".
    Gerund,
}

/// Where a word built-in draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pool {
    /// The general lists, now and then the topic's.
    Mixed,
    /// The paragraph's topic only.
    Topic,
}

/// A name the generator fills in itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    Noun(Pool),
    Nouns(Pool),
    Mass(Pool),
    Adj(Pool),
    Adv,
    Verb(Pool, Form),
    IVerb(Pool, Form),
    TopicPerson,
    TopicPersons,
    TopicPlace,
    TopicPlaces,
    TopicName,
    Focus,
    Focuses,
    Hero,
    He,
    Him,
    His,
    Other,
    OtherHe,
    OtherHim,
    OtherHis,
    Writer,
    WriterGiven,
    Reader,
    ReaderTitle,
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

fn verb_form(suffix: &str) -> Option<Form> {
    Some(match suffix {
        "" => Form::Base,
        "s" => Form::Third,
        "ed" => Form::Past,
        "en" => Form::Participle,
        "ing" => Form::Gerund,
        _ => return None,
    })
}

impl Builtin {
    /// The built-in a `{name}` stands for, if any.
    pub fn parse(name: &str) -> Option<Builtin> {
        use Builtin::*;
        use Pool::{Mixed, Topic};
        if let Some(rest) = name.strip_prefix("tiverb") {
            return verb_form(rest).map(|f| IVerb(Topic, f));
        }
        if let Some(rest) = name.strip_prefix("iverb") {
            return verb_form(rest).map(|f| IVerb(Mixed, f));
        }
        if let Some(rest) = name.strip_prefix("tverb") {
            return verb_form(rest).map(|f| Verb(Topic, f));
        }
        if let Some(rest) = name.strip_prefix("verb") {
            return verb_form(rest).map(|f| Verb(Mixed, f));
        }
        Some(match name {
            "noun" => Noun(Mixed),
            "nouns" => Nouns(Mixed),
            "mass" => Mass(Mixed),
            "adj" => Adj(Mixed),
            "adv" => Adv,
            "tnoun" => Noun(Topic),
            "tnouns" => Nouns(Topic),
            "tmass" => Mass(Topic),
            "tadj" => Adj(Topic),
            "tperson" => TopicPerson,
            "tpersons" => TopicPersons,
            "tplace" => TopicPlace,
            "tplaces" => TopicPlaces,
            "tname" => TopicName,
            "focus" => Focus,
            "focuses" => Focuses,
            "hero" => Hero,
            "he" => He,
            "him" => Him,
            "his" => His,
            "other" => Other,
            "ohe" => OtherHe,
            "ohim" => OtherHim,
            "ohis" => OtherHis,
            "writer" => Writer,
            "wgiven" => WriterGiven,
            "reader" => Reader,
            "rtitle" => ReaderTitle,
            "home" => Home,
            "person" => Person,
            "given" => Given,
            "surname" => Surname,
            "place" => Place,
            "country" => Country,
            "river" => River,
            "year" => Year,
            "decade" => Decade,
            "date" => Date,
            "month" => Month,
            "weekday" => Weekday,
            "n" => Small,
            "num" => Count,
            "big" => Big,
            "pct" => Percent,
            "qty" => Quantity,
            "time" => Time,
            "record" => Record,
            "ordinal" => Ordinal,
            "age" => Age,
            "span" => Span,
            "century" => Century,
            "price" => Price,
            "compound" => Compound,
            _ => return None,
        })
    }
}

/// One piece of an alternative.
#[derive(Debug, Clone)]
pub enum Part {
    /// Text copied as it is.
    Literal(String),
    /// A rule, replaced by the writing's style if the style has its own.
    Rule(usize),
    /// A rule as written, whatever the style (a style's rule naming the rule it replaces).
    Plain(usize),
    /// A built-in draw.
    Builtin(Builtin),
    /// "a" or "an", by the sound of the next word.
    Article,
    /// Capitalise the next letter.
    Capital,
}

/// A rule: alternatives with cumulative weights.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The alternatives, each a sequence of parts.
    pub alternatives: Vec<Vec<Part>>,
    /// Cumulative weights, one per alternative.
    cum: Vec<u64>,
    /// Whether every alternative weighs the same (a draw needs no search).
    uniform: bool,
}

impl Rule {
    /// One alternative, drawn by weight.
    pub fn choose(&self, rng: &mut Rng) -> &[Part] {
        if self.uniform {
            // The same draw as the search below makes when every weight is 1.
            return &self.alternatives[rng.index(self.alternatives.len())];
        }
        let total = *self.cum.last().unwrap_or(&1);
        let x = rng.below(total);
        let i = self
            .cum
            .partition_point(|&c| c <= x)
            .min(self.alternatives.len() - 1);
        &self.alternatives[i]
    }
}

/// Every rule, with each style's replacements.
#[derive(Debug)]
pub struct Grammar {
    /// The rules, in file order.
    pub rules: Vec<Rule>,
    /// Rule indices by name (plain names and `name.style`).
    pub names: BTreeMap<String, usize>,
    /// For each style (in [`Style::ALL`] order) the rule that replaces each rule.
    by_style: Vec<Vec<usize>>,
}

impl Grammar {
    /// Compile grammar text. Errors name the line or rule at fault.
    pub fn compile(text: &str) -> Result<Grammar, String> {
        let mut names: BTreeMap<String, usize> = BTreeMap::new();
        let mut bodies: Vec<(String, String)> = Vec::new();
        for (lineno, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, body) = line
                .split_once(" = ")
                .or_else(|| line.split_once(" ="))
                .ok_or_else(|| format!("grammar line {}: expected 'name = ...'", lineno + 1))?;
            let name = name.trim();
            let base = name.split('.').next().unwrap_or(name);
            if Builtin::parse(base).is_some() || base == "a" {
                return Err(format!("grammar rule '{name}' has a built-in's name"));
            }
            if let Some(style) = name.split_once('.').map(|(_, s)| s) {
                if style.parse::<Style>().is_err() {
                    return Err(format!(
                        "grammar rule '{name}': '{style}' is not a style ({})",
                        Style::expected()
                    ));
                }
            }
            if names.insert(name.to_string(), bodies.len()).is_some() {
                return Err(format!("grammar rule '{name}' is defined twice"));
            }
            bodies.push((name.to_string(), body.to_string()));
        }
        let mut rules = Vec::with_capacity(bodies.len());
        for (name, body) in &bodies {
            let own_base = name.split_once('.').map(|(b, _)| b);
            let mut alternatives = Vec::new();
            let mut cum = Vec::new();
            let mut total = 0u64;
            for alt in body.split('|') {
                let (weight, alt) =
                    weight_of(alt.trim()).map_err(|e| format!("grammar rule '{name}': {e}"))?;
                let parts = parse_alternative(alt, &names, own_base)
                    .map_err(|e| format!("grammar rule '{name}': {e}"))?;
                total += weight;
                alternatives.push(parts);
                cum.push(total);
            }
            let uniform = cum.iter().enumerate().all(|(i, &c)| c == i as u64 + 1);
            rules.push(Rule {
                alternatives,
                cum,
                uniform,
            });
        }
        let mut by_style = Vec::with_capacity(Style::ALL.len());
        for style in Style::ALL {
            let mut map: Vec<usize> = (0..rules.len()).collect();
            for (name, &i) in &names {
                if let Some((base, s)) = name.split_once('.') {
                    if s == style.as_str() {
                        let plain = *names.get(base).ok_or_else(|| {
                            format!("grammar rule '{name}' replaces '{base}', which is not defined")
                        })?;
                        map[plain] = i;
                    }
                }
            }
            by_style.push(map);
        }
        Ok(Grammar {
            rules,
            names,
            by_style,
        })
    }

    /// The rule named `name`.
    pub fn rule(&self, name: &str) -> Result<usize, String> {
        self.names
            .get(name)
            .copied()
            .ok_or_else(|| format!("grammar has no '{name}' rule"))
    }

    /// The rule that stands for `rule` in writing of `style` (itself when the style has none).
    pub fn styled(&self, rule: usize, style: Option<Style>) -> usize {
        match style {
            None => rule,
            Some(s) => {
                let k = Style::ALL.iter().position(|&x| x == s).unwrap_or(0);
                self.by_style[k][rule]
            }
        }
    }
}

/// An alternative's weight: a leading `[N]`, or 1.
fn weight_of(alt: &str) -> Result<(u64, &str), String> {
    let Some(rest) = alt.strip_prefix('[') else {
        return Ok((1, alt));
    };
    let (n, body) = rest
        .split_once(']')
        .ok_or_else(|| format!("unclosed '[' in '{alt}'"))?;
    let w: u64 = n
        .trim()
        .parse()
        .map_err(|_| format!("weight '[{n}]' is not a whole number"))?;
    if w == 0 || w > 1000 {
        return Err(format!("weight [{w}] must be 1 to 1000"));
    }
    Ok((w, body.trim_start()))
}

fn parse_alternative(
    alt: &str,
    rules: &BTreeMap<String, usize>,
    own_base: Option<&str>,
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
            "^" => Part::Capital,
            other => {
                if let Some(&r) = rules.get(other) {
                    if Some(other) == own_base {
                        Part::Plain(r)
                    } else {
                        Part::Rule(r)
                    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    #[test]
    fn weights_styles_and_plain_references_compile() {
        let g = Grammar::compile(
            "s = [3] {x} | y\nx = plain\nx.archaic = [2] {x} | olde\ns.formal = formal {s}",
        )
        .unwrap();
        let s = g.rule("s").unwrap();
        let x = g.rule("x").unwrap();
        let xa = g.rule("x.archaic").unwrap();
        assert_eq!(g.styled(x, Some(Style::Archaic)), xa);
        assert_eq!(g.styled(x, Some(Style::Formal)), x);
        assert_eq!(g.styled(x, None), x);
        // Inside x.archaic, {x} is the plain rule, so a style cannot recurse into itself.
        assert!(matches!(g.rules[xa].alternatives[0][0], Part::Plain(r) if r == x));
        assert!(
            matches!(g.rules[g.rule("s.formal").unwrap()].alternatives[0][1], Part::Plain(r) if r == s)
        );
        // Weights: the first alternative of s three times as likely as the second.
        let mut rng = Rng::from_seed_u64(4, Stream::Haystack);
        let firsts = (0..4000)
            .filter(|_| matches!(g.rules[s].choose(&mut rng)[0], Part::Rule(_)))
            .count();
        assert!((2800..3200).contains(&firsts), "{firsts}");
    }

    #[test]
    fn bad_grammars_are_refused_with_the_rule_named() {
        for (text, needle) in [
            ("s = {nope}", "unknown name"),
            ("s = [0] a", "weight"),
            ("s = [x] a", "weight"),
            ("s.loud = a", "not a style"),
            ("s = a\ns = b", "defined twice"),
            ("noun = a", "built-in"),
            ("x.formal = a", "not defined"),
            ("s = {a", "unclosed"),
        ] {
            let e = Grammar::compile(text).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }
}
