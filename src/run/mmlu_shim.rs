//! TEMPORARY: the core's MMLU item, as /work/ruler2-interface.md gives it, until the core lands.
#[derive(Debug, Clone, PartialEq)]
pub struct McItem {
    pub question: String,
    pub subject: String,
    pub choices: Vec<String>,
    pub answer: u8,
}
