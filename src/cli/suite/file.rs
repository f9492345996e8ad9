//! Suite files read: TOML with each key's line (for `FILE:LINE` refusals), values turned into
//! command-line words. What the keys mean is the `suite` module's business.

use toml_edit::{Document, Item, Table, Value};

/// Placeholders a value may be, filled from the command line; an entry whose placeholder is
/// not given is skipped and named.
pub const PLACEHOLDERS: &[(&str, &str)] = &[
    ("{qa_data}", "--qa-data"),
    ("{qa2_data}", "--qa2-data"),
    ("{mmlu_data}", "--mmlu-data"),
];

/// The built-in suites, by name: their TOML text, embedded.
pub const BUILTIN_SUITES: &[(&str, &str)] = &[
    ("ruler", include_str!("ruler.toml")),
    ("ruler2", include_str!("ruler2.toml")),
    ("babilong", include_str!("babilong.toml")),
    ("reasoning", include_str!("reasoning.toml")),
    ("frontier", include_str!("frontier.toml")),
];

/// What a suite holds, for `gen list`: its `about` key, and the options its entries need to
/// be made at all (a `{qa_data}` entry is skipped without `--qa-data`).
pub fn about(text: &str) -> String {
    let about = parse(text)
        .ok()
        .and_then(|f| {
            f.top
                .into_iter()
                .find(|s| s.key == "about")
                .and_then(|s| match s.word {
                    Word::Text(t) => Some(t),
                    _ => None,
                })
        })
        .unwrap_or_default();
    let needs: Vec<&str> = PLACEHOLDERS
        .iter()
        .filter(|(p, _)| text.contains(p))
        .map(|(_, o)| *o)
        .collect();
    if needs.is_empty() {
        about
    } else {
        format!("{about} (some entries need {})", needs.join(", "))
    }
}
/// A TOML value as a command-line word, or a switch.
#[derive(Debug, Clone, PartialEq)]
pub enum Word {
    /// A value, as a command line spells it.
    Text(String),
    /// true/false: a switch given or not.
    Switch(bool),
    /// Several values that are each one word (`disjoint_from = ["a", "b,c"]`: paths, which
    /// may hold commas).
    List(Vec<String>),
}

/// Keys whose list is several words, not one comma-joined word.
const LIST_KEYS: &[&str] = &["disjoint_from"];

/// One `key = value` of the suite, with its line.
#[derive(Debug, Clone)]
pub struct Setting {
    /// The key, as written.
    pub key: String,
    /// Its value.
    pub word: Word,
    /// Its line.
    pub line: usize,
}

/// One `[[task]]` table.
#[derive(Debug, Clone)]
pub struct TaskSpec {
    /// The line of the table.
    pub line: usize,
    /// The subcommand.
    pub task: String,
    /// The config name it sets.
    pub name: Option<String>,
    /// Its other keys.
    pub settings: Vec<Setting>,
}

/// A parsed suite file.
#[derive(Debug, Clone)]
pub struct SuiteFile {
    /// The keys at the top.
    pub top: Vec<Setting>,
    /// The `[[task]]` tables.
    pub tasks: Vec<TaskSpec>,
}

/// The 1-based line of byte `at` in `text`.
fn line_of(text: &str, at: Option<std::ops::Range<usize>>) -> usize {
    let at = at.map_or(0, |r| r.start.min(text.len()));
    text[..at].matches('\n').count() + 1
}

/// A TOML value as a command-line word: strings as they are, numbers in their decimal form,
/// lists joined by commas; booleans are switches. `depths = [50]` is one depth (`50%`), not a
/// grid of 50.
fn word(key: &str, v: &Value) -> Result<Word, String> {
    let scalar = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) => Some(s.value().clone()),
            Value::Integer(i) => Some(i.value().to_string()),
            Value::Float(f) => Some(f.value().to_string()),
            _ => None,
        }
    };
    let expected =
        || format!("invalid {key}: expected a string, a number, true/false or a list of them");
    match v {
        Value::Boolean(b) => Ok(Word::Switch(*b.value())),
        Value::Array(a) => {
            let items: Option<Vec<String>> = a.iter().map(scalar).collect();
            let items = items.ok_or_else(expected)?;
            if items.is_empty() {
                return Err(format!("invalid {key}: an empty list"));
            }
            if LIST_KEYS.contains(&key) {
                return Ok(Word::List(items));
            }
            if key == "depths" && items.len() == 1 {
                return Ok(Word::Text(format!("{}%", items[0])));
            }
            Ok(Word::Text(items.join(",")))
        }
        v => scalar(v).map(Word::Text).ok_or_else(expected),
    }
}

/// Read the settings of a table, each with its line; `skip` keys are read by the caller.
fn settings(text: &str, table: &Table, skip: &[&str]) -> Result<Vec<Setting>, (usize, String)> {
    let mut out = Vec::new();
    for (key, item) in table.iter() {
        if skip.contains(&key) {
            continue;
        }
        let line = line_of(text, table.get_key_value(key).and_then(|(k, _)| k.span()));
        let value = match item {
            Item::Value(v) => v,
            _ => return Err((line, format!("{key} is a table: expected a value"))),
        };
        let word = word(key, value).map_err(|e| (line, e))?;
        out.push(Setting {
            key: key.to_string(),
            word,
            line,
        });
    }
    Ok(out)
}

/// TOML integers are 64-bit signed, but a seed is any u64 (`seed = 18446744073709551615`
/// works on the command line): a decimal integer literal too large for TOML is read as its
/// digits, a word the option's own parser then takes or refuses as it would on the command
/// line. Anything else the TOML parser refuses stays refused, with its line.
/// Returns the document and the text it was parsed from (the same lines, so spans give lines).
fn parse_document(text: &str) -> Result<(Document<String>, String), (usize, String)> {
    let mut text = text.to_string();
    loop {
        let e = match Document::parse(text.clone()) {
            Ok(doc) => return Ok((doc, text)),
            Err(e) => e,
        };
        let refused = (line_of(&text, e.span()), e.message().trim().to_string());
        let Some(span) = e.span().filter(|_| e.message().contains("overflow")) else {
            return Err(refused);
        };
        // The literal at the span: a sign, digits and underscores, nothing else.
        let literal = text.get(span.clone()).unwrap_or_default();
        let (sign, unsigned) = match literal.strip_prefix('-') {
            Some(rest) => ("-", rest),
            None => ("", literal.strip_prefix('+').unwrap_or(literal)),
        };
        let digits = unsigned.replace('_', "");
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(refused);
        }
        text.replace_range(span, &format!("\"{sign}{digits}\""));
    }
}

/// Parse a suite's TOML (no meaning checked yet beyond its shape). Errors carry their line.
pub fn parse(text: &str) -> Result<SuiteFile, (usize, String)> {
    let (doc, text) = parse_document(text)?;
    let text = text.as_str();
    let root = doc.as_table();
    let top = settings(text, root, &["task"])?;
    let mut tasks = Vec::new();
    if let Some((key, item)) = root.get_key_value("task") {
        let line = line_of(text, key.span());
        let tables = item.as_array_of_tables().ok_or((
            line,
            "task at the top of a suite: write one [[task]] table per entry".to_string(),
        ))?;
        for table in tables.iter() {
            let line = line_of(text, table.span());
            let get = |k: &str| -> Result<Option<String>, (usize, String)> {
                match table.get_key_value(k) {
                    None => Ok(None),
                    Some((key, item)) => {
                        let line = line_of(text, key.span());
                        item.as_str()
                            .map(|s| Some(s.to_string()))
                            .ok_or((line, format!("{k} must be a string")))
                    }
                }
            };
            let task = get("task")?.ok_or((
                line,
                "this [[task]] has no task = \"...\" (the subcommand, like niah)".to_string(),
            ))?;
            let name = get("name")?;
            tasks.push(TaskSpec {
                line,
                task,
                name,
                settings: settings(text, table, &["task", "name"])?,
            });
        }
    }
    if tasks.is_empty() {
        return Err((1, "the suite has no [[task]] table".into()));
    }
    Ok(SuiteFile { top, tasks })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_become_words_and_lines_are_counted() {
        let f = parse("seed = 3\nlengths = [\"2k\", \"4k\"]\n\n[[task]]\ntask = \"niah\"\nabsent = true\ndepths = [50]\n").unwrap();
        assert_eq!(f.top[0].word, Word::Text("3".into()));
        assert_eq!(f.top[1].word, Word::Text("2k,4k".into()));
        assert_eq!(f.tasks[0].line, 4);
        assert_eq!(f.tasks[0].settings[0].line, 6);
        assert_eq!(f.tasks[0].settings[0].word, Word::Switch(true));
        assert_eq!(f.tasks[0].settings[1].word, Word::Text("50%".into()));
        let f = parse("disjoint_from = [\"a,b\", \"c\"]\n[[task]]\ntask = \"niah\"\n").unwrap();
        assert_eq!(f.top[0].word, Word::List(vec!["a,b".into(), "c".into()]));
        let e = parse("seed = 3\nseed = 4\n").unwrap_err();
        assert_eq!(e.0, 2, "{e:?}");
    }

    #[test]
    fn integers_beyond_toml_are_their_digits() {
        let f = parse("seed = 18446744073709551615\nlengths = [1_000, 99999999999999999999]\n[[task]]\ntask = \"niah\"\nsamples = +9223372036854775808\n").unwrap();
        assert_eq!(f.top[0].word, Word::Text("18446744073709551615".into()));
        assert_eq!(
            f.top[1].word,
            Word::Text("1000,99999999999999999999".into())
        );
        assert_eq!(
            f.tasks[0].settings[0].word,
            Word::Text("9223372036854775808".into())
        );
        assert_eq!(f.tasks[0].settings[0].line, 5);
        // Other refusals of the TOML parser stay, with their line.
        assert_eq!(
            parse("seed = 3\nx = 0x1ffffffffffffffff\n").unwrap_err().0,
            2
        );
        // A negative one too: the option's parser refuses it in its own words.
        let f = parse("seed = -99999999999999999999\n[[task]]\ntask = \"niah\"\n").unwrap();
        assert_eq!(f.top[0].word, Word::Text("-99999999999999999999".into()));
    }
}
