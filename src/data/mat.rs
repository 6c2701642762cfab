//! MATLAB level-5 MAT-files, enough to read real numeric matrices (level 4: [`v4`]).
//!
//! A file is a 128-byte header (descriptive text, subsystem offset, version
//! 0x0100, endian indicator "IM" little / "MI" big) followed by data elements.
//! Each element is an 8-byte tag (type, byte count) then its data, padded to 8
//! bytes; a "small data element" packs count (upper 16 bits) and type (lower 16
//! bits) into the first tag word with up to 4 data bytes in the second. Variables
//! are `miMATRIX` elements, possibly zlib-wrapped in `miCOMPRESSED`.
//!
//! All sizes are checked against the bytes actually present before anything is
//! sized from them, so malformed files give [`AntError::Data`], never a panic or a
//! huge allocation.

use std::io::Read;
use std::path::Path;

use crate::error::{AntError, Result};

const HEADER_LEN: usize = 128;

// Data element types (MAT-file format, table 1-1).
const MI_INT8: u32 = 1;
const MI_UINT8: u32 = 2;
const MI_INT16: u32 = 3;
const MI_UINT16: u32 = 4;
const MI_INT32: u32 = 5;
const MI_UINT32: u32 = 6;
const MI_SINGLE: u32 = 7;
const MI_DOUBLE: u32 = 9;
const MI_INT64: u32 = 12;
const MI_UINT64: u32 = 13;
const MI_MATRIX: u32 = 14;
const MI_COMPRESSED: u32 = 15;
const MI_UTF8: u32 = 16;

// Array flag bits (in the first flags word, above the class byte).
const FLAG_COMPLEX: u32 = 0x0800;

/// Numeric class of a MATLAB array (the `mx*_CLASS` codes 6..=15).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatClass {
    Double,
    Single,
    Int8,
    UInt8,
    Int16,
    UInt16,
    Int32,
    UInt32,
    Int64,
    UInt64,
}

impl MatClass {
    fn from_code(code: u32) -> Option<MatClass> {
        Some(match code {
            6 => MatClass::Double,
            7 => MatClass::Single,
            8 => MatClass::Int8,
            9 => MatClass::UInt8,
            10 => MatClass::Int16,
            11 => MatClass::UInt16,
            12 => MatClass::Int32,
            13 => MatClass::UInt32,
            14 => MatClass::Int64,
            15 => MatClass::UInt64,
            _ => return None,
        })
    }
}

/// A real, 2-D numeric MATLAB variable, converted to `f64`.
#[derive(Clone, Debug, PartialEq)]
pub struct MatMatrix {
    pub name: String,
    /// The MATLAB class the variable had (the values are stored as `f64` anyway).
    pub class: MatClass,
    pub rows: usize,
    pub cols: usize,
    /// Row-major (converted from MATLAB's column-major order).
    pub data: Vec<f64>,
}

impl MatMatrix {
    #[cfg_attr(not(feature = "internals"), allow(dead_code))] // the tests' way in
    /// Row `r` of the matrix. Panics if `r >= rows`.
    pub fn row(&self, r: usize) -> &[f64] {
        &self.data[r * self.cols..(r + 1) * self.cols]
    }
}

#[cfg_attr(not(feature = "internals"), allow(dead_code))] // the tests' way in
/// Reads every real 2-D numeric matrix of a level-5 MAT-file.
///
/// Other variables (cell, struct, char, sparse, complex, N-d with N > 2, objects)
/// are skipped, i.e. absent from the result.
pub fn read_mat(path: &Path) -> Result<Vec<MatMatrix>> {
    let bytes = crate::store::atomic::read_bounded(path, super::MAX_DATA_BYTES)
        .map_err(|e| AntError::io(path, e))?;
    parse_mat(&bytes, path)
}

/// Whether `bytes` look like a MAT-file: of level 5 or later, its header text starts
/// "MATLAB " and names a "MAT-file" (the format's own convention; [`parse_mat`] then
/// checks the rest, and names v7.3's HDF5 files as such rather than reading them as
/// text).
/// Level-4 files, which have no header, are recognised by their records ([`v4`]); one
/// damaged or cut short by its first record ([`looks_like_v4`], checked after the
/// formats that have a magic number).
pub fn is_mat(bytes: &[u8]) -> bool {
    let text = &bytes[..bytes.len().min(116)];
    bytes.starts_with(b"MATLAB ") && text.windows(8).any(|w| w == b"MAT-file")
        || v4::is_v4(bytes)
}

/// Whether `bytes` start as a level-4 MAT-file does, whole or not.
pub fn looks_like_v4(bytes: &[u8]) -> bool {
    v4::looks_v4(bytes)
}

/// Parses MAT-file bytes already in memory; `path` only names the file in errors.
pub fn parse_mat(bytes: &[u8], path: &Path) -> Result<Vec<MatMatrix>> {
    if v4::looks_v4(bytes) && !bytes.starts_with(b"MATLAB ") {
        return v4::parse_v4(bytes, path);
    }
    let big_endian = parse_header(bytes, path)?;
    let ctx = Ctx { path, big_endian };
    let mut out = Vec::new();
    ctx.parse_stream(&bytes[HEADER_LEN..], HEADER_LEN, true, &mut out)?;
    Ok(out)
}

/// Validates the 128-byte header; returns whether the file is big-endian.
fn parse_header(bytes: &[u8], path: &Path) -> Result<bool> {
    let err = |msg: &str| AntError::data(path, format!("not a level-5 MAT-file: {msg}"));
    if bytes.len() < HEADER_LEN {
        return Err(err(&format!(
            "{} bytes is shorter than the 128-byte header",
            bytes.len()
        )));
    }
    // Level 4 files start with a numeric header containing zero bytes; level 5
    // requires the first four bytes of the text to be non-zero.
    if bytes[..4].contains(&0) {
        return Err(err("header text starts with zero bytes (MAT v4?)"));
    }
    let big_endian = match &bytes[126..128] {
        b"IM" => false,
        b"MI" => true,
        other => {
            return Err(err(&format!(
                "endian indicator is {other:02x?}, expected \"IM\" or \"MI\""
            )));
        }
    };
    let v = [bytes[124], bytes[125]];
    let version = if big_endian {
        u16::from_be_bytes(v)
    } else {
        u16::from_le_bytes(v)
    };
    match version {
        0x0100 => Ok(big_endian),
        0x0200 => Err(AntError::data(
            path,
            "MAT v7.3 (HDF5) files are not supported; save with -v7 or -v6",
        )),
        v => Err(err(&format!("version 0x{v:04x}, expected 0x0100"))),
    }
}

/// One data element: its type and exactly its data bytes.
struct Element<'a> {
    ty: u32,
    data: &'a [u8],
    /// Offset of the tag, for error messages.
    offset: usize,
}

/// Parsing context shared by all elements of a file.
struct Ctx<'p> {
    path: &'p Path,
    big_endian: bool,
}

/// Reads consecutive elements from a byte slice.
struct Elements<'a, 'c, 'p> {
    ctx: &'c Ctx<'p>,
    buf: &'a [u8],
    pos: usize,
    /// Offset of `buf` within the file (or decompressed stream), for messages.
    base: usize,
}

impl<'p> Ctx<'p> {
    fn err(&self, msg: impl Into<String>) -> AntError {
        AntError::data(self.path, msg.into())
    }

    fn u32_at(&self, b: &[u8]) -> u32 {
        let a = [b[0], b[1], b[2], b[3]];
        if self.big_endian {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        }
    }

    fn elements<'a, 'c>(&'c self, buf: &'a [u8], base: usize) -> Elements<'a, 'c, 'p> {
        Elements {
            ctx: self,
            buf,
            pos: 0,
            base,
        }
    }

    /// Parses a sequence of top-level elements (variables) into `out`.
    /// `allow_compressed` is false inside a decompressed stream, so compressed
    /// elements cannot nest.
    fn parse_stream(
        &self,
        buf: &[u8],
        base: usize,
        allow_compressed: bool,
        out: &mut Vec<MatMatrix>,
    ) -> Result<()> {
        let mut elements = self.elements(buf, base);
        while let Some(el) = elements.next_element()? {
            match el.ty {
                MI_MATRIX => out.extend(self.parse_matrix(&el)?),
                MI_COMPRESSED if allow_compressed => {
                    let mut inner = Vec::new();
                    flate2::read::ZlibDecoder::new(el.data)
                        .read_to_end(&mut inner)
                        .map_err(|e| {
                            self.err(format!(
                                "corrupt zlib data in compressed element at offset {}: {e}",
                                el.offset
                            ))
                        })?;
                    self.parse_stream(&inner, 0, false, out)
                        .map_err(|e| match e {
                            AntError::Data { path, msg } => AntError::Data {
                                path,
                                msg: format!(
                                    "in compressed element at offset {}: {msg}",
                                    el.offset
                                ),
                            },
                            other => other,
                        })?;
                }
                ty => {
                    return Err(self.err(format!(
                        "unexpected data element type {ty} at offset {} (expected a matrix)",
                        el.offset
                    )));
                }
            }
        }
        Ok(())
    }

    /// Parses a miMATRIX element; `None` for arrays this reader skips.
    fn parse_matrix(&self, el: &Element) -> Result<Option<MatMatrix>> {
        // An empty miMATRIX is legal (e.g. an empty cell slot).
        if el.data.is_empty() {
            return Ok(None);
        }
        let at = el.offset;
        let mut sub = self.elements(el.data, at + 8);
        let mut next = |what: &str| -> Result<Element> {
            sub.next_element()?
                .ok_or_else(|| self.err(format!("matrix at offset {at} ends before its {what}")))
        };
        let flag_word = self.array_flags(&next("array flags")?, at)?;
        let class = match MatClass::from_code(flag_word & 0xff) {
            // Non-numeric (cell, struct, char, sparse, object, ...): skip.
            None => return Ok(None),
            Some(c) => c,
        };
        let dims = self.dimensions(&next("dimensions")?, at)?;
        let name = self.name(&next("name")?, at)?;
        // Complex and N-d arrays are skipped, but only once their leading
        // subelements are known to be well formed.
        if flag_word & FLAG_COMPLEX != 0 || dims.len() != 2 {
            return Ok(None);
        }
        let (rows, cols) = (dims[0] as usize, dims[1] as usize);
        let data = self.real_part(&next("real part")?, &name, rows, cols)?;
        Ok(Some(MatMatrix {
            name,
            class,
            rows,
            cols,
            data,
        }))
    }

    /// The first word of a matrix's array flags subelement (class and flag bits).
    fn array_flags(&self, flags: &Element, at: usize) -> Result<u32> {
        if flags.ty != MI_UINT32 || flags.data.len() != 8 {
            return Err(self.err(format!(
                "matrix at offset {at}: array flags must be 8 bytes of miUINT32, got type {} with {} bytes",
                flags.ty,
                flags.data.len()
            )));
        }
        Ok(self.u32_at(flags.data))
    }

    /// A matrix's dimensions subelement: one or more non-negative miINT32 values.
    fn dimensions(&self, dims_el: &Element, at: usize) -> Result<Vec<i32>> {
        if dims_el.ty != MI_INT32
            || dims_el.data.is_empty()
            || !dims_el.data.len().is_multiple_of(4)
        {
            return Err(self.err(format!(
                "matrix at offset {at}: dimensions must be miINT32 values, got type {} with {} bytes",
                dims_el.ty,
                dims_el.data.len()
            )));
        }
        let dims: Vec<i32> = dims_el
            .data
            .chunks_exact(4)
            .map(|c| self.u32_at(c) as i32)
            .collect();
        if let Some(d) = dims.iter().find(|&&d| d < 0) {
            return Err(self.err(format!("matrix at offset {at}: negative dimension {d}")));
        }
        Ok(dims)
    }

    /// A matrix's array name subelement (text; invalid UTF-8 replaced).
    fn name(&self, name_el: &Element, at: usize) -> Result<String> {
        if !matches!(name_el.ty, MI_INT8 | MI_UINT8 | MI_UTF8) {
            return Err(self.err(format!(
                "matrix at offset {at}: name has data type {}, expected miINT8",
                name_el.ty
            )));
        }
        Ok(String::from_utf8_lossy(name_el.data).into_owned())
    }

    /// The values of a `rows` x `cols` matrix's real part, row-major as `f64`.
    fn real_part(&self, real: &Element, name: &str, rows: usize, cols: usize) -> Result<Vec<f64>> {
        let size = elem_size(real.ty).ok_or_else(|| {
            self.err(format!(
                "variable '{name}': unknown numeric data type {} for the real part",
                real.ty
            ))
        })?;
        // Overflow-safe: compare the declared element count with the bytes present
        // before allocating anything from it.
        let count = rows.checked_mul(cols);
        if count.and_then(|n| n.checked_mul(size)) != Some(real.data.len()) {
            return Err(self.err(format!(
                "variable '{name}': {rows}x{cols} matrix but its real part has {} bytes of {size}-byte values",
                real.data.len()
            )));
        }
        // MATLAB stores column-major: element k is at (k % rows, k / rows).
        let mut data = vec![0.0; real.data.len() / size];
        for (k, b) in real.data.chunks_exact(size).enumerate() {
            data[(k % rows) * cols + k / rows] = self.value(real.ty, b);
        }
        Ok(data)
    }

    /// Decodes one value of numeric data type `ty` (`b` is exactly its size).
    fn value(&self, ty: u32, b: &[u8]) -> f64 {
        macro_rules! num {
            ($t:ty) => {{
                let a = b.try_into().expect("chunk has the type's size");
                if self.big_endian {
                    <$t>::from_be_bytes(a)
                } else {
                    <$t>::from_le_bytes(a)
                }
            }};
        }
        match ty {
            MI_INT8 => f64::from(b[0] as i8),
            MI_UINT8 => f64::from(b[0]),
            MI_INT16 => f64::from(num!(i16)),
            MI_UINT16 => f64::from(num!(u16)),
            MI_INT32 => f64::from(num!(i32)),
            MI_UINT32 => f64::from(num!(u32)),
            MI_SINGLE => f64::from(num!(f32)),
            MI_DOUBLE => num!(f64),
            // 64-bit integers beyond 2^53 lose precision, as they do in MATLAB's double().
            MI_INT64 => num!(i64) as f64,
            MI_UINT64 => num!(u64) as f64,
            _ => unreachable!("elem_size accepted type {ty}"),
        }
    }
}

/// Byte size of one value of a numeric data type, `None` for other types.
fn elem_size(ty: u32) -> Option<usize> {
    match ty {
        MI_INT8 | MI_UINT8 => Some(1),
        MI_INT16 | MI_UINT16 => Some(2),
        MI_INT32 | MI_UINT32 | MI_SINGLE => Some(4),
        MI_DOUBLE | MI_INT64 | MI_UINT64 => Some(8),
        _ => None,
    }
}

impl<'a> Elements<'a, '_, '_> {
    /// The next element, or `None` at the end of the buffer.
    fn next_element(&mut self) -> Result<Option<Element<'a>>> {
        let rest = &self.buf[self.pos..];
        if rest.is_empty() {
            return Ok(None);
        }
        let offset = self.base + self.pos;
        let ctx = self.ctx;
        if rest.len() < 8 {
            return Err(ctx.err(format!(
                "truncated data element tag at offset {offset}: {} bytes left",
                rest.len()
            )));
        }
        let first = ctx.u32_at(rest);
        if first >> 16 != 0 {
            // Small data element: count in the upper 16 bits, data in bytes 4..8.
            let (ty, size) = (first & 0xffff, (first >> 16) as usize);
            if size > 4 {
                return Err(ctx.err(format!(
                    "small data element at offset {offset} declares {size} bytes (max 4)"
                )));
            }
            self.pos += 8;
            return Ok(Some(Element {
                ty,
                data: &rest[4..4 + size],
                offset,
            }));
        }
        let ty = first;
        let size = ctx.u32_at(&rest[4..]) as usize;
        if size > rest.len() - 8 {
            return Err(ctx.err(format!(
                "data element of type {ty} at offset {offset} declares {size} bytes \
                 but only {} remain (truncated file?)",
                rest.len() - 8
            )));
        }
        // Elements are padded to 8 bytes, except compressed ones, whose byte count
        // is exact. Tolerate a missing final pad at the end of the buffer.
        let padded = if ty == MI_COMPRESSED {
            size
        } else {
            size.div_ceil(8) * 8
        };
        self.pos = (self.pos + 8 + padded).min(self.buf.len());
        Ok(Some(Element {
            ty,
            data: &rest[8..8 + size],
            offset,
        }))
    }
}

#[cfg(test)]
pub(crate) mod tests;
mod v4;
