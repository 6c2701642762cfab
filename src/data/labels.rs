//! Class labels as text: the one key by which a label cell, a model's class name and a
//! Python label are compared, and the order classes take.
//!
//! A number is keyed by its exact decimal value, so `1`, `1.0`, `+1` and `1e0` are one
//! class while `9007199254740993` and `9007199254740992` (one f64) stay two. Other text
//! is trimmed and in Unicode's NFC. A label that reads as a number that is not finite
//! (`nan`, `inf`) is a missing value among numbers (numpy's `savetxt` writes one so),
//! and text among text (a grade `inf`).

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::error::quoted;

/// A label as read alone.
enum Label {
    Number(String),
    Text(String),
    /// `nan`, `inf`...: its text key, and why it is no number.
    NotFinite(String, String),
}

fn read(label: &str) -> Label {
    let t = label.trim();
    if let Some(d) = Decimal::parse(t) {
        return Label::Number(d.to_string());
    }
    let text = super::columns::name_key(t);
    match t.parse::<f64>() {
        // Rust reads `nan`, `inf` and `infinity` as numbers; what else it reads is decimal.
        Ok(v) if !v.is_finite() => Label::NotFinite(
            text,
            format!(
                "{} reads as a number that is not finite ({v}) among numbers: a missing or corrupt label",
                quoted(t)
            ),
        ),
        _ => Label::Text(text),
    }
}

/// The keys of a column's labels, one per label in order, or the index of the first
/// that is no label and why (a NaN or an infinity among numbers).
pub(crate) fn column_keys<'a>(
    labels: impl IntoIterator<Item = &'a str>,
) -> std::result::Result<Vec<String>, (usize, String)> {
    let (mut keys, mut any_text, mut not_finite) = (Vec::new(), false, None);
    for (i, label) in labels.into_iter().enumerate() {
        keys.push(match read(label) {
            Label::Number(k) => k,
            Label::Text(k) => {
                any_text = true;
                k
            }
            Label::NotFinite(k, why) => {
                not_finite.get_or_insert((i, why));
                k
            }
        });
    }
    match not_finite {
        Some(first) if !any_text => Err(first),
        _ => Ok(keys),
    }
}

/// The key of a model's class name (among its names, `inf` is text).
pub(crate) fn name_key(name: &str) -> String {
    match read(name) {
        Label::Number(k) | Label::Text(k) | Label::NotFinite(k, _) => k,
    }
}

/// A model's class names by key, or why its names cannot read a table's labels: two
/// are one label under [`name_key`] (a model saved before labels were keyed so).
pub(crate) fn index_of_names(
    names: &[String],
) -> std::result::Result<HashMap<String, u32>, String> {
    let mut index_of = HashMap::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        if let Some(j) = index_of.insert(name_key(name), i as u32) {
            return Err(format!(
                "the model's classes {} and {} are one label as ant reads labels now (numbers by their value, text trimmed and in Unicode's NFC): its scores on a table would mix them; train it again",
                quoted(&names[j as usize]),
                quoted(name)
            ));
        }
    }
    Ok(index_of)
}

/// Class names given from outside a table (Python's labels) must each be a label, and
/// distinct as labels: a saved model reads a table's labels by their keys.
pub fn check_class_names(names: &[String]) -> std::result::Result<(), String> {
    // A blank cell of a table is a missing label, so such a class could never be
    // scored or read back (a Python class '' would train, then `ant eval` would refuse
    // its rows and `ant predict` write empty predictions).
    if let Some(blank) = names.iter().find(|n| n.trim().is_empty()) {
        return Err(format!(
            "the label {} is blank, which a table reads as a missing label: give the class a name",
            quoted(blank)
        ));
    }
    let keys = column_keys(names.iter().map(String::as_str))
        .map_err(|(_, why)| format!("the label {why}"))?;
    let mut first: HashMap<&str, &str> = Default::default();
    for (key, name) in keys.iter().zip(names) {
        if let Some(other) = first.insert(key, name) {
            return Err(format!(
                "the labels {} and {} are one class as ant reads labels, {} (numbers by \
                 their value, text trimmed and in Unicode's NFC)",
                quoted(other),
                quoted(name),
                quoted(key)
            ));
        }
    }
    Ok(())
}

/// Sorted distinct keys: by value when all are numbers, else as text.
pub(crate) fn sorted_classes(keys: &[String]) -> Vec<String> {
    let mut names: Vec<String> = keys.to_vec();
    names.sort_unstable();
    names.dedup();
    let nums: Option<Vec<Decimal>> = names.iter().map(|k| Decimal::parse(k)).collect();
    if let Some(mut nums) = nums {
        nums.sort_by(Decimal::cmp_value);
        return nums.iter().map(Decimal::to_string).collect();
    }
    names
}

/// A finite decimal number written in text, exactly: `negative`, the digits without
/// leading or trailing zeros, and the power of ten of the last digit.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: String,
    exponent: i64,
}

/// Written exponents beyond this are not read as numbers (f64 itself ends near 1e308):
/// `1e999999` would key a million digits.
const MAX_EXPONENT: i64 = 400;

impl Decimal {
    /// `[+-]digits[.digits][e[+-]digits]` (`.5` and `5.` too), or `None`.
    fn parse(t: &str) -> Option<Decimal> {
        let (negative, rest) = match t.as_bytes().first()? {
            b'-' => (true, &t[1..]),
            b'+' => (false, &t[1..]),
            _ => (false, t),
        };
        let (mantissa, exp) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], parse_exponent(&rest[i + 1..])?),
            None => (rest, 0),
        };
        if exp.abs() > MAX_EXPONENT {
            return None;
        }
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if int.len() + frac.len() == 0 || !all_digits(int) || !all_digits(frac) {
            return None;
        }
        let joined = format!("{int}{frac}");
        let trimmed = joined.trim_start_matches('0');
        let digits = trimmed.trim_end_matches('0');
        let exponent = exp - frac.len() as i64 + (trimmed.len() - digits.len()) as i64;
        let zero = digits.is_empty();
        Some(Decimal {
            negative: negative && !zero,
            digits: digits.to_string(),
            exponent: if zero { 0 } else { exponent },
        })
    }

    /// The power of ten just above the first digit (its magnitude's order).
    fn order(&self) -> i64 {
        self.digits.len() as i64 + self.exponent
    }

    /// Compares by value.
    fn cmp_value(a: &Decimal, b: &Decimal) -> Ordering {
        let magnitude = || {
            match (a.digits.is_empty(), b.digits.is_empty()) {
                (true, true) => return Ordering::Equal,
                (true, false) => return Ordering::Less,
                (false, true) => return Ordering::Greater,
                _ => {}
            }
            // Same order: the digit strings compare as text (no trailing zeros).
            a.order()
                .cmp(&b.order())
                .then_with(|| a.digits.cmp(&b.digits))
        };
        match (a.negative, b.negative) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => magnitude(),
            (true, true) => magnitude().reverse(),
        }
    }
}

fn parse_exponent(t: &str) -> Option<i64> {
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Long exponents are not labels anyone writes; they stay text.
    let v: i64 = digits.get(digits.len().saturating_sub(6)..)?.parse().ok()?;
    if digits.trim_start_matches('0').len() > 6 {
        return None;
    }
    Some(if t.starts_with('-') { -v } else { v })
}

/// Plain positional notation: `-12.5`, `300`, `0.001`, `0`.
impl std::fmt::Display for Decimal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.digits.is_empty() {
            return f.write_str("0");
        }
        if self.negative {
            f.write_str("-")?;
        }
        let point = self.order(); // digits before the decimal point
        if self.exponent >= 0 {
            write!(f, "{}{}", self.digits, "0".repeat(self.exponent as usize))
        } else if point > 0 {
            let (int, frac) = self.digits.split_at(point as usize);
            write!(f, "{int}.{frac}")
        } else {
            write!(f, "0.{}{}", "0".repeat((-point) as usize), self.digits)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> String {
        column_keys([s]).unwrap().remove(0)
    }

    #[test]
    fn numbers_are_keyed_by_their_exact_value() {
        for (a, b) in [
            ("1", "1.0"),
            ("1", "+1"),
            ("1", "1e0"),
            ("100", "1E2"),
            ("0", "-0"),
        ]
        .into_iter()
        .chain([
            ("0.5", ".5"),
            ("5", "5."),
            ("0.001", "1e-3"),
            ("-2.5", " -2.50 "),
        ]) {
            assert_eq!(key(a), key(b), "{a} {b}");
        }
        assert_eq!(key("-2.50"), "-2.5");
        assert_eq!(key("1e-3"), "0.001");
        assert_eq!(key("12e1"), "120");
        // One f64, two labels.
        assert_ne!(key("9007199254740993"), key("9007199254740992"));
        assert_eq!(key("12345678901234567"), "12345678901234567");
        assert_ne!(key("0.1"), key("0.10000000000000001"));
        // Long integers are exact too; written exponents are bounded.
        let long = "7".repeat(500);
        assert_eq!(key(&long), long);
        assert_eq!(key("1e400").len(), 401);
        // Text stays text: `01x`, hex, a lone sign or point.
        for t in ["01x", "0x10", "-", ".", "e5", "1e", "1_000", "1,5"] {
            assert_eq!(key(t), t, "{t}");
        }
    }

    #[test]
    fn non_finite_numbers_are_missing_among_numbers_and_text_among_text() {
        for t in ["nan", "NaN", " -inf", "infinity", "+Inf", "1e999"] {
            let (at, e) = column_keys(["1", t, "2"]).unwrap_err();
            assert!(at == 1 && e.contains("not finite"), "{t}: {e}");
            // A grade `inf` beside `sup` is text.
            assert_eq!(column_keys(["sup", t]).unwrap()[1], t.trim(), "{t}");
        }
        assert_eq!(name_key("nan"), "nan");
        assert_eq!(name_key("1.0"), "1");
    }

    #[test]
    fn a_models_names_that_collide_as_labels_are_refused() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let e = index_of_names(&names(&["-0", "0", "1"])).unwrap_err();
        assert!(e.contains("'-0' and '0' are one label"), "{e}");
        let ok = index_of_names(&names(&["0.0", "1", "x"])).unwrap();
        assert_eq!((ok["0"], ok["1"], ok["x"]), (0, 1, 2));
    }

    #[test]
    fn class_names_from_outside_must_be_distinct_labels() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(
            check_class_names(&names(&["0", "1", "9007199254740993", "9007199254740992"])).is_ok()
        );
        let e = check_class_names(&names(&["1", "01", "x"])).unwrap_err();
        assert!(e.contains("labels '1' and '01' are one class"), "{e}");
        let e = check_class_names(&names(&["caf\u{e9}", "cafe\u{301}"])).unwrap_err();
        assert!(e.contains("one class"), "{e}");
        assert!(
            check_class_names(&names(&["", "x"]))
                .unwrap_err()
                .contains("blank")
        );
        assert!(
            check_class_names(&names(&["x", " "]))
                .unwrap_err()
                .contains("blank")
        );
        let e = check_class_names(&names(&["0", "nan"])).unwrap_err();
        assert!(e.contains("not finite"), "{e}");
        assert!(check_class_names(&names(&["sup", "inf"])).is_ok());
    }

    #[test]
    fn a_models_class_names_read_a_tables_labels_by_value() {
        use crate::data::Targets;
        use crate::data::tabular::{TargetSpec, parse_labelled};
        // Python saves float labels as "0.0", "1.0"; a table writes them 0, 1.
        let spec = TargetSpec::new("y", crate::task::TaskKind::Classification);
        let names: Vec<String> = ["0.0", "1.0", "2.5"].map(String::from).to_vec();
        let bytes = b"a,y\n1,0\n2,1\n3,2.50\n4,+1e0\n";
        let t = parse_labelled(bytes, std::path::Path::new("t.csv"), &spec, Some(&names)).unwrap();
        let Targets::Classes { labels, .. } = &t.data.targets else {
            panic!("classes")
        };
        assert_eq!(labels, &[0, 1, 2, 1]);
    }

    #[test]
    fn classes_sort_by_exact_value() {
        let keys: Vec<String> = [
            "10",
            "-1",
            "9007199254740993",
            "9007199254740992",
            "2.5",
            "-1.5",
            "0",
        ]
        .iter()
        .map(|k| key(k))
        .collect();
        let want = [
            "-1.5",
            "-1",
            "0",
            "2.5",
            "10",
            "9007199254740992",
            "9007199254740993",
        ];
        assert_eq!(sorted_classes(&keys), want);
        let text: Vec<String> = ["b", "a", "10", "a"].iter().map(|k| key(k)).collect();
        assert_eq!(sorted_classes(&text), ["10", "a", "b"]);
        assert_eq!(
            sorted_classes(&[key("0.001"), key("-0.01"), key("1e-5")]),
            ["-0.01", "0.00001", "0.001"]
        );
    }
}
