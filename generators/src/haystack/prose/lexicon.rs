//! The prose haystack's vocabulary: word lists with their inflections and Zipf-like weights.
//!
//! Lists are ordered roughly commonest first, and a word's weight falls with its rank as in
//! natural text (Zipf–Mandelbrot), so some words recur more than others while thousands turn up
//! now and then — the vocabulary growth of real prose rather than a uniform draw. The head is
//! kept flat (a large offset): in real English no content word takes more than a fraction of a
//! percent of the text, and a steep head is what gives generated text away.

use crate::rng::Rng;

/// Words drawn with weights that fall with rank.
#[derive(Debug, Clone)]
pub struct Ranked<T> {
    /// The items, commonest first.
    pub items: Vec<T>,
    /// Cumulative integer weights, one per item.
    cum: Vec<u64>,
    /// For each of `cum.len()` equal slices of the total weight, the first item whose
    /// cumulative weight passes the slice's start: a draw scans from there, so it costs a few
    /// steps and finds exactly the item a binary search would.
    guide: Vec<u32>,
}

/// Zipf–Mandelbrot offset of the general lists: keeps the first ranks from dominating.
const ZIPF_OFFSET: f64 = 5.0;
/// Zipf exponent of the general lists: how fast weights fall with rank.
const ZIPF_EXPONENT: f64 = 1.0;

impl<T> Ranked<T> {
    /// Rank-weighted draw over `items` (which must not be empty), with the general lists' law.
    pub fn new(items: Vec<T>) -> Self {
        Self::zipf(items, ZIPF_OFFSET, ZIPF_EXPONENT)
    }

    /// Rank-weighted draw with weight `1 / (rank + offset)^exponent`.
    pub fn zipf(items: Vec<T>, offset: f64, exponent: f64) -> Self {
        let mut total = 0u64;
        let cum: Vec<u64> = (0..items.len())
            .map(|r| {
                total += (1e9 / (r as f64 + offset).powf(exponent)).max(1.0) as u64;
                total
            })
            .collect();
        let n = cum.len() as u64;
        let guide = (0..n)
            .map(|k| {
                let x = (k as u128 * total as u128 / n.max(1) as u128) as u64;
                cum.partition_point(|&c| c <= x) as u32
            })
            .collect();
        Ranked { items, cum, guide }
    }

    /// One item, likelier the earlier it is listed.
    pub fn pick(&self, rng: &mut Rng) -> &T {
        &self.items[self.pick_index(rng)]
    }

    /// The index of one item, drawn as [`Ranked::pick`] draws.
    pub fn pick_index(&self, rng: &mut Rng) -> usize {
        let total = *self.cum.last().unwrap_or(&1);
        let x = rng.below(total);
        let n = self.cum.len() as u64;
        let slice = (x as u128 * n as u128 / total as u128) as usize;
        let mut i = self.guide.get(slice).copied().unwrap_or(0) as usize;
        while i < self.cum.len() && self.cum[i] <= x {
            i += 1;
        }
        i.min(self.items.len() - 1)
    }
}

/// A countable noun's two forms.
#[derive(Debug, Clone)]
pub struct Noun {
    /// "house".
    pub one: String,
    /// "houses".
    pub many: String,
}

/// A verb's forms.
#[derive(Debug, Clone)]
pub struct Verb {
    /// "carry".
    pub base: String,
    /// "carries".
    pub third: String,
    /// "carried".
    pub past: String,
    /// "carried" (irregular verbs differ: "written").
    pub participle: String,
    /// "carrying".
    pub gerund: String,
    /// "carrieth": the third person singular of archaic writing.
    pub archaic: String,
}

impl Verb {
    /// Every form, for vocabulary checks.
    pub fn forms(&self) -> [String; 6] {
        [
            self.archaic.clone(),
            self.base.clone(),
            self.third.clone(),
            self.past.clone(),
            self.participle.clone(),
            self.gerund.clone(),
        ]
    }
}

/// The archaic third person singular: "walketh", "maketh", "carrieth"; "hath", "doth", "goeth".
pub fn archaic_third(base: &str) -> String {
    match base {
        "have" => "hath".into(),
        "do" => "doth".into(),
        "say" => "saith".into(),
        _ if base.ends_with('e') => format!("{base}th"),
        _ if ends_consonant_y(base) => format!("{}ieth", &base[..base.len() - 1]),
        _ => format!("{base}eth"),
    }
}

/// The words of one list file: whitespace-separated entries, `#` comments, first use kept.
pub fn entries(text: &str) -> Vec<&str> {
    let mut seen = std::collections::BTreeSet::new();
    text.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(str::split_whitespace)
        .filter(|w| seen.insert(w.split('/').next().unwrap_or(w).trim_end_matches('+')))
        .collect()
}

/// Nouns from entries "house" or "child/children".
pub fn nouns(text: &str) -> Vec<Noun> {
    entries(text)
        .into_iter()
        .map(|e| match e.split_once('/') {
            Some((one, many)) => Noun {
                one: one.to_string(),
                many: many.to_string(),
            },
            None => Noun {
                one: e.to_string(),
                many: plural(e),
            },
        })
        .collect()
}

/// Verbs from entries "carry", "stop+" (doubles its last consonant) or "write/wrote/written"
/// (with an optional "+" on the base).
pub fn verbs(text: &str) -> Result<Vec<Verb>, String> {
    entries(text)
        .into_iter()
        .map(|e| {
            let mut parts = e.split('/');
            let first = parts.next().unwrap_or(e);
            let double = first.ends_with('+');
            let base = first.trim_end_matches('+');
            let (past, participle) = match (parts.next(), parts.next()) {
                (Some(p), Some(pp)) => (p.to_string(), pp.to_string()),
                (None, None) => {
                    let p = past(base, double);
                    (p.clone(), p)
                }
                _ => return Err(format!("verb entry '{e}' needs base/past/participle")),
            };
            let archaic = if double {
                archaic_third(&doubled(base))
            } else {
                archaic_third(base)
            };
            Ok(Verb {
                base: base.to_string(),
                third: third_person(base),
                past,
                participle,
                gerund: gerund(base, double),
                archaic,
            })
        })
        .collect()
}

fn ends_consonant_y(w: &str) -> bool {
    w.len() > 1 && w.ends_with('y') && !w[..w.len() - 1].ends_with(['a', 'e', 'i', 'o', 'u'])
}

/// The regular plural of a noun.
pub fn plural(one: &str) -> String {
    if one.ends_with(['s', 'x', 'z']) || one.ends_with("ch") || one.ends_with("sh") {
        format!("{one}es")
    } else if ends_consonant_y(one) {
        format!("{}ies", &one[..one.len() - 1])
    } else {
        format!("{one}s")
    }
}

/// The third person singular of a verb.
pub fn third_person(base: &str) -> String {
    if base.ends_with(['s', 'x', 'z', 'o']) || base.ends_with("sh") || base.ends_with("ch") {
        format!("{base}es")
    } else if ends_consonant_y(base) {
        format!("{}ies", &base[..base.len() - 1])
    } else {
        format!("{base}s")
    }
}

fn doubled(base: &str) -> String {
    let last = base.chars().last().unwrap_or('x');
    format!("{base}{last}")
}

/// The regular past tense.
pub fn past(base: &str, double: bool) -> String {
    if double {
        format!("{}ed", doubled(base))
    } else if base.ends_with('e') {
        format!("{base}d")
    } else if ends_consonant_y(base) {
        format!("{}ied", &base[..base.len() - 1])
    } else {
        format!("{base}ed")
    }
}

/// The -ing form.
pub fn gerund(base: &str, double: bool) -> String {
    if double {
        format!("{}ing", doubled(base))
    } else if let Some(stem) = base.strip_suffix("ie") {
        format!("{stem}ying")
    } else if base.ends_with('e')
        && !base.ends_with("ee")
        && !base.ends_with("ye")
        && base.len() > 2
    {
        format!("{}ing", &base[..base.len() - 1])
    } else {
        format!("{base}ing")
    }
}

/// Whether `word` takes "an": it starts with a vowel sound. Numbers go by how they are read
/// ("an 8", "an 11", "an 18-mile", "a 1,200").
pub fn takes_an(word: &str) -> bool {
    let first = word.chars().next().unwrap_or('x');
    if first.is_ascii_digit() {
        let digits: String = word
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ',')
            .filter(char::is_ascii_digit)
            .collect();
        let grouped = word
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ',')
            .any(|c| c == ',');
        // The leading group is what is spoken first: "11" of "11,000", "18" of "18".
        let lead_len = if grouped {
            match digits.len() % 3 {
                0 => 3,
                r => r,
            }
        } else if digits.len() == 4 {
            2 // a year-like "1850" is read "eighteen fifty"
        } else {
            digits.len()
        };
        let lead = &digits[..lead_len.min(digits.len())];
        return first == '8' || (lead.len() == 2 && (lead == "11" || lead == "18"));
    }
    // Compared case-blind without allocating: this runs for every article of the haystack.
    let starts = |prefix: &str| {
        word.len() >= prefix.len()
            && word.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
    };
    match first.to_ascii_lowercase() {
        'h' => ["hour", "honest", "honour", "heir"]
            .iter()
            .any(|p| starts(p)),
        'a' | 'i' => true,
        'e' => !(starts("eu") || starts("ewe")),
        'o' => !(starts("one") || starts("once")),
        'u' => !["uni", "use", "usu", "uti", "ute"]
            .iter()
            .any(|p| starts(p)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflections() {
        assert_eq!(third_person("carry"), "carries");
        assert_eq!(third_person("watch"), "watches");
        assert_eq!(third_person("weigh"), "weighs");
        assert_eq!(gerund("share", false), "sharing");
        assert_eq!(gerund("stop", true), "stopping");
        assert_eq!(gerund("tie", false), "tying");
        assert_eq!(past("stop", true), "stopped");
        assert_eq!(past("carry", false), "carried");
        assert_eq!(past("bake", false), "baked");
        assert_eq!(plural("church"), "churches");
        assert_eq!(plural("valley"), "valleys");
        assert_eq!(plural("library"), "libraries");
        let v = verbs("write/wrote/written run+/ran/run").unwrap();
        assert_eq!(
            (v[1].gerund.as_str(), v[1].third.as_str()),
            ("running", "runs")
        );
        assert!(verbs("go/went").is_err());
        assert_eq!(archaic_third("walk"), "walketh");
        assert_eq!(archaic_third("make"), "maketh");
        assert_eq!(archaic_third("carry"), "carrieth");
        assert_eq!(archaic_third("play"), "playeth");
        assert_eq!(archaic_third("see"), "seeth");
        assert_eq!(archaic_third("have"), "hath");
        let v = verbs("stop+ bake").unwrap();
        assert_eq!(
            (v[0].archaic.as_str(), v[1].archaic.as_str()),
            ("stoppeth", "baketh")
        );
    }

    #[test]
    fn articles() {
        for w in [
            "honest", "orchard", "umbrella", "8-mile", "11-day", "18", "80", "hour", "1850",
        ] {
            assert!(takes_an(w), "{w}");
        }
        for w in [
            "useful", "uniform", "one", "1,800", "1950", "12-acre", "110", "house", "European",
        ] {
            assert!(!takes_an(w), "{w}");
        }
        assert!(takes_an("11,000") && takes_an("18,500") && !takes_an("118,000"));
    }

    #[test]
    fn guided_draws_find_what_a_binary_search_finds() {
        let r = Ranked::zipf((0..777).collect::<Vec<u32>>(), 3.0, 1.2);
        let total = *r.cum.last().unwrap();
        let mut rng = Rng::from_seed_u64(9, crate::rng::Stream::Haystack);
        for _ in 0..50_000 {
            let mut a = rng.clone();
            let x = a.below(total);
            let want = r.cum.partition_point(|&c| c <= x);
            assert_eq!(r.pick_index(&mut rng), want);
        }
    }

    #[test]
    fn ranked_draws_favour_early_items_and_reach_late_ones() {
        let r = Ranked::new((0..1000).collect::<Vec<u32>>());
        let mut rng = Rng::from_seed_u64(1, crate::rng::Stream::Haystack);
        let mut counts = vec![0u32; 1000];
        for _ in 0..200_000 {
            counts[*r.pick(&mut rng) as usize] += 1;
        }
        assert!(counts[0] > 10 * counts[500].max(1), "{counts:?}");
        assert!(counts.iter().filter(|&&c| c > 0).count() > 990);
    }
}
