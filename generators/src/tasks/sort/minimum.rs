//! The shortest target length a plain list reaches, measured rather than estimated.

use super::Sort;
use crate::fit::render::render_facts;
use crate::tokenizer::Tokenizer;
use crate::{GenError, Run};

/// Haystack tokens a hidden list needs at least around its facts.
const HIDDEN_HAYSTACK_TOKENS: usize = 32;

impl Sort {
    /// The minimum `--len`: the shortest row is the list of `items` (one, when the list fills
    /// the length; the default count when hidden) of this tokenizer's longest item, with the
    /// real question and its answer, and when hidden a few sentences of haystack around the
    /// facts. Measured, not estimated, so the minimum stated is one every instance reaches.
    pub(super) fn plain_minimum(&self, run: &Run) -> Result<u64, GenError> {
        let tok = &run.tokenizer;
        let worst = self.longest_item(tok)?;
        let hidden = self.params.hidden;
        let count = self
            .params
            .items
            .unwrap_or(if hidden { super::HIDDEN_ITEMS } else { 1 });
        let list = vec![worst; count];
        let (facts, question, target, _, _) = self.render_parts(&list);
        let frame = self.frame(run, &question)?;
        let answer = u64::from(run.answer_tokens(&target)?);
        // Labels differ by item and joins can take a token more: a small margin per item.
        let margin = (count + 2) as u64;
        if hidden {
            let mut needles = frame.fixed_tokens(tok)? + HIDDEN_HAYSTACK_TOKENS;
            for f in &facts {
                needles += tok.count(&format!(" {f}"))?;
            }
            return Ok(needles as u64 + answer + margin);
        }
        let fitted = render_facts(tok, &frame, &facts)?;
        Ok(fitted.prompt_tokens as u64 + answer + margin)
    }

    /// The item this tokenizer counts most tokens for: the longest word, or for numbers the
    /// longest of a few digit patterns at each digit count.
    pub(super) fn longest_item(&self, tok: &Tokenizer) -> Result<String, GenError> {
        let candidates: Vec<String> = if self.params.words {
            self.vocab.iter().map(|w| w.to_string()).collect()
        } else {
            (self.params.digits.0..=self.params.digits.1)
                .flat_map(|d| {
                    let d = d as usize;
                    ["9", "1", "7", "3"]
                        .map(|c| c.repeat(d))
                        .into_iter()
                        .chain([
                            format!("1{}", "0".repeat(d - 1)),
                            "9876543210".chars().cycle().take(d).collect(),
                            "1357924680".chars().cycle().take(d).collect(),
                        ])
                })
                .collect()
        };
        let mut best = (0usize, String::new());
        for c in candidates {
            let t = tok.count(&format!(" {c}"))?.max(tok.count(&c)?);
            if t > best.0 {
                best = (t, c);
            }
        }
        Ok(best.1)
    }
}
