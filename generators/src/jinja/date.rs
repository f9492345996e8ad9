//! `strftime_now` for chat templates, on a recorded date.
//!
//! `transformers` gives chat templates `strftime_now(format)`, Python's
//! `datetime.now().strftime(format)`; Llama 3.x templates put today's date in the system turn
//! with it. A dataset must not depend on the day it was made, so gen renders every template on
//! one recorded moment, [`DATE`] at midnight: the same rows every day, and the same text
//! `apply_chat_template` gives on that day. Directives are rendered as Python does on Linux
//! in the C locale (a naive datetime: `%z` and `%Z` are empty); a directive whose text would
//! depend on the machine (`%s`, which counts from the epoch in local time) or that this table
//! does not know is refused, so a rendering never silently differs.

use minijinja::{Error, ErrorKind};

/// The recorded date every chat template sees as today: 1 January 2025 (a Wednesday), at
/// 00:00:00.
pub const DATE: &str = "2025-01-01";

const YEAR: u32 = 2025;
const MONTH: u32 = 1;
const DAY: u32 = 1;
/// Day of the week, Monday = 1 (ISO).
const WEEKDAY: u32 = 3;
const DAY_OF_YEAR: u32 = 1;
/// English names, as Python's C locale gives them.
use crate::haystack::prose::numbers::{MONTHS as MONTH_NAMES, WEEKDAYS as WEEK_NAMES};

/// `strftime(format)` of the recorded moment.
pub fn strftime_now(format: &str) -> Result<String, Error> {
    let (hour, minute, second) = (0u32, 0u32, 0u32);
    let weekday = WEEK_NAMES[(WEEKDAY - 1) as usize];
    let month = MONTH_NAMES[(MONTH - 1) as usize];
    // Weeks of the year as `%U` (Sunday first) and `%W` (Monday first) count them: the days
    // before the year's first Sunday (Monday) are week 0.
    let sunday_based = (DAY_OF_YEAR + 6 - (WEEKDAY % 7)) / 7;
    let monday_based = (DAY_OF_YEAR + 6 - (WEEKDAY - 1)) / 7;
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        // glibc's `-` flag (no padding), which Python passes through on Linux.
        let mut spec = chars.next();
        let unpadded = spec == Some('-');
        if unpadded {
            spec = chars.next();
        }
        let num = |n: u32, width: usize| {
            if unpadded {
                n.to_string()
            } else {
                format!("{n:0width$}")
            }
        };
        let hour12 = if hour % 12 == 0 { 12 } else { hour % 12 };
        let text = match spec {
            Some('a') => weekday[..3].to_string(),
            Some('A') => weekday.to_string(),
            Some('w') => (WEEKDAY % 7).to_string(),
            Some('u') => WEEKDAY.to_string(),
            Some('d') => num(DAY, 2),
            Some('e') if !unpadded => format!("{DAY:>2}"),
            Some('b') | Some('h') => month[..3].to_string(),
            Some('B') => month.to_string(),
            Some('m') => num(MONTH, 2),
            Some('y') => num(YEAR % 100, 2),
            Some('Y') => YEAR.to_string(),
            Some('C') => num(YEAR / 100, 2),
            Some('G') => YEAR.to_string(),
            Some('V') => num(1, 2),
            Some('H') => num(hour, 2),
            Some('I') => num(hour12, 2),
            Some('k') if !unpadded => format!("{hour:>2}"),
            Some('l') if !unpadded => format!("{hour12:>2}"),
            Some('p') => if hour < 12 { "AM" } else { "PM" }.to_string(),
            Some('M') => num(minute, 2),
            Some('S') => num(second, 2),
            Some('f') if !unpadded => "000000".to_string(),
            Some('j') => num(DAY_OF_YEAR, 3),
            Some('U') => num(sunday_based, 2),
            Some('W') => num(monday_based, 2),
            Some('z') | Some('Z') if !unpadded => String::new(),
            Some('D') if !unpadded => format!("{MONTH:02}/{DAY:02}/{:02}", YEAR % 100),
            Some('x') if !unpadded => format!("{MONTH:02}/{DAY:02}/{:02}", YEAR % 100),
            Some('F') if !unpadded => format!("{YEAR}-{MONTH:02}-{DAY:02}"),
            Some('T') | Some('X') if !unpadded => format!("{hour:02}:{minute:02}:{second:02}"),
            Some('R') if !unpadded => format!("{hour:02}:{minute:02}"),
            Some('r') if !unpadded => {
                format!(
                    "{hour12:02}:{minute:02}:{second:02} {}",
                    if hour < 12 { "AM" } else { "PM" }
                )
            }
            Some('c') if !unpadded => format!(
                "{} {} {DAY:>2} {hour:02}:{minute:02}:{second:02} {YEAR}",
                &weekday[..3],
                &month[..3]
            ),
            Some('n') if !unpadded => "\n".to_string(),
            Some('t') if !unpadded => "\t".to_string(),
            Some('%') if !unpadded => "%".to_string(),
            other => {
                let shown = match other {
                    Some(c) => format!("%{}{c}", if unpadded { "-" } else { "" }),
                    None => "a lone %".to_string(),
                };
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!(
                        "strftime_now: the directive {shown} is not one gen renders (it renders %a %A %w %u %d %e %b %h %B %m %y %Y %C %G %V %H %I %k %l %p %M %S %f %j %U %W %z %Z %D %x %F %T %X %R %r %c %n %t %% on its recorded date {DATE})"
                    ),
                ));
            }
        };
        out.push_str(&text);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Python 3 prints for `datetime(2025, 1, 1).strftime(...)` on Linux.
    #[test]
    fn renders_as_python_does_on_the_recorded_date() {
        let cases = [
            ("%d %b %Y", "01 Jan 2025"),
            ("%-d %B %Y", "1 January 2025"),
            ("%A, %e %B", "Wednesday,  1 January"),
            ("%Y-%m-%d %H:%M:%S", "2025-01-01 00:00:00"),
            ("%j %U %W %u %w %y %I %p", "001 00 00 3 3 25 12 AM"),
            ("%c|%x|%X|%D|%F|%T|%r|%z%Z|%%", "Wed Jan  1 00:00:00 2025|01/01/25|00:00:00|01/01/25|2025-01-01|00:00:00|12:00:00 AM||%"),
            ("Today is %a.", "Today is Wed."),
        ];
        for (format, want) in cases {
            assert_eq!(strftime_now(format).unwrap(), want, "{format}");
        }
    }

    #[test]
    fn a_directive_it_cannot_render_exactly_is_refused() {
        for format in ["%s", "%Q", "trailing %", "%-e", "%E"] {
            let e = strftime_now(format).unwrap_err().to_string();
            assert!(
                e.contains("strftime_now") && e.contains("2025-01-01"),
                "{format}: {e}"
            );
        }
    }
}
