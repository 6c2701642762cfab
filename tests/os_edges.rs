//! What the operating system can throw at the command line: a reader that goes away
//! (`ant predict ... | head -1`), a closed stderr, a closed stdout or one open for
//! reading, paths that are not UTF-8, and a `--width` no memory could hold. Each ends
//! cleanly, never with a panic or an abort.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;

/// A table of 60 rows: three features, text labels in column `y`.
fn table(dir: &Path, name: &OsStr, rows: usize) -> PathBuf {
    let mut csv = String::from("a,b,c,y\n");
    for i in 0..rows {
        let label = if i % 2 == 0 { "even" } else { "odd" };
        csv.push_str(&format!("{},{},{},{label}\n", i % 2, i % 7, i % 5));
    }
    let p = dir.join(name);
    std::fs::write(&p, csv).unwrap();
    p
}

fn run(args: &[&OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ant"))
        .args(args)
        .output()
        .unwrap()
}

fn quick_train<'a>(data: &'a OsStr, out: &'a OsStr) -> Vec<&'a OsStr> {
    [
        "train",
        "--preset",
        "tabular",
        "--target",
        "y",
        "--task",
        "classification",
        "--epochs-node",
        "1",
        "--refine-epochs",
        "1",
        "--max-depth",
        "1",
        "--data",
    ]
    .iter()
    .map(OsStr::new)
    .chain([data, OsStr::new("--out"), out])
    .collect()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_closed_stdout_or_stderr_ends_quietly() {
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path(), OsStr::new("train.csv"), 60);
    let model = t.path().join("model");
    // Training goes on, and saves its model, when nobody reads its stderr any more.
    let mut child = Command::new(env!("CARGO_BIN_EXE_ant"))
        .args(quick_train(data.as_os_str(), model.as_os_str()))
        .args(["--width", "8"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(model.join("tree.json").is_file());
    // Far more predictions than a pipe buffers, for a reader that has gone.
    let rows = table(t.path(), OsStr::new("rows.csv"), 5000);
    for args in [
        vec![
            "predict",
            "--model",
            model.to_str().unwrap(),
            "--input",
            rows.to_str().unwrap(),
        ],
        vec!["inspect", "--model", model.to_str().unwrap()],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ant"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
    // A stdout open only for reading (`1<file`) would lose the output with success
    // (Rust's stdout swallows EBADF). It is an error, said before any work (so no prune
    // saves its model first).
    let pruned = t.path().join("pruned");
    for args in [
        vec!["inspect", "--model", model.to_str().unwrap()],
        vec![
            "prune",
            "--model",
            model.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
            "--min-reach",
            "0.1",
            "--out",
            pruned.to_str().unwrap(),
        ],
        vec![
            "predict",
            "--model",
            model.to_str().unwrap(),
            "--input",
            rows.to_str().unwrap(),
        ],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_ant"))
            .args(&args)
            .stdout(std::fs::File::open(&rows).unwrap())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!pruned.exists(), "refused before any work: {args:?}");
        assert!(
            stderr(&o).contains("<stdout>: open only for reading"),
            "{}",
            stderr(&o)
        );
    }
}

/// A closed stdout (`>&-`), which Rust's runtime fills with `/dev/null` before `main`,
/// and clap's own `--help` and `--version` into a stdout open only for reading, which
/// would print into nothing with success.
#[test]
fn a_closed_stdout_and_clap_answers_are_refused_too() {
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path(), OsStr::new("train.csv"), 60);
    let out = t.path().join("out");
    let closed = |more: Vec<&OsStr>| {
        let mut args = vec![OsStr::new("-c"), OsStr::new(r#"exec "$0" "$@" >&-"#)];
        args.push(OsStr::new(env!("CARGO_BIN_EXE_ant")));
        args.extend(more);
        Command::new("sh").args(&args).output().unwrap()
    };
    // Training writes nothing to stdout: it runs.
    let o = closed(quick_train(data.as_os_str(), out.as_os_str()));
    assert!(o.status.success(), "{}", stderr(&o));
    // Predictions on stdout are refused before any work.
    let predict = [
        "predict",
        "--model",
        out.to_str().unwrap(),
        "--input",
        data.to_str().unwrap(),
    ];
    let o = closed(predict.iter().map(OsStr::new).collect());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("<stdout>: closed"), "{}", stderr(&o));
    // ... and go to a file as asked.
    let rows = t.path().join("p.csv");
    let mut to_file: Vec<&OsStr> = predict.iter().map(OsStr::new).collect();
    to_file.extend([OsStr::new("--output"), rows.as_os_str()]);
    assert!(closed(to_file).status.success());
    assert!(rows.is_file());
    for flag in ["--help", "--version"] {
        let o = Command::new(env!("CARGO_BIN_EXE_ant"))
            .arg(flag)
            .stdout(std::fs::File::open(&data).unwrap())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{flag}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("open only for reading"),
            "{}",
            stderr(&o)
        );
        let o = run(&[OsStr::new(flag)]);
        assert!(o.status.success() && !o.stdout.is_empty(), "{flag}");
    }
    // A usage error is still clap's, with its exit status 2.
    let o = run(&[OsStr::new("train"), OsStr::new("--no-such-flag")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--no-such-flag"), "{}", stderr(&o));
}

#[test]
fn an_impossible_width_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path(), OsStr::new("train.csv"), 60);
    let out = t.path().join("out");
    let mut args = quick_train(data.as_os_str(), out.as_os_str());
    args.extend([OsStr::new("--width"), OsStr::new("1000000000000")]);
    let o = run(&args);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("--width must be at most 16384"), "{e}");
    assert!(!out.join("checkpoint").exists());
}

#[test]
fn paths_that_are_not_utf8_work() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join(OsStr::from_bytes(b"d\xffir"));
    std::fs::create_dir(&dir).unwrap();
    let data = table(&dir, OsStr::from_bytes(b"tr\xfeain.csv"), 60);
    let test = table(&dir, OsStr::from_bytes(b"te\xfest.csv"), 20);
    let out = dir.join(OsStr::from_bytes(b"o\xffut"));
    let mut args = quick_train(data.as_os_str(), out.as_os_str());
    args.extend([OsStr::new("--test-data"), test.as_os_str()]);
    args.extend([OsStr::new("--width"), OsStr::new("8")]);
    let o = run(&args);
    // It used to fail writing checkpoint/run.json ("path contains invalid UTF-8").
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.join("report.json").is_file());
    let o = run(&[
        OsStr::new("eval"),
        OsStr::new("--model"),
        out.as_os_str(),
        OsStr::new("--data"),
        test.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));

    // A run over such paths records them as they are, for --resume.
    use ant::run::{DataSpec, Existing, Run, RunFile, RunSpec};
    let spec = RunSpec {
        data: DataSpec {
            path: data.clone(),
            test_data: Some(test.clone()),
            test_fraction: 0.2,
            target: Some(ant::data::tabular::TargetSpec::new(
                "y",
                ant::TaskKind::Classification,
            )),
            train_limit: None,
            image_size: None,
        },
        params: ant::AntParams::new(ant::Preset::Tabular).with_width(8),
        member: None,
    };
    let out2 = dir.join(OsStr::from_bytes(b"r\xffun"));
    drop(Run::start(&out2, spec, Existing::Refuse).unwrap());
    let json = std::fs::read(out2.join("checkpoint/run.json")).unwrap();
    let file: RunFile = serde_json::from_slice(&json).unwrap();
    assert_eq!(file.spec.data.path, data);
    assert_eq!(file.spec.data.test_data.as_deref(), Some(test.as_path()));
    // Unicode paths stay plain strings.
    let text = String::from_utf8(json).unwrap();
    assert!(
        text.contains(&format!("\"cwd\": {:?}", file.cwd.to_str().unwrap())),
        "{text}"
    );
}

#[test]
fn a_width_beyond_the_memory_the_process_may_use_is_refused_not_an_abort() {
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path(), OsStr::new("train.csv"), 60);
    let out = t.path().join("out");
    let mut args: Vec<&str> = quick_train(data.as_os_str(), out.as_os_str())
        .iter()
        .map(|a| a.to_str().unwrap())
        .collect();
    // The documented maximum, under `ulimit -v` 4 GiB (ant_bounded).
    args.extend(["--width", "16384"]);
    let o = common::ant_bounded(&args, 120);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("--width 16384 needs at least") && e.contains("ulimit -v"),
        "{e}"
    );
    assert!(!out.exists());
}

/// A gzip file of `members` copies of one member holding `rows` rows `1,2` (after a
/// header): a small file that unpacks to `members * rows * 4` bytes.
fn gzip_rows(path: &Path, rows: usize, members: usize) {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&b"1,2\n".repeat(rows)).unwrap();
    let member = enc.finish().unwrap();
    let mut head = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    head.write_all(b"a,b\n").unwrap();
    let mut bytes = head.finish().unwrap();
    for _ in 0..members {
        bytes.extend_from_slice(&member);
    }
    std::fs::write(path, bytes).unwrap();
}

/// A 1.4 MB `.csv.gz` (300 MB unpacked) must not abort under a 2 GB limit, as a table
/// reader keeping a string per cell would. Under `ulimit -v` 4 GiB, a table whose reading
/// needs more, and a file that unpacks past what the process may map, are each one
/// error naming the file, exit 2; one that fits trains.
#[test]
fn tables_beyond_the_memory_the_process_may_use_are_refused_not_an_abort() {
    let t = tempfile::tempdir().unwrap();
    let quick = |data: &Path, out: &Path| {
        let mut args: Vec<String> = quick_train(data.as_os_str(), out.as_os_str())
            .iter()
            .map(|a| a.to_str().unwrap().to_string())
            .collect();
        // The rows are `a,b`: b is the target.
        let at = args.iter().position(|a| a == "--target").unwrap();
        args[at + 1] = "b".into();
        common::ant_bounded(&args.iter().map(String::as_str).collect::<Vec<_>>(), 300)
    };
    // 1 GiB of rows: its cells alone need more than 4 GiB.
    let big = t.path().join("big.csv.gz");
    gzip_rows(&big, 1 << 20, 256);
    let o = quick(&big, &t.path().join("m1"));
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("big.csv.gz") && e.contains("as a table needs about") && !e.contains("panicked"),
        "{e}"
    );
    // 3.75 GiB unpacked: past what the process may map while it unpacks.
    let bomb = t.path().join("bomb.csv.gz");
    gzip_rows(&bomb, 1 << 20, 960);
    let o = quick(&bomb, &t.path().join("m2"));
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("bomb.csv.gz") && e.contains("unpacking it past"),
        "{e}"
    );
}

/// Every kind of path that leads nowhere, as `--data` and as `--out`, is said for what
/// it is: a loop of links, a link to nothing, a file where a folder belongs (with or
/// without a trailing slash), never as "no such file" or "File exists (os error 17)".
#[test]
fn paths_that_lead_nowhere_are_said_for_what_they_are() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let data = common::cls_csv(d);
    std::fs::write(d.join("afile"), "mine").unwrap();
    std::os::unix::fs::symlink(d.join("loop-b"), d.join("loop-a")).unwrap();
    std::os::unix::fs::symlink(d.join("loop-a"), d.join("loop-b")).unwrap();
    std::os::unix::fs::symlink(d.join("gone"), d.join("dangling")).unwrap();
    let train = |data: &Path, out: &Path| common::train_cls(data, out, &[]);
    let fresh = d.join("m");
    for (name, said) in [
        ("loop-a", "loop of symbolic links"),
        ("dangling", "which does not exist"),
        ("missing.csv", "no such file or directory"),
    ] {
        let o = train(&d.join(name), &fresh);
        common::assert_clean_error(&o, &[name, said]);
        assert!(!fresh.exists());
    }
    for (out, said) in [
        ("afile", "afile"),
        ("afile/", "a file, not a folder"),
        ("afile/sub", "a file, not a folder"),
        ("loop-a", "loop of symbolic links"),
        ("dangling", "leads to nothing"),
    ] {
        let o = train(&data, &d.join(out));
        common::assert_clean_error(&o, &[said]);
        assert!(!stderr(&o).contains("os error 17"), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read_to_string(d.join("afile")).unwrap(), "mine");
}

/// A file that looks regular but waits for data (`/proc/kmsg`, readable by root) is
/// refused at once by every command that reads a file, never waited on. Where the
/// process may not open it, there is nothing to wait on: the check is then the open's
/// own error, and a FIFO with a writer still reads as ever (tests/stdio.rs).
#[test]
fn a_file_that_waits_for_data_is_refused_at_once() {
    let kmsg = Path::new("/proc/kmsg");
    if std::fs::File::open(kmsg).is_err() {
        eprintln!("/proc/kmsg cannot be opened here: nothing waits");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path(), OsStr::new("train.csv"), 60);
    let m = t.path().join("m");
    assert!(
        run(&quick_train(data.as_os_str(), m.as_os_str()))
            .status
            .success()
    );
    let (k, m, out) = (
        kmsg.to_str().unwrap(),
        m.to_str().unwrap(),
        t.path().join("o"),
    );
    let (out, svg) = (out.to_str().unwrap(), t.path().join("t.svg"));
    let svg = svg.to_str().unwrap();
    let commands: [&[&str]; 5] = [
        &[
            "train",
            "--preset",
            "tabular",
            "--target",
            "y",
            "--task",
            "classification",
            "--data",
            k,
            "--out",
            out,
        ],
        &["eval", "--model", m, "--data", k],
        &["predict", "--model", m, "--input", k],
        &["plot", "--model", m, "--data", k, "--out", svg],
        &[
            "prune",
            "--model",
            m,
            "--data",
            k,
            "--min-reach",
            "0.1",
            "--out",
            out,
        ],
    ];
    for args in commands {
        let o = common::ant_bounded(args, 60);
        common::assert_clean_error(&o, &["/proc/kmsg", "waits for data"]);
    }
}

/// A model of thousands of nodes and tensors loads as fast as its files are read: its
/// weights' header is parsed once (not once per tensor: 8,000 tensors took minutes)
/// and its tree's shapes are checked in one pass from the root (not node by node from
/// the root: a chain of 64,000 nodes took two minutes).
#[test]
fn a_model_of_thousands_of_nodes_loads_at_once() {
    use md5::{Digest, Md5};
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path(), OsStr::new("train.csv"), 60);
    let m = t.path().join("m");
    assert!(
        run(&quick_train(data.as_os_str(), m.as_os_str()))
            .status
            .success()
    );
    let mut tree: serde_json::Value =
        serde_json::from_slice(&std::fs::read(m.join("tree.json")).unwrap()).unwrap();
    let d = tree["topology"]["input"]["Flat"]["d"].as_u64().unwrap() as usize;
    let lin = |o: usize| serde_json::json!({"layers": [{"op": "linear", "d_in": d, "d_out": o}]});
    // A chain: router 2k has leaf 2k+1 on its left and router 2k+2 on its right.
    let routers = 4000;
    let mut nodes = vec![];
    for k in 0..=routers {
        let i = 2 * k;
        let parent = (k > 0).then(|| i - 2);
        match k < routers {
            true => {
                nodes.push(serde_json::json!({"parent": parent, "children": [i + 1, i + 2], "edge": [], "router": lin(1), "solver": null}));
                nodes.push(serde_json::json!({"parent": i, "children": null, "edge": [], "router": null, "solver": lin(2)}));
            }
            false => nodes.push(serde_json::json!({"parent": parent, "children": null, "edge": [], "router": null, "solver": lin(2)})),
        }
    }
    // Its weights: every module's weight and bias.
    let mut weights: Vec<(String, Vec<usize>)> = vec![];
    for (i, n) in nodes.iter().enumerate() {
        let (module, out) = match n["router"].is_null() {
            true => ("solver", 2),
            false => ("router", 1),
        };
        weights.push((format!("nodes.{i}.{module}.linears.0.bias"), vec![out]));
        weights.push((format!("nodes.{i}.{module}.linears.0.weight"), vec![d, out]));
    }
    let values: Vec<Vec<u8>> = weights
        .iter()
        .map(|(_, shape)| 0.01f32.to_le_bytes().repeat(shape.iter().product()))
        .collect();
    let views: Vec<(String, safetensors::tensor::TensorView)> = weights
        .iter()
        .zip(&values)
        .map(|((name, shape), v)| {
            let view =
                safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.clone(), v)
                    .unwrap();
            (name.clone(), view)
        })
        .collect();
    let bytes = safetensors::serialize(views, None).unwrap();
    let md5: String = Md5::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let big = t.path().join("big");
    std::fs::create_dir(&big).unwrap();
    let file = format!("model-{}.safetensors", &md5[..16]);
    std::fs::write(big.join(&file), &bytes).unwrap();
    tree["topology"]["nodes"] = serde_json::Value::Array(nodes);
    tree["weights"] = serde_json::json!({"file": file, "md5": md5});
    std::fs::write(big.join("tree.json"), tree.to_string()).unwrap();
    let o = common::ant_bounded(&["inspect", "--model", big.to_str().unwrap()], 60);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).matches("node ").count(),
        2 * routers + 1
    );
}

/// Under any address-space limit (`ulimit -v`), every command on data that needs
/// memory ends with exit 0, or with exit 2 and one `error:` line: never an abort (134),
/// whether the limit is met reading the data, building the growth cache or computing.
#[test]
fn no_memory_limit_ends_in_an_abort() {
    let t = tempfile::tempdir().unwrap();
    let mnist = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mnist");
    let mnist = mnist.to_str().unwrap();
    let m = t.path().join("m");
    let quick = [
        "train",
        "--preset",
        "mnist-c",
        "--data",
        mnist,
        "--train-limit",
        "1000",
        "--epochs-node",
        "1",
        "--refine-epochs",
        "1",
        "--max-depth",
        "1",
    ];
    let trained = Command::new(env!("CARGO_BIN_EXE_ant"))
        .args(quick)
        .args(["--out", m.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(trained.status.success(), "{}", common::stderr(&trained));
    let images = format!("{mnist}/t10k-images-idx3-ubyte.gz");
    let m = m.to_str().unwrap();
    let (mut ended, mut refused) = (0, 0);
    for mib in [60, 120, 250, 700] {
        let out = t.path().join(format!("run-{mib}"));
        let rows = t.path().join(format!("rows-{mib}.csv"));
        let train: Vec<&str> = quick
            .iter()
            .copied()
            .chain(["--out", out.to_str().unwrap()])
            .collect();
        let commands: [Vec<&str>; 3] = [
            train,
            vec!["eval", "--model", m, "--data", mnist],
            vec![
                "predict",
                "--model",
                m,
                "--input",
                &images,
                "--output",
                rows.to_str().unwrap(),
            ],
        ];
        for args in commands {
            let o = Command::new("sh")
                .arg("-c")
                .arg(format!("ulimit -v {}; exec \"$0\" \"$@\"", mib << 10))
                .arg(env!("CARGO_BIN_EXE_ant"))
                .args(&args)
                .output()
                .unwrap();
            let e = common::stderr(&o);
            let what = format!("{mib} MiB, {}: {:?}\n{e}", args[0], o.status);
            match o.status.code() {
                Some(0) => ended += 1,
                Some(2) => {
                    refused += 1;
                    assert_eq!(
                        e.lines().filter(|l| l.starts_with("error: ")).count(),
                        1,
                        "{what}"
                    );
                }
                _ => panic!("{what}"),
            }
        }
    }
    // The ladder spans both ends: some runs fit, some are refused.
    assert!(ended > 0 && refused > 0, "{ended} ended, {refused} refused");
}

/// A named pipe as `--data` says that it waits for a writer (opening it waits until one
/// comes), once, then reads what the writer gives as a file's rows: no format check
/// opens it first (which would take the writer's rows and leave the read waiting).
#[test]
fn a_named_pipe_says_it_waits_for_a_writer() {
    let t = tempfile::tempdir().unwrap();
    let data = table(t.path(), OsStr::new("train.csv"), 60);
    let m = t.path().join("m");
    assert!(
        run(&quick_train(data.as_os_str(), m.as_os_str()))
            .status
            .success()
    );
    let fifo = t.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let child = Command::new(env!("CARGO_BIN_EXE_ant"))
        .args([OsStr::new("eval"), OsStr::new("--model"), m.as_os_str()])
        .args([OsStr::new("--data"), fifo.as_os_str()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::fs::write(&fifo, std::fs::read(&data).unwrap()).unwrap();
    let o = child.wait_with_output().unwrap();
    let e = common::stderr(&o);
    assert!(o.status.success(), "{e}");
    // Opened once: a second open would wait for a second writer.
    let said = e.matches("a named pipe: waiting for a program to write to it");
    assert_eq!(said.count(), 1, "{e}");
}
