//! Contexts rendered from whole parts (facts, documents, list items) and counted once.

use super::{measure, Fitted};
use crate::template::Frame;
use crate::tokenizer::{Known, Tokenizer};
use crate::GenError;

/// Render a context made only of `facts` (no haystack), one per line, and count it once.
/// Offsets and depths are reported as [`fit`] does.
pub fn render_facts(tok: &Tokenizer, frame: &Frame, facts: &[String]) -> Result<Fitted, GenError> {
    let all: Vec<usize> = (0..facts.len()).collect();
    render_joined(tok, frame, facts, "\n", &all)
}

/// Render a context of whole `parts` joined by `sep` (documents, facts) and count it once;
/// the parts listed in `marked` are reported as needles, in that order, as [`fit`] does.
pub fn render_joined<S: AsRef<str>>(
    tok: &Tokenizer,
    frame: &Frame,
    parts: &[S],
    sep: &str,
    marked: &[usize],
) -> Result<Fitted, GenError> {
    render_joined_known(tok, frame, parts, sep, marked, None)
}

/// [`render_joined`] with nothing marked, for a context whose count alone (`context_tokens`)
/// the caller has already added up from its parts (see [`crate::lists`]): a search over list
/// sizes then tokenizes only the context's edges and the frame per try, not the whole list.
/// The count must be exact; the tests hold these renderings equal to [`render_joined`].
pub fn render_joined_counted<S: AsRef<str>>(
    tok: &Tokenizer,
    frame: &Frame,
    parts: &[S],
    sep: &str,
    context_tokens: usize,
) -> Result<Fitted, GenError> {
    render_joined_known(tok, frame, parts, sep, &[], Some(context_tokens))
}

fn render_joined_known<S: AsRef<str>>(
    tok: &Tokenizer,
    frame: &Frame,
    parts: &[S],
    sep: &str,
    marked: &[usize],
    context_tokens: Option<usize>,
) -> Result<Fitted, GenError> {
    let mut input = String::with_capacity(
        frame.prefix.len()
            + frame.suffix.len()
            + parts
                .iter()
                .map(|f| f.as_ref().len() + sep.len())
                .sum::<usize>(),
    );
    input.push_str(&frame.prefix);
    let ctx_start = input.len();
    let mut spans = Vec::with_capacity(marked.len().min(parts.len()));
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            input.push_str(sep);
        }
        let start = input.len();
        input.push_str(part.as_ref());
        if !marked.is_empty() {
            spans.push((start, input.len()));
        }
    }
    let ctx_end = input.len();
    input.push_str(&frame.suffix);
    let marks: Vec<(usize, usize)> = marked
        .iter()
        .filter_map(|&i| spans.get(i).copied())
        .collect();
    let known = context_tokens.map(|tokens| Known {
        start: ctx_start,
        end: ctx_end,
        tokens,
    });
    measure(
        tok,
        frame,
        input,
        (ctx_start, ctx_end),
        &marks,
        known.as_slice(),
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::frame;
    use super::*;
    use crate::rng::{Rng, Stream};
    use std::sync::Arc;

    /// A list counted from its items' counts renders exactly as the same list counted whole,
    /// with the frame's edges, an answer prefix or a chat template around it.
    #[test]
    fn lists_counted_from_their_items_render_as_counted_whole() {
        use crate::chat::{ChatTemplate, Reader};
        use crate::fit::lists::{list_tokens, spaced_word, NumberedList};
        let chat = Arc::new(
            ChatTemplate::from_bytes(
                include_bytes!("../../../tests/fixtures/chat/tokenizer_config.json"),
                "tokenizer_config.json",
            )
            .unwrap(),
        );
        let bits = [
            "7",
            "1234567",
            "word",
            "Zed",
            "'s",
            "...",
            ",",
            "-",
            "/",
            "\n",
            "é",
            "日本",
            "😀",
            "#",
            "<|endoftext|>",
            "1.",
            "x y",
            "a\tb",
        ];
        let mut d = Rng::from_seed_u64(3, Stream::Content);
        let mut spaced = 0;
        for round in 0..600 {
            let tok = [Tokenizer::O200k, Tokenizer::Cl100k][round % 2].clone();
            let mut frame = frame();
            match round % 4 {
                0 => {}
                1 => frame.answer_prefix = "The answer is:".into(),
                2 => frame.suffix = " and then".into(),
                _ => {
                    frame.answer_prefix = "Answer:".into();
                    frame.reader = Reader {
                        chat: Some(chat.clone()),
                        system: None,
                    };
                }
            }
            if d.index(3) == 0 {
                frame.prefix = ["", " ", "x", "List:"][d.index(4)].into();
            }
            let words: Vec<String> = (0..1 + d.index(40))
                .map(|_| {
                    (0..1 + d.index(3))
                        .map(|_| bits[d.index(bits.len())])
                        .collect()
                })
                .collect();
            let counts: Vec<_> = words
                .iter()
                .map(|w| spaced_word(&tok, w).unwrap())
                .collect();
            if let Some(tokens) = list_tokens(counts) {
                let whole = render_joined(&tok, &frame, &words, " ", &[]).unwrap();
                let counted = render_joined_counted(&tok, &frame, &words, " ", tokens).unwrap();
                assert_eq!(counted, whole, "{words:?}");
                spaced += 1;
            }
            let order: Vec<usize> = (0..words.len()).rev().collect();
            let text = [NumberedList::text(&words, &order)];
            let tokens = NumberedList::default()
                .tokens(&tok, &words, &order)
                .unwrap();
            let whole = render_joined(&tok, &frame, &text, "\n", &[]).unwrap();
            let counted = render_joined_counted(&tok, &frame, &text, "\n", tokens.unwrap());
            assert_eq!(counted.unwrap(), whole, "{text:?}");
        }
        assert!(spaced > 150, "{spaced}");
    }
}
