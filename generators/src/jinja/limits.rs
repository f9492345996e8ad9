//! Checks before the operations whose result may be far larger than their inputs: the size
//! each would make is worked out from its arguments and must fit what the render may still
//! make, so the operation never allocates past the budget.

use minijinja::value::{Rest, Value, ValueKind};
use minijinja::{Environment, Error, State};

use super::{fits, left, size_upto};

/// The size of `v` as text, failing when it exceeds what the render may still make.
fn size(v: &Value) -> Result<usize, Error> {
    let n = size_upto(v, left());
    fits(n)?;
    Ok(n)
}

fn text_len(v: Option<&Value>) -> usize {
    v.and_then(Value::as_str).map_or(0, str::len)
}

/// Every number among `args` and the values of a keyword-argument map among them.
fn numbers(args: &[Value]) -> Vec<usize> {
    let mut out = Vec::new();
    for a in args {
        match a.kind() {
            ValueKind::Number => out.push(a.as_usize().unwrap_or(usize::MAX)),
            ValueKind::Map => {
                if let Ok(keys) = a.try_iter() {
                    for k in keys {
                        if let Ok(v) = a.get_item(&k) {
                            if v.kind() == ValueKind::Number {
                                out.push(v.as_usize().unwrap_or(usize::MAX));
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// `items` joined by `sep`: every item's size plus the separators.
fn join_size(items: &Value, sep: usize) -> Result<(), Error> {
    let mut total = 0usize;
    let cap = left();
    for (i, item) in items.try_iter()?.enumerate() {
        if i > 0 {
            total = total.saturating_add(sep);
        }
        total = total.saturating_add(size_upto(&item, cap));
        fits(total)?;
    }
    Ok(())
}

/// `s` with every `from` replaced by `to` (at most `count` times).
fn replace_size(s: &str, from: &str, to: usize, count: Option<usize>) -> Result<(), Error> {
    let mut k = if from.is_empty() {
        s.chars().count() + 1
    } else {
        s.matches(from).count()
    };
    if let Some(c) = count {
        k = k.min(c);
    }
    fits(s.len().saturating_add(k.saturating_mul(to)))
}

/// A format string applied to `args`: each of its characters gives at most the largest
/// argument, and widths and precisions written in it add their value.
fn format_size(fmt: &str, args: &[Value]) -> Result<(), Error> {
    let mut largest = 32usize;
    for a in args {
        largest = largest.max(size(a)?);
    }
    let mut widths = 0usize;
    let mut number = 0usize;
    for c in fmt.chars().chain(std::iter::once(' ')) {
        match c.to_digit(10) {
            Some(d) => number = number.saturating_mul(10).saturating_add(d as usize),
            None => {
                widths = widths.saturating_add(number);
                number = 0;
            }
        }
    }
    fits(fmt.len().saturating_mul(largest).saturating_add(widths))
}

fn check_join(args: &[Value]) -> Result<(), Error> {
    match args.first() {
        Some(items) => join_size(items, text_len(args.get(1))),
        None => Ok(()),
    }
}

fn check_replace(args: &[Value]) -> Result<(), Error> {
    let s = args.first().map(|v| v.to_string()).unwrap_or_default();
    let from = args.get(1).map(|v| v.to_string()).unwrap_or_default();
    let to = args.get(2).map_or(Ok(0), size)?;
    replace_size(&s, &from, to, None)
}

fn check_indent(args: &[Value]) -> Result<(), Error> {
    let s = args.first().map_or(Ok(0), size)?;
    let lines = args
        .first()
        .and_then(Value::as_str)
        .map_or(1, |s| s.lines().count() + 1);
    let width = numbers(&args[1.min(args.len())..])
        .into_iter()
        .chain(args.iter().skip(1).map(|a| text_len(Some(a))))
        .max()
        .unwrap_or(4);
    fits(s.saturating_add(lines.saturating_mul(width)))
}

fn check_groups(args: &[Value]) -> Result<(), Error> {
    let items = args.first().map_or(Ok(0), size)?;
    let count = numbers(args.get(1..2).unwrap_or_default())
        .into_iter()
        .max()
        .unwrap_or(0);
    let fill = args.get(2).map_or(Ok(0), size)?;
    fits(items.saturating_add(count.saturating_mul(fill.saturating_add(2))))
}

fn check_format(args: &[Value]) -> Result<(), Error> {
    match args.first().and_then(Value::as_str) {
        Some(fmt) => format_size(fmt, &args[1..]),
        None => Ok(()),
    }
}

/// Debug output indents each item by its depth: at most size times (depth + 2).
fn check_pprint(args: &[Value]) -> Result<(), Error> {
    let Some(v) = args.first() else { return Ok(()) };
    let s = size(v)?;
    let mut depth = 0usize;
    let mut stack = vec![(v.clone(), 1usize)];
    while let Some((v, d)) = stack.pop() {
        depth = depth.max(d);
        if matches!(
            v.kind(),
            ValueKind::Seq | ValueKind::Iterable | ValueKind::Map
        ) {
            for item in v.try_iter()? {
                if v.kind() == ValueKind::Map {
                    if let Ok(value) = v.get_item(&item) {
                        stack.push((value, d + 1));
                    }
                }
                stack.push((item, d + 1));
            }
        }
    }
    fits(s.saturating_mul(depth.saturating_mul(2).saturating_add(2)))
}

macro_rules! guard {
    ($env:expr, $name:literal, $original:expr, $check:expr) => {{
        let original = Value::from_function($original);
        $env.add_filter(
            $name,
            move |state: &State, args: Rest<Value>| -> Result<Value, Error> {
                $check(&args)?;
                original.call(state, &args)
            },
        );
    }};
}

/// Replace the growing builtin filters by checked ones that behave alike.
pub(super) fn guard_filters(env: &mut Environment<'static>) {
    use minijinja::filters;
    guard!(env, "join", filters::join, check_join);
    guard!(env, "replace", filters::replace, check_replace);
    guard!(env, "indent", filters::indent, check_indent);
    guard!(env, "batch", filters::batch, check_groups);
    guard!(env, "slice", filters::slice, check_groups);
    guard!(env, "format", filters::format, check_format);
    guard!(env, "pprint", filters::pprint, check_pprint);
}

/// Checks Python's string methods `replace`, `join` and `format` (as `minijinja_contrib`'s
/// `pycompat` provides them) before they run.
pub fn check_method(value: &Value, method: &str, args: &[Value]) -> Result<(), Error> {
    let Some(s) = value.as_str() else {
        return Ok(());
    };
    match method {
        "replace" => {
            let from = args.first().map(|v| v.to_string()).unwrap_or_default();
            let to = args.get(1).map_or(Ok(0), size)?;
            let count = args
                .get(2)
                .and_then(|c| c.as_i64())
                .and_then(|c| usize::try_from(c).ok());
            replace_size(s, &from, to, count)
        }
        "join" => match args.first() {
            Some(items) => join_size(items, s.len()),
            None => Ok(()),
        },
        "format" => format_size(s, args),
        _ => Ok(()),
    }
}
