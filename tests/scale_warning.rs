//! The scale warning: rows given to a model on another scale than its training's
//! (features in other units, values far beyond the training range) are predicted and
//! said once on standard error. The training file, one class's rows, a what-if sweep,
//! copies of one row with a little noise, a rare value of a feature that is almost
//! always one value, and a shift or a narrow batch alone say nothing.

use std::path::Path;

mod common;

use common::*;

const QUICK: &str = "train --preset tabular --epochs-node 2 --refine-epochs 1";

/// `ant train` of a quick classifier on `data` into `out`, then `more`.
fn train(data: &Path, out: &Path, more: &[&str]) -> std::process::Output {
    let mut args = vec![
        "--data",
        s(data),
        "--out",
        s(out),
        "--task",
        "classification",
    ];
    args.extend(more);
    ant_with(QUICK, &args)
}

#[test]
fn inputs_on_another_scale_than_trainings_are_said() {
    let t = tempfile::tempdir().unwrap();
    let data = abc_csv(t.path(), "t.csv", true);
    let m = t.path().join("m");
    let more = ["--target", "y", "--max-depth", "1"];
    assert!(train(&data, &m, &more).status.success());
    let predict = |rows: &[String]| {
        let input = t.path().join("in.csv");
        std::fs::write(&input, format!("a,b,c,y\n{}\n", rows.join("\n"))).unwrap();
        ant(&["predict", "--model", s(&m), "--input", s(&input)])
    };
    let text = std::fs::read_to_string(&data).unwrap();
    let rows: Vec<Vec<f64>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').take(3).map(|v| v.parse().unwrap()).collect())
        .collect();
    // Each row's features through `f`, labelled p.
    let with = |f: &dyn Fn(usize, f64) -> f64| -> Vec<String> {
        let row = |r: &Vec<f64>| {
            let v: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(j, &x)| f(j, x).to_string())
                .collect();
            format!("{},p", v.join(","))
        };
        rows.iter().map(row).collect()
    };
    let said = |o: &std::process::Output| {
        assert!(o.status.success(), "{}", stderr(o));
        stderr(o).matches("on another scale").count()
    };
    // The training file, a batch of one class's rows, and a what-if batch (one row, one
    // feature varied) are on its scale.
    assert_eq!(said(&predict(&with(&|_, x| x))), 0);
    assert_eq!(said(&predict(&with(&|_, x| x)[..8])), 0);
    let what_if: Vec<String> = (0..10)
        .map(|k| format!("0.5,0.5,{},p", f64::from(k) / 10.0))
        .collect();
    assert_eq!(said(&predict(&what_if)), 0);
    for (f, how) in [
        (
            &(|_, x| x * 255.0) as &dyn Fn(usize, f64) -> f64,
            "beyond ten times its training range",
        ),
        (&|_, x| x / 255.0, "times less"),
        (
            &|j, x| if j == 0 { x * 1000.0 } else { x },
            "feature 0 reaches",
        ),
        (&|_, x| x + 100.0, "beyond ten times its training range"),
    ] {
        let o = predict(&with(f));
        assert_eq!(said(&o), 1, "said once: {}", stderr(&o));
        assert!(stderr(&o).contains(how), "{}", stderr(&o));
    }
}

/// One feature in units 100 times smaller (heights in metres against centimetres),
/// which a rule on the features' median spread does not see.
#[test]
fn one_feature_in_other_units_is_said() {
    let t = tempfile::tempdir().unwrap();
    let x = uniform(90, 3, 7);
    let rows = |height: &dyn Fn(f32) -> f32| -> String {
        let body: Vec<String> = x
            .chunks(3)
            .enumerate()
            .map(|(i, r)| {
                format!(
                    "{},{},{},{}",
                    height(r[0]),
                    r[1],
                    r[2],
                    ["p", "q", "r"][i % 3]
                )
            })
            .collect();
        format!("h,b,c,y\n{}\n", body.join("\n"))
    };
    let data = t.path().join("cm.csv");
    std::fs::write(&data, rows(&|u| 150.0 + 50.0 * u)).unwrap();
    let m = t.path().join("m");
    let more = ["--target", "y", "--max-depth", "1"];
    assert!(train(&data, &m, &more).status.success());
    let said = |text: String| {
        let input = t.path().join("in.csv");
        std::fs::write(&input, text).unwrap();
        let o = ant(&["predict", "--model", s(&m), "--input", s(&input)]);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    assert!(!said(rows(&|u| 150.0 + 50.0 * u)).contains("another scale"));
    // A shift alone, or a narrow batch alone, is not another scale.
    assert!(!said(rows(&|u| 210.0 + 50.0 * u)).contains("another scale"));
    assert!(!said(rows(&|u| 170.0 + 0.5 * u)).contains("another scale"));
    let e = said(rows(&|u| (150.0 + 50.0 * u) / 100.0));
    assert!(
        e.contains("another scale") && e.contains("feature 0 varies"),
        "{e}"
    );
}

#[test]
fn a_value_far_beyond_training_is_said_in_one_row() {
    let (t, _data, m) = blobs_model();
    let one = t.path().join("one.csv");
    std::fs::write(&one, "x,y\n1e30,0.5\n").unwrap();
    let o = ant(&["predict", "--model", s(&m), "--input", s(&one)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("another scale") && e.contains("reaches 1e30..1e30"),
        "{e}"
    );
    // A row inside the training range says nothing.
    std::fs::write(&one, "x,y\n1,0.5\n").unwrap();
    let o = ant(&["predict", "--model", s(&m), "--input", s(&one)]);
    assert!(!stderr(&o).contains("another scale"), "{}", stderr(&o));
}

#[test]
fn a_rare_value_of_a_feature_almost_always_one_value_is_no_other_scale() {
    let t = tempfile::tempdir().unwrap();
    let x = uniform(1000, 2, 9);
    let mut text = String::from("a,edge,label\n");
    for (i, r) in x.chunks(2).enumerate() {
        // `edge` is 0 but twice in 1,000 rows, as a pixel at the border of digits.
        let edge = u8::from(i == 17 || i == 501);
        text.push_str(&format!(
            "{},{edge},{}\n",
            r[0],
            ["p", "q"][usize::from(r[1] > 0.5)]
        ));
    }
    let data = t.path().join("edge.csv");
    std::fs::write(&data, text).unwrap();
    let m = t.path().join("m");
    let more = ["--target", "label", "--max-depth", "1"];
    assert!(train(&data, &m, &more).status.success());
    let one = t.path().join("one.csv");
    std::fs::write(&one, "a,edge\n0.5,110\n").unwrap();
    let o = ant(&["predict", "--model", s(&m), "--input", s(&one)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("another scale"), "{}", stderr(&o));
    std::fs::write(&one, "a,edge\n110,0\n").unwrap();
    let o = ant(&["predict", "--model", s(&m), "--input", s(&one)]);
    assert!(
        stderr(&o).contains("feature 0 reaches 110..110"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn one_outlier_in_training_does_not_hide_another_scale() {
    let t = tempfile::tempdir().unwrap();
    let x = uniform(400, 2, 11);
    let mut text = String::from("income,age,label\n");
    for (i, r) in x.chunks(2).enumerate() {
        let income = if i == 0 {
            5e6
        } else {
            2e4 + 8e4 * f64::from(r[0])
        };
        text.push_str(&format!(
            "{income:.0},{},{}\n",
            20.0 + 50.0 * r[1],
            u8::from(income > 6e4)
        ));
    }
    let data = t.path().join("income.csv");
    std::fs::write(&data, text).unwrap();
    let m = t.path().join("m");
    let o = train(&data, &m, &["--target", "label", "--max-depth", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let one = t.path().join("one.csv");
    std::fs::write(&one, "income,age\n5000000000,40\n").unwrap();
    let o = ant(&["predict", "--model", s(&m), "--input", s(&one)]);
    assert!(
        stderr(&o).contains("feature 0 reaches 5e9..5e9"),
        "{}",
        stderr(&o)
    );
}

/// A what-if sweep of one feature inside the training range is on its scale.
#[test]
fn a_what_if_sweep_inside_the_training_range_is_on_its_scale() {
    let (t, _data, m) = blobs_model();
    let sweep = t.path().join("sweep.csv");
    let rows: Vec<String> = (0..10).map(|k| format!("1.5,0.{k}01")).collect();
    std::fs::write(&sweep, format!("x,y\n{}\n", rows.join("\n"))).unwrap();
    let o = ant(&["predict", "--model", s(&m), "--input", s(&sweep)]);
    assert!(
        o.status.success() && !stderr(&o).contains("another scale"),
        "{}",
        stderr(&o)
    );
}

/// Copies of one row with a little noise vary far less than the training rows, but
/// their values are inside the training range: on its scale.
#[test]
fn copies_of_one_row_with_a_little_noise_are_on_the_training_scale() {
    let (t, _data, m) = blobs_model();
    let rows: Vec<String> = (0..50)
        .map(|k| {
            format!(
                "{},{}",
                1.5 + 0.0001 * f64::from(k % 7),
                0.5 + 0.0001 * f64::from(k % 5)
            )
        })
        .collect();
    let near = t.path().join("near.csv");
    std::fs::write(&near, format!("x,y\n{}\n", rows.join("\n"))).unwrap();
    let o = ant(&["predict", "--model", s(&m), "--input", s(&near)]);
    assert!(
        o.status.success() && !stderr(&o).contains("another scale"),
        "{}",
        stderr(&o)
    );
}

/// One feature away from zero, given 100 times smaller, is another scale: petal
/// lengths in 1..6.9 cm given in metres lie inside 10 ranges and not a range outside.
#[test]
fn one_feature_away_from_zero_given_100_times_smaller_is_said() {
    let t = tempfile::tempdir().unwrap();
    let x = uniform(300, 2, 13);
    let petal = |u: f32| 1.0 + 5.9 * (u + 1.0) / 2.0; // uniform() is in -1..1
    let rows: Vec<String> = x
        .chunks(2)
        .map(|r| {
            format!(
                "{},{},{}",
                petal(r[0]),
                r[1],
                ["p", "q"][usize::from(r[1] > 0.5)]
            )
        })
        .collect();
    let petals = t.path().join("petals.csv");
    std::fs::write(
        &petals,
        format!("length,width,label\n{}\n", rows.join("\n")),
    )
    .unwrap();
    let pm = t.path().join("pm");
    let o = train(&petals, &pm, &["--target", "label", "--max-depth", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let metres: Vec<String> = x
        .chunks(2)
        .take(40)
        .map(|r| format!("{},{}", petal(r[0]) / 100.0, r[1]))
        .collect();
    let input = t.path().join("metres.csv");
    std::fs::write(&input, format!("length,width\n{}\n", metres.join("\n"))).unwrap();
    let o = ant(&["predict", "--model", s(&pm), "--input", s(&input)]);
    assert!(stderr(&o).contains("feature 0 varies"), "{}", stderr(&o));
}
