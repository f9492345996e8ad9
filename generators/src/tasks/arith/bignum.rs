//! Decimal big integers as digit vectors, least significant digit first.
//!
//! `arith` asks for operands of up to thousands of digits and reports per-column carries and
//! borrows, which machine integers cannot hold and general bignum crates do not expose; these
//! schoolbook routines do both, digit by digit, deterministically.

use std::cmp::Ordering;

/// Drop leading zeros (kept at one digit, so zero is `[0]`): the canonical form every routine
/// returns, so that lengths count real digits.
pub fn trim(digits: &mut Vec<u8>) {
    while digits.len() > 1 && digits.last() == Some(&0) {
        digits.pop();
    }
}

/// Numeric order of two trimmed numbers: more digits is larger, else the highest differing
/// digit decides.
pub fn compare(a: &[u8], b: &[u8]) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.iter().rev().cmp(b.iter().rev()))
}

/// Schoolbook addition; also returns, per column, whether it carried into the next one, which
/// `arith` reports as its carry statistics.
pub fn add(a: &[u8], b: &[u8]) -> (Vec<u8>, Vec<bool>) {
    let n = a.len().max(b.len());
    let mut out = Vec::with_capacity(n + 1);
    let mut carries = Vec::with_capacity(n);
    let mut carry = 0u8;
    for i in 0..n {
        let s = a.get(i).copied().unwrap_or(0) + b.get(i).copied().unwrap_or(0) + carry;
        out.push(s % 10);
        carry = s / 10;
        carries.push(carry == 1);
    }
    if carry > 0 {
        out.push(carry);
    }
    (out, carries)
}

/// Schoolbook subtraction `a − b` for `a ≥ b`; also returns, per column, whether it borrowed
/// from the next one.
pub fn sub(a: &[u8], b: &[u8]) -> (Vec<u8>, Vec<bool>) {
    let mut out = Vec::with_capacity(a.len());
    let mut borrows = Vec::with_capacity(a.len());
    let mut borrow = 0i8;
    for (i, &ai) in a.iter().enumerate() {
        let mut d = ai as i8 - b.get(i).copied().unwrap_or(0) as i8 - borrow;
        borrow = i8::from(d < 0);
        if d < 0 {
            d += 10;
        }
        out.push(d as u8);
        borrows.push(borrow == 1);
    }
    trim(&mut out);
    (out, borrows)
}

/// Schoolbook multiplication, normalising after each row so the column sums stay small.
pub fn mul(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut acc = vec![0u32; a.len() + b.len()];
    for (i, &x) in a.iter().enumerate() {
        for (j, &y) in b.iter().enumerate() {
            acc[i + j] += u32::from(x) * u32::from(y);
        }
        let mut carry = 0;
        for v in acc.iter_mut() {
            let s = *v + carry;
            *v = s % 10;
            carry = s / 10;
        }
    }
    let mut out: Vec<u8> = acc.into_iter().map(|v| v as u8).collect();
    trim(&mut out);
    out
}

/// The number written the usual way, most significant digit first.
pub fn decimal(digits: &[u8]) -> String {
    digits.iter().rev().map(|&x| char::from(b'0' + x)).collect()
}

/// The digits written least significant first, as the reversed layouts show them.
pub fn reversed_decimal(digits: &[u8]) -> String {
    digits.iter().map(|&x| char::from(b'0' + x)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, Stream};

    fn digits(s: &str) -> Vec<u8> {
        s.bytes().rev().map(|b| b - b'0').collect()
    }

    fn of(n: u128) -> Vec<u8> {
        digits(&n.to_string())
    }

    /// A random value of 1 to 18 digits, so sums and products fit a u128.
    fn small(rng: &mut Rng) -> u128 {
        let digits = rng.range_inclusive(1, 18) as u32;
        u128::from(rng.below(10u64.pow(digits)))
    }

    #[test]
    fn agrees_with_machine_integers() {
        let mut rng = Rng::from_seed_u64(9, Stream::Content);
        for _ in 0..5000 {
            let (x, y) = (small(&mut rng), small(&mut rng));
            let (hi, lo) = (x.max(y), x.min(y));
            let (sum, carries) = add(&of(x), &of(y));
            assert_eq!(decimal(&sum), (x + y).to_string());
            assert_eq!(carries.len(), of(x).len().max(of(y).len()));
            let (difference, borrows) = sub(&of(hi), &of(lo));
            assert_eq!(decimal(&difference), (hi - lo).to_string());
            assert_eq!(borrows.len(), of(hi).len());
            assert_eq!(decimal(&mul(&of(x), &of(y))), (x * y).to_string());
            assert_eq!(compare(&of(x), &of(y)), x.cmp(&y));
        }
    }

    #[test]
    fn carry_and_borrow_columns() {
        assert_eq!(add(&digits("999"), &digits("1")).1, [true, true, true]);
        assert_eq!(add(&digits("123"), &digits("456")).1, [false, false, false]);
        assert_eq!(
            sub(&digits("1000"), &digits("1")).1,
            [true, true, true, false]
        );
        assert_eq!(sub(&digits("57"), &digits("23")).1, [false, false]);
    }

    #[test]
    fn large_hand_checked_cases() {
        let nines = "9".repeat(40);
        let one_then_zeros = format!("1{}", "0".repeat(40));
        assert_eq!(
            decimal(&add(&digits(&nines), &digits("1")).0),
            one_then_zeros
        );
        assert_eq!(
            decimal(&sub(&digits(&one_then_zeros), &digits("1")).0),
            nines
        );
        // (10^40 − 1)^2 = 10^80 − 2·10^40 + 1 = 9…9 (39 nines) 8 0…0 (39 zeros) 1.
        let square = format!("{}8{}1", "9".repeat(39), "0".repeat(39));
        assert_eq!(decimal(&mul(&digits(&nines), &digits(&nines))), square);
        assert_eq!(
            decimal(&mul(
                &digits("123456789012345678901234567890"),
                &digits("987654321098765432109876543210")
            )),
            "121932631137021795226185032733622923332237463801111263526900"
        );
        assert_eq!(decimal(&mul(&digits("12345"), &digits("6789"))), "83810205");
        assert_eq!(decimal(&mul(&digits("0"), &digits("6789"))), "0");
        assert_eq!(decimal(&sub(&digits("5"), &digits("5")).0), "0");
        assert_eq!(reversed_decimal(&digits("120")), "021");
    }

    #[test]
    fn trim_keeps_one_zero() {
        let mut zero = vec![0, 0, 0];
        trim(&mut zero);
        assert_eq!(zero, [0]);
        let mut n = digits("00120");
        trim(&mut n);
        assert_eq!(decimal(&n), "120");
    }
}
