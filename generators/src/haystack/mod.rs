//! Haystacks: the filler text needles hide in.
//!
//! A haystack is consumed as a stream of *units* (sentences), each carrying its leading
//! separator and its token count, so the length fitter can fill a budget by prefix sums and
//! insert needles only at unit boundaries. Work that does not depend on the instance (parsing the
//! grammar, splitting and counting a corpus) happens once per run in [`Haystack::prepare`].

pub mod documents;
pub mod mmlu;
pub mod prose;
pub mod screen;
pub mod sentences;

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;

use crate::rng::Rng;
use crate::tokenizer::{Tokenizer, TokenizerError};
use crate::GenError;
use prose::{Prose, ProseState};
pub use screen::Screen;

/// Separator between a sentence and the one before it.
pub const SPACE: &str = " ";
/// Separator before the first sentence of a paragraph.
pub const PARAGRAPH: &str = "\n\n";

const NOISE: &str = include_str!("../../haystacks/noise.txt");
/// Generated units are made and counted in batches: one tokenizer pass over their joined text
/// gives each unit's tokens as they fall in context. Batches start small and double up to this
/// size, so a short instance does not generate much more text than it uses.
const COUNT_BATCH: usize = 64;
const FIRST_BATCH: usize = 8;
/// How many copies of the noise text top up a distractor haystack.
const TAIL_NOISE_REPEATS: usize = 8;

/// One sentence with its leading separator, as it will appear in the context.
#[derive(Debug, Clone)]
pub struct Unit<'a> {
    /// Separator followed by the sentence.
    pub text: Cow<'a, str>,
    /// Bytes of `text` taken by the separator (dropped when the unit opens the context).
    pub sep_len: usize,
    /// Tokens of `text`, counted once.
    pub tokens: usize,
    /// Whether `tokens` is the count of `text` tokenized alone. Generated units are counted in
    /// batches, so a unit whose edge is not a cut where counts add carries its join's tokens;
    /// the fitter reuses only counts of units alone.
    pub alone: bool,
}

impl<'a> Unit<'a> {
    /// A unit from a separator and a sentence, counted with `tok`.
    pub fn counted(sep: &str, sentence: &str, tok: &Tokenizer) -> Result<Unit<'a>, TokenizerError> {
        let text = format!("{sep}{sentence}");
        let tokens = tok.count(&text)?;
        Ok(Unit {
            text: Cow::Owned(text),
            sep_len: sep.len(),
            tokens,
            alone: true,
        })
    }
}

/// Makes one distractor needle from the haystack stream (for the `needles` haystack).
pub type DistractorMaker<'a> = Box<dyn FnMut(&mut Rng) -> String + 'a>;

/// Which haystack a run uses, before preparation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HaystackKind {
    /// Our generated essay prose.
    Generated,
    /// A few plain sentences repeated.
    Noise,
    /// Distractor needles made by the task.
    Needles,
    /// A user corpus (documents already read by the caller).
    Corpus,
}

/// Sentences of a user corpus, split once, with document boundaries.
#[derive(Debug)]
pub struct Corpus {
    /// (separator length, separator + sentence) in corpus order; a paragraph or document
    /// start has [`PARAGRAPH`], others [`SPACE`].
    sentences: Vec<(usize, String)>,
    /// Index of the first sentence of each document.
    doc_starts: Vec<usize>,
    /// xxh3-128 over every document's bytes, in order: the corpus identity in provenance.
    pub content_hash: String,
    /// What the user named (a path, with `:field` if any).
    pub name: String,
}

impl Corpus {
    /// Split documents into sentences. Errors if nothing usable is left.
    pub fn from_documents(name: &str, documents: &[String]) -> Result<Corpus, GenError> {
        let mut hash_input = Vec::new();
        let mut sentences = Vec::new();
        let mut doc_starts = Vec::new();
        for doc in documents {
            hash_input.extend_from_slice(&(doc.len() as u64).to_le_bytes());
            hash_input.extend_from_slice(doc.as_bytes());
            let paragraphs = sentences::split_document(doc);
            if paragraphs.is_empty() {
                continue;
            }
            doc_starts.push(sentences.len());
            for para in paragraphs {
                for (i, s) in para.into_iter().enumerate() {
                    for (k, piece) in sentences::split_long(&s, sentences::MAX_UNIT_BYTES)
                        .into_iter()
                        .enumerate()
                    {
                        // A piece cut inside a word joins its neighbour with no separator.
                        let sep = match (i, k) {
                            (0, 0) => PARAGRAPH,
                            (_, 0) => SPACE,
                            _ if piece.after_space => SPACE,
                            _ => "",
                        };
                        sentences.push((sep.len(), format!("{sep}{}", piece.text)));
                    }
                }
            }
        }
        if sentences.is_empty() {
            return Err(GenError::BadCorpus(format!(
                "corpus '{name}' is empty: it has no text"
            )));
        }
        if sentences.len() < 2 {
            return Err(GenError::BadCorpus(format!(
                "corpus '{name}' has no sentence boundaries: needles need at least two sentences (end them with . ! ? or a blank line)"
            )));
        }
        let content_hash = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&hash_input));
        Ok(Corpus {
            sentences,
            doc_starts,
            content_hash,
            name: name.to_string(),
        })
    }

    /// Number of sentences.
    pub fn len(&self) -> usize {
        self.sentences.len()
    }

    /// Whether the corpus has no sentences (never true once built).
    pub fn is_empty(&self) -> bool {
        self.sentences.is_empty()
    }
}

/// A corpus (user or noise) with every sentence counted once under the run's tokenizer.
#[derive(Debug)]
pub struct CountedCorpus {
    corpus: Arc<Corpus>,
    tokens: Vec<u32>,
}

impl CountedCorpus {
    fn count(corpus: Arc<Corpus>, tok: &Tokenizer) -> Result<Self, GenError> {
        let tokens = corpus
            .sentences
            .iter()
            .map(|(_, text)| Ok(tok.count(text)? as u32))
            .collect::<Result<_, GenError>>()?;
        Ok(CountedCorpus { corpus, tokens })
    }

    fn unit(&self, i: usize) -> Unit<'_> {
        let (sep_len, text) = &self.corpus.sentences[i];
        Unit {
            text: Cow::Borrowed(text),
            sep_len: *sep_len,
            tokens: self.tokens[i] as usize,
            alone: true,
        }
    }
}

/// A haystack ready for a run: everything instance-independent done.
#[derive(Debug)]
pub struct Haystack {
    prepared: Prepared,
    /// Tokens of joined text per token of its units counted one by one (BPE merges across
    /// joins, e.g. a period with the paragraph break after it). Measured once per run on a
    /// fixed sample, it lets the fitter hit the budget with its first full count.
    join_ratio: f64,
}

#[derive(Debug)]
enum Prepared {
    /// Generated prose.
    Generated(Arc<Prose>),
    /// Repeated plain sentences, counted once.
    Noise(CountedCorpus),
    /// Distractor needles, produced by the task per instance; the unit holds noise text used
    /// to top up the last few tokens.
    Needles(Unit<'static>),
    /// A user corpus, counted once.
    Corpus(CountedCorpus),
    /// QA paragraphs: whole documents placed by the `qa` task, never streamed as sentences.
    Documents(Arc<documents::Documents>),
    /// Multiple-choice questions (an MMLU copy), placed whole by `ruler2`.
    Mmlu(Arc<mmlu::Mmlu>),
}

/// Tokens of haystack sampled to measure the join ratio.
const CALIBRATION_TOKENS: usize = 20_000;

impl Haystack {
    /// Prepare a haystack for `tok`. `corpus` is required for [`HaystackKind::Corpus`].
    pub fn prepare(
        kind: HaystackKind,
        corpus: Option<Arc<Corpus>>,
        tok: &Tokenizer,
    ) -> Result<Haystack, GenError> {
        let prepared = match kind {
            HaystackKind::Generated => {
                Prepared::Generated(Arc::new(Prose::builtin().map_err(GenError::Internal)?))
            }
            HaystackKind::Noise => Prepared::Noise(CountedCorpus::count(noise_corpus(), tok)?),
            HaystackKind::Needles => Prepared::Needles(Self::noise_tail(tok)?),
            HaystackKind::Corpus => {
                let corpus = corpus.ok_or_else(|| {
                    GenError::Internal("corpus haystack prepared without a corpus".into())
                })?;
                Prepared::Corpus(CountedCorpus::count(corpus, tok)?)
            }
        };
        let mut haystack = Haystack {
            prepared,
            join_ratio: 1.0,
        };
        if !haystack.is_needles() {
            haystack.join_ratio = haystack.measure_join_ratio(tok)?;
        }
        Ok(haystack)
    }

    /// Count a fixed sample both unit by unit and joined.
    fn measure_join_ratio(&self, tok: &Tokenizer) -> Result<f64, GenError> {
        let mut stream = self.stream(
            tok,
            Rng::from_seed_u64(0, crate::rng::Stream::Haystack),
            None,
        )?;
        let mut text = String::new();
        let mut units_sum = 0usize;
        while units_sum < CALIBRATION_TOKENS {
            let u = stream.next_unit()?;
            let body = if text.is_empty() {
                &u.text[u.sep_len..]
            } else {
                &u.text[..]
            };
            text.push_str(body);
            units_sum += u.tokens;
        }
        let joined = tok.count(&text)?;
        Ok(if units_sum == 0 {
            1.0
        } else {
            (joined as f64 / units_sum as f64).clamp(0.5, 2.0)
        })
    }

    /// The noise text a few times over, counted once: enough words to fill any gap smaller than
    /// a distractor, so no distractor is ever cut in half.
    fn noise_tail(tok: &Tokenizer) -> Result<Unit<'static>, GenError> {
        let noise = noise_corpus();
        let mut text = String::new();
        for _ in 0..TAIL_NOISE_REPEATS {
            for (sep_len, sentence) in &noise.sentences {
                text.push_str(SPACE);
                text.push_str(&sentence[*sep_len..]);
            }
        }
        let tokens = tok.count(&text)?;
        Ok(Unit {
            text: Cow::Owned(text),
            sep_len: SPACE.len(),
            tokens,
            alone: true,
        })
    }

    /// A haystack of QA documents (a SQuAD or HotpotQA file): `qa` places its paragraphs
    /// whole; nothing is counted until an instance needs it.
    pub fn of_documents(docs: Arc<documents::Documents>) -> Haystack {
        Haystack {
            prepared: Prepared::Documents(docs),
            join_ratio: 1.0,
        }
    }

    /// A haystack of multiple-choice questions (the user's MMLU copy): `ruler2` places them
    /// whole, one per line; nothing is counted until an instance needs it.
    pub fn of_mmlu(bank: Arc<mmlu::Mmlu>) -> Haystack {
        Haystack {
            prepared: Prepared::Mmlu(bank),
            join_ratio: 1.0,
        }
    }

    /// The MMLU bank, when the haystack is made of one.
    pub fn mmlu(&self) -> Option<&mmlu::Mmlu> {
        match &self.prepared {
            Prepared::Mmlu(m) => Some(m),
            _ => None,
        }
    }

    /// The QA documents, when the haystack is made of them.
    pub fn documents(&self) -> Option<&documents::Documents> {
        match &self.prepared {
            Prepared::Documents(d) => Some(d),
            _ => None,
        }
    }

    /// Whether the haystack is made of distractor needles (the task must supply them).
    pub fn is_needles(&self) -> bool {
        matches!(self.prepared, Prepared::Needles(_))
    }

    /// Identity for provenance: the kind and the content hash of what it is made of.
    pub fn id(&self) -> String {
        match &self.prepared {
            Prepared::Generated(p) => format!("generated:{}", p.content_hash),
            Prepared::Noise(c) => format!("noise:{}", c.corpus.content_hash),
            Prepared::Needles(_) => "needles".to_string(),
            Prepared::Corpus(c) => format!("corpus:{}", c.corpus.content_hash),
            Prepared::Documents(d) => format!("documents:{}", d.content_hash),
            Prepared::Mmlu(m) => format!("mmlu:{}", m.content_hash),
        }
    }

    /// The unit stream of one instance, drawing from `rng` (the instance's haystack stream).
    /// `distractor` makes one distractor needle; it is used only by [`Haystack::Needles`].
    pub fn stream<'a>(
        &'a self,
        tok: &'a Tokenizer,
        rng: Rng,
        distractor: Option<DistractorMaker<'a>>,
    ) -> Result<UnitStream<'a>, GenError> {
        let source =
            match &self.prepared {
                Prepared::Generated(prose) => Source::Prose {
                    prose,
                    state: Box::default(),
                },
                Prepared::Noise(c) => Source::Cyclic { corpus: c, next: 0 },
                Prepared::Corpus(c) => Source::Cyclic {
                    corpus: c,
                    next: usize::MAX,
                },
                Prepared::Documents(_) => return Err(GenError::BadCorpus(
                    "a QA data file is the haystack of qa only: its paragraphs are placed whole"
                        .into(),
                )),
                Prepared::Mmlu(_) => return Err(GenError::BadCorpus(
                    "an MMLU copy is the haystack of ruler2 only: its questions are placed whole"
                        .into(),
                )),
                Prepared::Needles(tail) => Source::Distractors {
                    make: distractor.ok_or_else(|| {
                        GenError::Internal("needles haystack without a distractor maker".into())
                    })?,
                    tail,
                },
            };
        Ok(UnitStream {
            source,
            rng,
            tok,
            first: true,
            join_ratio: self.join_ratio,
            buffer: VecDeque::new(),
            batch: FIRST_BATCH,
            zero_run: 0,
            screen: Screen::default(),
            screened: 0,
            paragraph_pending: false,
        })
    }
}

/// The error when a haystack has no usable unit left for an instance.
fn screened_out(name: &str, run: usize) -> GenError {
    GenError::BadCorpus(format!(
        "haystack '{name}' is unusable for this instance: {run} sentences in a row mention its needles' keys, values or names, and sentences that could compete with a needle are left out"
    ))
}

fn noise_corpus() -> Arc<Corpus> {
    let docs = [NOISE.lines().collect::<Vec<_>>().join(" ")];
    // The shipped noise text always has several sentences.
    Arc::new(
        Corpus::from_documents("noise", &docs).unwrap_or_else(|_| Corpus {
            sentences: vec![
                (SPACE.len(), " Nothing happens.".into()),
                (SPACE.len(), " Time goes by.".into()),
            ],
            doc_starts: vec![0],
            content_hash: String::new(),
            name: "noise".into(),
        }),
    )
}

enum Source<'a> {
    Prose {
        prose: &'a Prose,
        state: Box<ProseState>,
    },
    Cyclic {
        corpus: &'a CountedCorpus,
        next: usize,
    },
    Distractors {
        make: DistractorMaker<'a>,
        tail: &'a Unit<'static>,
    },
}

/// The units of one instance's haystack, in reading order.
pub struct UnitStream<'a> {
    source: Source<'a>,
    rng: Rng,
    tok: &'a Tokenizer,
    first: bool,
    join_ratio: f64,
    /// Counted units not yet handed out, each with the number of units screened out just
    /// before it.
    buffer: VecDeque<(Unit<'a>, usize)>,
    batch: usize,
    /// Units in a row that counted no tokens: fitting adds units until the count grows, so a
    /// tokenizer that counts nothing for this text must end in an error, not an endless loop.
    zero_run: usize,
    /// Terms this instance's units must not mention.
    screen: Screen,
    /// Units dropped by the screen before the units handed out so far.
    screened: usize,
    /// A dropped unit opened a paragraph: the next kept unit opens it instead.
    paragraph_pending: bool,
}

/// Units in a row the screen may drop before the haystack is refused as unusable for an
/// instance (a corpus that mentions a needle's key in nearly every sentence).
const MAX_SCREENED_RUN: usize = 10_000;

/// Units in a row that may count no tokens before the haystack is refused as unmeasurable.
const MAX_ZERO_UNITS: usize = 10_000;

impl<'a> UnitStream<'a> {
    /// Drop every unit that mentions a term of `screen`, so no haystack sentence competes with
    /// the instance's needles. Distractor haystacks are made by the task and are not screened.
    pub fn with_screen(mut self, screen: Screen) -> Self {
        self.screen = screen;
        self
    }

    /// Units dropped by the screen among those read so far (recorded per row).
    pub fn screened_units(&self) -> usize {
        self.screened
    }

    /// Joined tokens per unit-counted token, measured for this haystack and tokenizer.
    pub fn join_ratio(&self) -> f64 {
        self.join_ratio
    }

    /// The next unit in reading order; an error once [`MAX_ZERO_UNITS`] units in a row have
    /// counted no tokens (the tokenizer cannot measure this text).
    pub fn next_unit(&mut self) -> Result<Unit<'a>, GenError> {
        let unit = self.next_unit_unchecked()?;
        if unit.tokens == 0 {
            self.zero_run += 1;
            if self.zero_run >= MAX_ZERO_UNITS {
                return Err(GenError::BadCorpus(format!(
                    "the tokenizer counts no tokens for {MAX_ZERO_UNITS} haystack sentences in a row: it cannot measure this text"
                )));
            }
        } else {
            self.zero_run = 0;
        }
        Ok(unit)
    }

    fn next_unit_unchecked(&mut self) -> Result<Unit<'a>, GenError> {
        if let Source::Cyclic { corpus, next } = &mut self.source {
            if *next == usize::MAX {
                // Start at a random sentence of a random document.
                let c = &corpus.corpus;
                let d = self.rng.index(c.doc_starts.len());
                let start = c.doc_starts[d];
                let end = c.doc_starts.get(d + 1).copied().unwrap_or(c.len());
                *next = start + self.rng.index(end - start);
            }
            let len = corpus.tokens.len();
            let mut run = 0usize;
            loop {
                let i = *next % len;
                *next = i + 1;
                let unit = corpus.unit(i);
                if !self.screen.conflicts(&unit.text) {
                    return self.keep_corpus_unit(unit);
                }
                self.screened += 1;
                self.paragraph_pending |= &unit.text[..unit.sep_len] == PARAGRAPH;
                run += 1;
                if run >= len.min(MAX_SCREENED_RUN) {
                    return Err(screened_out(corpus.corpus.name.as_str(), run));
                }
            }
        }
        if self.buffer.is_empty() {
            self.refill()?;
        }
        let (unit, screened) = self
            .buffer
            .pop_front()
            .ok_or_else(|| GenError::Internal("empty unit batch".into()))?;
        self.screened += screened;
        Ok(unit)
    }

    /// A corpus unit that passed the screen, opening a paragraph if a dropped one did.
    fn keep_corpus_unit(&mut self, unit: Unit<'a>) -> Result<Unit<'a>, GenError> {
        if !std::mem::take(&mut self.paragraph_pending) || &unit.text[..unit.sep_len] == PARAGRAPH {
            return Ok(unit);
        }
        Ok(Unit::counted(
            PARAGRAPH,
            &unit.text[unit.sep_len..],
            self.tok,
        )?)
    }

    /// Make the next batch of generated units and count them in one pass.
    fn refill(&mut self) -> Result<(), GenError> {
        let mut joined = String::new();
        let size = self.batch;
        self.batch = (size * 2).min(COUNT_BATCH);
        let mut starts = Vec::with_capacity(size);
        let mut seps = Vec::with_capacity(size);
        let mut skipped = Vec::with_capacity(size);
        for _ in 0..size {
            let mut run = 0usize;
            let (new_par, sentence) = loop {
                let (sentence, new_par) = match &mut self.source {
                    Source::Prose { prose, state } => prose.next_sentence(state, &mut self.rng),
                    Source::Distractors { make, .. } => (make(&mut self.rng), false),
                    Source::Cyclic { .. } => {
                        unreachable!("corpus units are counted once per run")
                    }
                };
                let screened =
                    matches!(self.source, Source::Prose { .. }) && self.screen.conflicts(&sentence);
                if !screened {
                    break (
                        new_par || std::mem::take(&mut self.paragraph_pending),
                        sentence,
                    );
                }
                self.paragraph_pending |= new_par;
                run += 1;
                if run >= MAX_SCREENED_RUN {
                    return Err(screened_out("generated", run));
                }
            };
            let first = std::mem::replace(&mut self.first, false);
            let sep = if new_par && !first { PARAGRAPH } else { SPACE };
            starts.push(joined.len());
            seps.push(sep.len());
            skipped.push(run);
            joined.push_str(sep);
            joined.push_str(&sentence);
        }
        let (total, offsets) = self.tok.count_with_marks(&joined, &starts)?;
        for k in 0..starts.len() {
            let end = starts.get(k + 1).copied().unwrap_or(joined.len());
            let tokens = offsets.get(k + 1).copied().unwrap_or(total) - offsets[k];
            let unit = Unit {
                text: Cow::Owned(joined[starts[k]..end].to_string()),
                sep_len: seps[k],
                tokens,
                alone: self.tok.counts_add_at(&joined, starts[k])
                    && self.tok.counts_add_at(&joined, end),
            };
            self.buffer.push_back((unit, skipped[k]));
        }
        Ok(())
    }

    /// Text used to top up the last few tokens with a partial sentence. For distractor
    /// haystacks this comes from the noise text, so no distractor is ever cut in half.
    pub fn tail_unit(&mut self) -> Result<Option<Unit<'a>>, GenError> {
        match &mut self.source {
            Source::Distractors { tail, .. } => Ok(Some(Unit {
                text: Cow::Borrowed(tail.text.as_ref()),
                sep_len: tail.sep_len,
                tokens: tail.tokens,
                alone: tail.alone,
            })),
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    #[test]
    fn corpus_errors_are_clear() {
        let e = Corpus::from_documents("empty.txt", &["   \n".into()]).unwrap_err();
        assert!(e.to_string().contains("empty.txt") && e.to_string().contains("empty"));
        let e = Corpus::from_documents("one.txt", &["no boundary at all".into()]).unwrap_err();
        assert!(e.to_string().contains("no sentence boundaries"), "{e}");
    }

    #[test]
    fn corpus_stream_wraps_and_keeps_text() {
        let docs = vec![
            "Alpha one. Alpha two.".to_string(),
            "Beta one! Beta two?".to_string(),
        ];
        let corpus = Arc::new(Corpus::from_documents("t", &docs).unwrap());
        let tok = Tokenizer::Words;
        let hay = Haystack::prepare(HaystackKind::Corpus, Some(corpus), &tok).unwrap();
        let mut stream = hay
            .stream(&tok, Rng::from_seed_u64(5, Stream::Haystack), None)
            .unwrap();
        let units: Vec<String> = (0..8)
            .map(|_| stream.next_unit().unwrap().text.into_owned())
            .collect();
        let joined = units.concat();
        for s in ["Alpha one.", "Alpha two.", "Beta one!", "Beta two?"] {
            assert!(joined.contains(s), "{joined}");
        }
        assert_eq!(units[0..4], units[4..8], "wraps around the corpus");
    }
}
