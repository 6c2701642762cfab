//! A small reader for numeric / tabular delimited text (CSV, TSV, whitespace).
//!
//! Not a full RFC 4180 parser: fields may be double-quoted (with `""` escapes)
//! but may not span lines. Gzip input is detected by its magic bytes.

use std::path::Path;

use super::read_maybe_gz;
use crate::error::{AntError, Result};

/// Field separator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delimiter {
    Comma,
    Semicolon,
    Tab,
    /// Runs of spaces and/or tabs; leading and trailing blanks are ignored.
    Whitespace,
}

impl Delimiter {
    fn char(self) -> Option<char> {
        match self {
            Delimiter::Comma => Some(','),
            Delimiter::Semicolon => Some(';'),
            Delimiter::Tab => Some('\t'),
            Delimiter::Whitespace => None,
        }
    }
}

/// Whether the first row (after `skip_rows`) is a header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HeaderMode {
    /// A header if the first row has a non-numeric (non-empty) field and the
    /// second row is numeric in all those columns.
    #[default]
    Auto,
    Present,
    Absent,
}

#[derive(Clone, Debug, Default)]
pub struct CsvOptions {
    /// `None` detects it among `,` tab `;` and whitespace.
    pub delimiter: Option<Delimiter>,
    /// Physical lines to drop before anything else (blank or not).
    pub skip_rows: usize,
    pub header: HeaderMode,
}

/// A table of text cells. All rows (and the header) have the same field count.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub header: Option<Vec<String>>,
    pub rows: Vec<Vec<String>>,
    /// 1-based line number in the file of each row, for error messages.
    pub line_numbers: Vec<usize>,
    /// The delimiter used (given or detected).
    pub delimiter: Delimiter,
}

impl Table {
    /// Number of fields per row (0 for an empty table).
    pub fn n_cols(&self) -> usize {
        self.header
            .as_ref()
            .or(self.rows.first())
            .map_or(0, Vec::len)
    }
}

/// Reads a delimited text file (raw or gzipped). Blank lines are ignored.
pub fn read_table(path: &Path, opts: &CsvOptions) -> Result<Table> {
    let bytes = read_maybe_gz(path)?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        AntError::data(
            path,
            format!("not valid UTF-8 text (byte {})", e.valid_up_to()),
        )
    })?;
    parse_table(text, path, opts)
}

/// Parses delimited text already in memory; `path` only names the file in errors.
pub fn parse_table(text: &str, path: &Path, opts: &CsvOptions) -> Result<Table> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // (1-based line number, line) for non-blank lines after the skipped ones.
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .skip(opts.skip_rows)
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    let delimiter = match opts.delimiter {
        Some(d) => d,
        None => detect_delimiter(lines.iter().take(10).map(|&(_, l)| l)),
    };

    let mut rows = Vec::with_capacity(lines.len());
    let mut line_numbers = Vec::with_capacity(lines.len());
    for &(n, line) in &lines {
        let fields = split_line(line, delimiter)
            .map_err(|msg| AntError::data(path, format!("line {n}: {msg}")))?;
        if let Some(first) = rows.first().map(Vec::len)
            && fields.len() != first
        {
            return Err(AntError::data(
                path,
                format!(
                    "line {n}: {} fields, expected {first} as on line {}",
                    fields.len(),
                    line_numbers[0]
                ),
            ));
        }
        rows.push(fields);
        line_numbers.push(n);
    }

    let has_header = match opts.header {
        HeaderMode::Present => !rows.is_empty(),
        HeaderMode::Absent => false,
        HeaderMode::Auto => looks_like_header(&rows),
    };
    let header = if has_header {
        line_numbers.remove(0);
        Some(rows.remove(0))
    } else {
        None
    };
    Ok(Table {
        header,
        rows,
        line_numbers,
        delimiter,
    })
}

fn is_numeric(s: &str) -> bool {
    s.trim().parse::<f64>().is_ok()
}

/// The first row has a non-empty, non-numeric field and the second row is
/// numeric in every such column.
fn looks_like_header(rows: &[Vec<String>]) -> bool {
    let [first, second, ..] = rows else {
        return false;
    };
    let mut text_cols = first
        .iter()
        .enumerate()
        // An empty cell is a missing value, not evidence of a header.
        .filter(|(_, f)| !f.trim().is_empty() && !is_numeric(f))
        .peekable();
    text_cols.peek().is_some()
        && text_cols.all(|(j, _)| second.get(j).is_some_and(|f| is_numeric(f)))
}

/// Picks the delimiter that splits the sample lines into the same number (> 1)
/// of fields, preferring `,` then tab then `;`; failing that, the one giving the
/// most fields on the first line; failing that, whitespace.
fn detect_delimiter<'a>(sample: impl Iterator<Item = &'a str> + Clone) -> Delimiter {
    let candidates = [Delimiter::Comma, Delimiter::Tab, Delimiter::Semicolon];
    let counts = |d: Delimiter| -> Vec<usize> {
        sample
            .clone()
            // A line that does not split cleanly (bad quoting) still votes by its
            // raw delimiter count; the real split then reports the problem.
            .map(|l| {
                split_line(l, d).map_or_else(
                    |_| l.matches(d.char().unwrap_or(' ')).count() + 1,
                    |f| f.len(),
                )
            })
            .collect()
    };
    let mut best: Option<(Delimiter, usize)> = None;
    for d in candidates {
        let c = counts(d);
        let Some(&first) = c.first() else { break };
        if first > 1 && c.iter().all(|&k| k == first) {
            return d;
        }
        if first > 1 && best.is_none_or(|(_, b)| first > b) {
            best = Some((d, first));
        }
    }
    best.map_or(Delimiter::Whitespace, |(d, _)| d)
}

/// Splits one line into trimmed fields, unquoting double-quoted ones.
fn split_line(line: &str, delimiter: Delimiter) -> std::result::Result<Vec<String>, String> {
    let Some(d) = delimiter.char() else {
        return Ok(line.split_whitespace().map(str::to_string).collect());
    };
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars
            .next_if(|&c| c == ' ' || (c == '\t' && d != '\t'))
            .is_some()
        {}
        let mut field = String::new();
        if chars.next_if_eq(&'"').is_some() {
            loop {
                match chars.next() {
                    None => return Err("unterminated quoted field".into()),
                    Some('"') if chars.next_if_eq(&'"').is_some() => field.push('"'),
                    Some('"') => break,
                    Some(c) => field.push(c),
                }
            }
            // Only blanks may follow the closing quote before the delimiter.
            while chars.next_if(|&c| c != d && c.is_whitespace()).is_some() {}
            if chars.peek().is_some_and(|&c| c != d) {
                return Err("text after a closing quote".into());
            }
        } else {
            while let Some(c) = chars.next_if(|&c| c != d) {
                field.push(c);
            }
            field.truncate(field.trim_end().len());
        }
        fields.push(field);
        if chars.next().is_none() {
            return Ok(fields);
        }
    }
}

/// Parses every cell as `f64` (NaN and inf are accepted here; refuse them later
/// with [`super::Dataset::check_finite`]). The error names the 1-based line and
/// column of the first non-numeric cell.
pub fn parse_f64(table: &Table, path: &Path) -> Result<Vec<Vec<f64>>> {
    table
        .rows
        .iter()
        .zip(&table.line_numbers)
        .map(|(row, &line)| {
            row.iter()
                .enumerate()
                .map(|(j, cell)| {
                    cell.trim().parse::<f64>().map_err(|_| {
                        AntError::data(
                            path,
                            format!("line {line}, column {}: '{cell}' is not a number", j + 1),
                        )
                    })
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "/virtual/t.csv";

    fn table(text: &str) -> Result<Table> {
        parse_table(text, Path::new(P), &CsvOptions::default())
    }

    fn cells(rows: &[&[&str]]) -> Vec<Vec<String>> {
        rows.iter()
            .map(|r| r.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    #[test]
    fn detects_each_delimiter() {
        let cases = [
            ("1,2,3\n4,5,6\n", Delimiter::Comma),
            ("1;2;3\n4;5;6\n", Delimiter::Semicolon),
            ("1\t2\t3\n4\t5\t6\n", Delimiter::Tab),
            ("1 2  3\n  4   5 6  \n", Delimiter::Whitespace),
            // Spaces around commas do not make it whitespace-separated.
            ("1, 2, 3\n4 ,5 , 6\n", Delimiter::Comma),
        ];
        for (text, d) in cases {
            let t = table(text).unwrap();
            assert_eq!(t.delimiter, d, "{text:?}");
            assert_eq!(t.header, None);
            assert_eq!(
                t.rows,
                cells(&[&["1", "2", "3"], &["4", "5", "6"]]),
                "{text:?}"
            );
            assert_eq!(t.n_cols(), 3);
        }
        // A single column: nothing splits it.
        let t = table("1\n2\n").unwrap();
        assert_eq!(t.rows, cells(&[&["1"], &["2"]]));
    }

    #[test]
    fn explicit_delimiter_and_skip_rows() {
        let opts = CsvOptions {
            delimiter: Some(Delimiter::Semicolon),
            skip_rows: 2,
            header: HeaderMode::Absent,
        };
        let t = parse_table("junk,junk\n# comment\n1,5;2\n3;4\n", Path::new(P), &opts).unwrap();
        assert_eq!(t.rows, cells(&[&["1,5", "2"], &["3", "4"]]));
        assert_eq!(t.line_numbers, vec![3, 4]);
    }

    #[test]
    fn header_detection() {
        let t = table("a,b,c\n1,2,3\n4,5,6\n").unwrap();
        assert_eq!(t.header, Some(vec!["a".into(), "b".into(), "c".into()]));
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.line_numbers, vec![2, 3]);
        // sklearn style: partly numeric first row.
        let t = table("150,4,setosa\n5.1,3.5,0\n").unwrap();
        assert!(t.header.is_some());
        // Text in the second row too: that column is data, not a header.
        let t = table("x,red\ny,blue\n").unwrap();
        assert_eq!(t.header, None);
        // All numeric: no header; NaN/inf count as numeric.
        let t = table("1,NaN\n2,inf\n").unwrap();
        assert_eq!(t.header, None);
        // Forced.
        let forced = |h| {
            parse_table(
                "1,2\n3,4\n",
                Path::new(P),
                &CsvOptions {
                    header: h,
                    ..Default::default()
                },
            )
        };
        assert_eq!(forced(HeaderMode::Present).unwrap().rows.len(), 1);
        let t = table("a,b\nc,d\n").unwrap();
        assert_eq!(t.header, None);
        let t = parse_table(
            "a,b\nc,d\n",
            Path::new(P),
            &CsvOptions {
                header: HeaderMode::Present,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(t.header, Some(vec!["a".into(), "b".into()]));
    }

    #[test]
    fn quotes_blank_lines_crlf_bom() {
        let opts = CsvOptions {
            header: HeaderMode::Present,
            ..Default::default()
        };
        let text = "\u{feff}\"name\",\"a, b\"\r\n\r\n\"x \"\"q\"\"\" , 2\r\n";
        let t = parse_table(text, Path::new(P), &opts).unwrap();
        assert_eq!(t.delimiter, Delimiter::Comma);
        assert_eq!(t.header, Some(vec!["name".into(), "a, b".into()]));
        assert_eq!(t.rows, cells(&[&["x \"q\"", "2"]]));
        assert_eq!(t.line_numbers, vec![3]);
        let e = table("1,\"2\n").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("unterminated"), "{e}");
        let e = table("1,2\n\"a\"x,b\n").unwrap_err().to_string();
        assert!(
            e.contains("line 2") && e.contains("after a closing quote"),
            "{e}"
        );
        // Empty fields are kept.
        let t = table("1,,3\n4,5,\n").unwrap();
        assert_eq!(t.rows, cells(&[&["1", "", "3"], &["4", "5", ""]]));
    }

    #[test]
    fn ragged_row_names_line() {
        let e = table("1,2,3\n\n4,5,6\n7,8\n").unwrap_err();
        assert!(matches!(e, AntError::Data { .. }));
        let msg = e.to_string();
        assert!(msg.contains(P), "{msg}");
        assert!(
            msg.contains("line 4: 2 fields, expected 3 as on line 1"),
            "{msg}"
        );
        // With skip_rows the numbering stays physical.
        let opts = CsvOptions {
            skip_rows: 1,
            ..Default::default()
        };
        let e = parse_table("x\n1 2\n3 4 5\n", Path::new(P), &opts).unwrap_err();
        assert!(e.to_string().contains("line 3: 3 fields"), "{e}");
    }

    #[test]
    fn parse_f64_names_line_and_column() {
        let t = table("a,b\n1,2.5\n-3e2,nan\n").unwrap();
        let v = parse_f64(&t, Path::new(P)).unwrap();
        assert_eq!(v[0], vec![1.0, 2.5]);
        assert_eq!(v[1][0], -300.0);
        assert!(v[1][1].is_nan());
        let t = table("1,2\n3,x4\n").unwrap();
        let msg = parse_f64(&t, Path::new(P)).unwrap_err().to_string();
        assert!(
            msg.contains(P) && msg.contains("line 2, column 2: 'x4'"),
            "{msg}"
        );
    }

    #[test]
    fn reads_files_raw_and_gz() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let text = "h1;h2\n1;2\n3;4\n";
        let raw = dir.path().join("t.csv");
        std::fs::write(&raw, text).unwrap();
        let gz = dir.path().join("t.csv.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(text.as_bytes()).unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        let a = read_table(&raw, &CsvOptions::default()).unwrap();
        let b = read_table(&gz, &CsvOptions::default()).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.delimiter, Delimiter::Semicolon);
        assert_eq!(a.rows, cells(&[&["1", "2"], &["3", "4"]]));
        std::fs::write(&raw, [b'1', b',', 0xff, b'\n']).unwrap();
        let msg = read_table(&raw, &CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("UTF-8"), "{msg}");
    }

    /// scikit-learn's bundled tables, copied as-is into `data/small`.
    #[test]
    fn real_small_tables() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/small");
        let opts = CsvOptions::default();
        let iris = read_table(&dir.join("iris.csv"), &opts).unwrap();
        assert_eq!(iris.header.as_ref().unwrap()[2], "setosa");
        assert_eq!((iris.rows.len(), iris.n_cols()), (150, 5));
        let diab = read_table(&dir.join("diabetes_data_raw.csv.gz"), &opts).unwrap();
        assert_eq!(diab.delimiter, Delimiter::Whitespace);
        assert_eq!((diab.rows.len(), diab.n_cols()), (442, 10));
        assert_eq!(parse_f64(&diab, &dir).unwrap()[0][0], 59.0);
        let digits = read_table(&dir.join("digits.csv.gz"), &opts).unwrap();
        assert_eq!(digits.n_cols(), 65);
        assert_eq!(digits.rows.len(), 1797);
    }
}
