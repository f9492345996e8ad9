//! Writings by format, topic and style: the replies of a conversation of writing requests.
//!
//! One piece is a pure function of its request (format, topic, style) and a random stream.
//! Each format has the shape a reader knows it by — an email's subject, greeting and sign-off,
//! a poem's short lines in stanzas, a tweet within 280 characters, a riddle ending in its
//! question, a story's characters and turns of events, a blog post's heading and an essay's
//! thesis and conclusion — and a length drawn per piece from the format's realistic range. A
//! style changes the register and the words: its own grammar rules (`name.style` in
//! `grammar.txt`) and, for informal and archaic writing, contractions or older forms.

use std::sync::OnceLock;

pub use super::finish::Style;
pub use super::topics::Topic;
use super::{Character, Prose, ProseState};
use crate::rng::{Rng, Stream};

choice! {
    /// The form of a piece of writing.
    pub enum Format {
        /// Subject, greeting, paragraphs, sign-off and name.
        Email = "email",
        /// A titled story with two characters and a turn of events.
        ShortStory = "short-story",
        /// A heading, first-person paragraphs, sometimes a list.
        BlogPost = "blog-post",
        /// A few short sentences within 280 characters, and a hashtag.
        Tweet = "tweet",
        /// A title and short lines in stanzas.
        Poem = "poem",
        /// A title, a thesis, its points and a conclusion.
        Essay = "essay",
        /// Clues in the first person, one per line, then the question.
        Riddle = "riddle",
    }
}

/// One writing request: what a conversation asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Request {
    /// The form.
    pub format: Format,
    /// What it is about.
    pub topic: Topic,
    /// The register.
    pub style: Style,
}

impl Request {
    /// The random stream of this request's piece number `seed`: keyed by the request too, so
    /// two requests with the same seed write unrelated pieces.
    pub fn rng(&self, seed: u64) -> Rng {
        let tag = format!(
            "needlework-writing-v1\u{0}{}\u{0}{}\u{0}{}\u{0}{seed}",
            self.format, self.topic, self.style
        );
        let lo = xxhash_rust::xxh3::xxh3_128_with_seed(tag.as_bytes(), 1).to_le_bytes();
        let hi = xxhash_rust::xxh3::xxh3_128_with_seed(tag.as_bytes(), 2).to_le_bytes();
        let mut key = [0u8; 32];
        key[..16].copy_from_slice(&lo);
        key[16..].copy_from_slice(&hi);
        Rng::from_key(key, Stream::Content)
    }
}

/// Most characters of a tweet.
pub const TWEET_CHARS: usize = 280;

impl Format {
    /// The range of words a piece of this format has, inclusive: realistic lengths (a tweet
    /// of 20 to 60 words, a poem of 40 to 200, an essay of 300 to 900; an email of 60 to 300,
    /// a story of 250 to 800, a blog post of 200 to 700, a riddle of 25 to 70).
    pub fn words(self) -> (usize, usize) {
        match self {
            Format::Email => (60, 300),
            Format::ShortStory => (250, 800),
            Format::BlogPost => (200, 700),
            Format::Tweet => (20, 60),
            Format::Poem => (40, 200),
            Format::Essay => (300, 900),
            Format::Riddle => (25, 70),
        }
    }
}

/// Words of a piece: runs of non-space characters holding a letter or a digit (a blog post's
/// `#` or a list's `-` is not a word).
pub fn word_count(text: &str) -> usize {
    text.split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count()
}

/// Tries at a piece before the last one is kept (a length out of range is redrawn; with the
/// shipped grammar nearly every first try fits).
const MAX_TRIES: usize = 64;
/// Redraws of one sentence that would overrun the piece's most words.
const SENTENCE_TRIES: usize = 8;

/// One piece for `format`, `topic` and `style`, written from `seed` alone: the same arguments
/// always give the same text, and different seeds different pieces.
pub fn write(format: Format, topic: Topic, style: Style, seed: u64) -> Result<String, String> {
    static BUILTIN: OnceLock<Result<Prose, String>> = OnceLock::new();
    let prose = BUILTIN.get_or_init(Prose::builtin).as_ref()?;
    let request = Request {
        format,
        topic,
        style,
    };
    prose.write(request, &mut request.rng(seed))
}

/// A piece being assembled: its text and its words so far, with the range to land in.
struct Draft {
    text: String,
    words: usize,
    target: usize,
    most: usize,
}

impl Draft {
    fn push(&mut self, piece: &str) {
        self.words += word_count(piece);
        self.text.push_str(piece);
    }

    fn full(&self) -> bool {
        self.words >= self.target
    }

    fn room(&self, piece: &str) -> bool {
        self.words + word_count(piece) <= self.most
    }
}

impl Prose {
    /// One piece for `request`, drawn from `rng`.
    pub fn write(&self, request: Request, rng: &mut Rng) -> Result<String, String> {
        let (least, most) = request.format.words();
        let mut last = String::new();
        for _ in 0..MAX_TRIES {
            let target = rng.range_inclusive(least as u64, most as u64) as usize;
            let mut draft = Draft {
                text: String::with_capacity(target * 7),
                words: 0,
                target,
                most,
            };
            let mut st = self.writing_state(request, rng);
            match request.format {
                Format::Email => self.email(&mut draft, &mut st, rng)?,
                Format::ShortStory => self.story(&mut draft, &mut st, rng)?,
                Format::BlogPost => self.blog(&mut draft, &mut st, rng)?,
                Format::Tweet => self.tweet(&mut draft, &mut st, rng)?,
                Format::Poem => self.poem(&mut draft, &mut st, rng)?,
                Format::Essay => self.essay(&mut draft, &mut st, rng)?,
                Format::Riddle => self.riddle(&mut draft, &mut st, rng)?,
            }
            let text = draft.text.trim_end().to_string();
            let n = word_count(&text);
            let fits = (least..=most).contains(&n)
                && (request.format != Format::Tweet || text.chars().count() <= TWEET_CHARS);
            if fits {
                return Ok(text);
            }
            last = text;
        }
        Ok(last)
    }

    /// The state a piece starts from: its topic and style kept throughout, two characters, a
    /// writer and a reader.
    fn writing_state(&self, request: Request, rng: &mut Rng) -> ProseState {
        let topic = Topic::ALL
            .iter()
            .position(|&t| t == request.topic)
            .unwrap_or(0);
        let mut st = ProseState {
            topic,
            fixed_topic: true,
            style: Some(request.style),
            ..ProseState::default()
        };
        self.new_paragraph(&mut st, rng, true);
        if st.other.name == st.hero.name {
            st.other = self.lex.character(rng);
        }
        let writer = self.lex.character(rng);
        let mut surname = String::new();
        self.lex.surname(rng, &mut surname);
        st.writer = format!("{} {surname}", writer.name);
        st.writer_given = writer.name;
        let reader: Character = self.lex.character(rng);
        let mut reader_surname = String::new();
        self.lex.surname(rng, &mut reader_surname);
        let titles: &[&str] = if reader.female {
            &["Ms", "Mrs", "Dr"]
        } else {
            &["Mr", "Dr"]
        };
        st.reader_title = format!("{} {reader_surname}", rng.choose(titles));
        st.reader = reader.name;
        st
    }

    fn rule_text(&self, name: &str, st: &mut ProseState, rng: &mut Rng) -> Result<String, String> {
        let r = self.grammar.styled(self.grammar.rule(name)?, st.style);
        Ok(self.sentence_of(r, st, rng))
    }

    /// A rule's text without added end punctuation (titles, lines, greetings).
    fn fragment(&self, name: &str, st: &mut ProseState, rng: &mut Rng) -> Result<String, String> {
        let r = self.grammar.styled(self.grammar.rule(name)?, st.style);
        let raw = self.raw(r, st, rng);
        Ok(super::finish::restyle(
            &super::finish::finish(&raw, false),
            st.style,
        ))
    }

    /// Sentences of `rule` appended to the draft's current paragraph until it holds `count` or
    /// the piece is full, each redrawn a few times if it would overrun the piece.
    fn sentences(
        &self,
        draft: &mut Draft,
        rule: &str,
        count: usize,
        st: &mut ProseState,
        rng: &mut Rng,
    ) -> Result<usize, String> {
        let mut added = 0;
        while added < count && !draft.full() {
            let mut placed = false;
            for _ in 0..SENTENCE_TRIES {
                let s = self.rule_text(rule, st, rng)?;
                if draft.room(&s) {
                    if !draft.text.is_empty() && !draft.text.ends_with('\n') {
                        draft.text.push(' ');
                    }
                    draft.push(&s);
                    placed = true;
                    break;
                }
            }
            if !placed {
                break;
            }
            added += 1;
        }
        Ok(added)
    }

    fn paragraph_break(draft: &mut Draft) {
        if !draft.text.is_empty() {
            draft.text.push_str("\n\n");
        }
    }

    fn email(&self, d: &mut Draft, st: &mut ProseState, rng: &mut Rng) -> Result<(), String> {
        let subject = self.fragment("subject_line", st, rng)?;
        d.push(&format!("Subject: {subject}\n\n"));
        let greeting = self.fragment("greeting", st, rng)?;
        d.push(&format!("{greeting}\n\n"));
        let signoff = self.fragment("signoff", st, rng)?;
        let name = if st.style == Some(Style::Informal) {
            st.writer_given.clone()
        } else {
            st.writer.clone()
        };
        let close = self.rule_text("email_close", st, rng)?;
        // The close, sign-off and name are kept back from the body's allowance.
        d.most -= word_count(&close) + word_count(&signoff) + word_count(&name);
        d.target = d.target.min(d.most);
        let open = self.rule_text("email_open", st, rng)?;
        d.push(&open);
        let mut first = true;
        while !d.full() {
            if !first {
                Self::paragraph_break(d);
                self.new_paragraph(st, rng, false);
            }
            let n = rng.range_inclusive(2, 5) as usize;
            let rule = if rng.chance(1, 3) {
                "first_person"
            } else {
                "body"
            };
            if self.sentences(d, rule, n, st, rng)? == 0 {
                break;
            }
            first = false;
        }
        d.text.push_str("\n\n");
        d.push(&close);
        d.push(&format!("\n\n{signoff}\n{name}"));
        Ok(())
    }

    fn story(&self, d: &mut Draft, st: &mut ProseState, rng: &mut Rng) -> Result<(), String> {
        let title = self.fragment("story_title", st, rng)?;
        d.push(&format!("{title}\n\n"));
        let end = self.rule_text("story_end", st, rng)?;
        d.most -= word_count(&end);
        d.target = d.target.min(d.most);
        let open = self.rule_text("story_open", st, rng)?;
        d.push(&open);
        self.sentences(d, "story_line", rng.range_inclusive(1, 3) as usize, st, rng)?;
        Self::paragraph_break(d);
        let meet = self.rule_text("story_meet", st, rng)?;
        d.push(&meet);
        self.sentences(d, "story_line", rng.range_inclusive(2, 4) as usize, st, rng)?;
        while !d.full() {
            Self::paragraph_break(d);
            self.new_paragraph(st, rng, false);
            if self.sentences(d, "story_turn", 1, st, rng)? == 0 {
                break;
            }
            let n = rng.range_inclusive(2, 5) as usize;
            self.sentences(d, "story_line", n, st, rng)?;
            if rng.chance(1, 2) {
                self.sentences(d, "styled", 1, st, rng)?;
            }
        }
        Self::paragraph_break(d);
        d.push(&end);
        Ok(())
    }

    fn blog(&self, d: &mut Draft, st: &mut ProseState, rng: &mut Rng) -> Result<(), String> {
        let title = self.fragment("blog_title", st, rng)?;
        d.push(&format!("# {title}\n\n"));
        let close = self.rule_text("blog_close", st, rng)?;
        d.most -= word_count(&close);
        d.target = d.target.min(d.most);
        let open = self.rule_text("blog_open", st, rng)?;
        d.push(&open);
        self.sentences(
            d,
            "first_person",
            rng.range_inclusive(1, 3) as usize,
            st,
            rng,
        )?;
        let mut listed = !rng.chance(1, 2);
        while !d.full() {
            Self::paragraph_break(d);
            self.new_paragraph(st, rng, false);
            if !listed && d.words + 30 < d.target {
                listed = true;
                let intro = self.fragment("blog_list_intro", st, rng)?;
                d.push(&intro);
                for _ in 0..rng.range_inclusive(3, 5) {
                    let item = self.fragment("blog_item", st, rng)?;
                    d.push(&format!("\n- {item}"));
                }
                continue;
            }
            let n = rng.range_inclusive(2, 5) as usize;
            let rule = if rng.chance(1, 2) {
                "first_person"
            } else {
                "body"
            };
            if self.sentences(d, rule, n, st, rng)? == 0 {
                break;
            }
        }
        Self::paragraph_break(d);
        d.push(&close);
        Ok(())
    }

    fn tweet(&self, d: &mut Draft, st: &mut ProseState, rng: &mut Rng) -> Result<(), String> {
        let name = st.topic_tag();
        let tag = format!(" #{name}");
        let mut seen = Vec::new();
        for _ in 0..SENTENCE_TRIES * 4 {
            if d.full() {
                break;
            }
            let s = self.rule_text("tweet_sentence", st, rng)?;
            let chars = d.text.chars().count() + s.chars().count() + 1 + tag.len();
            // A tweet says each thing once: no two sentences open with the same two words.
            let opening: Vec<&str> = s.split(' ').take(2).collect();
            let repeated = seen
                .iter()
                .any(|t: &String| t.split(' ').take(2).eq(opening.iter().copied()));
            if chars > TWEET_CHARS || !d.room(&s) || repeated {
                continue;
            }
            if !d.text.is_empty() {
                d.text.push(' ');
            }
            d.push(&s);
            seen.push(s);
        }
        d.text.push_str(&tag);
        Ok(())
    }

    fn poem(&self, d: &mut Draft, st: &mut ProseState, rng: &mut Rng) -> Result<(), String> {
        let title = self.fragment("poem_title", st, rng)?;
        d.push(&format!("{title}\n\n"));
        let mut stanzas = 0;
        while !d.full() {
            if stanzas > 0 {
                d.text.push_str("\n\n");
                self.new_paragraph(st, rng, false);
            }
            let lines = rng.range_inclusive(3, 6);
            let mut written = 0;
            for k in 0..lines {
                let mut line = String::new();
                for _ in 0..SENTENCE_TRIES {
                    line = self.fragment("poem_line", st, rng)?;
                    if d.room(&line) {
                        break;
                    }
                    line.clear();
                }
                if line.is_empty() {
                    break;
                }
                let last = k + 1 == lines || d.words + word_count(&line) >= d.target;
                if written > 0 {
                    d.text.push('\n');
                }
                d.push(&line);
                d.text.push(if last { '.' } else { ',' });
                written += 1;
                if last {
                    break;
                }
            }
            if written == 0 {
                break;
            }
            stanzas += 1;
        }
        // However the last stanza ended (a line that would overrun the piece is never written),
        // the poem closes with a full stop.
        d.text.truncate(d.text.trim_end().len());
        if d.text.ends_with(',') {
            d.text.pop();
            d.text.push('.');
        }
        Ok(())
    }

    fn essay(&self, d: &mut Draft, st: &mut ProseState, rng: &mut Rng) -> Result<(), String> {
        let title = self.fragment("essay_title", st, rng)?;
        d.push(&format!("{title}\n\n"));
        let conclusion = self.rule_text("essay_conclusion", st, rng)?;
        d.most -= word_count(&conclusion) + 40;
        d.target = d.target.min(d.most);
        self.sentences(d, "body", rng.range_inclusive(1, 3) as usize, st, rng)?;
        let thesis = self.rule_text("essay_thesis", st, rng)?;
        d.text.push(' ');
        d.push(&thesis);
        while !d.full() {
            Self::paragraph_break(d);
            self.new_paragraph(st, rng, false);
            if self.sentences(d, "essay_lead", 1, st, rng)? == 0 {
                break;
            }
            let n = rng.range_inclusive(2, 6) as usize;
            self.sentences(d, "body", n, st, rng)?;
        }
        Self::paragraph_break(d);
        d.push(&conclusion);
        d.most += 40;
        d.target = d.words + 1;
        self.sentences(d, "body", 1, st, rng)?;
        Ok(())
    }

    fn riddle(&self, d: &mut Draft, st: &mut ProseState, rng: &mut Rng) -> Result<(), String> {
        let question = self.fragment("riddle_question", st, rng)?;
        d.most -= word_count(&question);
        d.target = d.target.min(d.most);
        let mut seen: Vec<String> = Vec::new();
        for _ in 0..SENTENCE_TRIES * 4 {
            if d.full() {
                break;
            }
            let clue = self.rule_text("riddle_clue", st, rng)?;
            if !d.room(&clue) || seen.contains(&clue) {
                continue;
            }
            d.push(&clue);
            d.text.push('\n');
            seen.push(clue);
        }
        d.push(&question);
        Ok(())
    }
}

impl ProseState {
    /// A hashtag for the topic: its name without spaces or a leading "the".
    fn topic_tag(&self) -> String {
        Topic::ALL
            .get(self.topic)
            .map(|t| t.as_str().replace('-', ""))
            .unwrap_or_default()
    }
}
