//! The six MMLU variants: multiple-choice questions one per line, each labelled
//! `Question <7-digit id>:`. The needles are questions of the test split; the haystack is
//! auxiliary_train questions. In `mk` every id is distinct; in `mv` each id labels `per_id`
//! questions (the asked id exactly that many, all test questions; a distractor id fewer only
//! where the context's tail was cut).

use std::collections::BTreeSet;

use serde_json::json;

use super::fill::{Piece, Pool, Slot, Source};
use super::{fresh_id, needle_places, ordinal, Answer, Ruler2, Ruler2Variant, Skeleton};
use crate::haystack::mmlu::{McItem, Mmlu};
use crate::rng::{Rng, Stream};
use crate::tasks::qa::LazyShuffle;
use crate::template::Frame;
use crate::tokenizer::Tokenizer;
use crate::{canonical_json, Cell, GenError, Instance, Metric, Run};

/// The run's MMLU copy.
pub(super) fn bank(run: &Run) -> Result<&Mmlu, GenError> {
    run.required_haystack(super::NAME)?.mmlu().ok_or_else(|| {
        GenError::BadParams(
            "ruler2's MMLU variants read their questions from an MMLU copy, not from a text haystack"
                .into(),
        )
    })
}

/// A unit of the context: the label and the question's line.
fn unit(id: u64, item: &McItem) -> String {
    format!("Question {id}: {}", item.line())
}

/// What one row asks: the id, its test questions (in needle order) and the ordinal `k`.
struct Needle {
    id: u64,
    tests: Vec<usize>,
    k: usize,
}

fn needle(task: &Ruler2, run: &Run, cell: &Cell, bank: &Mmlu) -> Result<Needle, GenError> {
    let m = task.needle_count();
    let tests = task.pool_draw(
        run,
        "MMLU data's test questions",
        bank.test.len(),
        cell.slot,
        m,
    )?;
    let params = canonical_json(&task.content_params());
    let mut rng = run
        .coordinates(super::NAME, &params, cell)
        .rng(Stream::Content);
    let id = fresh_id(&mut rng, &mut BTreeSet::new());
    let k = 1 + rng.index(m);
    Ok(Needle { id, tests, k })
}

/// Distractor questions in a seed-wide random order of the auxiliary split; in `mv`,
/// `per_id` consecutive ones (in pull order) share a fresh id.
struct Items<'a> {
    bank: &'a Mmlu,
    order: LazyShuffle,
    skip: BTreeSet<String>,
    used_ids: BTreeSet<u64>,
    per_id: usize,
    current: Option<(u64, usize)>,
}

impl Source for Items<'_> {
    fn pull(&mut self, tok: &Tokenizer, rng: &mut Rng) -> Result<Option<Piece>, GenError> {
        let d = loop {
            let Some(d) = self.order.draw(rng) else {
                return Ok(None);
            };
            // An auxiliary question word for word a needle's would be a second answer.
            if !self.skip.contains(&self.bank.aux[d].line()) {
                break d;
            }
        };
        let (id, left) = match self.current.take() {
            Some((id, left)) if left > 0 => (id, left),
            _ => (fresh_id(rng, &mut self.used_ids), self.per_id),
        };
        self.current = Some((id, left - 1));
        let text = unit(id, &self.bank.aux[d]);
        Ok(Some(Piece {
            tokens: tok.count(&format!("\n{text}"))?,
            text,
            key: rng.next_u64(),
            tag: d,
        }))
    }
}

fn instruction(task: &Ruler2) -> &'static str {
    match task.params.variant {
        Ruler2Variant::MkNiahMedium | Ruler2Variant::MkNiahHard => {
            "Below is a list of multiple-choice questions, one per line, each labelled with a number. After the list come a few of its questions solved as examples, then a question for you."
        }
        v if v.multi() => {
            "Below is a list of multiple-choice questions, one per line, each labelled with a number; several questions may share one label. A request about one label follows the list."
        }
        _ => {
            "Below is a list of multiple-choice questions, one per line, each labelled with a number. A request about one of them follows the list."
        }
    }
}

/// The request after the context; `examples` the worked examples (medium and hard of `mk`).
fn request(task: &Ruler2, n: &Needle, examples: &str) -> String {
    let id = n.id;
    let k = ordinal(n.k);
    let choose = "the letter of the right option (A, B, C or D)";
    match task.params.variant {
        Ruler2Variant::MkNiahEasy => format!(
            "Copy out Question {id} from the list above word for word, with its options, and nothing else."
        ),
        Ruler2Variant::MkNiahMedium => format!(
            "{examples}\n\nFirst copy out Question {id} from the list above word for word, with its options. Then solve it, and end your reply with \"Answer: \" and {choose}."
        ),
        Ruler2Variant::MkNiahHard => format!(
            "{examples}\n\nSolve Question {id} from the list above. Reply with \"Answer: \" and {choose}."
        ),
        Ruler2Variant::MvNiahEasy => format!(
            "Find every question labelled Question {id} in the list above and copy each one out word for word, with its options, in the order they appear."
        ),
        Ruler2Variant::MvNiahMedium => format!(
            "First copy out every question labelled Question {id} in the list above, word for word with its options, in the order they appear. Then, in a last paragraph of its own, copy out again only the {k} (1 indexed) of them."
        ),
        _ => format!(
            "Copy out only the {k} (1 indexed) question labelled Question {id} in the list above, word for word with its options, and nothing else."
        ),
    }
}

/// The worked examples: the first `shots` units drawn. Every row holds them (it has at least
/// `shots` units), their places in the context are random like any unit's, and they do not
/// change as the fill settles the count, so the text around the context stays put.
fn shot_units(pool: &Pool<'_>, shots: u32) -> Vec<usize> {
    (0..pool.pieces.len().min(shots as usize)).collect()
}

fn examples(bank: &Mmlu, pool: &Pool<'_>, shots: &[usize]) -> String {
    let mut text = String::from("Some questions of the list, solved:");
    for &i in shots {
        let p = &pool.pieces[i];
        let item = &bank.aux[p.tag];
        text.push_str(&format!("\n\n{}\nAnswer: {}", p.text, item.letter()));
    }
    text
}

fn skeleton_of(task: &Ruler2, bank: &Mmlu, n: &Needle) -> Skeleton {
    let needles: Vec<String> = n.tests.iter().map(|&t| unit(n.id, &bank.test[t])).collect();
    let lines: Vec<String> = n.tests.iter().map(|&t| bank.test[t].line()).collect();
    let longest = lines
        .iter()
        .max_by_key(|l| l.len())
        .cloned()
        .unwrap_or_default();
    let letter = bank.test[n.tests[0]].letter();
    let answer_text = match task.params.variant {
        Ruler2Variant::MkNiahEasy => needles[0].clone(),
        Ruler2Variant::MkNiahMedium => format!("{}\nAnswer: {letter}", needles[0]),
        Ruler2Variant::MkNiahHard => format!("Answer: {letter}"),
        Ruler2Variant::MvNiahEasy => needles.join("\n"),
        Ruler2Variant::MvNiahMedium => format!("{}\n\n{longest}", needles.join("\n")),
        _ => longest,
    };
    let solves = matches!(
        task.params.variant,
        Ruler2Variant::MkNiahMedium | Ruler2Variant::MkNiahHard
    );
    Skeleton {
        needles,
        answer_text,
        min_units: if solves {
            task.params.shots as usize
        } else {
            0
        },
    }
}

/// The needles and the frame, for the minimum length.
pub(super) fn skeleton(
    task: &Ruler2,
    run: &Run,
    cell: &Cell,
) -> Result<(Skeleton, Frame), GenError> {
    let bank = bank(run)?;
    let n = needle(task, run, cell, bank)?;
    let frame = Ruler2::frame(run, instruction(task), &request(task, &n, ""))?;
    Ok((skeleton_of(task, bank, &n), frame))
}

pub(super) fn generate(task: &Ruler2, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
    let bank = bank(run)?;
    let n = needle(task, run, cell, bank)?;
    let skeleton = skeleton_of(task, bank, &n);
    let items = Items {
        bank,
        order: LazyShuffle::new(bank.aux.len()),
        skip: n.tests.iter().map(|&t| bank.test[t].line()).collect(),
        used_ids: BTreeSet::from([n.id]),
        per_id: if task.params.variant.multi() {
            task.needle_count()
        } else {
            1
        },
        current: None,
    };
    let params = canonical_json(&task.content_params());
    let rng = run
        .coordinates(super::NAME, &params, cell)
        .rng(Stream::Haystack);
    let mut pool = Pool::new(Box::new(items), rng);
    // The worked examples are drawn first, so the first estimate counts them.
    pool.reach(skeleton.min_units, &run.tokenizer)?;
    let solves = matches!(
        task.params.variant,
        Ruler2Variant::MkNiahMedium | Ruler2Variant::MkNiahHard
    );
    let frame_for = |pool: &Pool<'_>, _: &[Slot]| -> Result<Frame, GenError> {
        let shown = if solves {
            examples(bank, pool, &shot_units(pool, task.params.shots))
        } else {
            String::new()
        };
        Ruler2::frame(run, instruction(task), &request(task, &n, &shown))
    };
    let filled = task.fill(run, cell, &skeleton, &mut pool, "\n", &frame_for)?;
    let (places, in_order) = needle_places(&filled.order, skeleton.needles.len());
    let lines: Vec<String> = in_order
        .iter()
        .map(|&j| bank.test[n.tests[j]].line())
        .collect();
    let kth = lines[n.k - 1].clone();
    let letter = bank.test[n.tests[0]].letter().to_string();
    let (target, answers, metric) = match task.params.variant {
        Ruler2Variant::MkNiahEasy => (lines[0].clone(), vec![lines[0].clone()], Metric::SoftAll),
        Ruler2Variant::MkNiahMedium | Ruler2Variant::MkNiahHard => {
            (letter.clone(), vec![letter.clone()], Metric::Letter)
        }
        Ruler2Variant::MvNiahEasy => (lines.join("\n"), lines.clone(), Metric::SoftAll),
        Ruler2Variant::MvNiahMedium => (kth.clone(), vec![kth], Metric::Soft2Steps),
        _ => (kth.clone(), vec![kth], Metric::SoftAll),
    };
    let mut sorted_places = places.clone();
    sorted_places.sort_unstable();
    let mut facts = json!({
        "id": n.id.to_string(),
        "needle_items": sorted_places,
        "test_questions": in_order.iter().map(|&j| n.tests[j]).collect::<Vec<_>>(),
        "needle_hashes": lines
            .iter()
            .map(|l| format!("{:016x}", xxhash_rust::xxh3::xxh3_64(l.as_bytes())))
            .collect::<Vec<_>>(),
    });
    if task.params.variant.multi() && task.params.variant != Ruler2Variant::MvNiahEasy {
        facts["ordinal"] = json!(n.k);
    }
    if solves {
        facts["answer_letter"] = json!(letter);
        let shots = shot_units(&pool, task.params.shots);
        let place_of = |u: usize| {
            filled
                .order
                .iter()
                .position(|s| *s == Slot::Unit(u))
                .map_or(0, |p| p + 1)
        };
        facts["shot_items"] = json!(shots.iter().map(|&u| place_of(u)).collect::<Vec<_>>());
    }
    let question = request(task, &n, "");
    Ok(task.row(
        run,
        cell,
        filled,
        Answer {
            question,
            target,
            answers,
            metric,
            facts,
        },
    ))
}
