//! The user's MMLU copy: the multiple-choice questions RULER v2's `mk_niah`/`mv_niah` easy,
//! medium and hard tasks hide (a test question) among others (auxiliary_train questions).
//!
//! The front end reads the files (Parquet or JSON Lines, in a fixed order) and hands the rows
//! here; this module checks them and gives the bank one identity, so the same rows read from
//! either layout make the same haystack.

use crate::GenError;

/// One multiple-choice question as MMLU stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McItem {
    /// The question text.
    pub question: String,
    /// MMLU's subject (`high_school_physics`); recorded, never shown.
    pub subject: String,
    /// The four options, A to D.
    pub choices: Vec<String>,
    /// The correct option, 0 (A) to 3 (D).
    pub answer: u8,
}

/// The letters of the four options.
pub const LETTERS: [char; 4] = ['A', 'B', 'C', 'D'];

/// Every whitespace run collapsed to one space, ends trimmed: RULER v2 makes each item one line.
pub fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl McItem {
    /// The question and its options on one line, `question A. x B. y C. z D. w`, each part's
    /// whitespace collapsed: the text an item shows after its label, and a copy's gold.
    pub fn line(&self) -> String {
        let mut out = collapse(&self.question);
        for (letter, choice) in LETTERS.iter().zip(&self.choices) {
            out.push(' ');
            out.push(*letter);
            out.push_str(". ");
            out.push_str(&collapse(choice));
        }
        out
    }

    /// The letter of the correct option.
    pub fn letter(&self) -> char {
        LETTERS[usize::from(self.answer.min(3))]
    }
}

/// A checked MMLU copy: the test split (needles) and the auxiliary_train split (haystack).
#[derive(Debug)]
pub struct Mmlu {
    /// Test questions, in the order given.
    pub test: Vec<McItem>,
    /// auxiliary_train questions, in the order given.
    pub aux: Vec<McItem>,
    /// xxh3-128 over both splits' rows, in order: the identity provenance records.
    pub content_hash: String,
    /// What the user named (the directory).
    pub name: String,
}

impl Mmlu {
    /// Check the rows of both splits and hash them. Refuses, naming the split and the 1-based
    /// row, a question that is empty (after collapsing whitespace), a row without exactly four
    /// options or with an empty one, an answer outside 0–3, and a split with no rows.
    pub fn new(name: &str, test: Vec<McItem>, aux: Vec<McItem>) -> Result<Mmlu, GenError> {
        let mut hash_input = Vec::new();
        for (split, rows) in [("test", &test), ("auxiliary_train", &aux)] {
            if rows.is_empty() {
                return Err(GenError::BadCorpus(format!(
                    "MMLU data '{name}' has no {split} questions: expected {split} rows with question, subject, choices (4 strings) and answer (0-3)"
                )));
            }
            push(&mut hash_input, split.as_bytes());
            push(&mut hash_input, &(rows.len() as u64).to_le_bytes());
            for (i, item) in rows.iter().enumerate() {
                let bad = |why: String| {
                    GenError::BadCorpus(format!("MMLU data '{name}': {split} row {}: {why}", i + 1))
                };
                if collapse(&item.question).is_empty() {
                    return Err(bad("the question is empty".into()));
                }
                if item.choices.len() != 4 {
                    return Err(bad(format!(
                        "it has {} choices, expected 4",
                        item.choices.len()
                    )));
                }
                if let Some(k) = item.choices.iter().position(|c| collapse(c).is_empty()) {
                    return Err(bad(format!("choice {} is empty", LETTERS[k])));
                }
                if item.answer > 3 {
                    return Err(bad(format!(
                        "answer {} is not an option: expected 0-3",
                        item.answer
                    )));
                }
                push(&mut hash_input, item.question.as_bytes());
                push(&mut hash_input, item.subject.as_bytes());
                for c in &item.choices {
                    push(&mut hash_input, c.as_bytes());
                }
                hash_input.push(item.answer);
            }
        }
        Ok(Mmlu {
            test,
            aux,
            content_hash: format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&hash_input)),
            name: name.to_string(),
        })
    }
}

fn push(buf: &mut Vec<u8>, bytes: &[u8]) {
    buf.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    buf.extend_from_slice(bytes);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small invented bank for the tasks' unit tests: `test` test and `aux` auxiliary items.
    pub(crate) fn bank(test: usize, aux: usize) -> Mmlu {
        let item = |split: &str, i: usize| McItem {
            question: format!(
                "In the {split} set, which   number follows\n{i} when counting up by {}?",
                i % 7 + 1
            ),
            subject: "counting".into(),
            choices: (0..4)
                .map(|k| format!("{}", i + k * (i % 7 + 1) + 1))
                .collect(),
            answer: (i % 4) as u8,
        };
        Mmlu::new(
            "bank",
            (0..test).map(|i| item("test", i)).collect(),
            (0..aux).map(|i| item("practice", i)).collect(),
        )
        .unwrap()
    }

    #[test]
    fn a_line_is_one_line_with_lettered_options() {
        let b = bank(1, 1);
        let line = b.test[0].line();
        assert_eq!(
            line,
            "In the test set, which number follows 0 when counting up by 1? A. 1 B. 2 C. 3 D. 4"
        );
        assert_eq!(b.test[0].letter(), 'A');
    }

    #[test]
    fn bad_rows_are_refused_by_split_and_row() {
        let good = bank(2, 2);
        let mut aux = good.aux.clone();
        aux[1].choices.pop();
        let e = Mmlu::new("d", good.test.clone(), aux).unwrap_err();
        assert_eq!(
            e.to_string(),
            "MMLU data 'd': auxiliary_train row 2: it has 3 choices, expected 4"
        );
        let mut test = good.test.clone();
        test[0].answer = 5;
        let e = Mmlu::new("d", test, good.aux.clone()).unwrap_err();
        assert!(e.to_string().contains("test row 1: answer 5"), "{e}");
        let e = Mmlu::new("d", Vec::new(), good.aux.clone()).unwrap_err();
        assert!(e.to_string().contains("no test questions"), "{e}");
        let mut test = good.test.clone();
        test[1].question = " \n ".into();
        assert!(Mmlu::new("d", test, good.aux.clone()).is_err());
    }

    #[test]
    fn the_hash_follows_every_field_and_the_order() {
        let a = bank(3, 3);
        let same = Mmlu::new("other name", a.test.clone(), a.aux.clone()).unwrap();
        assert_eq!(a.content_hash, same.content_hash);
        let mut swapped = a.aux.clone();
        swapped.swap(0, 1);
        assert_ne!(
            Mmlu::new("d", a.test.clone(), swapped)
                .unwrap()
                .content_hash,
            a.content_hash
        );
        let mut subject = a.test.clone();
        subject[0].subject = "x".into();
        assert_ne!(
            Mmlu::new("d", subject, a.aux.clone()).unwrap().content_hash,
            a.content_hash
        );
        // A question moved from one split to the other is another bank.
        let mut test = a.test.clone();
        let mut aux = a.aux.clone();
        test.push(aux.remove(0));
        assert_ne!(
            Mmlu::new("d", test, aux).unwrap().content_hash,
            a.content_hash
        );
    }
}
