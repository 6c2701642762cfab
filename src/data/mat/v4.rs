//! MATLAB level-4 MAT-files (`save -v4`, scipy's `savemat(..., format='4')`): no file
//! header, a run of matrices, each a header of five int32s (type `MOPT`, rows, columns,
//! whether an imaginary part follows, the name's length), the name (NUL-terminated),
//! then the real values column by column.
//!
//! The format has no magic number, so a file is taken for one only when its bytes tile
//! exactly into such records, every one well formed: a text file never does.

use std::path::Path;

use super::{MatClass, MatMatrix};
use crate::error::{AntError, Result};

const RECORD_HEADER: usize = 20;

/// One record's header, checked; `data_len` is the bytes of its values (both parts).
struct Record {
    class: MatClass,
    full_real: bool,
    rows: usize,
    cols: usize,
    name_len: usize,
    data_len: usize,
}

/// The element type `P` of `MOPT`: its class and size in bytes.
fn precision(p: u32) -> Option<(MatClass, usize)> {
    Some(match p {
        0 => (MatClass::Double, 8),
        1 => (MatClass::Single, 4),
        2 => (MatClass::Int32, 4),
        3 => (MatClass::Int16, 2),
        4 => (MatClass::UInt16, 2),
        5 => (MatClass::UInt8, 1),
        _ => return None,
    })
}

/// The record at the start of `b`, read with the byte order `big_endian`; `None` when
/// it is not a well-formed level-4 record of that order that fits in `b`.
fn record(b: &[u8], big_endian: bool) -> Option<Record> {
    record_header(b, big_endian).filter(|r| RECORD_HEADER + r.name_len + r.data_len <= b.len())
}

/// [`record`] whether or not its values fit in `b`.
fn record_header(b: &[u8], big_endian: bool) -> Option<Record> {
    let word = |i: usize| {
        let a = b.get(4 * i..4 * i + 4)?.try_into().ok()?;
        Some(if big_endian { u32::from_be_bytes(a) } else { u32::from_le_bytes(a) })
    };
    let mopt = word(0)?;
    let (m, o, p, t) = (mopt / 1000, mopt / 100 % 10, mopt / 10 % 10, mopt % 10);
    // M is the byte order (0 little-endian IEEE, 1 big-endian IEEE), O always 0, T the
    // kind (0 numeric, 1 text, 2 sparse).
    if m != u32::from(big_endian) || o != 0 || t > 2 || mopt >= 2000 {
        return None;
    }
    let (class, size) = precision(p)?;
    let [rows, cols, imag, name_len] = [word(1)?, word(2)?, word(3)?, word(4)?].map(|w| w as usize);
    if imag > 1 || !(2..=64).contains(&name_len) {
        return None;
    }
    let name = b.get(RECORD_HEADER..RECORD_HEADER + name_len)?;
    let (nul, chars) = name.split_last()?;
    if *nul != 0 || !chars.iter().all(|c| c.is_ascii_graphic()) {
        return None;
    }
    let data_len = rows.checked_mul(cols)?.checked_mul(size)?.checked_mul(1 + imag)?;
    (RECORD_HEADER + name_len).checked_add(data_len)?;
    Some(Record {
        class,
        full_real: t == 0 && imag == 0,
        rows,
        cols,
        name_len,
        data_len,
    })
}

/// Whether `bytes` start as a level-4 MAT-file does (a well-formed first record's
/// header and name), whether or not the rest is whole: a file cut short is then named
/// as such, not as text that is not UTF-8.
pub(super) fn looks_v4(bytes: &[u8]) -> bool {
    [false, true]
        .into_iter()
        .any(|big_endian| record_header(bytes, big_endian).is_some() || cut_in_first_header(bytes, big_endian))
}

/// Whether `b` is the start of a well-formed first record's header and name, cut before
/// the name ends (such a file must not get the text reader's error).
/// Its words say so as far as they go, and it holds a NUL byte, which text never does.
fn cut_in_first_header(b: &[u8], big_endian: bool) -> bool {
    let word = |i: usize| {
        let a: [u8; 4] = b.get(4 * i..4 * i + 4)?.try_into().ok()?;
        Some(if big_endian { u32::from_be_bytes(a) } else { u32::from_le_bytes(a) })
    };
    let Some(mopt) = word(0) else {
        return false;
    };
    let (m, o, p, t) = (mopt / 1000, mopt / 100 % 10, mopt / 10 % 10, mopt % 10);
    let name_len = word(4).map_or(64, |n| n as usize);
    let name = b.get(RECORD_HEADER..).unwrap_or(&[]);
    m == u32::from(big_endian)
        && o == 0
        && t <= 2
        && precision(p).is_some()
        && word(3).is_none_or(|imag| imag <= 1)
        && (2..=64).contains(&name_len)
        && b.len() < RECORD_HEADER + name_len
        && name.iter().all(|c| c.is_ascii_graphic())
        && b.contains(&0)
        // Zeros alone (an empty file's padding) are no header.
        && b.iter().any(|&c| c != 0)
}

/// The byte order of `bytes` if they tile exactly into level-4 records, else `None`.
fn byte_order(bytes: &[u8]) -> Option<bool> {
    [false, true].into_iter().find(|&big_endian| {
        let mut at = 0;
        while at < bytes.len() {
            match record(&bytes[at..], big_endian) {
                Some(r) => at += RECORD_HEADER + r.name_len + r.data_len,
                None => return false,
            }
        }
        at > 0
    })
}

/// Whether `bytes` are a level-4 MAT-file (see the module's note).
pub(super) fn is_v4(bytes: &[u8]) -> bool {
    byte_order(bytes).is_some()
}

/// Every real, full numeric matrix of a level-4 file (text, sparse and complex ones
/// are skipped, as level 5's are).
pub(super) fn parse_v4(bytes: &[u8], path: &Path) -> Result<Vec<MatMatrix>> {
    let big_endian = byte_order(bytes).ok_or_else(|| {
        AntError::data(
            path,
            "is a level-4 MAT-file cut short or damaged: its records do not fill it exactly (save it again)",
        )
    })?;
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(r) = bytes.get(at..).and_then(|b| record(b, big_endian)) {
        let name_at = at + RECORD_HEADER;
        let data_at = name_at + r.name_len;
        if r.full_real {
            let class = r.class;
            let name = String::from_utf8_lossy(&bytes[name_at..data_at - 1]).into_owned();
            let values = &bytes[data_at..data_at + r.data_len];
            let size = r.data_len / (r.rows * r.cols).max(1);
            let value = |k: usize| decode(class, &values[k * size..(k + 1) * size], big_endian);
            // Stored column by column: element (i, j) is at j * rows + i.
            let data = (0..r.rows * r.cols)
                .map(|k| value((k % r.cols) * r.rows + k / r.cols))
                .collect();
            out.push(MatMatrix {
                name,
                class,
                rows: r.rows,
                cols: r.cols,
                data,
            });
        }
        at = data_at + r.data_len;
        if at == bytes.len() {
            break;
        }
    }
    Ok(out)
}

/// One value of class `class` from its bytes.
fn decode(class: MatClass, b: &[u8], big_endian: bool) -> f64 {
    macro_rules! num {
        ($t:ty) => {{
            let a = b.try_into().expect("sized by the class");
            if big_endian { <$t>::from_be_bytes(a) } else { <$t>::from_le_bytes(a) }
        }};
    }
    match class {
        MatClass::Double => num!(f64),
        MatClass::Single => f64::from(num!(f32)),
        MatClass::Int32 => f64::from(num!(i32)),
        MatClass::Int16 => f64::from(num!(i16)),
        MatClass::UInt16 => f64::from(num!(u16)),
        _ => f64::from(b[0]),
    }
}
