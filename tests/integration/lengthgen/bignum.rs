//! Big-number arithmetic for tests/lengthgen.rs, written apart from the generator's so that arith
//! answers are checked by an independent implementation.

/// Decimal strings as base-1e9 limbs (least significant first): an implementation independent of
/// the generator's digit-vector arithmetic.
fn limbs(s: &str) -> Vec<u64> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut end = b.len();
    while end > 0 {
        let start = end.saturating_sub(9);
        out.push(
            std::str::from_utf8(&b[start..end])
                .unwrap()
                .parse()
                .unwrap(),
        );
        end = start;
    }
    out
}

/// Limbs back to a decimal string without leading zeros.
fn unlimbs(mut l: Vec<u64>) -> String {
    while l.len() > 1 && *l.last().unwrap() == 0 {
        l.pop();
    }
    let mut s = l.last().unwrap().to_string();
    for x in l.iter().rev().skip(1) {
        s.push_str(&format!("{x:09}"));
    }
    s
}

/// `a op b` (op: add, sub, mul) of decimal strings, as a decimal string.
pub fn big(a: &str, b: &str, op: &str) -> String {
    let (x, y) = (limbs(a), limbs(b));
    const B: u64 = 1_000_000_000;
    match op {
        "add" => {
            let mut out = vec![0u64; x.len().max(y.len()) + 1];
            let mut c = 0;
            for (i, o) in out.iter_mut().enumerate() {
                let s = x.get(i).unwrap_or(&0) + y.get(i).unwrap_or(&0) + c;
                *o = s % B;
                c = s / B;
            }
            unlimbs(out)
        }
        "sub" => {
            let mut out = vec![0u64; x.len()];
            let mut br = 0i64;
            for (i, o) in out.iter_mut().enumerate() {
                let mut d = x[i] as i64 - *y.get(i).unwrap_or(&0) as i64 - br;
                br = (d < 0) as i64;
                if d < 0 {
                    d += B as i64;
                }
                *o = d as u64;
            }
            unlimbs(out)
        }
        _ => {
            let mut out = vec![0u128; x.len() + y.len() + 1];
            for (i, &p) in x.iter().enumerate() {
                for (j, &q) in y.iter().enumerate() {
                    out[i + j] += p as u128 * q as u128;
                    let carry = out[i + j] / B as u128;
                    out[i + j] %= B as u128;
                    out[i + j + 1] += carry;
                }
            }
            unlimbs(out.into_iter().map(|v| v as u64).collect())
        }
    }
}

/// Carries (add) or borrows (sub) of the column-wise written algorithm, counted digit by digit.
pub fn carries(a: &str, b: &str, op: &str) -> usize {
    let (x, y): (Vec<u8>, Vec<u8>) = (
        a.bytes().rev().map(|c| c - b'0').collect(),
        b.bytes().rev().map(|c| c - b'0').collect(),
    );
    let mut n = 0;
    let mut c = 0i8;
    for i in 0..x.len().max(y.len()) {
        let (p, q) = (*x.get(i).unwrap_or(&0) as i8, *y.get(i).unwrap_or(&0) as i8);
        if op == "add" {
            c = ((p + q + c) >= 10) as i8;
        } else {
            c = ((p - q - c) < 0) as i8;
        }
        n += c as usize;
    }
    n
}
