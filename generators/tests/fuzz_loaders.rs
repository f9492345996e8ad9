//! Property-based fuzzing of everything the core reads from users: corpus text, tokenizer.json
//! bytes, templates and QA files. Whatever the input, the core returns a value or an error: no
//! panic, no endless loop, no unbounded allocation. `NEEDLEWORK_LOADER_CASES` bounds the run (CI sets it).

use std::sync::Arc;

use needlework_generators::haystack::sentences::split_document;
use needlework_generators::tasks::niah::{NiahParams, NiahVariant};
use needlework_generators::tasks::TaskParams;
use needlework_generators::{
    tasks, Cell, Corpus, Haystack, HaystackKind, Run, Template, Tokenizer,
};
use proptest::prelude::*;

/// Text made of the pieces sentence splitting and counting care about.
fn texty() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just(". ".to_string()),
        Just("! ".to_string()),
        Just("? ".to_string()),
        Just("。".to_string()),
        Just("\n\n".to_string()),
        Just("\"".to_string()),
        Just("Mr. ".to_string()),
        Just("e.g. ".to_string()),
        Just("...".to_string()),
        Just("\u{0085}".to_string()),
        "[a-zA-Z]{1,12}",
        "[0-9]{1,8}",
        "\\PC{1,6}",
        " {1,3}",
    ];
    prop::collection::vec(piece, 0..80).prop_map(|v| v.concat())
}

/// `NEEDLEWORK_LOADER_CASES` when set, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("NEEDLEWORK_LOADER_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn niah_run(tokenizer: Tokenizer, haystack: Haystack) -> Run {
    Run {
        template: Template::compile("niah", tasks::builtin_template("niah", "default").unwrap())
            .unwrap(),
        haystack: Some(haystack),
        tokenizer,
        seed: 3.into(),
        reserve: 128,
        reader: Default::default(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(128), ..ProptestConfig::default() })]

    /// Any document splits into non-empty sentences without panicking.
    #[test]
    fn any_text_splits(doc in texty()) {
        for paragraph in split_document(&doc) {
            for sentence in paragraph {
                prop_assert!(!sentence.trim().is_empty());
            }
        }
    }

    /// Any corpus is refused or becomes a haystack that fills a niah instance exactly.
    #[test]
    fn any_corpus_fills_or_is_refused(docs in prop::collection::vec(texty(), 0..4), tok in 0..3u8) {
        let Ok(corpus) = Corpus::from_documents("fuzz", &docs) else { return Ok(()); };
        let tokenizer = match tok {
            0 => Tokenizer::Chars,
            1 => Tokenizer::Words,
            _ => Tokenizer::O200k,
        };
        let Ok(haystack) = Haystack::prepare(HaystackKind::Corpus, Some(Arc::new(corpus)), &tokenizer) else {
            return Ok(());
        };
        let run = niah_run(tokenizer, haystack);
        let part = TaskParams::Niah(NiahParams::variant(NiahVariant::Single)).parts().unwrap().remove(0);
        let cell = Cell { length: 1500, depth: Some(37.5), sample: 0, slot: 0 };
        if let Ok(instance) = part.task.generate(&run, &cell) {
            prop_assert_eq!(instance.length as usize, run.tokenizer.count(&instance.input).unwrap());
            prop_assert!(instance.length <= 1500 - 128);
        }
    }

    /// Any corruption of a real tokenizer.json is refused or loads and counts.
    #[test]
    fn any_tokenizer_bytes_load_or_are_refused(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 1..6),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut bytes = include_bytes!("../../tests/fixtures/tokenizer-bytelevel.json").to_vec();
        for (at, byte, kind) in edits {
            let i = at.index(bytes.len());
            match kind {
                0 => bytes[i] = byte,
                1 => { bytes.remove(i); }
                _ => bytes.insert(i, byte),
            }
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len()));
        }
        if let Ok(tok) = Tokenizer::from_json_bytes(&bytes, "fuzz.json") {
            let _ = tok.count("A plain sentence, with 12 digits and ünïcödé.");
        }
    }

    /// Any template is refused with a message or frames the task's variables.
    #[test]
    fn any_template_compiles_or_is_refused(pieces in prop::collection::vec(prop_oneof![
        Just("{{ context }}"), Just("{{ question }}"), Just("{{"), Just("}}"), Just("{%"),
        Just("%}"), Just("{% for x in range(3) %}"), Just("{% endfor %}"), Just("{% if %}"),
        Just("{{ raise_exception('no') }}"), Just("{{ context | upper }}"), Just("{#"),
        Just("#}"), Just("{{ undefined_name }}"), Just("text "), Just("\n"), Just("{{ 1/0 }}"),
        Just("{% set n = namespace(a=1) %}"), Just("{{ question.strip() }}"),
    ], 0..12)) {
        let source = pieces.concat();
        if let Ok(template) = Template::compile("fuzz.j2", &source) {
            let part = TaskParams::Niah(NiahParams::variant(NiahVariant::Single)).parts().unwrap().remove(0);
            let _ = template.frame(&part.task.example_vars());
        }
    }

    /// Any bytes parse as a SQuAD or HotpotQA file or are refused with a reason; what parses
    /// keeps only answerable questions whose gold paragraphs exist.
    #[test]
    fn any_qa_file_parses_or_is_refused(pieces in prop::collection::vec(prop_oneof![
        Just("{\"data\": ["), Just("]}"), Just("["), Just("]"), Just("{"), Just("}"), Just(","),
        Just("{\"paragraphs\": [{\"context\": \"A b. C d.\", \"qas\": ["),
        Just("{\"id\": \"1\", \"question\": \"Q?\", \"answers\": [{\"text\": \"b\"}]}"),
        Just("{\"question\": \"Q?\", \"answers\": [], \"is_impossible\": true}"),
        Just("{\"_id\": \"h\", \"question\": \"Q?\", \"answer\": \"yes\", \"supporting_facts\": [[\"T\", 0]], \"context\": [[\"T\", [\"S.\"]]]}"),
        Just("\"context\": []"), Just("null"), Just("1"), Just("\"\\u00e9\""), Just("\u{feff}"), Just(" "),
    ], 0..14)) {
        let text = pieces.concat();
        match needlework_generators::haystack::documents::Documents::parse("fuzz.json", text.as_bytes()) {
            Ok(d) => {
                prop_assert!(!d.questions.is_empty());
                for q in &d.questions {
                    prop_assert!(!q.answers.is_empty() && !q.gold.is_empty());
                    prop_assert!(q.gold.iter().chain(&q.related).all(|&i| i < d.docs.len()));
                }
            }
            Err(e) => prop_assert!(e.to_string().contains("fuzz.json")),
        }
    }
}
