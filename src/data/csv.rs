//! Delimited text (CSV, TSV, runs of blanks) as a table of text cells, and the one
//! number check and header guess that every loader of tables uses.
//!
//! Fields are split by the `csv` crate: a double-quoted field may hold the delimiter,
//! `""` for a quote, and line breaks. Two things it lets pass are refused here, with
//! the line: text after a closing quote, and a quote still open at the end of the file.
//! Blank-separated text ([`Separator::Space`]) is split per line, without quoting.
//! Gzip input is detected by its magic bytes.

use std::path::Path;


use super::read_maybe_gz;
pub use super::table::{Separator, Table};
use super::table::{Cells, RowNumbers};
use crate::error::{AntError, Result};

pub use super::header::is_number;
use super::header::{first_row_is_header, header_of_column_numbers, is_column_numbers, is_json};

/// The message for record `line` of `got` fields where the first record, on line
/// `first`, had `w`. When it is the second record and the delimiter was `guessed`
/// (from the first lines), the first line may be a title or a comment the guess was
/// made from ("# exported by ..." would give "1 fields, expected 5" for a file of 3
/// columns).
fn ragged(
    line: usize,
    got: usize,
    w: usize,
    first: usize,
    second: bool,
    guessed: Option<Separator>,
) -> String {
    let msg = format!("line {line}: {got} fields, expected {w} as on line {first}");
    match (second, guessed) {
        (true, Some(d)) => format!(
            "{msg} (split at {}, guessed): if line {first} is a title or a comment, skip it with --skip-rows {}",
            match d {
                Separator::Comma => "commas",
                Separator::Semicolon => "semicolons",
                Separator::Tab => "tabs",
                Separator::Space => "blanks",
            },
            first
        ),
        _ => msg,
    }
}

/// Whether the first row (after `skip_rows`) is a header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HeaderMode {
    /// A header if the first row has a non-empty field that is not a number
    /// ([`first_row_is_header`] with every column numeric).
    #[default]
    Auto,
    #[cfg_attr(not(feature = "internals"), allow(dead_code))] // the tests' way in
    Present,
    Absent,
}

#[derive(Clone, Debug, Default)]
pub struct CsvOptions {
    /// `None` detects it among `,` tab `;` and blanks.
    pub delimiter: Option<Separator>,
    /// Physical lines to drop before anything else (blank or not).
    pub skip_rows: usize,
    pub header: HeaderMode,
}

#[cfg_attr(not(feature = "internals"), allow(dead_code))] // the tests' way in
/// Reads a delimited text file (raw or gzipped). Blank lines are ignored.
pub fn read_table(path: &Path, opts: &CsvOptions) -> Result<Table> {
    parse_bytes(&read_maybe_gz(path)?, path, opts)
}

/// Parses a file's (gunzipped) bytes, which must be UTF-8 text; `path` only names the
/// file in errors.
pub(crate) fn parse_bytes(bytes: &[u8], path: &Path, opts: &CsvOptions) -> Result<Table> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        AntError::data(
            path,
            format!("not valid UTF-8 text (byte {})", e.valid_up_to()),
        )
    })?;
    parse_table(text, path, opts)
}

/// Refuses JSON ([`is_json`]): it would be read as one odd CSV field and refused for
/// its quotes ("text after a closing quote").
fn refuse_json(text: &str, path: &Path) -> Result<()> {
    match is_json(text) {
        true => Err(AntError::data(
            path,
            "holds JSON, but tables are read as delimited text: write it as CSV, a header line of names then a row per sample",
        )),
        false => Ok(()),
    }
}

/// Parses delimited text already in memory; `path` only names the file in errors.
pub(crate) fn parse_table(text: &str, path: &Path, opts: &CsvOptions) -> Result<Table> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (first_line, text) = skip_lines(text, opts.skip_rows);
    refuse_json(text, path)?;
    let delimiter = match opts.delimiter {
        Some(d) => d,
        None => detect_delimiter(text),
    };

    let (mut header, mut width) = (None, None);
    // Reserved whole (counted from the separators: at least as many as there are):
    // growing by doubling would need up to twice the memory.
    let (n_cells, n_lines) = count_cells(text, delimiter);
    check_fits(text.len(), n_cells, n_lines, path)?;
    let mut cells = Cells {
        text: String::with_capacity(text.len()),
        ends: Vec::with_capacity(n_cells),
        width: 0,
    };
    let mut line_numbers: Vec<u32> = Vec::with_capacity(n_lines);
    let mut first_record_line = 0;
    for Record {
        line,
        fields,
        problem,
    } in records(text, delimiter, first_line)
    {
        if let Some((at, msg)) = problem {
            return Err(AntError::data(path, format!("line {at}: {msg}")));
        }
        let Some(w) = width else {
            // The first record: the header, or the first row.
            (width, first_record_line) = (Some(fields.len()), line);
            let is_header = match opts.header {
                HeaderMode::Present => true,
                HeaderMode::Absent => false,
                HeaderMode::Auto => {
                    first_row_is_header(&fields, |_| true)
                        || header_of_column_numbers(path, line, &fields, |_| false, true)
                }
            };
            cells.width = fields.len();
            match is_header {
                true => header = Some(fields),
                false => {
                    cells.push_row(&fields, path)?;
                    line_numbers.push(u32::try_from(line).unwrap_or(u32::MAX));
                }
            }
            continue;
        };
        if fields.len() != w {
            // The first line is the odd one when the records after it agree with this
            // one (not a short row under a real header).
            let second = line_numbers.len() + usize::from(header.is_some()) == 1
                && records(text, delimiter, first_line)
                    .skip(1)
                    .take(10)
                    .all(|r| r.fields.len() == fields.len());
            let guessed = opts.delimiter.is_none().then_some(delimiter);
            let msg = ragged(line, fields.len(), w, first_record_line, second, guessed);
            return Err(AntError::data(path, msg));
        }
        cells.push_row(&fields, path)?;
        line_numbers.push(u32::try_from(line).unwrap_or(u32::MAX));
    }
    Ok(Table {
        header,
        cols: (0..cells.width).collect(),
        cells,
        line_numbers,
        delimiter,
        numbered_by: RowNumbers::Lines,
    })
}

/// Refuses a table whose reading would not fit in the memory the process may have,
/// before reading it. Reading costs, beside the file's text: its cells' text, 4 bytes
/// per cell (where each ends) and 4 per line (its number), then 4 bytes per cell as f32
/// and up to 8 per row of targets.
pub(crate) fn check_fits(text: usize, cells: usize, lines: usize, path: &Path) -> Result<()> {
    let need = text as u64 + 8 * cells as u64 + 12 * lines as u64;
    let what = format!("reading its {} MiB as a table", text >> 20);
    crate::os::check_file_fits(need, path, &what)
}

/// At least as many cells and lines as `text` holds split by `delimiter`: its
/// separators and line breaks, counted.
fn count_cells(text: &str, delimiter: Separator) -> (usize, usize) {
    let lines = text.bytes().filter(|&b| b == b'\n').count() + 1;
    let separators = match delimiter.byte() {
        Some(d) => text.bytes().filter(|&b| b == d).count(),
        None => text.bytes().filter(|b| b.is_ascii_whitespace()).count(),
    };
    (separators + lines, lines)
}

/// The text after the first `n` physical lines, and the 1-based number of its first line.
fn skip_lines(text: &str, n: usize) -> (usize, &str) {
    let mut rest = text;
    for _ in 0..n {
        // The loop ends with the text, whatever `n` is.
        let Some((_, r)) = rest.split_once('\n') else {
            return (n.saturating_add(1), "");
        };
        rest = r;
    }
    (n.saturating_add(1), rest)
}

/// One non-blank record of the text.
struct Record {
    /// 1-based line where it starts.
    line: usize,
    /// Its fields, unquoted and trimmed.
    fields: Vec<String>,
    /// Bad quoting (or unreadable text): the line and what is wrong.
    problem: Option<(usize, String)>,
}

/// The non-blank records of `text`, whose first line is line `first_line` of the file.
/// Whether `line` (one physical line) splits by `d` into `width` cells that are all
/// numbers but at most one (a label): a row of values, not a title or a comment.
pub(crate) fn holds_values(line: &str, d: Separator, width: usize) -> bool {
    let Some(r) = records(line, d, 1).next() else {
        return false;
    };
    let text = r.fields.iter().filter(|c| !is_number(c)).count();
    let header = is_column_numbers(&r.fields, |_| true);
    r.problem.is_none() && r.fields.len() == width && text <= 1 && !header
}

fn records(text: &str, d: Separator, first_line: usize) -> Box<dyn Iterator<Item = Record> + '_> {
    let Some(byte) = d.byte() else {
        return Box::new(
            text.lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(move |(i, l)| Record {
                    line: first_line + i,
                    fields: l.split_whitespace().map(str::to_string).collect(),
                    problem: None,
                }),
        );
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(byte)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut record = csv::StringRecord::new();
    // Lines are counted here: csv's own count puts a record on the first of the blank
    // lines before it.
    let (mut counted_to, mut line) = (0, first_line);
    Box::new(std::iter::from_fn(move || {
        loop {
            let start = reader.position().byte() as usize;
            let read = reader.read_record(&mut record);
            let end = reader.position().byte() as usize;
            line += newlines(&text[counted_to..start]);
            counted_to = start;
            let raw = &text[start..end];
            let lead = &raw[..raw.len() - raw.trim_start().len()];
            return match read {
                Ok(false) => None,
                Ok(true) if raw.trim().is_empty() => continue,
                Ok(true) => Some(Record {
                    line: line + newlines(lead),
                    fields: record.iter().map(str::to_string).collect(),
                    problem: quoting_problem(raw, byte).map(|(i, msg)| (line + i, msg.into())),
                }),
                Err(e) => Some(Record {
                    line,
                    fields: vec![],
                    problem: Some((line, e.to_string())),
                }),
            };
        }
    }))
}

fn newlines(s: &str) -> usize {
    s.bytes().filter(|&b| b == b'\n').count()
}

/// What `csv` lets pass in one record as it split it (`raw`, delimited by
/// `delimiter`), and this reader refuses: text after a closing quote, or a quote
/// still open at the end of the file. Returns the 0-based line in `raw` and the fault.
/// As in `csv`, a quote opens a quoted field only as a field's first character.
fn quoting_problem(raw: &str, delimiter: u8) -> Option<(usize, &'static str)> {
    #[derive(PartialEq)]
    enum State {
        FieldStart,
        Unquoted,
        Quoted,
        Closed,
    }
    let (mut state, mut line, mut opened_on) = (State::FieldStart, 0, 0);
    let mut bytes = raw.bytes().peekable();
    while let Some(b) = bytes.next() {
        state = match state {
            State::Quoted if b == b'"' => match bytes.next_if_eq(&b'"') {
                Some(_) => State::Quoted, // `""`: an escaped quote
                None => State::Closed,
            },
            State::Quoted => State::Quoted,
            _ if b == delimiter || b == b'\n' || b == b'\r' => State::FieldStart,
            State::FieldStart if b == b'"' => {
                opened_on = line;
                State::Quoted
            }
            State::Closed if b == b' ' || b == b'\t' => State::Closed,
            State::Closed => return Some((line, "text after a closing quote")),
            State::FieldStart | State::Unquoted => State::Unquoted,
        };
        line += usize::from(b == b'\n');
    }
    (state == State::Quoted).then_some((opened_on, "unterminated quoted field"))
}

/// Picks the delimiter that splits the first 10 records into the same number (> 1)
/// of fields, preferring `,` then tab then `;`; failing that, the one giving the
/// most fields in the first record; failing that, runs of blanks.
fn detect_delimiter(text: &str) -> Separator {
    let mut best: Option<(Separator, usize)> = None;
    for d in [Separator::Comma, Separator::Tab, Separator::Semicolon] {
        // A record with bad quoting still votes by how csv splits it; the real read
        // then reports the problem.
        let counts: Vec<usize> = records(text, d, 1)
            .take(10)
            .map(|r| r.fields.len())
            .collect();
        let Some(&first) = counts.first() else { break };
        if first > 1 && counts.iter().all(|&k| k == first) {
            return d;
        }
        if first > 1 && best.is_none_or(|(_, b)| first > b) {
            best = Some((d, first));
        }
    }
    // A title or comment line above the table (`Results`, `# exported by ...`): the
    // records after it decide, and the read then says to skip it.
    let after_first = [Separator::Comma, Separator::Tab, Separator::Semicolon]
        .into_iter()
        .find(|&d| {
            let counts: Vec<usize> = records(text, d, 1)
                .skip(1)
                .take(10)
                .map(|r| r.fields.len())
                .collect();
            counts
                .first()
                .is_some_and(|&k| k > 1 && counts.iter().all(|&c| c == k))
        });
    best.map(|(d, _)| d)
        .or(after_first)
        .unwrap_or(Separator::Space)
}

/// Parses every cell as `f64` (NaN and inf are accepted here; refuse them later
/// with [`super::Dataset::check_finite`]). The error names the 1-based line and
/// column of the first non-numeric cell.
pub(crate) fn parse_f64(table: &Table, path: &Path) -> Result<Vec<Vec<f64>>> {
    (0..table.n_rows())
        .map(|r| {
            table
                .row(r)
                .enumerate()
                .map(|(j, cell)| {
                    cell.trim().parse::<f64>().map_err(|_| {
                        AntError::data(
                            path,
                            format!(
                                "{}, column {}: {} is not a number",
                                table.place(r),
                                j + 1,
                                crate::error::quoted(cell)
                            ),
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
            ("7,2,3\n4,5,6\n", Separator::Comma),
            ("7;2;3\n4;5;6\n", Separator::Semicolon),
            ("7\t2\t3\n4\t5\t6\n", Separator::Tab),
            ("7 2  3\n  4   5 6  \n", Separator::Space),
            // Spaces around commas do not make it whitespace-separated.
            ("7, 2, 3\n4 ,5 , 6\n", Separator::Comma),
        ];
        for (text, d) in cases {
            let t = table(text).unwrap();
            assert_eq!(t.delimiter, d, "{text:?}");
            assert_eq!(t.header, None);
            assert_eq!(
                t.rows(),
                cells(&[&["7", "2", "3"], &["4", "5", "6"]]),
                "{text:?}"
            );
            assert_eq!(t.n_cols(), 3);
        }
        // A single column: nothing splits it.
        let t = table("1\n2\n").unwrap();
        assert_eq!(t.rows(), cells(&[&["1"], &["2"]]));
    }

    #[test]
    fn explicit_delimiter_and_skip_rows() {
        let opts = CsvOptions {
            delimiter: Some(Separator::Semicolon),
            skip_rows: 2,
            header: HeaderMode::Absent,
        };
        let t = parse_table("junk,junk\n# comment\n1,5;2\n3;4\n", Path::new(P), &opts).unwrap();
        assert_eq!(t.rows(), cells(&[&["1,5", "2"], &["3", "4"]]));
        assert_eq!(t.line_numbers, vec![3, 4]);
    }

    #[test]
    fn header_detection() {
        let t = table("a,b,c\n1,2,3\n4,5,6\n").unwrap();
        assert_eq!(t.header, Some(vec!["a".into(), "b".into(), "c".into()]));
        assert_eq!(t.rows().len(), 2);
        assert_eq!(t.line_numbers, vec![2, 3]);
        // sklearn style: partly numeric first row.
        let t = table("150,4,setosa\n5.1,3.5,0\n").unwrap();
        assert!(t.header.is_some());
        // Text in the first row is a header, whatever follows (a text column is
        // for a caller that knows it, such as the tabular loader's target, to exempt).
        let t = table("x,red\ny,blue\n").unwrap();
        assert_eq!(t.header, Some(vec!["x".into(), "red".into()]));
        // An empty cell is a missing value, not a header.
        let t = table(",1\n2,3\n").unwrap();
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
        assert_eq!(forced(HeaderMode::Present).unwrap().n_rows(), 1);
        assert_eq!(forced(HeaderMode::Absent).unwrap().n_rows(), 2);
        let t = parse_table(
            "a,b\nc,d\n",
            Path::new(P),
            &CsvOptions {
                header: HeaderMode::Absent,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!((t.header.clone(), t.n_rows()), (None, 2));
    }

    #[test]
    fn quotes_blank_lines_crlf_bom() {
        let opts = CsvOptions {
            header: HeaderMode::Present,
            ..Default::default()
        };
        let text = "\u{feff}\"name\",\"a, b\"\r\n\r\n\"x \"\"q\"\"\" , 2\r\n";
        let t = parse_table(text, Path::new(P), &opts).unwrap();
        assert_eq!(t.delimiter, Separator::Comma);
        assert_eq!(t.header, Some(vec!["name".into(), "a, b".into()]));
        assert_eq!(t.rows(), cells(&[&["x \"q\"", "2"]]));
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
        assert_eq!(t.rows(), cells(&[&["1", "", "3"], &["4", "5", ""]]));
        // A quote inside an unquoted field is text.
        let t = table("5\" wide,2\n").unwrap();
        assert_eq!(t.header, Some(vec!["5\" wide".into(), "2".into()]));
    }

    #[test]
    fn quoted_field_spanning_lines() {
        let text = "id,note,y\n1,\"two\nlines, \"\"quoted\"\"\",0\n\n2,\"\n\",1\n3,x\n";
        let opts = CsvOptions {
            header: HeaderMode::Present,
            ..Default::default()
        };
        let e = parse_table(text, Path::new(P), &opts)
            .unwrap_err()
            .to_string();
        // Lines are the file's: the ragged row is on line 7, after two 2-line records
        // and a blank line.
        assert!(
            e.contains("line 7: 2 fields, expected 3 as on line 1"),
            "{e}"
        );
        let text = text.strip_suffix("3,x\n").unwrap();
        let t = parse_table(text, Path::new(P), &opts).unwrap();
        assert_eq!(t.delimiter, Separator::Comma);
        assert_eq!(
            t.rows(),
            cells(&[&["1", "two\nlines, \"quoted\"", "0"], &["2", "", "1"]])
        );
        assert_eq!(t.line_numbers, vec![2, 5]);
        // Detected too, tab-separated, and an open quote is named by the line it opens.
        let t = table("a\t\"b\nc\"\n1\t2\n").unwrap();
        assert_eq!(t.delimiter, Separator::Tab);
        assert_eq!(t.header, Some(vec!["a".into(), "b\nc".into()]));
        let e = table("1,2\n3,4\n5,\"6\n7,8\n").unwrap_err().to_string();
        assert!(e.contains("line 3: unterminated quoted field"), "{e}");
        let e = table("1,\"2\n3\" 4,5\n").unwrap_err().to_string();
        assert!(e.contains("line 2: text after a closing quote"), "{e}");
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
        // A title or comment line above the table: the rows decide the delimiter, and the
        // error names the skip that reads the rest.
        for text in [
            "# exported by a tool\nx,y,label\n1,2,a\n",
            "Results\nx,y,label\n1,2,a\n",
        ] {
            let e = table(text).unwrap_err().to_string();
            assert!(
                e.contains("line 2: 3 fields, expected 1 as on line 1 (split at commas, guessed)")
                    && e.contains("skip it with --skip-rows 1"),
                "{e}"
            );
        }
        // A short row under a real header is no title: no such hint.
        let e = table("x,y,label\n1,2\n3,4,a\n").unwrap_err().to_string();
        assert!(
            e.contains("line 2: 2 fields, expected 3") && !e.contains("skip"),
            "{e}"
        );
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
        assert_eq!(a.delimiter, Separator::Semicolon);
        assert_eq!(a.rows(), cells(&[&["1", "2"], &["3", "4"]]));
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
        assert_eq!((iris.n_rows(), iris.n_cols()), (150, 5));
        let diab = read_table(&dir.join("diabetes_data_raw.csv.gz"), &opts).unwrap();
        assert_eq!(diab.delimiter, Separator::Space);
        assert_eq!((diab.n_rows(), diab.n_cols()), (442, 10));
        assert_eq!(parse_f64(&diab, &dir).unwrap()[0][0], 59.0);
        let digits = read_table(&dir.join("digits.csv.gz"), &opts).unwrap();
        assert_eq!(digits.n_cols(), 65);
        assert_eq!(digits.n_rows(), 1797);
    }
}
