//! Header guessing: whether a table's first line is a header or a row of values. A
//! header of column numbers (pandas' `0,1,2`, or `1,2,3,species`) is a header and said
//! so; a first line that a model without a header of its own would read as a row is read
//! as one, with the way to skip it; a first row whose text target no other row has may be
//! a header, and is said; a file without a header is never listed by its first row.
//! (Python's side: `python/tests/test_bad_input.py`.)

use std::path::{Path, PathBuf};

mod common;

use common::*;

fn class_names(model: &Path) -> Vec<String> {
    let tree: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(model.join("tree.json")).unwrap()).unwrap();
    serde_json::from_value(tree["class_names"].clone()).unwrap()
}

/// 90 rows `a,b,LABEL` with the labels taken in turn from `labels`.
fn two_feature_rows(labels: &[&str]) -> Vec<String> {
    uniform(90, 2, 3)
        .chunks(2)
        .enumerate()
        .map(|(i, r)| {
            let (a, b) = (f64::from(r[0]), f64::from(r[1]));
            format!("{a:e},{b:e},{}", labels[i % labels.len()])
        })
        .collect()
}

/// A table of `rows` (the lines after the header `header`) in `dir`.
fn headed(dir: &Path, name: &str, header: &str, rows: &[String]) -> PathBuf {
    write(dir, name, format!("{header}\n{}\n", rows.join("\n")))
}

#[test]
fn a_header_naming_columns_a_model_without_names_reads_by_position_is_said() {
    let t = tempfile::tempdir().unwrap();
    let data = abc_csv(t.path(), "t.csv", false);
    let m = t.path().join("m");
    assert!(train_quick(&data, &m, &["--target", "3"]).status.success());
    let headed = abc_csv(t.path(), "h.csv", true);
    for cmd in [
        vec!["predict", "--model", s(&m), "--input", s(&headed)],
        vec!["eval", "--model", s(&m), "--data", s(&headed)],
    ] {
        let o = ant(&cmd);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("line 1 (a,b,c,y) is a header"),
            "{cmd:?}: {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains("read by position"), "{}", stderr(&o));
    }
    // The model's own file has no header: nothing to say.
    let o = ant(&["predict", "--model", s(&m), "--input", s(&data)]);
    assert!(!stderr(&o).contains("is a header"), "{}", stderr(&o));
}

#[test]
fn pandas_header_of_column_numbers_is_a_header() {
    let t = tempfile::tempdir().unwrap();
    // `df.to_csv(index=False)` of a frame with unnamed columns.
    let data = headed(t.path(), "p.csv", "0,1,2", &two_feature_rows(&["0", "1"]));
    let out = t.path().join("m");
    let o = train_quick(&data, &out, &["--target", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // 90 samples, not 91, and no class named "2".
    assert!(
        stderr(&o).contains("on 72 samples (18 test)"),
        "{}",
        stderr(&o)
    );
    assert_eq!(class_names(&out), ["0", "1"]);
}

/// pandas' header of column numbers is listed as the columns, as `--target 2` reads it.
#[test]
fn pandas_header_of_column_numbers_is_listed_as_the_columns() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs_csv(t.path());
    let numbered = t.path().join("numbered.csv");
    let text = std::fs::read_to_string(&data).unwrap();
    let body: Vec<&str> = text.lines().skip(1).collect();
    std::fs::write(&numbered, format!("0,1,2\n{}\n", body.join("\n"))).unwrap();
    assert_clean_error(
        &train_quick(&numbered, &t.path().join("n"), &["--target", "label"]),
        &["columns are: '0', '1', '2'"],
    );
}

/// A header of years beside a label's name (`2019,2020,2021,class`), with the target
/// given by index, would be a sample of a class of its own: it is said.
#[test]
fn a_first_row_whose_text_target_no_other_row_has_is_said_to_be_a_header_perhaps() {
    let t = tempfile::tempdir().unwrap();
    let data = headed(
        t.path(),
        "years.csv",
        "2019,2020,2021,class",
        &two_feature_rows(&["a", "b"])
            .iter()
            .map(|r| format!("0,{r}"))
            .collect::<Vec<_>>(),
    );
    let o = train_quick(&data, &t.path().join("m"), &["--target", "3"]);
    let e = stderr(&o);
    assert!(
        e.contains(
            "years.csv: line 1 is read as a row, and its target 'class' is a class no other row has"
        ) && e.contains("(--target class)"),
        "{e}"
    );
    // Named, it is the header, and nothing is said.
    let o = train_quick(&data, &t.path().join("n"), &["--target", "class"]);
    assert!(
        o.status.success() && !stderr(&o).contains("no other row has"),
        "{}",
        stderr(&o)
    );
    // A name with a blank is given as one word of the shell.
    let text = std::fs::read_to_string(&data)
        .unwrap()
        .replacen("class", "my class", 1);
    std::fs::write(&data, text).unwrap();
    let o = train_quick(&data, &t.path().join("b"), &["--target", "3"]);
    assert!(
        stderr(&o).contains("(--target 'my class')"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_model_trained_without_a_header_reads_a_row_0_1_2_as_data() {
    let t = tempfile::tempdir().unwrap();
    let r: Vec<String> = (0..80)
        .map(|i| format!("{},{},{},{}", i % 5, (i / 5) % 5, i % 3, i % 2))
        .collect();
    let data = headed(t.path(), "h.csv", "4,0,2,1", &r);
    let m = t.path().join("m");
    assert!(train_quick(&data, &m, &["--target", "3"]).status.success());
    // Three rows to predict, the first `0,1,2`: three predictions.
    let input = headed(
        t.path(),
        "new.csv",
        "0,1,2",
        &["4,4,0".to_string(), "0,0,1".to_string()],
    );
    let o = ant(&["predict", "--model", s(&m), "--input", s(&input)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).lines().count(),
        4,
        "a header and 3 rows"
    );
    // Not silently: the row might be pandas' header.
    assert!(stderr(&o).contains("--skip-rows 1"), "{}", stderr(&o));
}

#[test]
fn headers_of_column_numbers_are_headers_and_said_so() {
    let t = tempfile::tempdir().unwrap();
    let names = ["zero", "one", "two"];
    let text: String = three_class_rows()
        .iter()
        .map(|(a, b, y)| format!("{a},{b},{},{}\n", a + b, names[*y as usize]))
        .collect();
    let named = write(t.path(), "named.csv", format!("1,2,3,species\n{text}"));
    let model = t.path().join("m");
    let o = trained_quick(&named, &model, &["--target", "3"]);
    assert!(
        stderr(&o).contains("line 1 (1,2,3,species) is read as a header"),
        "{}",
        stderr(&o)
    );
    let tree: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(model.join("tree.json")).unwrap()).unwrap();
    assert_eq!(
        tree["class_names"].as_array().unwrap().len(),
        3,
        "{}",
        tree["class_names"]
    );
    // A model of a file without a header, given pandas' header of column numbers later.
    let plain = three_class_csv(t.path(), "plain.csv", None);
    let headerless = t.path().join("h");
    trained_quick(&plain, &headerless, &["--target", "2"]);
    let three: String = first_rows(3, |&(a, b, y)| format!("{a},{b},{y}\n"));
    let pandas = write(t.path(), "pandas.csv", format!("0,1,2\n{three}"));
    // Read as the model read its own file, a row; the warning says how to skip it.
    let o = ant(&["predict", "--model", s(&headerless), "--input", s(&pandas)]);
    assert!(
        stderr(&o).contains("line 1 (0,1,2)") && stderr(&o).contains("--skip-rows 1"),
        "{}",
        stderr(&o)
    );
    assert_eq!(predictions(&o).len(), 4);
    let o = ant(&[
        "predict",
        "--model",
        s(&headerless),
        "--input",
        s(&pandas),
        "--skip-rows",
        "1",
    ]);
    assert_eq!(predictions(&o).len(), 3);
}

#[test]
fn a_first_row_is_judged_as_fresh_where_no_model_read_a_file_of_its_own() {
    let t = tempfile::tempdir().unwrap();
    // At training: a test file with pandas' header beside a training file without one.
    let plain = three_class_csv(t.path(), "plain.csv", None);
    let pandas = three_class_csv(t.path(), "pandas.csv", Some("0,1,2"));
    let m = t.path().join("m");
    let o = trained_quick(&plain, &m, &["--target", "2", "--test-data", s(&pandas)]);
    assert!(
        stderr(&o).contains("line 1 (0,1,2) is read as a header"),
        "{}",
        stderr(&o)
    );
    // A model fitted in memory read no file: pandas' header of its columns is a header.
    let fitted_in_memory = fitted_like_python(t.path(), None);
    let o = ant(&[
        "eval",
        "--model",
        s(&fitted_in_memory),
        "--data",
        s(&pandas),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("is read as a header"), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["test_samples"], 180);
    // A row of values is no header, though a value equals a column's name.
    let named = fitted_like_python(t.path(), Some(vec!["a".into(), "b".into()]));
    let values = write(t.path(), "v.csv", "0.5,0.25,2\n".to_string());
    let o = ant(&["eval", "--model", s(&named), "--data", s(&values)]);
    assert_clean_error(&o, &["v.csv", "has no header row"]);
}

/// `1,2,3` alone may be small integers: a row, with a warning naming the way out when
/// it counts the columns.
#[test]
fn a_row_counting_its_columns_is_read_as_values_and_said() {
    let t = tempfile::tempdir().unwrap();
    let body = std::fs::read_to_string(three_class_csv(t.path(), "d.csv", None)).unwrap();
    let likert = write(t.path(), "likert.csv", format!("1,2,1\n{body}"));
    let o = trained_quick(&likert, &t.path().join("m"), &["--target", "2"]);
    assert!(!stderr(&o).contains("counts its columns"), "{}", stderr(&o));
    let counting = write(t.path(), "counting.csv", format!("1,2,3\n{body}"));
    let o = trained_quick(&counting, &t.path().join("c"), &["--target", "2"]);
    assert!(
        stderr(&o).contains("counts its columns but is read as a row of values"),
        "{}",
        stderr(&o)
    );
}

/// A model of pandas' header reads later headers of those numbers by name; one in
/// another order might be a row of values, and is said.
#[test]
fn a_header_of_column_numbers_in_another_order_is_said() {
    let t = tempfile::tempdir().unwrap();
    let pandas = three_class_csv(t.path(), "pandas.csv", Some("0,1,2"));
    let m = t.path().join("p");
    trained_quick(&pandas, &m, &["--target", "2"]);
    let rows: String = first_rows(3, |&(a, b, _)| format!("{b},{a}\n"));
    let swapped = write(t.path(), "swapped.csv", format!("1,0\n{rows}"));
    let o = ant(&["predict", "--model", s(&m), "--input", s(&swapped)]);
    assert!(
        stderr(&o).contains("in another order than its"),
        "{}",
        stderr(&o)
    );
    assert_eq!(predictions(&o).len(), 3);
}

/// A header of numeric names is a header when they are the model's names.
#[test]
fn numeric_column_names_are_read_as_a_header() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("n.csv");
    let mut text = String::from("1,2,label\n");
    for (i, r) in uniform(90, 2, 5).chunks(2).enumerate() {
        text.push_str(&format!(
            "{},{},{}\n",
            r[0] + (i % 2) as f32,
            r[1],
            ["x", "y"][i % 2]
        ));
    }
    std::fs::write(&p, &text).unwrap();
    let m = t.path().join("m");
    trained_quick(&p, &m, &["--target", "label"]);
    let input = t.path().join("in.csv");
    std::fs::write(&input, "2,1\n0.5,0.1\n0.2,0.3\n").unwrap();
    let o = ant(&["predict", "--model", s(&m), "--input", s(&input)]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Two rows predicted: the header was not read as a row.
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(out.lines().count(), 3, "{out}");
}

/// A file without a header: its first row is not listed as the columns' names.
#[test]
fn a_first_data_row_is_not_listed_as_column_names() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs_csv(t.path());
    let bare = t.path().join("bare.csv");
    let text = std::fs::read_to_string(&data).unwrap();
    std::fs::write(&bare, text.lines().skip(1).collect::<Vec<_>>().join("\n")).unwrap();
    let o = train_quick(&bare, &t.path().join("b"), &["--target", "label"]);
    assert_clean_error(&o, &["bare.csv", "no header row", "0-based column index"]);
}
