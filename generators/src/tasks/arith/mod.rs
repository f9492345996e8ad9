//! `arith`: addition, subtraction and multiplication at any number of digits, in the layouts of
//! the length-generalisation literature, plus a long-context sum of numbers hidden in filler.

pub mod bignum;

use serde_json::json;

use crate::fit::render::render_facts;
use crate::fit::{fit, NeedleSpec};
use crate::haystack::Screen;
use crate::rng::{Rng, Stream};
use crate::tasks::Params;
use crate::template::{vars, Vars};
use crate::{canonical_json, Cell, GenError, Instance, Metric, ParamError, Run, Task};
use bignum::{add, compare, decimal, mul, reversed_decimal, sub, trim};
use serde::{Deserialize, Serialize};

/// The task's name: its command, its manifests' tag and the key of its random streams.
pub const NAME: &str = "arith";
/// One line saying what the task is.
pub const ABOUT: &str =
    "add, subtract or multiply at any digit count and layout; or sum numbers hidden in text";
/// The task's built-in templates, (name, source), the first its default.
pub const TEMPLATES: &[(&str, &str)] = &[(
    "default",
    include_str!("../../../templates/arith/default.j2"),
)];

/// Most digits per operand.
pub const MAX_DIGITS: u32 = 10_000;
/// Numbers hidden in the haystack for `--op sum` without `--count`.
pub const SUM_COUNT: usize = 10;

choice! {
    /// The operation.
    pub enum Op {
        /// a + b
        Add = "add",
        /// a − b with a ≥ b
        Sub = "sub",
        /// a × b
        Mul = "mul",
        /// The sum of numbers hidden in a haystack.
        Sum = "sum",
    }
}

choice! {
    /// How operands and answer are written.
    pub enum Layout {
        /// `123+45=168`
        Plain = "plain",
        /// Operands and answer least-significant digit first.
        Reversed = "reversed",
        /// Answer least-significant digit first.
        ReversedAnswer = "reversed-answer",
        /// Operands zero-padded to the widest digit count, answer to its widest possible width.
        Padded = "padded",
        /// A place letter before every digit (a = units, b = tens, …).
        Hints = "hints",
    }
}

choice! {
    /// Carry control for addition and subtraction.
    pub enum Carries {
        /// Digits drawn freely.
        Any = "any",
        /// No column carries (or borrows).
        None = "none",
        /// Every column carries (or borrows) as far as the operands allow.
        Max = "max",
    }
}

/// arith's parameters, spelled as manifests record them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArithParams {
    /// Operation.
    pub op: Op,
    /// Digits per operand, inclusive range (the count is drawn first).
    pub digits: (u32, u32),
    /// Carry control.
    pub carries: Carries,
    /// Layout.
    pub layout: Layout,
    /// Numbers hidden for `sum` (default [`SUM_COUNT`]).
    pub count: Option<usize>,
}

impl Params for ArithParams {
    type Built = Arith;

    /// Check every parameter and make the task.
    fn build(&self) -> Result<Arith, ParamError> {
        let (op, digits, carries, layout) = (self.op, self.digits, self.carries, self.layout);
        if digits.0 == 0 || digits.1 < digits.0 || digits.1 > MAX_DIGITS {
            return Err(ParamError::new(
                "digits",
                format!("{}..{}", digits.0, digits.1),
                format!("a range within 1..{MAX_DIGITS}"),
            ));
        }
        if carries != Carries::Any && !matches!(op, Op::Add | Op::Sub) {
            return Err(ParamError::new(
                "carries",
                carries,
                "any unless the operation is add or sub",
            ));
        }
        if op == Op::Sub && carries == Carries::Max && digits.1 < 2 {
            return Err(ParamError::new(
                "digits",
                format!("{}..{}", digits.0, digits.1),
                "operands of 2 or more digits for sub with max carries (a one-digit subtraction never borrows)",
            ));
        }
        if op == Op::Sum && layout != Layout::Plain {
            return Err(ParamError::new(
                "layout",
                layout,
                "plain when the operation is sum (the numbers are hidden in text)",
            ));
        }
        let count = self.count.unwrap_or(SUM_COUNT);
        if count == 0 || count > 10_000 {
            return Err(ParamError::new("count", count, "1 to 10000"));
        }
        Ok(Arith {
            op,
            digits,
            carries,
            layout,
            count,
        })
    }

    fn native_size(&self) -> bool {
        self.op != Op::Sum
    }
}

/// Validated arithmetic parameters.
#[derive(Debug, Clone)]
pub struct Arith {
    /// Operation.
    pub op: Op,
    /// Digits per operand, inclusive range (the count is drawn first).
    pub digits: (u32, u32),
    /// Carry control.
    pub carries: Carries,
    /// Layout.
    pub layout: Layout,
    /// Numbers hidden for `sum`.
    pub count: usize,
}

impl Arith {
    fn content_params(&self) -> serde_json::Value {
        json!({
            "op": self.op.as_str(),
            "digits": [self.digits.0, self.digits.1],
            "carries": self.carries.as_str(),
            "layout": self.layout.as_str(),
            "count": if self.op == Op::Sum { Some(self.count) } else { None },
        })
    }

    /// Operand digits, least significant first, with the leading digit non-zero.
    fn operands(&self, rng: &mut Rng) -> (Vec<u8>, Vec<u8>) {
        let da = rng.range_inclusive(self.digits.0 as u64, self.digits.1 as u64) as usize;
        let db = if self.carries == Carries::Max {
            da
        } else {
            rng.range_inclusive(self.digits.0 as u64, self.digits.1 as u64) as usize
        };
        let (da, db) = if self.op == Op::Sub {
            (da.max(db), da.min(db))
        } else {
            (da, db)
        };
        let mut a = vec![0u8; da];
        let mut b = vec![0u8; db];
        let free = |rng: &mut Rng, i: usize, len: usize| -> u8 {
            if i + 1 == len && len > 1 {
                1 + rng.below(9) as u8
            } else {
                rng.below(10) as u8
            }
        };
        let mut carry = 0u8;
        for i in 0..da.max(db) {
            let top_a = i + 1 == da && da > 1;
            let top_b = i + 1 == db && db > 1;
            match (self.op, self.carries) {
                (_, Carries::Any) | (Op::Mul, _) | (Op::Sum, _) => {
                    if i < da {
                        a[i] = free(rng, i, da);
                    }
                    if i < db {
                        b[i] = free(rng, i, db);
                    }
                }
                (Op::Add, Carries::None) => {
                    // a_i + b_i ≤ 9 in every column.
                    if i < da && i < db {
                        let lo = u8::from(top_a);
                        a[i] = lo + rng.below((10 - u64::from(lo)) - u64::from(top_b)) as u8;
                        let lo_b = u8::from(top_b);
                        b[i] = lo_b + rng.below(u64::from(9 - a[i] - lo_b) + 1) as u8;
                    } else if i < da {
                        a[i] = free(rng, i, da);
                    } else {
                        b[i] = free(rng, i, db);
                    }
                }
                (Op::Add, Carries::Max) => {
                    // Every column's sum with the incoming carry reaches 10.
                    let need = 10 - carry;
                    a[i] = if top_a {
                        1 + rng.below(9) as u8
                    } else {
                        rng.below(10) as u8
                    };
                    let min_b = need.saturating_sub(a[i]).max(u8::from(top_b));
                    if min_b > 9 {
                        a[i] = 9;
                    }
                    let min_b = need.saturating_sub(a[i]).max(u8::from(top_b));
                    b[i] = min_b + rng.below(u64::from(10 - min_b)) as u8;
                    carry = u8::from(a[i] + b[i] + carry >= 10);
                }
                (Op::Sub, Carries::None) => {
                    // a_i ≥ b_i in every column (a has at least as many digits).
                    if i < db {
                        let lo = u8::from(top_a);
                        a[i] = lo + rng.below(u64::from(10 - lo)) as u8;
                        let lo_b = u8::from(top_b);
                        if a[i] < lo_b {
                            a[i] = lo_b;
                        }
                        b[i] = lo_b + rng.below(u64::from(a[i] - lo_b) + 1) as u8;
                    } else {
                        a[i] = free(rng, i, da);
                    }
                }
                (Op::Sub, Carries::Max) => {
                    if i + 1 < da {
                        // Borrow in every column below the top: b_i > a_i − borrow_in.
                        a[i] = rng.below(9) as u8;
                        if i < db {
                            let lo = (a[i] + 1 - carry).max(u8::from(top_b));
                            b[i] = lo + rng.below(u64::from(10 - lo)) as u8;
                        }
                        carry = 1;
                    } else {
                        // Top column: a_top − borrow_in ≥ b_top and a_top ≥ 1, so a ≥ b.
                        let b_top = if i < db {
                            u8::from(top_b)
                                + rng.below(u64::from(9 - carry - u8::from(top_b))) as u8
                        } else {
                            0
                        };
                        let lo = (b_top + carry).max(1);
                        a[i] = lo + rng.below(u64::from(10 - lo)) as u8;
                        if i < db {
                            b[i] = b_top;
                        }
                    }
                }
            }
        }
        trim(&mut a);
        trim(&mut b);
        if self.op == Op::Sub && compare(&a, &b) == std::cmp::Ordering::Less {
            std::mem::swap(&mut a, &mut b);
        }
        (a, b)
    }
}

fn longest_run(flags: &[bool]) -> usize {
    let (mut best, mut cur) = (0, 0);
    for &f in flags {
        cur = if f { cur + 1 } else { 0 };
        best = best.max(cur);
    }
    best
}

/// Place letter for digit position p (0 = units): a … z, then ba, bb, … (base 26).
fn place(p: usize) -> String {
    let mut n = p;
    let mut s = vec![b'a' + (n % 26) as u8];
    n /= 26;
    while n > 0 {
        s.push(b'a' + (n % 26) as u8);
        n /= 26;
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}

impl Arith {
    fn write(&self, d: &[u8], width: usize, answer: bool) -> String {
        let mut digits = d.to_vec();
        if self.layout == Layout::Padded {
            digits.resize(width.max(d.len()), 0);
        }
        match self.layout {
            Layout::Plain | Layout::Padded => decimal(&digits),
            Layout::Reversed => reversed_decimal(&digits),
            Layout::ReversedAnswer if answer => reversed_decimal(&digits),
            Layout::ReversedAnswer => decimal(&digits),
            Layout::Hints => digits
                .iter()
                .enumerate()
                .rev()
                .map(|(p, &x)| format!("{}{}", place(p), x))
                .collect(),
        }
    }
}

impl Task for Arith {
    /// The operand tuple (for `sum`, the hidden numbers in order).
    fn identity(&self, instance: &Instance) -> Vec<String> {
        crate::identity::fact_key(instance, "operands", "operands")
    }

    /// Written-out arithmetic is all question; a sum of hidden numbers has a context.
    fn has_context(&self) -> bool {
        self.op == Op::Sum
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn variant(&self) -> String {
        self.op.as_str().to_string()
    }

    fn params(&self) -> serde_json::Value {
        self.content_params()
    }

    fn uses_haystack(&self) -> bool {
        self.op == Op::Sum
    }

    fn requires_haystack(&self) -> bool {
        self.op == Op::Sum
    }

    fn default_reserve(&self) -> u32 {
        0
    }

    fn example_vars(&self) -> Vars {
        vars([(
            "question",
            if self.op == Op::Sum {
                "What is the sum?"
            } else {
                ""
            },
        )])
    }

    fn minimum_length(&self, run: &Run) -> Result<u64, GenError> {
        if self.op == Op::Sum {
            // Measured with the widest numbers, the real question and the widest total, so the
            // minimum stated is one every instance reaches (a few haystack tokens around).
            let tok = &run.tokenizer;
            let widest = "9".repeat(self.digits.1 as usize);
            let question = sum_question(self.count);
            let frame = run.frame(&vars([("question", &question)]), "")?;
            let mut needed = frame.fixed_tokens(tok)? + 32 + self.count + 2;
            needed += self.count * tok.count(&format!(" Add {widest} to the tally."))?;
            let total = "9".repeat(self.digits.1 as usize + self.count.to_string().len());
            let answer = u64::from(run.answer_tokens(&total)?);
            return Ok(needed as u64 + answer);
        }
        let frame = run.frame(&self.example_vars(), "")?;
        let n = frame.fixed_tokens(&run.tokenizer)?;
        let per = (self.digits.1 as usize).div_ceil(2) + 8;
        let items = if self.op == Op::Sum { self.count } else { 2 };
        // The answer budget: at most one token per digit (and separator) of the widest result.
        let answer = if run.reserve > 0 {
            run.reserve
        } else {
            2 * (2 * u64::from(self.digits.1) + 2) + u64::from(crate::ANSWER_SLACK)
        };
        Ok((n + per * items) as u64 + answer)
    }

    fn generate(&self, run: &Run, cell: &Cell) -> Result<Instance, GenError> {
        let params = canonical_json(&self.content_params());
        let coords = run.coordinates(NAME, &params, cell);
        let mut rng = coords.rng(Stream::Content);
        let tok = &run.tokenizer;
        let mut p = self.content_params();
        let (fitted, question, target, operands, max_new_tokens) = if self.op == Op::Sum {
            let numbers: Vec<Vec<u8>> =
                (0..self.count).map(|_| self.operands(&mut rng).0).collect();
            let total = numbers.iter().fold(vec![0u8], |acc, n| add(&acc, n).0);
            let question = sum_question(numbers.len());
            let frame = run.frame(&vars([("question", &question)]), "")?;
            let max_new_tokens = run.answer_tokens(&decimal(&total))?;
            let budget = cell.length.saturating_sub(max_new_tokens.into()) as usize;
            let haystack = run.required_haystack("an arith sum")?;
            let mut placement = coords.rng(Stream::Placement);
            let first = cell.depth.unwrap_or(50.0);
            let needles: Vec<NeedleSpec> = numbers
                .iter()
                .enumerate()
                .map(|(i, n)| NeedleSpec {
                    text: format!("Add {} to the tally.", decimal(n)),
                    depth: if i == 0 {
                        first
                    } else {
                        100.0 * placement.unit_f64()
                    },
                })
                .collect();
            // No haystack sentence may state one of the numbers or the total (the answer would
            // be given away), or read as a note to add one.
            let mut screen = Screen::new(numbers.iter().map(|n| decimal(n)));
            screen.add(&decimal(&total));
            screen.add("the tally");
            let mut stream = haystack
                .stream(tok, Rng::from_key(coords.key(), Stream::Haystack), None)?
                .with_screen(screen);
            let fitted = fit(tok, &frame, &needles, &mut stream, budget)?;
            p["carries_count"] = json!(null);
            p["longest_carry_chain"] = json!(null);
            p["screened_units"] = json!(stream.screened_units());
            (fitted, question, decimal(&total), numbers, max_new_tokens)
        } else {
            let (a, b) = self.operands(&mut rng);
            let (result, flags) = match self.op {
                Op::Add => {
                    let (r, c) = add(&a, &b);
                    (r, Some(c))
                }
                Op::Sub => {
                    let (r, c) = sub(&a, &b);
                    (r, Some(c))
                }
                _ => (mul(&a, &b), None),
            };
            let w = self.digits.1 as usize;
            let answer_width = match self.op {
                Op::Add => w + 1,
                Op::Mul => 2 * w,
                _ => w,
            };
            let sym = match self.op {
                Op::Add => "+",
                Op::Sub => "-",
                _ => "*",
            };
            let problem = format!(
                "{}{sym}{}=",
                self.write(&a, w, false),
                self.write(&b, w, false)
            );
            let frame = run.frame(&vars([("question", "")]), "")?;
            let target = self.write(&result, answer_width, true);
            let max_new_tokens = run.answer_tokens(&target)?;
            let budget = cell.length.saturating_sub(max_new_tokens.into()) as usize;
            let fitted = render_facts(tok, &frame, std::slice::from_ref(&problem))?;
            if cell.length > 0 && fitted.prompt_tokens > budget {
                return Err(GenError::TooShort {
                    budget,
                    needed: fitted.prompt_tokens,
                });
            }
            p["carries_count"] = json!(flags.as_ref().map(|f| f.iter().filter(|&&c| c).count()));
            p["longest_carry_chain"] = json!(flags.as_ref().map(|f| longest_run(f)));
            p["result"] = json!(decimal(&result));
            (fitted, problem, target, vec![a, b], max_new_tokens)
        };
        let op_strings: Vec<String> = operands.iter().map(|d| decimal(d)).collect();
        if self.op == Op::Sum {
            p["result"] = json!(target);
        }
        p["operands"] = json!(op_strings);
        p["operand_digits"] = json!(operands.iter().map(Vec::len).collect::<Vec<_>>());
        let fitted = fitted.keep_needles(self.op == Op::Sum);
        Ok(Instance {
            question,
            answer_prefix: String::new(),
            target: target.clone(),
            answers: vec![target],
            metric: Metric::Exact,
            max_new_tokens,
            params: canonical_json(&p),
            ..Instance::fitted(self, run, cell, fitted)
        })
    }
}

/// The question of a sum of `count` hidden numbers.
fn sum_question(count: usize) -> String {
    format!("What is the sum of all {count} numbers the notes give? Reply with the number only.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(haystack: bool) -> Run {
        use crate::haystack::{Haystack, HaystackKind};
        use crate::{Template, Tokenizer};
        let tok = Tokenizer::O200k;
        Run {
            haystack: haystack.then(|| Haystack::prepare(HaystackKind::Noise, None, &tok).unwrap()),
            tokenizer: tok,
            template: Template::compile(
                "default.j2",
                crate::tasks::builtin_template(NAME, "default").unwrap(),
            )
            .unwrap(),
            seed: 5.into(),
            reserve: 24,
            reader: Default::default(),
        }
    }

    /// The one place the fingerprint tests build a task, so a new constructor changes one line.
    fn arith(
        op: &str,
        digits: (u32, u32),
        carries: &str,
        layout: &str,
        count: Option<usize>,
    ) -> Option<Arith> {
        ArithParams {
            op: op.parse().ok()?,
            digits,
            carries: carries.parse().ok()?,
            layout: layout.parse().ok()?,
            count,
        }
        .build()
        .ok()
    }

    fn hash_result(h: &mut crate::hash::FieldHasher, got: Result<Instance, GenError>) {
        match got {
            Ok(instance) => h.str(&crate::hash::content_hash(&instance)),
            Err(e) => h.str(&format!("error: {e}")),
        };
    }

    /// Every operation, layout and carry mode, hashed against a constant recorded before the
    /// bignum code moved out: any change to an operand, answer or `params` changes it.
    #[test]
    fn operation_instances_are_unchanged() {
        let run = run(false);
        let mut h = crate::hash::FieldHasher::new();
        for op in ["add", "sub", "mul"] {
            for layout in ["plain", "reversed", "reversed-answer", "padded", "hints"] {
                for carries in ["any", "none", "max"] {
                    for digits in [(1, 12), (1, 3), (20, 90)] {
                        let Some(task) = arith(op, digits, carries, layout, None) else {
                            h.str("refused");
                            continue;
                        };
                        h.u64(task.minimum_length(&run).unwrap());
                        for sample in 0..25 {
                            for length in [0, 40, 400] {
                                let cell = Cell {
                                    length,
                                    depth: None,
                                    sample,
                                    slot: sample,
                                };
                                hash_result(&mut h, task.generate(&run, &cell));
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(h.hex(), "8ef14c3b264c7598072adbcd7be5c4a9");
    }

    /// `sum` in filler at several depths and counts, hashed likewise.
    #[test]
    fn sum_instances_are_unchanged() {
        let run = run(true);
        let mut h = crate::hash::FieldHasher::new();
        for (digits, count) in [((1, 6), None), ((3, 30), Some(4)), ((1, 2), Some(40))] {
            let task = arith("sum", digits, "any", "plain", count).unwrap();
            h.u64(task.minimum_length(&run).unwrap());
            for sample in 0..6 {
                for depth in [None, Some(0.0), Some(42.0), Some(100.0)] {
                    for length in [0, 1500] {
                        let cell = Cell {
                            length,
                            depth,
                            sample,
                            slot: sample,
                        };
                        hash_result(&mut h, task.generate(&run, &cell));
                    }
                }
            }
        }
        assert_eq!(h.hex(), "9cad4da881e301fd6085254490e25185");
    }

    #[test]
    fn place_letters() {
        assert_eq!(place(0), "a");
        assert_eq!(place(25), "z");
        assert_eq!(place(26), "ba");
    }

    #[test]
    fn carry_control() {
        for (op, carries) in [
            ("add", "none"),
            ("add", "max"),
            ("sub", "none"),
            ("sub", "max"),
        ] {
            let t = ArithParams {
                op: op.parse().unwrap(),
                digits: (1, 30),
                carries: carries.parse().unwrap(),
                layout: Layout::Plain,
                count: None,
            }
            .build()
            .unwrap();
            let mut rng = Rng::from_seed_u64(4, Stream::Content);
            for _ in 0..500 {
                let (a, b) = t.operands(&mut rng);
                assert!(a.last() != Some(&0) || a.len() == 1);
                assert!(b.last() != Some(&0) || b.len() == 1);
                let flags = if op == "add" {
                    add(&a, &b).1
                } else {
                    sub(&a, &b).1
                };
                let n = flags.iter().filter(|&&f| f).count();
                if carries == "none" {
                    assert_eq!(n, 0, "{op} {} {}", decimal(&a), decimal(&b));
                } else {
                    let cols = if op == "add" {
                        a.len().min(b.len())
                    } else {
                        a.len() - 1
                    };
                    assert!(
                        n >= cols,
                        "{op} {} {}: {n} carries",
                        decimal(&a),
                        decimal(&b)
                    );
                }
            }
        }
    }
}
