//! How numbers are shown: in messages (every digit a value has, short at any scale) and
//! in summaries, bars and pictures (a few significant digits, as C's `%.4g`). Rust's
//! `{}` writes 1e60 with 61 digits and `{:.4}` writes 1e-9 as `0.0000`: neither is
//! used for a number whose scale comes from the data.

/// A number as a message prints it: as Rust writes it between 1e-4 and 1e6, else in
/// scientific notation (1e-320 is not written with 320 digits).
pub(crate) fn number(v: f64) -> String {
    match v == 0.0 || (1e-4..1e6).contains(&v.abs()) {
        true => v.to_string(),
        false => format!("{v:e}"),
    }
}

/// [`number`] for an `f32`, with f32's own shortest digits (0.1, not 0.10000000149).
pub(crate) fn number32(v: f32) -> String {
    match v == 0.0 || (1e-4..1e6).contains(&v.abs()) {
        true => v.to_string(),
        false => format!("{v:e}"),
    }
}

/// `v` to `digits` significant digits, as C's `%.{digits}g`: fixed notation while the
/// exponent lies in -4..digits, else scientific (`1.5e60`, `2.5e-9`); trailing zeros
/// dropped. `digits` below 1 is taken as 1.
pub fn significant(v: f64, digits: usize) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let p = digits.max(1);
    // The exponent after rounding to `p` digits (9.9996 to 4 digits is 10.00).
    let sci = format!("{:.*e}", p - 1, v);
    let (mantissa, exp) = sci.split_once('e').expect("{:e} writes an exponent");
    let exp: i32 = exp.parse().expect("{:e} writes an integer exponent");
    match exp < -4 || exp >= p as i32 {
        true => format!("{}e{exp}", trim_zeros(mantissa)),
        false => {
            let decimals = (p as i32 - 1 - exp).max(0) as usize;
            trim_zeros(&format!("{v:.decimals$}")).to_string()
        }
    }
}

/// `%.4g`: the digits of a summary line, a progress bar or a picture's label.
pub fn g4(v: f64) -> String {
    significant(v, 4)
}

/// `v` with `d` decimals (`{v:.d}`, as summaries always wrote it) while that shows at
/// least two significant digits and fewer than seven before the point; else `v` to `d`
/// significant digits (`d` at least 2): 1e-9 is no `0.0000`, 1e60 no 61-digit number.
pub fn decimals(v: f64, d: usize) -> String {
    let fixed = v == 0.0 || (10f64.powi(1 - d as i32)..1e6).contains(&v.abs());
    match fixed && v.is_finite() {
        true => format!("{v:.d$}"),
        false => significant(v, d.max(2)),
    }
}

/// `s` without the zeros that end its fraction, nor a point left bare.
fn trim_zeros(s: &str) -> &str {
    match s.contains('.') {
        true => s.trim_end_matches('0').trim_end_matches('.'),
        false => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_digits_are_kept_at_every_scale() {
        // Every power of ten f64 holds, times mantissas that round up, down and across a
        // power: the text is short, parses back within half a unit of the fourth digit,
        // and is the same text C's `%.4g` writes (up to the exponent's `+` and zeros).
        for e in -307..=307 {
            for m in [1.0, 1.23456, 9.99949, 9.99951, -4.5, 7.0] {
                let v = m * 10f64.powi(e);
                let s = g4(v);
                assert!(s.len() <= 11, "{v:e} shown as {s}");
                let back: f64 = s.parse().unwrap();
                let rel = ((back - v) / v).abs();
                assert!(rel <= 5.0001e-4, "{v:e} shown as {s} ({rel:e} off)");
            }
        }
        let cases = [
            (1e60, "1e60"),
            (1.5e-9, "1.5e-9"),
            (0.0001234, "0.0001234"),
            (0.00001234, "1.234e-5"),
            (1234.0, "1234"),
            (12345.0, "1.234e4"),
            (9.99951, "10"),
            (99995.0, "1e5"),
            (1.54, "1.54"),
            (-0.5, "-0.5"),
            (0.0, "0"),
            (f64::INFINITY, "inf"),
        ];
        for (v, want) in cases {
            assert_eq!(g4(v), want, "{v:e}");
        }
        assert!(g4(f64::NAN) == "NaN");
    }

    #[test]
    fn decimals_are_fixed_only_where_they_show_digits() {
        assert_eq!(decimals(0.0512, 4), "0.0512");
        assert_eq!(decimals(0.0, 4), "0.0000");
        assert_eq!(decimals(2.25, 1), "2.2");
        assert_eq!(decimals(0.4, 1), "0.4");
        assert_eq!(decimals(0.0005, 4), "0.0005");
        assert_eq!(decimals(1e-9, 4), "1e-9");
        assert_eq!(decimals(1e60, 4), "1e60");
        assert_eq!(decimals(123456.7, 4), "123456.7000");
        assert_eq!(decimals(1234567.0, 4), "1.235e6");
        for e in -307..=307 {
            let v = 3.3 * 10f64.powi(e);
            for d in [1, 3, 4, 6] {
                let s = decimals(v, d);
                let back: f64 = s.parse().unwrap();
                assert!(
                    s.len() <= 18 && ((back - v) / v).abs() < 0.2,
                    "{v:e} .{d}: {s}"
                );
            }
        }
    }
}
