//! Every command and every path it takes, enumerated from the command line's own help
//! (clap's command tree, not a list kept by hand): each path flag is an input or an
//! output (a new one fails here until it is classified), and every command that writes
//! a file or a directory writes it under the longest name a file system allows (names
//! of 247 to 255 bytes, which `predict --output`, `plot --out`, `curves --out` and
//! `export --out` take without "File name too long").

mod common;

use std::path::Path;

use common::ant;

/// The leaf commands under `prefix` (`["train"]`, ..., `["data", "fetch"]`), from the
/// "Commands:" section of `ant PREFIX --help`.
fn commands(prefix: &[String]) -> Vec<Vec<String>> {
    let mut args: Vec<&str> = prefix.iter().map(String::as_str).collect();
    args.push("--help");
    let help = String::from_utf8(ant(&args).stdout).unwrap();
    let Some(start) = help.find("Commands:") else {
        return vec![prefix.to_vec()];
    };
    let names: Vec<String> = help[start..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_string)
        .collect();
    names
        .into_iter()
        .flat_map(|n| {
            let mut p = prefix.to_vec();
            p.push(n);
            commands(&p)
        })
        .collect()
}

/// `(flag, VALUE_NAME)` of every option of `cmd` that takes a value.
fn valued_options(cmd: &[String]) -> Vec<(String, String)> {
    let mut args: Vec<&str> = cmd.iter().map(String::as_str).collect();
    args.push("--help");
    let help = String::from_utf8(ant(&args).stdout).unwrap();
    help.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("--") || l.starts_with("-"))
        .filter_map(|l| {
            let mut words = l.split_whitespace().skip_while(|w| !w.starts_with("--"));
            let flag = words.next()?.trim_end_matches(',').to_string();
            let value = words.next().filter(|v| v.starts_with('<'))?;
            Some((flag, value.trim_matches(['<', '>']).to_string()))
        })
        .collect()
}

/// What a path flag is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Path_ {
    Input,
    Output,
}

/// Every flag that takes a path, and what it is. A value name that reads as a path and
/// is not here fails the test.
fn classify(flag: &str) -> Option<Path_> {
    match flag {
        "--data" | "--test-data" | "--input" | "--model" | "--run" | "--init-from" | "--resume" => {
            Some(Path_::Input)
        }
        "--out" | "--output" | "--dir" => Some(Path_::Output),
        _ => None,
    }
}

/// Whether a value name (`TEST_DATA`, `INIT_FROM`) has a word that names a path.
fn looks_like_a_path(value_name: &str) -> bool {
    let words = [
        "DIR", "PATH", "FILE", "OUT", "OUTPUT", "DATA", "MODEL", "RUN", "INPUT", "FROM", "RESUME",
    ];
    value_name.split('_').any(|w| words.contains(&w))
}

#[test]
fn every_path_flag_of_every_command_is_an_input_or_an_output() {
    let all = commands(&[]);
    assert!(all.len() >= 9, "{all:?}");
    for cmd in &all {
        for (flag, value) in valued_options(cmd) {
            if looks_like_a_path(&value) {
                assert!(
                    classify(&flag).is_some(),
                    "`ant {} {flag} <{value}>` takes a path: classify it (input or output) here",
                    cmd.join(" ")
                );
            }
        }
    }
}

/// Every command that reads a data file says how that file is read (`--delimiter`,
/// `--skip-rows`): a model's training options describe its training file, and applied
/// to another would drop its first row.
#[test]
fn every_command_that_reads_data_says_how_to_read_its_tables() {
    for cmd in commands(&[]) {
        let flags: Vec<String> = valued_options(&cmd).into_iter().map(|(f, _)| f).collect();
        let reads = flags
            .iter()
            .any(|f| matches!(f.as_str(), "--data" | "--input" | "--test-data"));
        // `data fetch` downloads, reading no table.
        if !reads || cmd[0] == "data" {
            continue;
        }
        for wanted in ["--delimiter", "--skip-rows"] {
            assert!(
                flags.iter().any(|f| f == wanted),
                "`ant {}` reads data but has no {wanted}",
                cmd.join(" ")
            );
        }
    }
}

/// A name of exactly `len` bytes ending in `ext`.
fn long_name(len: usize, ext: &str) -> String {
    "x".repeat(len - ext.len()) + ext
}

/// The iris table with a header and text labels, the rows to predict (no target), and a
/// tiny model trained on it: what every command's recipe below needs.
struct Fixture {
    data: String,
    rows: String,
    model: String,
    /// A model tested on a file of its own (`train --test-data`).
    tested: String,
}

fn fixture(dir: &Path) -> Fixture {
    let body =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/small/iris.csv"))
            .unwrap();
    let lines: Vec<Vec<String>> = body
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|c| c.trim().to_string()).collect())
        .collect();
    let table: Vec<String> = lines.iter().map(|c| c.join(",")).collect();
    let rows: Vec<String> = lines.iter().map(|c| c[..4].join(",")).collect();
    let data = dir.join("iris.csv");
    std::fs::write(
        &data,
        format!("sl,sw,pl,pw,species\n{}\n", table.join("\n")),
    )
    .unwrap();
    let input = dir.join("rows.csv");
    std::fs::write(&input, format!("sl,sw,pl,pw\n{}\n", rows.join("\n"))).unwrap();
    let model = dir.join("model");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let o = train(&s(&data), &s(&model));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let tested = dir.join("tested");
    let o = common::ant_with(
        "train --preset tabular --target species --task classification --epochs-node 2 --refine-epochs 1 --max-depth 2",
        &[
            "--data",
            &s(&data),
            "--test-data",
            &s(&data),
            "--out",
            &s(&tested),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Fixture {
        data: s(&data),
        rows: s(&input),
        model: s(&model),
        tested: s(&tested),
    }
}

fn train(data: &str, out: &str) -> std::process::Output {
    common::ant_with(
        "train --preset tabular --target species --task classification --epochs-node 2 --refine-epochs 1 --max-depth 2",
        &["--data", data, "--out", out],
    )
}

/// How to run `cmd` writing its output `flag` to `named(ext)` (a path whose name ends in
/// `ext`); `None`: it cannot run here (a download). A command with an output and no
/// recipe fails the test.
fn recipe(
    cmd: &str,
    flag: &str,
    f: &Fixture,
    named: &dyn Fn(&str) -> String,
) -> Option<Vec<Vec<String>>> {
    let v = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<String>>();
    let m = f.model.as_str();
    Some(match (cmd, flag) {
        ("train", "--out") => vec![v(&[
            "train",
            "--preset",
            "tabular",
            "--target",
            "species",
            "--task",
            "classification",
            "--epochs-node",
            "2",
            "--refine-epochs",
            "1",
            "--max-depth",
            "2",
            "--data",
            &f.data,
            "--out",
            &named(""),
        ])],
        ("prune", "--out") => {
            vec![v(&[
                "prune",
                "--model",
                m,
                "--data",
                &f.data,
                "--min-reach",
                "0.01",
                "--out",
                &named(""),
            ])]
        }
        ("plot", "--out") => vec![v(&[
            "plot",
            "--model",
            m,
            "--data",
            &f.data,
            "--out",
            &named(".svg"),
        ])],
        ("curves", "--out") => vec![v(&["curves", "--run", m, "--out", &named(".svg")])],
        ("predict", "--output") => {
            vec![v(&[
                "predict",
                "--model",
                m,
                "--input",
                &f.rows,
                "--output",
                &named(".csv"),
            ])]
        }
        ("export", "--out") => vec![
            v(&[
                "export",
                "--model",
                m,
                "--format",
                "onnx",
                "--out",
                &named(".onnx"),
            ]),
            v(&[
                "export",
                "--model",
                m,
                "--format",
                "web",
                "--out",
                &named(""),
            ]),
        ],
        // Downloads need the network.
        ("data fetch", "--dir") => return None,
        _ => panic!("`ant {cmd}` writes {flag}: give it a recipe here"),
    })
}

#[test]
fn every_output_is_written_under_the_longest_names() {
    let t = tempfile::tempdir().unwrap();
    let f = fixture(t.path());
    let mut ran = 0;
    for cmd in commands(&[]) {
        let name = cmd.join(" ");
        for (flag, _) in valued_options(&cmd) {
            if classify(&flag) != Some(Path_::Output) {
                continue;
            }
            for len in [247, 255] {
                let dir = t.path().join(format!("{}-{len}", name.replace(' ', "-")));
                std::fs::create_dir_all(&dir).unwrap();
                let named = |ext: &str| dir.join(long_name(len, ext)).to_str().unwrap().to_string();
                let Some(lines) = recipe(&name, &flag, &f, &named) else {
                    continue;
                };
                for args in lines {
                    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                    let o = ant(&refs);
                    assert!(
                        o.status.success(),
                        "ant {name} ({len}-byte name): {}",
                        String::from_utf8_lossy(&o.stderr)
                    );
                    ran += 1;
                }
                let written: Vec<usize> = std::fs::read_dir(&dir)
                    .unwrap()
                    .flatten()
                    .map(|e| e.file_name().len())
                    .collect();
                assert!(!written.is_empty(), "{name} {flag}: nothing written");
                assert!(
                    written.iter().all(|&n| n == len),
                    "{name} {flag}: names of {written:?} bytes, want {len}"
                );
            }
        }
    }
    assert!(ran >= 14, "{ran} outputs written");
}

/// How to run `cmd` reading its input `flag` from `path` (the table, or for `--input`
/// the rows to predict), with the one output it makes (stdout, or the file at `out`)
/// to compare. `None`: the flag names a directory (a model, a run), not a file.
fn input_recipe(cmd: &str, flag: &str, f: &Fixture, path: &str, out: &str) -> Option<Vec<String>> {
    let v = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<String>>();
    let m = f.model.as_str();
    let quick = "train --preset tabular --target species --task classification --epochs-node 2 --refine-epochs 1 --max-depth 2";
    let mut train: Vec<String> = quick.split_whitespace().map(str::to_string).collect();
    Some(match (cmd, flag) {
        ("train", "--data") => {
            train.extend(v(&["--data", path, "--out", out]));
            train
        }
        ("train", "--test-data") => {
            train.extend(v(&["--data", &f.data, "--test-data", path, "--out", out]));
            train
        }
        ("eval", "--data") => v(&["eval", "--model", m, "--data", path, "--json"]),
        ("prune", "--data") => v(&[
            "prune",
            "--model",
            m,
            "--data",
            path,
            "--min-reach",
            "0.2",
            "--out",
            out,
        ]),
        ("prune", "--test-data") => v(&[
            "prune",
            "--model",
            &f.tested,
            "--data",
            &f.data,
            "--test-data",
            path,
            "--min-reach",
            "0.2",
            "--out",
            out,
        ]),
        ("plot", "--data") => v(&[
            "plot",
            "--model",
            m,
            "--data",
            path,
            "--out",
            &format!("{out}.svg"),
        ]),
        ("predict", "--input") => v(&["predict", "--model", m, "--input", path]),
        ("export", "--data") => v(&[
            "export", "--model", m, "--format", "web", "--data", path, "--out", out,
        ]),
        (_, "--model" | "--run" | "--init-from" | "--resume") => return None,
        _ => panic!("`ant {cmd}` reads {flag}: give it a recipe here"),
    })
}

/// What a run of an input recipe made: stdout, and the bytes of what it wrote at `out`
/// (a file, `out.svg`, or a directory's `report.json` / `prune.json` / `index.html`).
fn made(o: &std::process::Output, out: &Path) -> Vec<u8> {
    let mut bytes = o.stdout.clone();
    let svg = out.with_extension("svg");
    for p in [
        svg,
        out.join("report.json"),
        out.join("prune.json"),
        out.join("model.js"),
    ] {
        if let Ok(b) = std::fs::read(&p) {
            // Wall times and paths differ between the two runs; the numbers must not.
            let text = String::from_utf8_lossy(&b);
            let kept: String = text
                .lines()
                .filter(|l| !l.contains("seconds") && !l.contains(out.to_str().unwrap()))
                .collect();
            bytes.extend(kept.into_bytes());
        }
    }
    bytes
}

/// Every file input of every command is read once, so a pipe or a process substitution
/// (`<(cat x.csv)`) gives what the file gives: `train --data <(cat x.csv)` records the
/// MD5 of the rows read, not of nothing, and `eval` knows the file.
#[test]
fn every_file_input_reads_a_pipe_as_it_reads_the_file() {
    let t = tempfile::tempdir().unwrap();
    let f = fixture(t.path());
    let mut compared = 0;
    for cmd in commands(&[]) {
        let name = cmd.join(" ");
        for (flag, _) in valued_options(&cmd) {
            if classify(&flag) != Some(Path_::Input) {
                continue;
            }
            let file = if flag == "--input" { &f.rows } else { &f.data };
            let dir = t.path().join(format!("{}{flag}", name.replace(' ', "-")));
            std::fs::create_dir_all(&dir).unwrap();
            let (a, b) = (dir.join("file"), dir.join("pipe"));
            let Some(direct) = input_recipe(&name, &flag, &f, file, a.to_str().unwrap()) else {
                continue;
            };
            let o1 = ant(&direct.iter().map(String::as_str).collect::<Vec<_>>());
            assert!(
                o1.status.success(),
                "ant {}: {}",
                direct.join(" "),
                String::from_utf8_lossy(&o1.stderr)
            );
            let piped = input_recipe(&name, &flag, &f, "PIPE", b.to_str().unwrap()).unwrap();
            let quoted: Vec<String> = piped
                .iter()
                .map(|w| match w.as_str() {
                    "PIPE" => format!("<(cat '{file}')"),
                    w => format!("'{w}'"),
                })
                .collect();
            let o2 = std::process::Command::new("bash")
                .arg("-c")
                .arg(format!("exec \"$0\" {}", quoted.join(" ")))
                .arg(env!("CARGO_BIN_EXE_ant"))
                .output()
                .unwrap();
            assert!(
                o2.status.success(),
                "ant {}: {}",
                quoted.join(" "),
                String::from_utf8_lossy(&o2.stderr)
            );
            let same = made(&o1, &a) == made(&o2, &b);
            assert!(
                same,
                "ant {name} {flag}: a pipe gave other results than the file"
            );
            compared += 1;
        }
    }
    assert!(compared >= 7, "{compared} inputs compared");
}

/// Every file under `dir` (recursively), as paths relative to it, sorted.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            let sub = files_under(&p);
            out.extend(sub.into_iter().map(|s| Path::new(&e.file_name()).join(s)));
        } else {
            out.push(e.file_name().into());
        }
    }
    out.sort();
    out
}

fn copy_dir(from: &Path, to: &Path) {
    for rel in files_under(from) {
        std::fs::create_dir_all(to.join(&rel).parent().unwrap()).unwrap();
        std::fs::copy(from.join(&rel), to.join(&rel)).unwrap();
    }
}

/// A command that writes a directory replaces or deletes only
/// what it can prove it wrote. For every command with a directory output (from the
/// command tree) and every file it wrote there or could write (the names of
/// `ant::store::file_names`, weights and manifest included): that file changed by the user,
/// or put by the user into an empty directory, makes the command refuse, naming it,
/// with or without `--force`, and the user's bytes stay (a user's `report.json` beside
/// a model, or a file named like checksum weights, included).
#[test]
fn every_directory_output_keeps_every_file_ant_did_not_write() {
    let t = tempfile::tempdir().unwrap();
    let f = fixture(t.path());
    let mut cases = 0;
    for cmd in commands(&[]) {
        let name = cmd.join(" ");
        let force = String::from_utf8(
            ant(&[&cmd[..], &["--help".to_string()]]
                .concat()
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>())
            .stdout,
        )
        .unwrap()
        .contains("--force");
        for (flag, _) in valued_options(&cmd) {
            if classify(&flag) != Some(Path_::Output) {
                continue;
            }
            let slot = t.path().join("SLOT");
            let named = |ext: &str| match ext {
                "" => slot.to_str().unwrap().to_string(),
                e => t
                    .path()
                    .join(format!("file{e}"))
                    .to_str()
                    .unwrap()
                    .to_string(),
            };
            let Some(lines) = recipe(&name, &flag, &f, &named) else {
                continue;
            };
            let slot_s = slot.to_str().unwrap();
            for args in lines.into_iter().filter(|a| a.iter().any(|w| w == slot_s)) {
                let run = |dir: &Path| {
                    let mut a: Vec<String> = args
                        .iter()
                        .map(|w| {
                            if w == slot_s {
                                dir.to_str().unwrap().to_string()
                            } else {
                                w.clone()
                            }
                        })
                        .collect();
                    if force {
                        a.push("--force".into());
                    }
                    ant(&a.iter().map(String::as_str).collect::<Vec<_>>())
                };
                let base = t
                    .path()
                    .join(format!("{}-{}", name.replace(' ', "-"), args.len()));
                let o = run(&base);
                assert!(
                    o.status.success(),
                    "ant {name}: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
                let mut targets = files_under(&base);
                targets.extend(
                    ant::store::file_names::STAMPED_FILES
                        .iter()
                        .chain(&[
                            ant::store::file_names::MANIFEST_FILE,
                            "model-0123456789abcdef.safetensors",
                        ])
                        .map(std::path::PathBuf::from),
                );
                targets.sort();
                targets.dedup();
                for (k, rel) in targets.iter().enumerate() {
                    let line = format!("the user's own {}\n", rel.display()).into_bytes();
                    // Replaced beside the output, planted in an empty directory, or
                    // a line appended to what ant wrote (records.jsonl grows by lines).
                    let ours = std::fs::read(base.join(rel)).ok();
                    let appended = ours.map(|b| [b, line.clone()].concat());
                    let modes = [
                        (true, Some(line.clone())),
                        (false, Some(line.clone())),
                        (true, appended),
                    ];
                    for (m, (beside_output, mine)) in modes.into_iter().enumerate() {
                        let Some(mine) = mine else { continue };
                        let dir = base.with_extension(format!("{k}-{m}"));
                        if beside_output {
                            copy_dir(&base, &dir);
                        }
                        std::fs::create_dir_all(dir.join(rel).parent().unwrap()).unwrap();
                        std::fs::write(dir.join(rel), &mine).unwrap();
                        let o = run(&dir);
                        let what = format!(
                            "ant {name} {flag} with the user's {} (beside its output: {beside_output})",
                            rel.display()
                        );
                        let err = String::from_utf8_lossy(&o.stderr);
                        assert_eq!(o.status.code(), Some(2), "{what}: {err}");
                        let file = rel.file_name().unwrap().to_str().unwrap();
                        assert!(err.contains(file), "{what}: {err}");
                        assert_eq!(std::fs::read(dir.join(rel)).unwrap(), mine, "{what}");
                        cases += 1;
                    }
                }
            }
        }
    }
    assert!(cases >= 80, "{cases} cases");
}

/// Whether a value name reads as a number a user may make huge (`WIDTH`, `BINS`, `N`).
fn looks_like_a_count(flag: &str, value_name: &str) -> bool {
    let choices = [
        "CHOICE",
        "PRESET",
        "ABLATION",
        "INIT",
        "AUGMENT",
        "ROUTER_INIT",
        "NAME",
        "IMAGE_NORM",
        "SELECT",
        "VALID_ROWS",
        "RULE",
        "TARGET",
        "TASK",
        "DELIMITER",
        "FORMAT",
        "STAGE",
        "BASE_URL",
    ];
    classify(flag).is_none() && !choices.contains(&value_name)
}

/// Sizes a user controls are checked before they are allocated.
/// Every numeric option of every command that writes something (from the command tree;
/// a new one is covered without a new test), given 0 and 2^40 under `ulimit -v` 4 GiB,
/// ends within two minutes in success or one clean error (exit 2): never an abort, a
/// kill by the kernel or a panic (`--width 40000` to `ant curves`, or a `.csv.gz`
/// unpacking to 300 MB under a 2 GB limit, included).
#[test]
fn every_numeric_option_at_its_extremes_fits_in_memory_or_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let f = fixture(t.path());
    let mut tried = 0;
    for cmd in commands(&[]) {
        let name = cmd.join(" ");
        let Some(out_flag) = valued_options(&cmd)
            .into_iter()
            .map(|(flag, _)| flag)
            .find(|flag| classify(flag) == Some(Path_::Output))
        else {
            continue;
        };
        let dir = t.path().join(name.replace(' ', "-"));
        std::fs::create_dir_all(&dir).unwrap();
        let named = |ext: &str| dir.join(format!("out{ext}")).to_str().unwrap().to_string();
        let Some(lines) = recipe(&name, &out_flag, &f, &named) else {
            continue;
        };
        for (flag, value_name) in valued_options(&cmd) {
            if !looks_like_a_count(&flag, &value_name) {
                continue;
            }
            for value in ["0", "1099511627776"] {
                let mut args = lines[0].clone();
                // The recipe's own value of the flag, if any, is replaced.
                if let Some(at) = args.iter().position(|a| *a == flag) {
                    args.drain(at..at + 2);
                }
                args.extend([flag.clone(), value.to_string()]);
                let _ = std::fs::remove_dir_all(dir.join("out"));
                let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                let o = common::ant_bounded(&refs, 120);
                let e = String::from_utf8_lossy(&o.stderr);
                let what = format!("ant {name} {flag} {value}: {e}");
                assert!(matches!(o.status.code(), Some(0 | 2)), "{what}");
                assert!(
                    !e.contains("panicked") && !e.contains("memory allocation"),
                    "{what}"
                );
                tried += 1;
            }
        }
    }
    assert!(tried >= 30, "{tried} cases");
}
