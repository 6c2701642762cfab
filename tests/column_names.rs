//! Columns by name: a model trained on a headed table, or fitted on a DataFrame, reads
//! later tables by its columns' names in any order, and names a column it does not know
//! or misses; a target is a name before it is an index, and said when both could be
//! meant; an unnamed column (pandas' index) is refused, and a wrong target name lists the
//! columns there are.

use std::path::{Path, PathBuf};

mod common;

use common::*;

/// `ant train` of a quick model on `data` into `out`, then `more`.
fn train(data: &Path, out: &Path, more: &[&str]) -> std::process::Output {
    let mut args = vec!["--data", s(data), "--out", s(out)];
    args.extend_from_slice(more);
    ant_with(QUICK, &args)
}

/// 90 rows `a,b,LABEL` with the labels taken in turn from `labels`, after `header`.
fn two_feature_table(dir: &Path, name: &str, header: &str, labels: &[&str]) -> PathBuf {
    let rows: Vec<String> = uniform(90, 2, 3)
        .chunks(2)
        .enumerate()
        .map(|(i, r)| {
            let (a, b) = (f64::from(r[0]), f64::from(r[1]));
            format!("{a:e},{b:e},{}", labels[i % labels.len()])
        })
        .collect();
    write(dir, name, format!("{header}\n{}\n", rows.join("\n")))
}

/// [`three_class_rows`] as a table after the first line `head`: `a,b,y`, or `y,b,a`.
fn three_class_table(dir: &Path, name: &str, head: &str, reversed: bool) -> PathBuf {
    let mut text = format!("{head}\n");
    for (a, b, y) in three_class_rows() {
        text += &match reversed {
            false => format!("{a},{b},{y}\n"),
            true => format!("{y},{b},{a}\n"),
        };
    }
    write(dir, name, text)
}

/// `text` with its columns taken in `order` (by index), lines as they are.
fn reorder(text: &str, order: &[usize]) -> String {
    text.lines()
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            order
                .iter()
                .map(|&j| cells[j])
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect()
}

/// Columns are matched by the names the model saved.
#[test]
fn tables_are_read_by_column_name() {
    let t = tempfile::tempdir().unwrap();
    let data = iris_like_csv(t.path());
    let m = t.path().join("m");
    let o = ant_with(
        "train --preset tabular --target species --task classification --epochs-node 5 --refine-epochs 2 --max-depth 1",
        &["--data", s(&data), "--out", s(&m)],
    );
    ok(&o);
    let text = std::fs::read_to_string(&data).unwrap();
    let same = t.path().join("same.csv");
    std::fs::write(&same, reorder(&text, &[1, 0, 3, 2, 4])).unwrap();
    let shuffled = t.path().join("shuffled.csv");
    std::fs::write(&shuffled, reorder(&text, &[3, 2, 1, 0, 4])).unwrap();
    let json = |p: &Path| {
        let o = ant(&["eval", "--model", s(&m), "--data", s(p), "--json"]);
        ok(&o);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["multi_path_error"].clone()
    };
    // The same rows with their columns in two other orders score the same (all rows:
    // neither file is the training file byte for byte).
    assert_eq!(json(&shuffled), json(&same));
    let predict = |p: &Path| ant(&["predict", "--model", s(&m), "--input", s(p)]);
    let features = t.path().join("features.csv");
    std::fs::write(&features, reorder(&text, &[0, 1, 2, 3])).unwrap();
    let features_shuffled = t.path().join("features_shuffled.csv");
    std::fs::write(&features_shuffled, reorder(&text, &[2, 0, 3, 1])).unwrap();
    let (a, b) = (predict(&features), predict(&features_shuffled));
    ok(&a);
    assert_eq!(a.stdout, b.stdout);
    // An extra column (an id) and a missing one are named, not read as features.
    let with_id = t.path().join("id.csv");
    let id: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let cells: Vec<&str> = l.split(',').collect();
            let id = if i == 0 {
                "id".to_string()
            } else {
                i.to_string()
            };
            format!("{id},{}\n", cells[..4].join(","))
        })
        .collect();
    std::fs::write(&with_id, id).unwrap();
    assert_clean_error(&predict(&with_id), &["id.csv", "not the model's: 'id'"]);
    let three = t.path().join("three.csv");
    std::fs::write(&three, reorder(&text, &[0, 1, 2])).unwrap();
    assert_clean_error(&predict(&three), &["three.csv", "missing 'pw'"]);
}

#[test]
fn a_model_fitted_on_named_columns_reads_tables_by_those_names() {
    let t = tempfile::tempdir().unwrap();
    let model = fitted_on_named_columns(t.path());
    let same = three_class_table(t.path(), "same.csv", "a,b,target", false);
    let reversed = three_class_table(t.path(), "rev.csv", "target,b,a", true);
    let eval = |data: &Path| ant(&["eval", "--model", s(&model), "--data", s(data), "--json"]);
    let score = |o: std::process::Output| {
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["multi_path_error"].as_f64().unwrap()
    };
    assert_eq!(score(eval(&same)), score(eval(&reversed)));
    // The target's column under another name: the one column that is not a feature.
    let renamed = three_class_table(t.path(), "label.csv", "label,b,a", true);
    let o = eval(&renamed);
    assert!(stderr(&o).contains("column 0 ('label')"), "{}", stderr(&o));
    assert_eq!(score(o), score(eval(&same)));
    // Columns the model does not know are refused, not read by position.
    let other = three_class_table(t.path(), "other.csv", "u,v,w", false);
    assert_clean_error(&eval(&other), &["other.csv", "missing 'a', 'b'"]);
    let p = |data: &Path| {
        let o = ant(&["predict", "--model", s(&model), "--input", s(data)]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = String::from_utf8(o.stdout).unwrap();
        text.lines().skip(1).map(str::to_string).collect::<Vec<_>>()
    };
    assert_eq!(p(&same), p(&reversed));
}

#[test]
fn a_target_number_that_also_names_another_column_is_said_to_be_an_index() {
    let t = tempfile::tempdir().unwrap();
    let data = two_feature_table(t.path(), "a.csv", "a,b,1", &["0", "1"]);
    let regression = |out: &str, target: &str| {
        let more = ["--target", target, "--task", "regression"];
        train(&data, &t.path().join(out), &more)
    };
    let o = regression("m", "1");
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("a.csv: the target '1' is taken as a 0-based index, column 1 ('b'), though column 2 is named '1'"), "{e}");
    // A name is no index: nothing to say.
    let o = regression("n", "b");
    assert!(
        o.status.success() && !stderr(&o).contains("0-based index"),
        "{}",
        stderr(&o)
    );
}

/// A column literally named `name:y` is targeted by that name.
#[test]
fn a_column_named_like_a_name_prefix_is_targeted_by_that_name() {
    let t = tempfile::tempdir().unwrap();
    let data = two_feature_table(t.path(), "n.csv", "a,b,name:y", &["0", "1"]);
    let more = ["--target", "name:y", "--task", "classification"];
    let o = train(&data, &t.path().join("n"), &more);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// pandas' index column (an empty name) is refused, not trained on.
#[test]
fn a_pandas_index_column_is_refused_not_trained_on() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs_csv(t.path());
    let text = std::fs::read_to_string(&data).unwrap();
    let indexed = t.path().join("indexed.csv");
    let rows: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| match i {
            0 => format!(",{l}"),
            _ => format!("{},{l}", i - 1),
        })
        .collect();
    std::fs::write(&indexed, rows.join("\n")).unwrap();
    let more = ["--target", "label", "--task", "classification"];
    let o = train(&indexed, &t.path().join("i"), &more);
    assert_clean_error(&o, &["indexed.csv", "column 0", "no name", "index=False"]);
    assert!(!t.path().join("i").exists());
}

/// pandas' name for an unnamed column read back (`Unnamed: 0`) is the empty name.
#[test]
fn pandas_name_for_an_unnamed_column_is_refused_as_no_name() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs_csv(t.path());
    let text = std::fs::read_to_string(&data).unwrap();
    let body: Vec<&str> = text.lines().skip(1).collect();
    let rows: Vec<String> = body
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{i},{l}"))
        .collect();
    let p = t.path().join("unnamed.csv");
    std::fs::write(&p, format!("Unnamed: 0,x,y,label\n{}\n", rows.join("\n"))).unwrap();
    let more = ["--target", "label", "--task", "classification"];
    assert_clean_error(
        &train(&p, &t.path().join("u"), &more),
        &["column 0", "no name", "index=False"],
    );
}

/// A table of words with a wrong target name lists its columns.
#[test]
fn a_wrong_target_name_lists_the_columns() {
    let t = tempfile::tempdir().unwrap();
    let words = t.path().join("words.csv");
    std::fs::write(&words, "color,size,kind\nred,big,a\nblue,small,b\n").unwrap();
    let more = ["--target", "Label", "--task", "classification"];
    let o = train(&words, &t.path().join("w"), &more);
    assert_clean_error(
        &o,
        &[
            "no column named 'Label'",
            "columns are: 'color', 'size', 'kind'",
        ],
    );
}
