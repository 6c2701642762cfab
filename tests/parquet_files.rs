//! Parquet tables as data: read as a CSV of the same values is (the same `--target`
//! rules, numeric and text columns, labels of any type), whatever their codec; nulls
//! refused by row and column; and one clear error for each kind of bad file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, FloatType, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

mod common;

use common::*;

/// One column of a Parquet file the tests write (`None`: a null).
enum Column {
    F64(Vec<Option<f64>>),
    F32(Vec<f32>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
    Text(Vec<Option<String>>),
}

impl Column {
    fn schema(&self, name: &str) -> String {
        match self {
            Column::F64(_) => format!("OPTIONAL DOUBLE {name};"),
            Column::F32(_) => format!("REQUIRED FLOAT {name};"),
            Column::I64(_) => format!("REQUIRED INT64 {name};"),
            Column::Bool(_) => format!("REQUIRED BOOLEAN {name};"),
            Column::Text(_) => format!("OPTIONAL BYTE_ARRAY {name} (UTF8);"),
        }
    }
}

/// Present values and the definition levels of an optional column.
fn levels<T: Clone>(v: &[Option<T>]) -> (Vec<T>, Vec<i16>) {
    let present = v.iter().flatten().cloned().collect();
    (present, v.iter().map(|x| i16::from(x.is_some())).collect())
}

/// Writes `columns` (all of one length) as a Parquet file of one row group.
fn write_parquet(path: &Path, columns: &[(&str, Column)], codec: Compression) -> PathBuf {
    write_parquet_with(path, columns, codec, None)
}

/// [`write_parquet`] with the `pandas` metadata `pandas` (as pandas writes it: which
/// columns are the DataFrame's index).
fn write_parquet_with(
    path: &Path,
    columns: &[(&str, Column)],
    codec: Compression,
    pandas: Option<&str>,
) -> PathBuf {
    let fields: Vec<String> = columns.iter().map(|(n, c)| c.schema(n)).collect();
    let schema = parse_message_type(&format!("message t {{ {} }}", fields.join(" "))).unwrap();
    let kv = pandas.map(|json| vec![KeyValue::new("pandas".to_string(), json.to_string())]);
    let props = WriterProperties::builder()
        .set_compression(codec)
        .set_key_value_metadata(kv)
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut w = SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props)).unwrap();
    let mut group = w.next_row_group().unwrap();
    for (_, column) in columns {
        let mut cw = group.next_column().unwrap().unwrap();
        match column {
            Column::F64(v) => {
                let (x, d) = levels(v);
                cw.typed::<DoubleType>()
                    .write_batch(&x, Some(&d), None)
                    .unwrap();
            }
            Column::F32(v) => {
                cw.typed::<FloatType>().write_batch(v, None, None).unwrap();
            }
            Column::I64(v) => {
                cw.typed::<Int64Type>().write_batch(v, None, None).unwrap();
            }
            Column::Bool(v) => {
                cw.typed::<BoolType>().write_batch(v, None, None).unwrap();
            }
            Column::Text(v) => {
                let (x, d) = levels(v);
                let x: Vec<ByteArray> = x.iter().map(|s| ByteArray::from(s.as_str())).collect();
                cw.typed::<ByteArrayType>()
                    .write_batch(&x, Some(&d), None)
                    .unwrap();
            }
        }
        cw.close().unwrap();
    }
    group.close().unwrap();
    w.close().unwrap();
    path.to_path_buf()
}

/// [`iris_like_csv`]'s rows as columns: four features and the species.
fn iris_like_columns(dir: &Path) -> Vec<(&'static str, Column)> {
    let csv = std::fs::read_to_string(iris_like_csv(dir)).unwrap();
    let rows: Vec<Vec<String>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    let feature = |j: usize| Column::F64(rows.iter().map(|r| r[j].parse().ok()).collect());
    let species = Column::Text(rows.iter().map(|r| Some(r[4].clone())).collect());
    vec![
        ("sl", feature(0)),
        ("sw", feature(1)),
        ("pl", feature(2)),
        ("pw", feature(3)),
        ("species", species),
    ]
}

fn train(data: &Path, out: &Path) -> std::process::Output {
    ant_with(
        &format!("{QUICK} --target species --task classification"),
        &["--data", s(data), "--out", s(out)],
    )
}

/// The MD5 of a model directory's weights, as its `tree.json` records it.
fn weights(model: &Path) -> String {
    let tree: serde_json::Value =
        serde_json::from_slice(&std::fs::read(model.join("tree.json")).unwrap()).unwrap();
    tree["weights"]["md5"].as_str().unwrap().to_string()
}

#[test]
fn a_parquet_table_trains_as_the_csv_of_its_values_under_every_codec() {
    let d = tempfile::tempdir().unwrap();
    let csv = iris_like_csv(d.path());
    ok(&train(&csv, &d.path().join("m-csv")));
    let want = weights(&d.path().join("m-csv"));
    for (name, codec) in [
        ("plain", Compression::UNCOMPRESSED),
        ("snappy", Compression::SNAPPY),
        ("zstd", Compression::ZSTD(Default::default())),
        ("gzip", Compression::GZIP(Default::default())),
        ("lz4", Compression::LZ4_RAW),
    ] {
        let file = d.path().join(format!("{name}.parquet"));
        write_parquet(&file, &iris_like_columns(d.path()), codec);
        let out = d.path().join(format!("m-{name}"));
        ok(&train(&file, &out));
        assert_eq!(
            weights(&out),
            want,
            "{name}: the same weights as from the CSV"
        );
        // The CSV's model predicts the Parquet file's rows (and the other way round).
        let model = d.path().join("m-csv");
        let a = predictions(&ant(&[
            "predict",
            "--model",
            s(&model),
            "--input",
            s(&file),
        ]));
        let b = predictions(&ant(&["predict", "--model", s(&out), "--input", s(&csv)]));
        assert_eq!(a, b, "{name}");
        assert_eq!(a.len(), 150);
    }
}

#[test]
fn labels_of_every_type_and_numeric_columns_of_every_width_are_read() {
    let d = tempfile::tempdir().unwrap();
    let n = 90;
    let x: Vec<f32> = uniform(n, 1, 5);
    let integers: Vec<i64> = (0..n as i64).map(|i| i % 3 * 10).collect();
    let file = write_parquet(
        &d.path().join("t.parquet"),
        &[
            ("a", Column::F32(x.clone())),
            ("flag", Column::Bool((0..n).map(|i| i % 2 == 0).collect())),
            ("count", Column::I64((0..n as i64).collect())),
            ("label", Column::I64(integers)),
            (
                "__index_level_0__",
                Column::I64((100..100 + n as i64).collect()),
            ),
        ],
        Compression::SNAPPY,
    );
    let out = d.path().join("m");
    ok(&ant_with(
        &format!("{QUICK} --target label --task classification"),
        &["--data", s(&file), "--out", s(&out)],
    ));
    let tree: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("tree.json")).unwrap()).unwrap();
    let text = tree.to_string();
    // Integer labels name their classes; pandas' index is no feature (three are).
    assert!(text.contains(r#"["0","10","20"]"#), "{text}");
    assert!(text.contains(r#"["a","flag","count","label"]"#), "{text}");
    // A named index, as pandas' metadata lists it, is no feature either.
    let mut columns = iris_like_columns(d.path());
    columns.insert(0, ("id", Column::I64((0..150).collect())));
    let named = write_parquet_with(
        &d.path().join("named.parquet"),
        &columns,
        Compression::SNAPPY,
        Some(r#"{"index_columns": ["id"], "columns": []}"#),
    );
    let (plain, indexed) = (d.path().join("m-plain"), d.path().join("m-indexed"));
    let iris = write_parquet(
        &d.path().join("iris.parquet"),
        &iris_like_columns(d.path()),
        Compression::SNAPPY,
    );
    ok(&train(&iris, &plain));
    ok(&train(&named, &indexed));
    assert_eq!(weights(&plain), weights(&indexed));
    // A bool label, a regression target of f32 values.
    for (target, task) in [("flag", "classification"), ("a", "regression")] {
        let out = d.path().join(format!("m-{target}"));
        ok(&ant_with(
            &format!("{QUICK} --target {target} --task {task}"),
            &["--data", s(&file), "--out", s(&out)],
        ));
    }
}

#[test]
fn nulls_and_bad_files_are_one_error_naming_the_file() {
    let d = tempfile::tempdir().unwrap();
    let mut columns = iris_like_columns(d.path());
    if let Column::F64(v) = &mut columns[1].1 {
        v[7] = None;
    }
    let null_feature = write_parquet(&d.path().join("nf.parquet"), &columns, Compression::SNAPPY);
    let mut columns = iris_like_columns(d.path());
    if let Column::Text(v) = &mut columns[4].1 {
        v[12] = None;
    }
    let null_label = write_parquet(&d.path().join("nl.parquet"), &columns, Compression::SNAPPY);
    let good = write_parquet(
        &d.path().join("good.parquet"),
        &iris_like_columns(d.path()),
        Compression::SNAPPY,
    );
    let bytes = std::fs::read(&good).unwrap();
    let cut = d.path().join("cut.parquet");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = d.path().join("m");
    let cases: Vec<(&Path, &str, Vec<&str>)> = vec![
        (
            &null_feature,
            "species",
            vec!["nf.parquet", "row 7", "'sw'", "null"],
        ),
        (
            &null_label,
            "species",
            vec!["nl.parquet", "row 12", "'species'", "null"],
        ),
        (
            &good,
            "colour",
            vec!["good.parquet", "no column named 'colour'"],
        ),
        (&cut, "species", vec!["cut.parquet", "Parquet"]),
    ];
    for (file, target, needles) in cases {
        let o = ant_with(
            &format!("{QUICK} --target {target} --task classification"),
            &["--data", s(file), "--out", s(&out)],
        );
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}: {}",
            file.display(),
            stderr(&o)
        );
        assert_clean_error(&o, &needles);
        assert!(!out.exists(), "nothing written for {}", file.display());
    }
    // Without --target, and with --skip-rows, which a Parquet file has no lines for.
    let o = ant_with(QUICK, &["--data", s(&good), "--out", s(&out)]);
    assert_clean_error(&o, &["good.parquet", "--target"]);
    let o = ant_with(
        &format!("{QUICK} --target species --task classification --skip-rows 2"),
        &["--data", s(&good), "--out", s(&out)],
    );
    assert_clean_error(&o, &["good.parquet", "--skip-rows"]);
    assert!(!out.exists());
}
