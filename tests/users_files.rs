//! `ant` deletes or replaces only what it can tell it wrote: a `checkpoint/` folder, a
//! `.tmp` name, a report, records or pruning summary beside no model, a `tree.json` or
//! weights under a name ant uses, another run's files, the training data, a killed
//! write's temporary file, and where no manifest is, any file whose content does not
//! show it ant's, are the user's, kept, and named when they stop a command.

use std::path::Path;
use std::process::Output;

mod common;

use common::*;

/// A `checkpoint/` folder of the user's is neither used nor deleted.
#[test]
fn a_checkpoint_folder_ant_did_not_make_is_kept() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let out = t.path().join("p");
    std::fs::create_dir_all(out.join("checkpoint")).unwrap();
    std::fs::write(out.join("checkpoint/e.pt"), "mine").unwrap();
    let o = train_cls(&data, &out, &[]);
    assert_clean_error(&o, &["checkpoint", "which ant did not write"]);
    assert_eq!(std::fs::read(out.join("checkpoint/e.pt")).unwrap(), b"mine");
    assert!(!out.join("tree.json").exists());
}

/// Names that merely end in `.tmp` are the user's.
#[test]
fn the_users_tmp_files_are_kept() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let out = t.path().join("p");
    std::fs::create_dir_all(out.join(".scratch.tmp")).unwrap();
    std::fs::write(out.join(".scratch.tmp/x"), "mine").unwrap();
    std::fs::write(out.join(".notes.tmp"), "mine").unwrap();
    ok(&train_cls(&data, &out, &[]));
    assert!(out.join("tree.json").is_file());
    assert_eq!(std::fs::read(out.join(".notes.tmp")).unwrap(), b"mine");
    assert_eq!(std::fs::read(out.join(".scratch.tmp/x")).unwrap(), b"mine");
}

/// A report, records or pruning summary beside no model is the user's, for `train` and
/// for `prune`.
#[test]
fn descriptions_beside_no_model_are_the_users() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let model = t.path().join("m");
    ok(&train_cls(&data, &model, &[]));
    for name in ["report.json", "records.jsonl", "prune.json"] {
        let out = t.path().join(format!("p-{name}"));
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join(name), "mine").unwrap();
        assert_clean_error(
            &train_cls(&data, &out, &[]),
            &[name, "which ant did not write"],
        );
        let o = ant_with(
            "prune --min-reach 0.5",
            &["--model", s(&model), "--data", s(&data), "--out", s(&out)],
        );
        assert_clean_error(&o, &[name, "which ant did not write"]);
        assert_eq!(std::fs::read(out.join(name)).unwrap(), b"mine", "{name}");
    }
    // A model's own descriptions are replaced with it (--force), as before.
    ok(&train_cls(&data, &model, &["--force"]));
    assert!(model.join("report.json").is_file());
}

/// A damaged manifest is not one name among many "which ant did not write": it is named
/// as the cause, and nothing is touched.
#[test]
fn a_damaged_manifest_is_named_as_the_cause_and_nothing_is_touched() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let copy = t.path().join("damaged");
    ok(&train_cls(&data, &copy, &[]));
    std::fs::write(copy.join("ant-files.json"), "{garbage").unwrap();
    let o = train_cls(&data, &copy, &["--force"]);
    assert_clean_error(
        &o,
        &[
            "ant-files.json, which is not the manifest ant writes",
            "tree.json",
        ],
    );
    assert_eq!(
        std::fs::read(copy.join("ant-files.json")).unwrap(),
        b"{garbage"
    );
}

/// `Ant::save` (the CLI's and Python's) never replaces a `tree.json` of the user's nor
/// removes `model-*.safetensors` that its manifest does not name.
#[test]
fn saving_a_model_keeps_the_users_files() {
    use ant::{Ant, observe::Silent};
    let t = tempfile::tempdir().unwrap();
    let model = Ant::fit(
        small_params(),
        &quadrants(),
        &burn::prelude::Device::flex(),
        &mut Silent,
    )
    .unwrap();
    // A tree.json that is not ant's: refused, kept.
    let theirs = t.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("tree.json"), "{\"mine\": true}").unwrap();
    let e = model.save(&theirs).unwrap_err().to_string();
    assert!(
        e.contains("tree.json") && e.contains("which ant did not write"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(theirs.join("tree.json")).unwrap(),
        b"{\"mine\": true}"
    );
    // Beside ant's model, weights ant did not write (its manifest does not name them)
    // are the user's: the save is refused, naming them, and they stay.
    let ours = t.path().join("ours");
    model.save(&ours).unwrap();
    std::fs::write(ours.join("model-final.safetensors"), "mine").unwrap();
    let e = model.save(&ours).unwrap_err().to_string();
    assert!(
        e.contains("model-final.safetensors") && e.contains("did not write"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(ours.join("model-final.safetensors")).unwrap(),
        b"mine"
    );
    assert!(Ant::load(&ours, &burn::prelude::Device::flex()).is_ok());
}

/// A weights file is named by its checksum, so one whose bytes do not match its name is
/// the user's: `train --out`, `train --force` and `prune --out` refuse its directory,
/// naming it, and it stays.
#[test]
fn a_users_file_under_a_weights_name_is_never_deleted() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let mine = "model-0123456789abcdef.safetensors";
    let check = |dir: &Path, o: &Output| {
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(mine),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(std::fs::read(dir.join(mine)).unwrap(), b"mine");
    };
    // Into a directory that holds only the user's file.
    let alone = t.path().join("alone");
    std::fs::create_dir(&alone).unwrap();
    std::fs::write(alone.join(mine), "mine").unwrap();
    check(&alone, &train_cls(&data, &alone, &[]));
    // Over a model, with --force.
    let model = t.path().join("model");
    ok(&train_cls(&data, &model, &[]));
    std::fs::write(model.join(mine), "mine").unwrap();
    check(&model, &train_cls(&data, &model, &["--force"]));
    // A prune into it.
    let src = t.path().join("src");
    ok(&train_cls(&data, &src, &[]));
    let o = ant(&[
        "prune",
        "--model",
        s(&src),
        "--data",
        s(&data),
        "--min-reach",
        "0.1",
        "--out",
        s(&alone),
    ]);
    check(&alone, &o);
}

/// Outputs never replace another run's files, nor the data a model was trained on.
#[test]
fn an_output_never_replaces_another_runs_files_or_the_training_data() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    ok(&train_cls(&data, &a, &[]));
    ok(&train_cls(&data, &b, &[]));
    let records = std::fs::read(b.join("records.jsonl")).unwrap();
    let table_bytes = std::fs::read(&data).unwrap();
    for out in [b.join("records.jsonl"), data.clone()] {
        let o = ant(&[
            "predict",
            "--model",
            s(&a),
            "--input",
            s(&data),
            "--output",
            s(&out),
        ]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{}: {e}", out.display());
    }
    assert_eq!(std::fs::read(b.join("records.jsonl")).unwrap(), records);
    assert_eq!(std::fs::read(&data).unwrap(), table_bytes);
}

/// `--init-from OUT/grown --out OUT`: the start would be replaced under the run.
#[test]
fn a_runs_output_never_holds_the_model_it_starts_from() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let b = t.path().join("b");
    ok(&train_cls(&data, &b, &[]));
    let grown = b.join("grown");
    let before = std::fs::read(grown.join("tree.json")).unwrap();
    let o = train_cls(&data, &b, &["--init-from", s(&grown), "--force"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("holds the input"), "{e}");
    assert_eq!(std::fs::read(grown.join("tree.json")).unwrap(), before);
}

/// A write killed between its temporary file and the rename leaves that file; the next
/// write of the same name says so and keeps it: a file of that name may be the user's,
/// or a write of a process this one cannot see.
#[test]
fn a_killed_writes_temporary_file_is_named_by_the_next_write_never_removed() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let m = t.path().join("m");
    ok(&train_cls(&data, &m, &[]));
    let out = t.path().join("p.csv");
    let args = [
        "predict",
        "--model",
        s(&m),
        "--input",
        s(&data),
        "--output",
        s(&out),
    ];
    // Killed right after its temporary file is written, before the rename.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ant"))
        .args(args)
        .env("ANT_FAULT_AFTER_WRITES", "1")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let temps = || {
        std::fs::read_dir(t.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .count()
    };
    assert_eq!(temps(), 1, "the killed write's temporary file");
    // Said by the next write of p.csv, and kept.
    let o = ant(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("perhaps by an earlier write of it that was killed"),
        "{}",
        stderr(&o)
    );
    assert_eq!(temps(), 1);
    assert!(out.is_file());
    // A folder of that name is never the write's: not said, not touched.
    let own = t.path().join(".p.csv.999999.tmp");
    std::fs::create_dir(&own).unwrap();
    std::fs::write(own.join("keep"), "mine").unwrap();
    assert!(ant(&args).status.success());
    assert_eq!(std::fs::read_to_string(own.join("keep")).unwrap(), "mine");
}

/// Where no manifest is (a model saved before manifests, or one whose manifest was
/// deleted), a file is ant's only if its content shows it beside the model: for every
/// name ant writes, in a model, a pruned model and an ensemble's member, a file of the
/// user's under that name stops `train --force` and `prune --force`, named, and stays;
/// the same directories untouched are adopted and replaced as before.
#[test]
fn without_a_manifest_only_what_the_content_proves_is_ants() {
    let t = tempfile::tempdir().unwrap();
    let data = cls_csv(t.path());
    let model = t.path().join("m");
    ok(&train_cls(&data, &model, &[]));
    let prune = |out: &Path| {
        ant_with(
            "prune --min-reach 0.2 --force",
            &["--model", s(&model), "--data", s(&data), "--out", s(out)],
        )
    };
    let without_manifests = |dir: &Path| {
        for d in [
            dir.to_path_buf(),
            dir.join("member-0"),
            dir.join("member-1"),
        ] {
            let _ = std::fs::remove_file(d.join("ant-files.json"));
        }
    };
    // Each layout: how to make it in `dir`, the folder of it that holds a model, and
    // the command that replaces it.
    type Make<'a> = Box<dyn Fn(&Path) -> Output + 'a>;
    let layouts: [(&str, Make, &str); 3] = [
        ("model", Box::new(|d: &Path| train_cls(&data, d, &[])), ""),
        ("pruned", Box::new(|d: &Path| prune(d)), ""),
        (
            "member",
            Box::new(|d: &Path| train_cls(&data, d, &["--ensemble", "2"])),
            "member-1",
        ),
    ];
    let names = ant::store::file_names::STAMPED_FILES
        .iter()
        .map(|n| n.to_string())
        .chain(["model-0123456789abcdef.safetensors".to_string()]);
    for name in names {
        for (layout, make, part) in &layouts {
            let dir = t.path().join(format!("{layout}-{name}"));
            ok(&make(&dir));
            without_manifests(&dir);
            let replace = || match *layout {
                "pruned" => prune(&dir),
                _ if part.is_empty() => train_cls(&data, &dir, &["--force"]),
                // Member 1 trained again into its place.
                _ => train_cls(
                    &data,
                    &dir,
                    &["--ensemble", "2", "--member", "1", "--force"],
                ),
            };
            let file = dir.join(part).join(&name);
            std::fs::write(&file, "my diary").unwrap();
            let o = replace();
            let what = format!("{layout}, {name}: {}", stderr(&o));
            assert_eq!(o.status.code(), Some(2), "{what}");
            assert!(stderr(&o).contains(&name), "{what}");
            assert_eq!(std::fs::read(&file).unwrap(), b"my diary", "{what}");
        }
    }
    // Records that are a run's lines out of a run's order (the last one repeated).
    let dir = t.path().join("repeated");
    ok(&train_cls(&data, &dir, &[]));
    without_manifests(&dir);
    let records = std::fs::read_to_string(dir.join("records.jsonl")).unwrap();
    let repeated = format!("{records}{}\n", records.lines().last().unwrap());
    std::fs::write(dir.join("records.jsonl"), &repeated).unwrap();
    assert_clean_error(&train_cls(&data, &dir, &["--force"]), &["records.jsonl"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("records.jsonl")).unwrap(),
        repeated
    );
    // Untouched, the same directories are ant's: adopted and replaced.
    for (layout, make, _) in &layouts {
        let dir = t.path().join(format!("{layout}-untouched"));
        ok(&make(&dir));
        without_manifests(&dir);
        let o = match *layout {
            "pruned" => prune(&dir),
            "member" => train_cls(
                &data,
                &dir,
                &["--ensemble", "2", "--member", "1", "--force"],
            ),
            _ => train_cls(&data, &dir, &["--force"]),
        };
        ok(&o);
    }
}
