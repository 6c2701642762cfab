//! MATLAB level-5 MAT-files, enough to read real numeric matrices.
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
    /// Row `r` of the matrix. Panics if `r >= rows`.
    pub fn row(&self, r: usize) -> &[f64] {
        &self.data[r * self.cols..(r + 1) * self.cols]
    }
}

/// Reads every real 2-D numeric matrix of a level-5 MAT-file.
///
/// Other variables (cell, struct, char, sparse, complex, N-d with N > 2, objects)
/// are skipped, i.e. absent from the result.
pub fn read_mat(path: &Path) -> Result<Vec<MatMatrix>> {
    let bytes = crate::persist::read_bounded(path, super::MAX_DATA_BYTES)
        .map_err(|e| AntError::io(path, e))?;
    parse_mat(&bytes, path)
}

/// Whether `bytes` look like a level-5 MAT-file: its header text starts "MATLAB 5.0"
/// (the format's own convention; [`parse_mat`] then checks the rest).
pub fn is_mat(bytes: &[u8]) -> bool {
    bytes.starts_with(b"MATLAB 5.0")
}

/// Parses MAT-file bytes already in memory; `path` only names the file in errors.
pub fn parse_mat(bytes: &[u8], path: &Path) -> Result<Vec<MatMatrix>> {
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
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    /// A minimal MAT-file writer for the tests.
    pub(crate) struct Writer {
        pub big_endian: bool,
    }

    impl Writer {
        fn u32(&self, v: u32) -> [u8; 4] {
            if self.big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        }

        pub fn header(&self) -> Vec<u8> {
            let mut h = b"MATLAB 5.0 MAT-file, written by antdata tests".to_vec();
            h.resize(116, b' ');
            h.extend_from_slice(&[0; 8]);
            let (v, e): ([u8; 2], &[u8; 2]) = if self.big_endian {
                (0x0100u16.to_be_bytes(), b"MI")
            } else {
                (0x0100u16.to_le_bytes(), b"IM")
            };
            h.extend_from_slice(&v);
            h.extend_from_slice(e);
            h
        }

        /// A normal element: tag, data, padding to 8 bytes.
        pub fn element(&self, ty: u32, data: &[u8]) -> Vec<u8> {
            let mut b = self.u32(ty).to_vec();
            b.extend_from_slice(&self.u32(data.len() as u32));
            b.extend_from_slice(data);
            b.resize(b.len().div_ceil(8) * 8, 0);
            b
        }

        /// A small data element (at most 4 bytes).
        pub fn small(&self, ty: u32, data: &[u8]) -> Vec<u8> {
            assert!(data.len() <= 4);
            let mut b = self.u32(((data.len() as u32) << 16) | ty).to_vec();
            b.extend_from_slice(data);
            b.resize(8, 0);
            b
        }

        /// A miMATRIX element. `real` holds the column-major values already
        /// encoded as data type `mi`; names of up to 4 bytes use the small format.
        pub fn matrix(
            &self,
            name: &str,
            class: u32,
            flags: u32,
            dims: &[i32],
            mi: u32,
            real: &[u8],
        ) -> Vec<u8> {
            let mut body =
                self.element(MI_UINT32, &[self.u32(class | flags), self.u32(0)].concat());
            let d: Vec<u8> = dims.iter().flat_map(|&v| self.u32(v as u32)).collect();
            body.extend(self.element(MI_INT32, &d));
            if name.len() <= 4 {
                body.extend(self.small(MI_INT8, name.as_bytes()));
            } else {
                body.extend(self.element(MI_INT8, name.as_bytes()));
            }
            if real.len() <= 4 && !real.is_empty() {
                body.extend(self.small(mi, real));
            } else {
                body.extend(self.element(mi, real));
            }
            self.element(MI_MATRIX, &body)
        }

        /// A double matrix given row-major.
        pub fn double_matrix(
            &self,
            name: &str,
            rows: usize,
            cols: usize,
            row_major: &[f64],
        ) -> Vec<u8> {
            let mut real = Vec::new();
            for c in 0..cols {
                for r in 0..rows {
                    let v = row_major[r * cols + c];
                    real.extend(if self.big_endian {
                        v.to_be_bytes()
                    } else {
                        v.to_le_bytes()
                    });
                }
            }
            self.matrix(name, 6, 0, &[rows as i32, cols as i32], MI_DOUBLE, &real)
        }

        /// Wraps an element in miCOMPRESSED (no padding after it).
        pub fn compressed(&self, element: &[u8]) -> Vec<u8> {
            let mut enc =
                flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(element).unwrap();
            let z = enc.finish().unwrap();
            let mut b = self.u32(MI_COMPRESSED).to_vec();
            b.extend_from_slice(&self.u32(z.len() as u32));
            b.extend(z);
            b
        }
    }

    const P: &str = "/virtual/test.mat";

    fn parse(bytes: &[u8]) -> Result<Vec<MatMatrix>> {
        parse_mat(bytes, Path::new(P))
    }

    fn assert_data_err(r: Result<Vec<MatMatrix>>, needle: &str) {
        let e = r.unwrap_err();
        assert!(matches!(e, AntError::Data { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains(P), "{msg}");
        assert!(msg.contains(needle), "expected '{needle}' in: {msg}");
    }

    /// A 3x2 matrix [[1,2],[3,4],[5,6]].
    const M32: [f64; 6] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];

    #[test]
    fn uncompressed_round_trip_both_endians() {
        for big_endian in [false, true] {
            let w = Writer { big_endian };
            let mut f = w.header();
            f.extend(w.double_matrix("a", 3, 2, &M32)); // small-element name
            f.extend(w.double_matrix("longer_name", 1, 3, &[7.0, 8.0, 9.0]));
            let ms = parse(&f).unwrap();
            assert_eq!(ms.len(), 2);
            assert_eq!(ms[0].name, "a");
            assert_eq!(ms[0].class, MatClass::Double);
            assert_eq!((ms[0].rows, ms[0].cols), (3, 2));
            assert_eq!(
                ms[0].data,
                M32.to_vec(),
                "row-major, big_endian={big_endian}"
            );
            assert_eq!(ms[0].row(1), &[3.0, 4.0]);
            assert_eq!(ms[1].name, "longer_name");
            assert_eq!(ms[1].data, vec![7.0, 8.0, 9.0]);
        }
    }

    #[test]
    fn compressed_round_trip_and_file_io() {
        for big_endian in [false, true] {
            let w = Writer { big_endian };
            let mut f = w.header();
            f.extend(w.compressed(&w.double_matrix("x", 3, 2, &M32)));
            f.extend(w.compressed(&w.double_matrix("y_var", 2, 1, &[-1.5, 2.5])));
            f.extend(w.double_matrix("z", 1, 1, &[42.0]));
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("c.mat");
            std::fs::write(&p, &f).unwrap();
            let ms = read_mat(&p).unwrap();
            let names: Vec<&str> = ms.iter().map(|m| m.name.as_str()).collect();
            assert_eq!(names, ["x", "y_var", "z"]);
            assert_eq!(ms[0].data, M32.to_vec());
            assert_eq!(ms[1].data, vec![-1.5, 2.5]);
            assert_eq!(ms[2].data, vec![42.0]);
        }
    }

    #[test]
    fn integer_and_single_storage_types() {
        // MATLAB stores doubles with small integer values as compact types.
        for big_endian in [false, true] {
            let w = Writer { big_endian };
            let e16 = |v: i16| {
                if big_endian {
                    v.to_be_bytes()
                } else {
                    v.to_le_bytes()
                }
            };
            let ef32 = |v: f32| {
                if big_endian {
                    v.to_be_bytes()
                } else {
                    v.to_le_bytes()
                }
            };
            let eu64 = |v: u64| {
                if big_endian {
                    v.to_be_bytes()
                } else {
                    v.to_le_bytes()
                }
            };
            let mut f = w.header();
            // 2x2 int16 [[1,-2],[3,-4]] column-major: 1,3,-2,-4.
            let int16: Vec<u8> = [1i16, 3, -2, -4].into_iter().flat_map(e16).collect();
            f.extend(w.matrix("i16", 6, 0, &[2, 2], MI_INT16, &int16));
            // uint8 1x3 stored small (3 bytes in the tag).
            f.extend(w.matrix("u8", 9, 0, &[1, 3], MI_UINT8, &[200, 0, 7]));
            // int8 as small element.
            f.extend(w.matrix("i8", 8, 0, &[2, 1], MI_INT8, &[0xff, 5]));
            let single: Vec<u8> = [0.5f32, -0.25].into_iter().flat_map(ef32).collect();
            f.extend(w.matrix("s", 7, 0, &[1, 2], MI_SINGLE, &single));
            f.extend(w.matrix("u64", 15, 0, &[1, 1], MI_UINT64, &eu64(1 << 40)));
            // Logical arrays are uint8 with the logical flag (0x0200).
            f.extend(w.matrix("lg", 9, 0x0200, &[1, 2], MI_UINT8, &[1, 0]));
            let ms = parse(&f).unwrap();
            let get = |n: &str| ms.iter().find(|m| m.name == n).unwrap();
            assert_eq!(get("i16").data, vec![1.0, -2.0, 3.0, -4.0]);
            assert_eq!(get("u8").data, vec![200.0, 0.0, 7.0]);
            assert_eq!(get("u8").class, MatClass::UInt8);
            assert_eq!(get("i8").data, vec![-1.0, 5.0]);
            assert_eq!(get("s").data, vec![0.5, -0.25]);
            assert_eq!(get("u64").data, vec![(1u64 << 40) as f64]);
            assert_eq!(get("lg").data, vec![1.0, 0.0]);
        }
    }

    #[test]
    fn non_numeric_and_complex_are_skipped() {
        let w = Writer { big_endian: false };
        let mut f = w.header();
        // char array
        f.extend(w.matrix("txt", 4, 0, &[1, 2], MI_UTF8 - 13, &[104, 0, 105, 0]));
        // complex double (real part only written; skipped before reading it)
        f.extend(w.matrix(
            "cx",
            6,
            FLAG_COMPLEX,
            &[1, 1],
            MI_DOUBLE,
            &1.0f64.to_le_bytes(),
        ));
        // 3-D double
        f.extend(w.matrix("nd", 6, 0, &[1, 1, 2], MI_DOUBLE, &[0; 16]));
        // cell array with one empty miMATRIX inside
        let mut cell = w.element(MI_UINT32, &[w.u32(1), w.u32(0)].concat());
        cell.extend(w.element(MI_INT32, &[w.u32(1), w.u32(1)].concat()));
        cell.extend(w.small(MI_INT8, b"c"));
        cell.extend(w.element(MI_MATRIX, &[]));
        f.extend(w.element(MI_MATRIX, &cell));
        // empty top-level miMATRIX
        f.extend(w.element(MI_MATRIX, &[]));
        f.extend(w.double_matrix("ok", 1, 1, &[3.0]));
        let ms = parse(&f).unwrap();
        assert_eq!(ms.len(), 1);
        assert_eq!(ms[0].name, "ok");
    }

    #[test]
    fn bad_headers() {
        let w = Writer { big_endian: false };
        let good = w.header();
        assert_data_err(parse(&good[..100]), "shorter than the 128-byte header");
        let mut e = good.clone();
        e[126..128].copy_from_slice(b"XX");
        assert_data_err(parse(&e), "endian indicator");
        let mut v = good.clone();
        v[124..126].copy_from_slice(&0x0300u16.to_le_bytes());
        assert_data_err(parse(&v), "version 0x0300");
        v[124..126].copy_from_slice(&0x0200u16.to_le_bytes());
        assert_data_err(parse(&v), "v7.3");
        let mut z = good.clone();
        z[0] = 0;
        assert_data_err(parse(&z), "MAT v4");
        // A header alone is a valid, empty file.
        assert!(parse(&good).unwrap().is_empty());
    }

    #[test]
    fn every_truncation_is_a_clean_error() {
        let w = Writer { big_endian: false };
        let mut f = w.header();
        let m1 = w.double_matrix("a", 3, 2, &M32);
        let m2 = w.compressed(&w.double_matrix("bb", 2, 2, &[1.0, 2.0, 3.0, 4.0]));
        f.extend(&m1);
        f.extend(&m2);
        let boundaries = [HEADER_LEN, HEADER_LEN + m1.len(), f.len()];
        for cut in 0..f.len() {
            match parse(&f[..cut]) {
                Ok(ms) => assert!(
                    boundaries.contains(&cut),
                    "cut at {cut} parsed as {} matrices",
                    ms.len()
                ),
                Err(e) => {
                    assert!(matches!(e, AntError::Data { .. }), "cut {cut}: {e:?}");
                    assert!(e.to_string().contains(P));
                }
            }
        }
        assert_data_err(parse(&f[..HEADER_LEN + 20]), "truncated file?");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("trunc.mat");
        std::fs::write(&p, &f[..f.len() - 3]).unwrap();
        let msg = read_mat(&p).unwrap_err().to_string();
        assert!(
            msg.contains("trunc.mat") && msg.contains("type 15"),
            "{msg}"
        );
    }

    #[test]
    fn malformed_elements() {
        let w = Writer { big_endian: false };
        let with = |el: Vec<u8>| [w.header(), el].concat();
        // Unknown top-level element type.
        assert_data_err(
            parse(&with(w.element(99, &[0; 8]))),
            "unexpected data element type 99",
        );
        // Unknown data type for the real part.
        assert_data_err(
            parse(&with(w.matrix("a", 6, 0, &[1, 1], 8, &[0; 8]))),
            "unknown numeric data type 8",
        );
        // Real part of the wrong size.
        assert_data_err(
            parse(&with(w.matrix("a", 6, 0, &[2, 2], MI_DOUBLE, &[0; 24]))),
            "real part has 24 bytes",
        );
        // Huge dims with a tiny payload: rejected, not allocated.
        assert_data_err(
            parse(&with(w.matrix(
                "h",
                6,
                0,
                &[i32::MAX, i32::MAX],
                MI_DOUBLE,
                &[0; 8],
            ))),
            "2147483647x2147483647",
        );
        assert_data_err(
            parse(&with(w.matrix("n", 6, 0, &[-1, 2], MI_DOUBLE, &[0; 8]))),
            "negative dimension",
        );
        // Huge declared element size.
        let mut huge = w.element(MI_MATRIX, &[0; 8]);
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_data_err(parse(&with(huge)), "declares 4294967295 bytes");
        // Small element claiming more than 4 bytes.
        let mut bad_small = w.small(MI_INT8, b"ab");
        bad_small[0..4].copy_from_slice(&((9u32 << 16) | MI_INT8).to_le_bytes());
        assert_data_err(parse(&with(bad_small)), "max 4");
        // Matrix missing its real part.
        let mut body = w.element(MI_UINT32, &[w.u32(6), w.u32(0)].concat());
        body.extend(w.element(MI_INT32, &[w.u32(1), w.u32(1)].concat()));
        body.extend(w.small(MI_INT8, b"a"));
        assert_data_err(
            parse(&with(w.element(MI_MATRIX, &body))),
            "ends before its real part",
        );
        // Bad flags element.
        assert_data_err(
            parse(&with(w.element(MI_MATRIX, &w.element(MI_DOUBLE, &[0; 8])))),
            "array flags",
        );
        // Corrupt zlib stream.
        let mut z = w.compressed(&w.double_matrix("a", 1, 1, &[1.0]));
        for b in &mut z[10..] {
            *b ^= 0x5a;
        }
        assert_data_err(parse(&with(z)), "zlib");
        // Nested compression is refused.
        let inner = w.compressed(&w.double_matrix("a", 1, 1, &[1.0]));
        assert_data_err(
            parse(&with(w.compressed(&inner))),
            "unexpected data element type 15",
        );
    }
}
