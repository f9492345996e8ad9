//! Numbers, dates, quantities and names for the prose haystack.
//!
//! Real prose is full of years, dates, counts, measurements and catalogue numbers; a haystack
//! without them lets a needle's number stand out by its shape alone. Each function writes one
//! phrase in a form a reader would expect, with nouns agreeing with their numbers ("1 mile",
//! "2.5 miles").

use std::fmt::Write as _;

use crate::rng::Rng;

const ONES: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const TENS: [&str; 10] = [
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];
const ORDINAL_ONES: [&str; 20] = [
    "zeroth",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
];
/// Month names.
pub const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
/// Day names.
pub const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];
/// Units of measure: (singular, plural).
const UNITS: [(&str, &str); 22] = [
    ("mile", "miles"),
    ("kilometre", "kilometres"),
    ("metre", "metres"),
    ("foot", "feet"),
    ("inch", "inches"),
    ("yard", "yards"),
    ("acre", "acres"),
    ("hectare", "hectares"),
    ("gram", "grams"),
    ("kilogram", "kilograms"),
    ("pound", "pounds"),
    ("ton", "tons"),
    ("litre", "litres"),
    ("gallon", "gallons"),
    ("pint", "pints"),
    ("bushel", "bushels"),
    ("hour", "hours"),
    ("minute", "minutes"),
    ("day", "days"),
    ("week", "weeks"),
    ("year", "years"),
    ("barrel", "barrels"),
];
/// Singular units that make compounds: "a 12-mile walk", "a three-day fair".
const COMPOUND_UNITS: [&str; 14] = [
    "mile", "day", "week", "hour", "year", "acre", "room", "storey", "foot", "minute", "page",
    "man", "seat", "gallon",
];

/// A number in words below 100: "seven", "forty-two".
pub fn words_below_100(n: u64) -> String {
    match n {
        0..=19 => ONES[n as usize].to_string(),
        _ if n.is_multiple_of(10) => TENS[(n / 10) as usize % 10].to_string(),
        _ => format!(
            "{}-{}",
            TENS[(n / 10) as usize % 10],
            ONES[(n % 10) as usize]
        ),
    }
}

/// An ordinal below 100 in words ("third", "twenty-first").
pub fn ordinal_words(n: u64) -> String {
    match n {
        0..=19 => ORDINAL_ONES[n as usize].to_string(),
        _ if n.is_multiple_of(10) => {
            let t = TENS[(n / 10) as usize % 10];
            format!("{}ieth", &t[..t.len() - 1])
        }
        _ => format!(
            "{}-{}",
            TENS[(n / 10) as usize % 10],
            ORDINAL_ONES[(n % 10) as usize]
        ),
    }
}

/// An ordinal in digits: "1st", "12th", "23rd".
pub fn ordinal_digits(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// `n` with thousands separators: 1,234,567.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A number drawn log-uniformly from `lo..=hi` (small numbers are commoner in text).
pub fn log_uniform(rng: &mut Rng, lo: u64, hi: u64) -> u64 {
    let (a, b) = ((lo as f64).ln(), ((hi + 1) as f64).ln());
    let x = (a + (b - a) * rng.unit_f64()).exp() as u64;
    x.clamp(lo, hi)
}

/// A small count (2 to 12), in words or digits, for a plural noun.
pub fn small(rng: &mut Rng, out: &mut String) {
    let n = rng.range_inclusive(2, 12);
    if rng.chance(7, 10) {
        out.push_str(ONES[n as usize]);
    } else {
        let _ = write!(out, "{n}");
    }
}

/// A count from 2 to 999 for a plural noun: digits, or words for round or small ones.
pub fn count(rng: &mut Rng, out: &mut String) {
    let n = log_uniform(rng, 2, 999);
    if n < 100 && rng.chance(1, 3) {
        out.push_str(&words_below_100(n));
    } else {
        let _ = write!(out, "{n}");
    }
}

/// A large count: "12,400", "1.5 million", "340,000".
pub fn big(rng: &mut Rng, out: &mut String) {
    match rng.below(4) {
        0 => {
            let _ = write!(
                out,
                "{}.{} million",
                rng.range_inclusive(1, 9),
                rng.below(10)
            );
        }
        1 => out.push_str(&grouped(rng.range_inclusive(1, 99) * 1000)),
        _ => out.push_str(&grouped(log_uniform(rng, 1_000, 9_999_999))),
    }
}

/// A year between 1650 and 2023, recent ones commoner.
pub fn year(rng: &mut Rng) -> u64 {
    let a = rng.range_inclusive(1650, 2023);
    let b = rng.range_inclusive(1650, 2023);
    a.max(b)
}

/// A date: "14 March 1887", "March 14, 1887" or "the 3rd of May".
pub fn date(rng: &mut Rng, out: &mut String) {
    let d = rng.range_inclusive(1, 28);
    let m = MONTHS[rng.index(12)];
    let y = year(rng);
    let _ = match rng.below(4) {
        0 | 1 => write!(out, "{d} {m} {y}"),
        2 => write!(out, "{m} {d}, {y}"),
        _ => write!(out, "the {} of {m} {y}", ordinal_digits(d)),
    };
}

/// A quantity with its unit: "1 mile", "2.5 kilometres", "300 grams", "twelve acres".
pub fn quantity(rng: &mut Rng, out: &mut String) {
    let (one, many) = UNITS[rng.index(UNITS.len())];
    match rng.below(5) {
        0 => {
            let _ = write!(
                out,
                "{}.{} {many}",
                rng.below(20),
                rng.range_inclusive(1, 9)
            );
        }
        1 => {
            let n = rng.range_inclusive(1, 19);
            let _ = write!(
                out,
                "{} {}",
                words_below_100(n),
                if n == 1 { one } else { many }
            );
        }
        _ => {
            let n = log_uniform(rng, 1, 5000);
            let unit = if n == 1 { one } else { many };
            let _ = write!(out, "{} {unit}", grouped(n));
        }
    }
}

/// A percentage: "37 percent", "12.5 per cent".
pub fn percent(rng: &mut Rng, out: &mut String) {
    let n = rng.range_inclusive(2, 98);
    let _ = match rng.below(3) {
        0 => write!(out, "{n}.{} per cent", rng.range_inclusive(1, 9)),
        1 => write!(out, "{n} per cent"),
        _ => write!(out, "{n} percent"),
    };
}

/// A time of day: "7:45", "six o'clock", "half past nine".
pub fn time(rng: &mut Rng, out: &mut String) {
    let h = rng.range_inclusive(1, 12);
    let _ = match rng.below(4) {
        0 => write!(out, "{} o'clock", ONES[h as usize]),
        1 => write!(out, "half past {}", ONES[h as usize]),
        _ => write!(out, "{h}:{:02}", rng.below(12) * 5),
    };
}

/// A catalogue or register number: mostly seven digits, sometimes five or six.
pub fn record(rng: &mut Rng, out: &mut String) {
    let n = match rng.below(5) {
        0 => rng.range_inclusive(10_000, 99_999),
        1 => rng.range_inclusive(100_000, 999_999),
        _ => rng.range_inclusive(1_000_000, 9_999_999),
    };
    let _ = write!(out, "{n}");
}

/// An ordinal: "third", "twenty-first", "14th".
pub fn ordinal(rng: &mut Rng, out: &mut String) {
    let n = log_uniform(rng, 1, 60);
    if rng.chance(2, 3) {
        out.push_str(&ordinal_words(n));
    } else {
        out.push_str(&ordinal_digits(n));
    }
}

/// An age in years (16 to 95), in digits or words.
pub fn age(rng: &mut Rng, out: &mut String) {
    let n = rng.range_inclusive(16, 95);
    if rng.chance(1, 2) {
        out.push_str(&words_below_100(n));
    } else {
        let _ = write!(out, "{n}");
    }
}

/// A stretch of time: "three years", "a decade", "14 months", "half a century".
pub fn span(rng: &mut Rng, out: &mut String) {
    const FIXED: [&str; 6] = [
        "a decade",
        "half a century",
        "a fortnight",
        "an hour or two",
        "most of a year",
        "a single night",
    ];
    const UNITS: [&str; 5] = ["days", "weeks", "months", "years", "hours"];
    match rng.below(4) {
        0 => out.push_str(FIXED[rng.index(FIXED.len())]),
        1 => {
            small(rng, out);
            let _ = write!(out, " {}", UNITS[rng.index(UNITS.len())]);
        }
        _ => {
            let _ = write!(
                out,
                "{} {}",
                log_uniform(rng, 2, 90),
                UNITS[rng.index(UNITS.len())]
            );
        }
    }
}

/// A century: "nineteenth century", "18th century".
pub fn century(rng: &mut Rng, out: &mut String) {
    let c = rng.range_inclusive(14, 21);
    if rng.chance(2, 3) {
        let _ = write!(out, "{} century", ordinal_words(c));
    } else {
        let _ = write!(out, "{} century", ordinal_digits(c));
    }
}

/// A decade: "1920s".
pub fn decade(rng: &mut Rng, out: &mut String) {
    let _ = write!(out, "{}0s", year(rng) / 10);
}

/// A price: "12 pounds", "4.50 dollars", "30 shillings".
pub fn price(rng: &mut Rng, out: &mut String) {
    let _ = match rng.below(3) {
        0 => write!(out, "{} pounds", log_uniform(rng, 2, 2000)),
        1 => write!(
            out,
            "{}.{:02} dollars",
            log_uniform(rng, 2, 500),
            rng.below(100)
        ),
        _ => write!(out, "{} shillings", rng.range_inclusive(2, 99)),
    };
}

/// A hyphenated number compound: "12-mile", "three-day", "forty-acre".
pub fn compound(rng: &mut Rng, out: &mut String) {
    let unit = COMPOUND_UNITS[rng.index(COMPOUND_UNITS.len())];
    let n = log_uniform(rng, 2, 99);
    if n <= 20 && rng.chance(2, 3) {
        let _ = write!(out, "{}-{unit}", words_below_100(n));
    } else {
        let _ = write!(out, "{n}-{unit}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelled_numbers() {
        assert_eq!(words_below_100(42), "forty-two");
        assert_eq!(words_below_100(70), "seventy");
        assert_eq!(ordinal_words(21), "twenty-first");
        assert_eq!(ordinal_words(40), "fortieth");
        assert_eq!(ordinal_digits(12), "12th");
        assert_eq!(ordinal_digits(22), "22nd");
        assert_eq!(grouped(1234567), "1,234,567");
        assert_eq!(grouped(999), "999");
    }
}
