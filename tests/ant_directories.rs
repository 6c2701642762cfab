//! The parts of an ant directory (an ensemble's `member-K`, a run's `checkpoint/` and
//! `grown/`) are never an output, by any command and whether or not they exist yet,
//! while folders inside a member, and a user's folders that merely hold a `checkpoint/`
//! or a `tree.json` of their own, are ordinary places to write.

mod common;

use common::*;

#[test]
fn no_model_is_saved_into_a_part_of_an_ensemble_or_a_run() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs_csv(t.path());
    let e = t.path().join("e");
    ok(&train_blobs(&data, &e, &["--ensemble", "2"]));
    let member = e.join("member-0");
    let before = std::fs::read(member.join("tree.json")).unwrap();
    let m = t.path().join("m");
    ok(&train_blobs(&data, &m, &[]));
    for out in [member.clone(), e.join("member-5"), m.join("grown")] {
        let o = train_blobs(&data, &out, &["--force"]);
        assert_clean_error(&o, &["is part of the ant directory"]);
    }
    assert_eq!(std::fs::read(member.join("tree.json")).unwrap(), before);
    assert!(!e.join("member-5").exists());
}

/// A member replaced by hand is said not to be the ensemble's by `inspect`, as `eval`
/// refuses it.
#[test]
fn inspect_says_a_member_replaced_by_hand_is_not_the_ensembles() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs_csv(t.path());
    let e = t.path().join("e");
    ok(&train_blobs(&data, &e, &["--ensemble", "2"]));
    let member = e.join("member-0");
    let other = t.path().join("other");
    ok(&train_blobs(&data, &other, &["--seed", "7"]));
    std::fs::remove_dir_all(&member).unwrap();
    std::fs::rename(&other, &member).unwrap();
    let o = ant(&["inspect", "--model", s(&e)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("not this ensemble's member"), "{text}");
}

/// Other routes into an ensemble's or a run's parts: another ensemble into a missing
/// member's slot, a prune below a part, a web export as a checkpoint.
#[test]
fn parts_of_ant_directories_are_refused_by_every_route() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs_csv(t.path());
    let e = t.path().join("e");
    let member_0 = ["--ensemble", "3", "--member", "0"];
    ok(&train_blobs(&data, &e, &member_0));
    // Another ensemble into the missing member 2's slot, and its own member 2 still trains.
    let o = train_blobs(&data, &e.join("member-2"), &["--ensemble", "2"]);
    assert_clean_error(&o, &["is part of the ant directory"]);
    let m = t.path().join("m");
    ok(&train_blobs(&data, &m, &[]));
    // Below a part, not only at it; a web export as a prune.
    let deep = e.join("checkpoint").join("x");
    let o = ant(&[
        "prune",
        "--model",
        s(&m),
        "--data",
        s(&data),
        "--min-reach",
        "0",
        "--out",
        s(&deep),
    ]);
    assert_clean_error(&o, &["is part of the ant directory", "checkpoint"]);
    let o = ant(&[
        "export",
        "--model",
        s(&m),
        "--format",
        "web",
        "--out",
        s(&m.join("checkpoint")),
    ]);
    assert_clean_error(&o, &["is part of the ant directory"]);
    assert!(!m.join("checkpoint").exists() && !e.join("checkpoint").exists());
    let member_2 = ["--ensemble", "3", "--member", "2"];
    ok(&train_blobs(&data, &e, &member_2));
}

/// A user's folder with a checkpoint/ of its own (PyTorch's) or another tree.json is no
/// ant directory: `grown` and `member-3` there are ordinary names.
#[test]
fn a_users_folder_with_a_checkpoint_or_tree_json_of_its_own_is_no_ant_directory() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs_csv(t.path());
    let proj = t.path().join("proj");
    std::fs::create_dir_all(proj.join("checkpoint")).unwrap();
    std::fs::write(proj.join("checkpoint").join("epoch10.pt"), "weights").unwrap();
    std::fs::write(proj.join("tree.json"), "{\"name\": \"phylo\"}").unwrap();
    for name in ["grown", "member-3"] {
        let o = train_blobs(&data, &proj.join(name), &[]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
    }
}

/// A file under a member's name in a real ensemble, new or not, is refused.
#[test]
fn a_file_under_a_members_name_is_refused_new_or_not() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs_csv(t.path());
    let m = t.path().join("m");
    ok(&train_blobs(&data, &m, &[]));
    let e = t.path().join("e");
    let member_0 = ["--ensemble", "3", "--member", "0"];
    ok(&train_blobs(&data, &e, &member_0));
    let o = ant(&[
        "plot",
        "--model",
        s(&m),
        "--out",
        s(&e.join("member-2")),
        "--format",
        "dot",
    ]);
    assert_clean_error(&o, &["is part of the ant directory"]);
}

/// A user's folder with a checkpoint/ of its own is not ant's: a file is written there.
#[test]
fn a_users_folder_with_a_checkpoint_of_its_own_takes_an_output_file() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs_csv(t.path());
    let m = t.path().join("m");
    ok(&train_blobs(&data, &m, &[]));
    let proj = t.path().join("proj");
    std::fs::create_dir_all(proj.join("checkpoint")).unwrap();
    let records = proj.join("records.jsonl");
    let o = ant(&[
        "predict",
        "--model",
        s(&m),
        "--input",
        s(&data),
        "--output",
        s(&records),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A folder inside a member harms nothing: a prune is written there, and the ensemble
/// still loads.
#[test]
fn a_folder_inside_a_member_is_written() {
    let t = tempfile::tempdir().unwrap();
    let data = blobs_csv(t.path());
    let e = t.path().join("e");
    ok(&train_blobs(&data, &e, &["--ensemble", "2"]));
    let inside = e.join("member-0").join("pruned");
    let o = ant(&[
        "prune",
        "--model",
        s(&e.join("member-0")),
        "--data",
        s(&data),
        "--min-reach",
        "0",
        "--out",
        s(&inside),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(ant(&["inspect", "--model", s(&e)]).status.success());
}
