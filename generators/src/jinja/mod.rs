//! The template engine prompt templates and chat templates run on: minijinja, with what a
//! template may make bounded in size.
//!
//! Fuel ends a template that loops too long, but a short loop can still grow a value without
//! limit (a string doubled forty times is a terabyte). So each render has a size budget, and
//! the compiled bytecode is rewritten so that every value an operation makes (concatenation,
//! arithmetic, a filter, a function, a method, a list or map built) has its size counted
//! against it, as is every byte written out. An operation whose result could be far larger
//! than its inputs (`join`, `replace`, `indent`, `format`, `batch`, `slice`, `pprint`, the
//! string methods `replace`, `join` and `format`) is checked before it runs. The budget is
//! spent, never refunded: a template cannot hold more than the inputs plus what it has
//! made, so memory stays within the inputs plus the budget, whatever the template does.
//! (minijinja itself refuses repeating a string beyond 100 MB and ranges beyond 100 000 items.)

use std::cell::Cell;
use std::sync::Arc;

use minijinja::machinery::{self, CompiledTemplate, Instruction, Instructions, TemplateConfig, Vm};
use minijinja::value::{Value, ValueKind};
use minijinja::{AutoEscape, Environment, Error, ErrorKind};

pub mod date;
mod limits;

pub use limits::check_method;

/// Work a template may do per render before it is stopped (a template that loops forever must
/// fail, not hang); the checks woven in count as work too.
pub const FUEL: u64 = 100_000_000;

/// A render may make this many bytes beyond a multiple of its inputs (the budget's floor).
pub const BUDGET_FLOOR: usize = 4 << 20;

/// A render may make this many times the bytes of its inputs (besides [`BUDGET_FLOOR`]): a
/// chat template copies the user message a few times on its way out (trimmed, concatenated,
/// captured by a macro), never dozens of times.
pub const BUDGET_PER_INPUT_BYTE: usize = 16;

/// The budget of a render whose inputs hold `input_bytes`.
pub fn budget(input_bytes: usize) -> usize {
    input_bytes
        .saturating_mul(BUDGET_PER_INPUT_BYTE)
        .saturating_add(BUDGET_FLOOR)
}

// Names no template can spell (they hold a space), so a template cannot shadow the checks.
const CHECK_VALUE: &str = "needlework check value";
const COUNT_RAW: &str = "needlework count raw";

thread_local! {
    /// Bytes the render on this thread may still make.
    static LEFT: Cell<usize> = const { Cell::new(usize::MAX) };
    /// The budget the render on this thread started with (for the message).
    static BUDGET: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// The error of a render over its budget.
fn over_budget() -> Error {
    let budget = BUDGET.with(Cell::get);
    Error::new(
        ErrorKind::InvalidOperation,
        format!(
            "the template makes more than {budget} bytes (the limit for these inputs: {BUDGET_PER_INPUT_BYTE} times their size plus {} MiB), so it is stopped",
            BUDGET_FLOOR >> 20
        ),
    )
}

/// Spend `bytes` of the budget, or fail.
fn spend(bytes: usize) -> Result<(), Error> {
    LEFT.with(|left| match left.get().checked_sub(bytes) {
        Some(rest) => {
            left.set(rest);
            Ok(())
        }
        None => {
            left.set(0);
            Err(over_budget())
        }
    })
}

/// The bytes left to spend.
fn left() -> usize {
    LEFT.with(Cell::get)
}

/// The size of `v` as text, walked no further than `cap` (which it then exceeds): strings by
/// their length, numbers by a small constant, containers by their items plus one per item,
/// so a walk costs no more steps than the size it reports.
fn size_upto(v: &Value, cap: usize) -> usize {
    let mut total = 0usize;
    let mut stack = vec![v.clone()];
    while let Some(v) = stack.pop() {
        total = total.saturating_add(1);
        match v.kind() {
            ValueKind::String => total = total.saturating_add(v.as_str().map_or(0, str::len)),
            ValueKind::Bytes => total = total.saturating_add(v.as_bytes().map_or(0, <[u8]>::len)),
            ValueKind::Seq | ValueKind::Iterable => {
                if let Ok(items) = v.try_iter() {
                    for item in items {
                        stack.push(item);
                        if total.saturating_add(stack.len()) > cap {
                            return cap.saturating_add(1);
                        }
                    }
                }
            }
            ValueKind::Map => {
                if let Ok(keys) = v.try_iter() {
                    for key in keys {
                        if let Ok(value) = v.get_item(&key) {
                            stack.push(value);
                        }
                        stack.push(key);
                        if total.saturating_add(stack.len()) > cap {
                            return cap.saturating_add(1);
                        }
                    }
                }
            }
            _ => total = total.saturating_add(24),
        }
        if total > cap {
            return cap.saturating_add(1);
        }
    }
    total
}

/// The size of `v` charged against the budget.
fn charge(v: &Value) -> Result<(), Error> {
    let cap = left();
    spend(size_upto(v, cap))
}

/// A compiled template whose every render is bounded.
pub struct Bounded {
    env: Environment<'static>,
    code: CompiledTemplate<'static>,
}

/// Whitespace handling of a template (minijinja's lexer settings).
#[derive(Debug, Clone, Copy, Default)]
pub struct Whitespace {
    /// Keep a newline at the end of the source.
    pub keep_trailing_newline: bool,
    /// Strip whitespace before a block tag on its line.
    pub lstrip_blocks: bool,
    /// Drop the first newline after a block tag.
    pub trim_blocks: bool,
}

impl Bounded {
    /// Compile `source` (called `name` in messages) for `env`, which gains the checks.
    ///
    /// The name and source are kept for the life of the process (the bytecode borrows them):
    /// templates are compiled once per run.
    pub fn compile(
        mut env: Environment<'static>,
        name: &str,
        source: &str,
        ws: Whitespace,
    ) -> Result<Bounded, Error> {
        let name: &'static str = Box::leak(name.to_string().into_boxed_str());
        let source: &'static str = Box::leak(source.to_string().into_boxed_str());
        let config = TemplateConfig {
            syntax_config: Default::default(),
            ws_config: machinery::WhitespaceConfig {
                keep_trailing_newline: ws.keep_trailing_newline,
                lstrip_blocks: ws.lstrip_blocks,
                trim_blocks: ws.trim_blocks,
            },
            default_auto_escape: Arc::new(|_: &str| AutoEscape::None),
        };
        let mut code = CompiledTemplate::new(name, source, &config)?;
        code.instructions = rewrite(&code.instructions);
        let blocks = std::mem::take(&mut code.blocks);
        code.blocks = blocks.iter().map(|(k, v)| (*k, rewrite(v))).collect();
        env.add_function(CHECK_VALUE, |v: Value| -> Result<Value, Error> {
            charge(&v)?;
            Ok(v)
        });
        env.add_function(COUNT_RAW, |n: usize| -> Result<Value, Error> {
            spend(n)?;
            Ok(Value::UNDEFINED)
        });
        limits::guard_filters(&mut env);
        Ok(Bounded { env, code })
    }

    /// Render with `ctx`, making at most `budget` bytes.
    pub fn render(&self, ctx: Value, budget: usize) -> Result<String, Error> {
        let previous = (LEFT.with(Cell::get), BUDGET.with(Cell::get));
        LEFT.with(|l| l.set(budget));
        BUDGET.with(|b| b.set(budget));
        let mut text = String::new();
        let result = {
            let mut out = machinery::make_string_output(&mut text);
            Vm::new(&self.env).eval(
                &self.code.instructions,
                ctx,
                &self.code.blocks,
                &mut out,
                AutoEscape::None,
            )
        };
        LEFT.with(|l| l.set(previous.0));
        BUDGET.with(|b| b.set(previous.1));
        result.map(|_| text)
    }

    /// The template's source.
    pub fn source(&self) -> &str {
        self.code.instructions.source()
    }
}

/// `code` with the checks woven in: after each operation that makes a value, before each
/// output. Jump targets move with the instructions they name.
fn rewrite(code: &Instructions<'static>) -> Instructions<'static> {
    let n = code.len() as u32;
    // Where each old instruction's group starts in the new code.
    let mut start = Vec::with_capacity(code.len() + 1);
    let mut at = 0u32;
    for i in 0..n {
        start.push(at);
        at += group_len(code.get(i).expect("index below len"));
    }
    start.push(at);
    let target = |t: u32| start.get(t as usize).copied().unwrap_or(at);
    let mut out = Instructions::new(code.name(), code.source());
    for i in 0..n {
        let instr = code.get(i).expect("index below len").clone();
        let span = code.get_span(i);
        let line = code.get_line(i);
        let mut add = |instr: Instruction<'static>| match (span, line) {
            (Some(span), _) => out.add_with_span(instr, span),
            (None, Some(line)) => out.add_with_line(instr, line as u16),
            (None, None) => out.add(instr),
        };
        let moved = match instr {
            Instruction::Jump(t) => Instruction::Jump(target(t)),
            Instruction::JumpIfFalse(t) => Instruction::JumpIfFalse(target(t)),
            Instruction::JumpIfFalseOrPop(t) => Instruction::JumpIfFalseOrPop(target(t)),
            Instruction::JumpIfTrueOrPop(t) => Instruction::JumpIfTrueOrPop(target(t)),
            Instruction::Iterate(t) => Instruction::Iterate(target(t)),
            Instruction::BuildMacro(name, t, flags) => {
                Instruction::BuildMacro(name, target(t), flags)
            }
            other => other,
        };
        match kind(&moved) {
            Kind::Makes => {
                add(moved);
                add(Instruction::CallFunction(CHECK_VALUE, Some(1)));
            }
            Kind::Emits => {
                add(Instruction::CallFunction(CHECK_VALUE, Some(1)));
                add(moved);
            }
            Kind::EmitsRaw(len) => {
                add(Instruction::LoadConst(Value::from(len)));
                add(Instruction::CallFunction(COUNT_RAW, Some(1)));
                add(Instruction::DiscardTop);
                add(moved);
            }
            Kind::Other => {
                add(moved);
            }
        }
    }
    out
}

enum Kind {
    /// Leaves a value it made on the stack.
    Makes,
    /// Writes the value on the stack.
    Emits,
    /// Writes this many bytes of source.
    EmitsRaw(usize),
    /// Neither.
    Other,
}

fn kind(instr: &Instruction) -> Kind {
    match instr {
        Instruction::Add
        | Instruction::Sub
        | Instruction::Mul
        | Instruction::StringConcat
        | Instruction::BuildList(_)
        | Instruction::BuildMap(_)
        | Instruction::ApplyFilter(..)
        | Instruction::CallMethod(..)
        | Instruction::CallObject(_)
        | Instruction::FastRecurse => Kind::Makes,
        Instruction::CallFunction(name, _) if !name.starts_with("needlework ") => Kind::Makes,
        Instruction::Emit => Kind::Emits,
        Instruction::EmitRaw(s) => Kind::EmitsRaw(s.len()),
        _ => Kind::Other,
    }
}

fn group_len(instr: &Instruction) -> u32 {
    match kind(instr) {
        Kind::Makes | Kind::Emits => 2,
        Kind::EmitsRaw(_) => 4,
        Kind::Other => 1,
    }
}

/// Fails unless `bytes` more would stay within what the render may still make: for code of
/// ours that writes a value piece by piece (the chat templates' `tojson`).
pub fn fits(bytes: usize) -> Result<(), Error> {
    if bytes > left() {
        Err(over_budget())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Environment<'static> {
        let mut env = Environment::new();
        env.set_fuel(Some(FUEL));
        env.set_unknown_method_callback(|state, value, method, args| {
            check_method(value, method, args)?;
            minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
        });
        env
    }

    fn render(source: &str, budget: usize) -> Result<String, Error> {
        let t = Bounded::compile(env(), "t", source, Whitespace::default())?;
        t.render(minijinja::context! { s => "ab", n => 3 }, budget)
    }

    /// Each pattern grows without end, or far past the budget, in a few steps; each must stop
    /// with the budget's message, before the growth is allocated.
    #[test]
    fn every_way_of_growing_a_value_is_stopped_by_size() {
        let growers = [
            // Doubling a namespace string, the classic.
            "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
            // The same with `+`.
            "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
            // Repetition inside a loop, each step below minijinja's own 100 MB limit.
            "{% set ns = namespace(s='xy') %}{% for i in range(64) %}{% set ns.s = ns.s * 3 %}{% endfor %}",
            // A list doubled (its items shared, its text exponential).
            "{% set ns = namespace(l=['x']) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l|join }}",
            // Nesting that shares one list: tiny in memory, exponential as text.
            "{% set ns = namespace(l=['x']) %}{% for i in range(64) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l }}",
            // A huge range join with a long separator.
            "{{ range(100000)|join('x' * 1000) }}",
            // `replace` that multiplies the text.
            "{% set ns = namespace(s='aaaa') %}{% for i in range(64) %}{% set ns.s = ns.s|replace('a', ns.s) %}{% endfor %}",
            // Python's methods.
            "{% set ns = namespace(s='aa') %}{% for i in range(64) %}{% set ns.s = ns.s.replace('a', ns.s) %}{% endfor %}",
            "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s.join([ns.s, ns.s, ns.s]) %}{% endfor %}",
            "{{ '{:>999999999999}'.format(s) }}",
            "{{ '%999999999999s'|format(s) }}",
            // Padding from a width.
            "{{ 'a\nb'|indent(999999999999) }}",
            "{{ [1]|batch(999999999999, 'x')|list }}",
            // Recursion through a macro, each level a larger string.
            "{% macro grow(t, k) %}{% if k > 0 %}{{ grow(t ~ t, k - 1) }}{% endif %}{% endmacro %}{{ grow('x', 200) }}",
            // Output alone: one string written again and again.
            "{% set big = 'x' * 1000000 %}{% for i in range(100000) %}{{ big }}{% endfor %}",
            // Raw text written in a loop.
            "{% for i in range(100000) %}{% for j in range(1000) %}raw text raw text raw text{% endfor %}{% endfor %}",
            // Captured output grown by a `set` block.
            "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set t %}{{ ns.s }}{{ ns.s }}{% endset %}{% set ns.s = t %}{% endfor %}",
        ];
        let budget = 1 << 20;
        for source in growers {
            let e = render(source, budget).expect_err(source).to_string();
            assert!(e.contains("makes more than 1048576 bytes"), "{source}: {e}");
        }
    }

    #[test]
    fn ordinary_templates_render_unchanged() {
        let cases = [
            ("{{ s ~ s }}|{{ s * n }}|{{ [s, s]|join('-') }}", "abab|ababab|ab-ab"),
            ("{% for i in range(n) %}{{ loop.index }}{% if not loop.last %},{% endif %}{% endfor %}", "1,2,3"),
            ("{% macro m(x) %}<{{ x }}>{% endmacro %}{{ m(s) }}{{ m(n) }}", "<ab><3>"),
            ("{% set t %}{{ s|upper }}{% endset %}{{ t|replace('A', 'a') }}{{ 'x y'.split()|length }}", "aB2"),
            ("{{ 'a\nb'|indent(2) }}|{{ '%s-%d'|format(s, n) }}|{{ '{}!'.format(s) }}", "a\n  b|ab-3|ab!"),
            ("{% if n > 2 %}big{% else %}small{% endif %}", "big"),
        ];
        for (source, want) in cases {
            assert_eq!(render(source, 1 << 20).unwrap(), want, "{source}");
        }
    }

    #[test]
    fn the_budget_is_exact_and_per_render() {
        // 10 raw bytes and 10 bytes of values: within 40, not within 15.
        let t =
            Bounded::compile(env(), "t", "0123456789{{ 'x' * 9 }}", Whitespace::default()).unwrap();
        assert_eq!(t.render(Value::UNDEFINED, 40).unwrap().len(), 19);
        assert!(t.render(Value::UNDEFINED, 15).is_err());
        // A failed render leaves nothing behind for the next.
        assert_eq!(t.render(Value::UNDEFINED, 40).unwrap().len(), 19);
    }

    #[test]
    fn errors_keep_their_place() {
        let t = Bounded::compile(
            env(),
            "t.j2",
            "line one\n{% for i in range(3) %}\n{{ nope.x }}{% endfor %}",
            Whitespace::default(),
        )
        .unwrap();
        let e = t.render(Value::UNDEFINED, 1 << 20).unwrap_err();
        assert_eq!(e.line(), Some(3), "{e}");
    }
}
