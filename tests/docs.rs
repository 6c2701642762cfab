//! Documentation that cannot drift: the guide's option table for `ant train` against
//! `ant train --help` (every option, and each default clap states).

use std::collections::BTreeMap;
use std::path::Path;

mod common;

/// `--name` -> its `[default: X]` (if any), from `ant train --help`.
fn help_options() -> BTreeMap<String, Option<String>> {
    let o = common::ant(&["train", "--help"]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let mut options = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("--") || t.starts_with("-h, ") {
            let name = t
                .trim_start_matches("-h, ")
                .split([' ', ','])
                .next()
                .unwrap();
            current = Some(name.to_string());
            options.insert(name.to_string(), None);
        }
        if let (Some(name), Some(i)) = (&current, line.find("[default: ")) {
            let rest = &line[i + "[default: ".len()..];
            let value = rest.split(']').next().unwrap().to_string();
            options.insert(name.clone(), Some(value));
        }
    }
    options.remove("--help");
    options
}

/// `--name` -> the default cell of its row, from the table under `## Options` in
/// docs/guide/training.md. A row naming several options (`--batch-size` / `--lr`) has
/// one default each, in order, split by ` / `.
fn table_options() -> BTreeMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide/training.md");
    let text = std::fs::read_to_string(path).unwrap();
    let table = text.split("## Options").nth(1).expect("an Options section");
    let mut options = BTreeMap::new();
    for line in table.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let names: Vec<&str> = cells[1]
            .split('`')
            .filter_map(|w| w.split_whitespace().next())
            .filter(|w| {
                w.starts_with("--") && w[2..].starts_with(|c: char| c.is_ascii_alphabetic())
            })
            .collect();
        if names.is_empty() {
            continue; // the header row and its rule
        }
        let defaults: Vec<&str> = cells[2].split(" / ").collect();
        for (k, name) in names.iter().enumerate() {
            let default = match defaults.len() == names.len() {
                true => defaults[k],
                false => cells[2],
            };
            options.insert(name.to_string(), default.to_string());
        }
    }
    options
}

/// Whether the guide's `doc` states clap's default `help` (numbers compared as numbers).
fn same_default(help: &str, doc: &str) -> bool {
    let doc = doc.trim_matches('`');
    match (help.parse::<f64>(), doc.parse::<f64>()) {
        (Ok(a), Ok(b)) => a == b,
        _ => help == doc,
    }
}

#[test]
fn the_guides_option_table_is_ant_train_help() {
    let help = help_options();
    let table = table_options();
    let undocumented: Vec<&String> = help.keys().filter(|k| !table.contains_key(*k)).collect();
    let unknown: Vec<&String> = table.keys().filter(|k| !help.contains_key(*k)).collect();
    assert!(
        undocumented.is_empty() && unknown.is_empty(),
        "options of `ant train --help` missing from docs/guide/training.md: {undocumented:?}; \
         options in the guide that `ant train` does not have: {unknown:?}"
    );
    for (name, default) in &help {
        if let Some(d) = default {
            assert!(
                same_default(d, &table[name]),
                "{name}: `ant train --help` says the default is {d}, the guide {}",
                table[name]
            );
        }
    }
    // The defaults the preset decides: stated in the guide as the paper's.
    assert_eq!(table["--patience"], "5");
    assert_eq!(table["--select"], "metric");
}
