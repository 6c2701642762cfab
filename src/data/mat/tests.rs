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
        let mut body = self.element(MI_UINT32, &[self.u32(class | flags), self.u32(0)].concat());
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
        let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
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

/// A level-4 record: `mopt` type, a `rows` x `cols` matrix of `values` (bytes, column
/// by column) named `name`.
fn v4_record(big_endian: bool, mopt: u32, rows: u32, cols: u32, name: &str, values: &[u8]) -> Vec<u8> {
    let w = Writer { big_endian };
    let mut b = Vec::new();
    for v in [mopt, rows, cols, 0, name.len() as u32 + 1] {
        b.extend_from_slice(&w.u32(v));
    }
    b.extend_from_slice(name.as_bytes());
    b.push(0);
    b.extend_from_slice(values);
    b
}

/// Level-4 files (`savemat(format='4')`) are read as MAT-files, not as text.
#[test]
fn level_4_files_are_read_in_either_byte_order() {
    for big_endian in [false, true] {
        let m = u32::from(big_endian) * 1000;
        let f64s: Vec<u8> = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]
            .iter()
            .flat_map(|v| if big_endian { v.to_be_bytes() } else { v.to_le_bytes() })
            .collect();
        let mut file = v4_record(big_endian, m, 2, 3, "X", &f64s);
        // A text matrix is skipped, as level 5's char arrays are.
        file.extend(v4_record(big_endian, m + 1, 1, 2, "s", &[0; 16]));
        file.extend(v4_record(big_endian, m + 50, 1, 3, "y", &[7, 8, 9]));
        assert!(is_mat(&file), "big endian: {big_endian}");
        let ms = parse(&file).unwrap();
        assert_eq!(ms.len(), 2);
        assert_eq!((ms[0].name.as_str(), ms[0].rows, ms[0].cols), ("X", 2, 3));
        // Column-major on disk, row-major here.
        assert_eq!(ms[0].data, [1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
        assert_eq!((ms[1].class, ms[1].data.as_slice()), (MatClass::UInt8, &[7.0, 8.0, 9.0][..]));
        // One byte short, or one too many, and the records no longer tile the file:
        // still taken for one (by its first record), and said to be damaged.
        assert!(!is_mat(&file[..file.len() - 1]));
        let mut longer = file.clone();
        longer.push(0);
        assert!(!is_mat(&longer));
        for damaged in [&file[..file.len() - 1], &longer[..]] {
            assert!(looks_like_v4(damaged));
            assert_data_err(parse(damaged), "level-4 MAT-file cut short or damaged");
        }
        // Cut inside its first record's header or name (past its first word, which may
        // be zeros alone): the same.
        for cut in 8..22 {
            assert!(looks_like_v4(&file[..cut]), "cut at {cut}");
            assert_data_err(parse(&file[..cut]), "level-4 MAT-file cut short or damaged");
        }
    }
    for text in [&b"1,2,3\n4,5,6\n"[..], b"", &[0; 40], &[0; 16]] {
        assert!(!is_mat(text) && !looks_like_v4(text), "{text:?}");
    }
}
