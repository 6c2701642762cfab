//! The shape of the sources: files a reader can hold, a thin `main.rs`, and
//! no two modules of `src/` importing each other, directly or around a loop (the same
//! check as `scripts/import_loops.py`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}

fn lines(p: &Path) -> usize {
    std::fs::read_to_string(p).unwrap().lines().count()
}

#[test]
fn no_source_file_is_too_long_and_main_is_thin() {
    for f in rust_files(&src()) {
        assert!(lines(&f) <= 800, "{} has {} lines", f.display(), lines(&f));
    }
    let main = src().join("main.rs");
    assert!(lines(&main) < 150, "src/main.rs has {} lines", lines(&main));
    // The CLI is modules of the binary, not files borrowed by path.
    let main_text = std::fs::read_to_string(&main).unwrap();
    assert!(
        !main_text.contains("#[path"),
        "src/main.rs borrows a file by #[path]"
    );
}

/// Whether `code` holds `word` as a word of its own (`tch::`, not `Batch::`).
fn names(code: &str, word: &str) -> bool {
    code.match_indices(word).any(|(i, _)| {
        let before = code[..i].chars().next_back();
        !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Whether `p` (under `src/`) is inside `dir` (relative to `src/`).
fn under(p: &Path, dir: &str) -> bool {
    p.strip_prefix(src()).is_ok_and(|r| r.starts_with(dir))
}

/// Hand-written numerics behind one door, OS calls in one module.
#[test]
fn kernels_and_foreign_calls_stay_behind_their_doors() {
    for f in rust_files(&src()) {
        let code = code(&f);
        let inside_ops = under(&f, "ops");
        for word in ["extern \"C\"", "tch::", "torch_sys", "cpu_conv::"] {
            // os.rs may define a hook the loader calls (`.init_array`), nothing more.
            let os_hook = word == "extern \"C\"" && under(&f, "os.rs");
            assert!(
                inside_ops || os_hook || !names(&code, word),
                "{} names `{word}` outside src/ops/",
                f.display()
            );
        }
        assert!(
            inside_ops || under(&f, "os.rs") || !code.contains("unsafe"),
            "{} has `unsafe` outside src/os.rs and src/ops/",
            f.display()
        );
        assert!(
            inside_ops || under(&f, "os.rs") || !code.contains("libc::"),
            "{} calls libc outside src/os.rs",
            f.display()
        );
    }
}

/// Folders are made in one place (`persist::create_dir_all`), whose error names a link
/// to nowhere on the way; the OS alone says only "File exists".
#[test]
fn folders_are_made_in_one_place() {
    for f in rust_files(&src()) {
        assert!(
            under(&f, "store/atomic.rs") || !code(&f).contains("fs::create_dir_all"),
            "{} calls fs::create_dir_all: use crate::store::atomic::create_dir_all",
            f.display()
        );
    }
}

/// A committed link to a folder of one machine (`runs`) breaks the README's first
/// command on every other machine: a link the repository holds points inside it, at
/// something it holds.
#[test]
fn every_committed_link_points_inside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if !root.join(".git").exists() {
        return; // a source archive: nothing is committed here
    }
    let out = std::process::Command::new("git")
        .args(["ls-files", "-s", "-z"])
        .current_dir(root)
        .output()
        .expect("git runs");
    assert!(out.status.success());
    let listing = String::from_utf8(out.stdout).unwrap();
    let links: Vec<&str> = listing
        .split('\0')
        .filter_map(|e| e.strip_prefix("120000 "))
        .filter_map(|e| e.split_once('\t').map(|(_, path)| path))
        .collect();
    let root = root.canonicalize().unwrap();
    for link in links {
        let to = root.join(link).canonicalize();
        assert!(
            to.as_ref().is_ok_and(|to| to.starts_with(&root)),
            "{link} is a committed link to {:?}, outside the repository or nowhere",
            std::fs::read_link(root.join(link))
        );
    }
}

/// The text of `p` without comments and without its `mod tests` (which may use anything).
fn code(p: &Path) -> String {
    let text = std::fs::read_to_string(p).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names `lib.rs` re-exports at the crate's root (`pub use model::{Ant, ...}`,
/// `internal_use!(pool::PathPos)`), each with the module that defines it: `crate::Ant`
/// is an import of `model`, though the path does not say so.
fn root_reexports(src: &Path) -> BTreeMap<String, String> {
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let mut out = BTreeMap::new();
    let uses = lib.match_indices("use ").chain(lib.match_indices("use!("));
    for (i, word) in uses {
        let rest = &lib[i + word.len()..];
        let end = rest.find([';', ')']).unwrap_or(rest.len());
        let stmt = &rest[..end];
        // Only the crate's own modules (`use store::outputs::stdin_input`), not `$(...)`.
        let module: String = stmt
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if module.is_empty() || !stmt[module.len()..].starts_with("::") {
            continue;
        }
        let items = match stmt.find('{') {
            Some(open) => &stmt[open + 1..stmt.rfind('}').unwrap_or(stmt.len())],
            None => stmt.rsplit("::").next().unwrap(),
        };
        for item in items.split(',') {
            let name = item
                .split_whitespace()
                .last()
                .unwrap_or("")
                .trim_end_matches('}');
            if !name.is_empty() {
                out.insert(name.to_string(), module.clone());
            }
        }
    }
    out
}

/// The top-level modules of `src` (a file or a folder; not lib.rs or main.rs) and the
/// others each one names as `crate::other`, inside a `use crate::{...}`, or through a
/// name the crate's root re-exports (`crate::Ant` is `model`'s).
fn imports_of(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for e in std::fs::read_dir(src).unwrap().flatten() {
        let p = e.path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" || name == "main" {
            continue;
        }
        let fs = if p.is_dir() { rust_files(&p) } else { vec![p] };
        files.entry(name).or_default().extend(fs);
    }
    let names: BTreeSet<String> = files.keys().cloned().collect();
    let reexports = root_reexports(src);
    let mut graph = BTreeMap::new();
    for (m, fs) in &files {
        let mut uses = BTreeSet::new();
        for f in fs {
            let code = code(f);
            let mut named = |rest: &str| {
                let id: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let module = match names.contains(&id) {
                    true => Some(&id),
                    false => reexports.get(&id).filter(|module| names.contains(*module)),
                };
                if let Some(module) = module.filter(|module| *module != m) {
                    uses.insert(module.clone());
                }
            };
            for (i, _) in code.match_indices("crate::") {
                let rest = &code[i + "crate::".len()..];
                if let Some(group) = rest.strip_prefix('{') {
                    let end = group.find("};").unwrap_or(group.len());
                    for item in group[..end].split([',', '{', '\n']) {
                        named(item.trim());
                    }
                } else {
                    named(rest);
                }
            }
        }
        graph.insert(m.clone(), uses);
    }
    graph
}

fn imports() -> BTreeMap<String, BTreeSet<String>> {
    imports_of(&src())
}

/// The modules of `graph` that can reach themselves, each with the path that closes it.
fn loops(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<(String, Vec<String>)> {
    let mut out = vec![];
    for start in graph.keys() {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&String> = graph[start].iter().collect();
        let mut path = vec![];
        while let Some(m) = todo.pop() {
            if m == start {
                out.push((start.clone(), path.clone()));
                break;
            }
            if seen.insert(m.clone()) {
                path.push(m.clone());
                todo.extend(graph[m].iter());
            }
        }
    }
    out
}

/// The loop a re-export hides: the store saving a model through `crate::Ant`, which
/// `model` defines and which itself writes through the store. The check sees it.
#[test]
fn a_loop_through_a_name_the_root_reexports_is_seen() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path();
    std::fs::write(src.join("lib.rs"), "mod model;\nmod store;\npub use model::{Ant, Evaluation};\ninternal_use!(store::Records);\n").unwrap();
    std::fs::write(
        src.join("model.rs"),
        "pub struct Ant;\nfn save() { crate::store::write(); }\n",
    )
    .unwrap();
    std::fs::create_dir(src.join("store")).unwrap();
    let looped = "pub fn save_model(m: &crate::Ant) { m.save() }\n";
    std::fs::write(src.join("store/outputs.rs"), looped).unwrap();
    let graph = imports_of(src);
    assert_eq!(
        graph["store"],
        BTreeSet::from(["model".to_string()]),
        "{graph:?}"
    );
    assert_eq!(loops(&graph).len(), 2, "{graph:?}");
    // Without the call back, no loop.
    std::fs::write(src.join("store/outputs.rs"), "pub fn write() {}\n").unwrap();
    assert!(loops(&imports_of(src)).is_empty());
    assert_eq!(root_reexports(src)["Records"], "store");
}

#[test]
fn no_module_imports_itself_around_a_loop() {
    let graph = imports();
    assert!(
        graph.contains_key("model") && graph.contains_key("train") && graph.contains_key("store"),
        "{graph:?}"
    );
    let loops = loops(&graph);
    assert!(
        loops.is_empty(),
        "modules that import themselves around a loop: {loops:?}; graph: {graph:?}"
    );
}

/// The files of the folder `dir` of `src/` (each file or sub-folder, not `mod.rs`) and
/// the others each one names as `super::other` or `crate::DIR::other`.
fn folder_imports(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let folder = dir.file_name().unwrap().to_string_lossy().into_owned();
    let mut files: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        match p.is_dir() {
            true => files.entry(name).or_default().extend(rust_files(&p)),
            false if name != "mod" && p.extension().is_some_and(|x| x == "rs") => {
                files.entry(name).or_default().push(p)
            }
            false => {}
        }
    }
    let names: BTreeSet<String> = files.keys().cloned().collect();
    let prefixes = ["super::".to_string(), format!("crate::{folder}::")];
    let mut graph = BTreeMap::new();
    for (m, fs) in &files {
        let mut uses = BTreeSet::new();
        for f in fs {
            let code = code(f);
            for prefix in &prefixes {
                for (i, _) in code.match_indices(prefix.as_str()) {
                    let rest = &code[i + prefix.len()..];
                    let group = match rest.strip_prefix('{') {
                        Some(g) => &g[..g.find("};").unwrap_or(g.len())],
                        None => rest,
                    };
                    for item in group.split([',', '{', '\n']) {
                        let id: String = item
                            .trim()
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                            .collect();
                        if names.contains(&id) && id != *m {
                            uses.insert(id);
                        }
                        if rest.starts_with('{').not() {
                            break;
                        }
                    }
                }
            }
        }
        graph.insert(m.clone(), uses);
    }
    graph
}

use std::ops::Not;

/// Within every folder of `src/`, no file imports itself around a loop either (as the
/// table reader's `data/columns.rs`, `csv.rs` and `tabular.rs` could).
#[test]
fn no_file_of_a_folder_imports_itself_around_a_loop() {
    let mut folders = 0;
    for e in std::fs::read_dir(src()).unwrap().flatten() {
        if !e.path().is_dir() {
            continue;
        }
        folders += 1;
        let graph = folder_imports(&e.path());
        for start in graph.keys() {
            let mut seen = BTreeSet::new();
            let mut todo: Vec<&String> = graph[start].iter().collect();
            while let Some(m) = todo.pop() {
                assert!(
                    m != start,
                    "src/{}/{start} imports itself around a loop; graph: {graph:?}",
                    e.file_name().to_string_lossy()
                );
                if seen.insert(m.clone()) {
                    todo.extend(graph[m].iter());
                }
            }
        }
    }
    assert!(folders >= 10, "{folders} folders");
}

/// The guide's source map names every file of `src/` by its whole path (`src/data/csv.rs`),
/// and names no `src/` path that does not exist: a file added, moved or removed is said
/// there.
#[test]
fn the_source_map_names_every_file_of_src() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(root.join("docs/guide/source-map.md")).unwrap();
    let named: BTreeSet<&str> = map
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| w.starts_with("src/"))
        .collect();
    let mut files = vec![];
    let mut todo = vec![src()];
    while let Some(dir) = todo.pop() {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            match e.path().is_dir() {
                true => todo.push(e.path()),
                false => files.push(e.path()),
            }
        }
    }
    let rel = |p: &Path| p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
    let unnamed: Vec<String> = files
        .iter()
        .map(|f| rel(f))
        .filter(|f| !named.contains(f.as_str()))
        .collect();
    assert!(
        unnamed.is_empty(),
        "files of src/ that docs/guide/source-map.md does not name: {unnamed:?}"
    );
    let gone: Vec<&&str> = named.iter().filter(|p| !root.join(p).exists()).collect();
    assert!(
        gone.is_empty(),
        "docs/guide/source-map.md names paths that do not exist: {gone:?}"
    );
    assert!(files.len() > 100, "{} files", files.len());
}
