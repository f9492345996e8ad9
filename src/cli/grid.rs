//! The syntax of `--len` and `--depths` (a grid of lengths × depths), shared by every task.

use crate::run::recipe::{MAX_DEPTHS, MAX_LENGTH};

const LEN_FORMS: &str = "expected a comma list of lengths like 4k,32k,1m (k = 1024, m = 1048576), exact integers like 32000, or a doubling range like 4k..128k";

/// Parse one length: `32k`, `1m`, `32000`.
pub fn parse_length(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let (digits, mult) = if let Some(d) = t.strip_suffix('k') {
        (d, 1024u64)
    } else if let Some(d) = t.strip_suffix('m') {
        (d, 1024 * 1024)
    } else {
        (t.as_str(), 1)
    };
    let n: u64 = digits
        .parse()
        .ok()
        .filter(|_| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| format!("invalid --len value '{s}': {LEN_FORMS}"))?;
    let v = n
        .checked_mul(mult)
        .filter(|v| *v <= MAX_LENGTH)
        .ok_or_else(|| format!("invalid --len value '{s}': the largest accepted length is 64m"))?;
    Ok(v)
}

/// Parse `--len`: a comma list of lengths or doubling ranges. Sorted ascending; `allow_zero`
/// admits 0 (the story alone, for tasks that have that notion).
pub fn parse_lengths(s: &str, allow_zero: bool) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    if s.trim().is_empty() {
        return Err(format!("invalid --len value '': {LEN_FORMS}"));
    }
    for part in s.split(',') {
        if let Some((a, b)) = part.split_once("..") {
            let (lo, hi) = (parse_length(a)?, parse_length(b)?);
            if lo == 0 || hi < lo {
                return Err(format!(
                    "invalid --len range '{part}': it must run from a positive length up to a larger one"
                ));
            }
            let mut v = lo;
            while v <= hi {
                out.push(v);
                v *= 2;
            }
        } else {
            out.push(parse_length(part)?);
        }
    }
    if !allow_zero && out.contains(&0) {
        return Err(format!(
            "invalid --len value '{s}': lengths must be positive"
        ));
    }
    out.sort_unstable();
    if let Some(w) = out.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!(
            "invalid --len value '{s}': the length {} is listed twice",
            w[0]
        ));
    }
    Ok(out)
}

const DEPTH_FORMS: &str = "expected a count N of evenly spaced depths (N >= 1, at most 1000), or a comma list of percents between 0 and 100 like 0,25,50,100 (write one explicit depth as 50%)";

/// Parse `--depths`: `N` evenly spaced over 0–100 inclusive (N = 1 means 50), or a list.
pub fn parse_depths(s: &str) -> Result<Vec<f64>, String> {
    let t = s.trim();
    let bad = || format!("invalid --depths value '{s}': {DEPTH_FORMS}");
    if !t.contains(',') && !t.contains('%') && !t.contains('.') {
        let n: u64 = t.parse().map_err(|_| bad())?;
        if n == 0 || n > MAX_DEPTHS {
            return Err(bad());
        }
        if n == 1 {
            return Ok(vec![50.0]);
        }
        return Ok((0..n).map(|i| i as f64 * 100.0 / (n - 1) as f64).collect());
    }
    let mut out = Vec::new();
    for part in t.split(',') {
        let p = part.trim().trim_end_matches('%');
        let v: f64 = p.parse().map_err(|_| bad())?;
        if !v.is_finite() || !(0.0..=100.0).contains(&v) {
            return Err(format!(
                "invalid depth '{}' in --depths: depths are percents between 0 and 100",
                part.trim()
            ));
        }
        out.push(v);
    }
    out.sort_by(f64::total_cmp);
    if let Some(w) = out.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!(
            "invalid --depths value '{s}': the depth {} is listed twice",
            w[0]
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths() {
        assert_eq!(
            parse_lengths("4k,32k,1m", false).unwrap(),
            vec![4096, 32768, 1048576]
        );
        assert_eq!(parse_lengths("32000", false).unwrap(), vec![32000]);
        assert_eq!(
            parse_lengths("4k..32k", false).unwrap(),
            vec![4096, 8192, 16384, 32768]
        );
        assert_eq!(parse_lengths("0,1k", true).unwrap(), vec![0, 1024]);
        for bad in [
            "0",
            "12q",
            "",
            "k",
            "-5",
            "1.5k",
            "4k,4k",
            "8k..4k",
            "100m",
            "99999999999999999999",
        ] {
            let e = parse_lengths(bad, false).unwrap_err();
            assert!(e.contains("--len") && !e.contains('\n'), "{bad}: {e}");
        }
    }

    #[test]
    fn depths() {
        let d = parse_depths("10").unwrap();
        assert_eq!(d.len(), 10);
        assert_eq!(d[0], 0.0);
        assert_eq!(d[9], 100.0);
        assert!((d[1] - 11.111).abs() < 0.001);
        assert_eq!(parse_depths("1").unwrap(), vec![50.0]);
        assert_eq!(parse_depths("100,0,25").unwrap(), vec![0.0, 25.0, 100.0]);
        assert_eq!(parse_depths("50%").unwrap(), vec![50.0]);
        for bad in ["0", "x", "101,5", "-1,4", "1001", "5,5", "nan,1"] {
            assert!(parse_depths(bad).unwrap_err().contains("depth"), "{bad}");
        }
    }
}
