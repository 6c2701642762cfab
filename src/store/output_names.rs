//! The rules for an output's name: when a name is only an ending, and when its ending
//! names another kind of file than the one a command writes. The output door
//! ([`super::outputs`]) applies them; `predict` and `plot` ask [`only_an_ending`] when
//! they choose a format by the ending.
//!
//! | rule | why | example |
//! |---|---|---|
//! | a name that is a dot and one ending of the output's kind, or of a common format, names no file | a hidden file without an ending to the system, and surely a name left out | `--out .onnx`, `--out .csv` for ONNX: refused, give `NAME.onnx` |
//! | a hidden name of another word is a name | `.antmodel` is a plain hidden file | `--out .antmodel` for ONNX: written |
//! | an ending names a kind of file only when it is a word (letters, or letters and digits) | names end in numbers, versions and units as often as in formats | `tree-min-reach-0.05`, `ant-v1.2`, `lr-1.5e3`, `tree.2024-06`, `width-0.5x`: no kind |
//! | an ending that starts with a digit names a kind only when it is a known format | `.7z` and `.3gp` are formats, `v2.0rc1` is a version | `backup2.7z`: a 7z archive |
//! | an output whose name ends as another kind of file does is refused, new or existing | `--out data.csv` of an ONNX export would turn a table into a model; a PNG under an SVG's name is refused the second time | `plot --out t.svg --format png`: refused |
//! | endings compare in any case | file systems keep the case a user typed | `T.SVG` is an SVG |

use std::path::Path;

/// Endings of common formats: a name that is only one of these names no file, whatever
/// the output's kind (`--out .csv` for an ONNX export).
const COMMON_ENDINGS: [&str; 16] = [
    "csv", "tsv", "txt", "json", "jsonl", "onnx", "svg", "png", "dot", "gv", "pdf", "jpg", "html",
    "gz", "zip", "mat",
];

/// Formats whose ending starts with a digit: any other such ending is a number with a
/// unit or a version (`width-0.5x`, `v2.0rc1`).
const DIGIT_FIRST: [&str; 5] = ["7z", "3gp", "3g2", "3ds", "3mf"];

/// `.dot` for a path whose file name is only an ending (`.dot`, `out/.csv`): a hidden
/// file's name to the system, which has no ending, and surely a name left out.
pub(crate) fn only_an_ending(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let rest = name.strip_prefix('.')?;
    (!rest.is_empty() && !rest.contains('.') && path.extension().is_none())
        .then(|| name.to_string())
}

/// The ending `out` is alone, when it is one of `endings` (the output's kind, lower
/// case) or a common format's: such a name names no file.
pub(crate) fn names_only_an_ending(out: &Path, endings: &[&str]) -> Option<String> {
    let ending = only_an_ending(out)?;
    let kind = ending[1..].to_ascii_lowercase();
    (endings.contains(&kind.as_str()) || COMMON_ENDINGS.contains(&kind.as_str())).then_some(ending)
}

/// The ending of `target` (lower case) when it names a kind of file that is not one of
/// `endings`: writing the output there would put one kind of file under another's name.
pub(crate) fn another_kinds_ending(target: &Path, endings: &[&str]) -> Option<String> {
    let ending = target.extension()?.to_string_lossy().to_ascii_lowercase();
    (names_a_kind(&ending) && !endings.contains(&ending.as_str())).then_some(ending)
}

/// Whether a name's ending (after its last dot) names a kind of file. Only a word does:
/// `tree-min-reach-0.05`, `ant-v1.2`, `lr-1.5e3` or `tree.2024-06` end in a number, not a
/// format, while `.7z` and `.3gp` are formats.
pub(crate) fn names_a_kind(ending: &str) -> bool {
    let word = ending.chars().any(|c| c.is_ascii_alphabetic())
        && ending.chars().all(|c| c.is_ascii_alphanumeric());
    match ending.starts_with(|c: char| c.is_ascii_digit()) {
        true => DIGIT_FIRST.contains(&ending.to_ascii_lowercase().as_str()),
        false => word,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name, the output's endings, the ending it is refused as alone, and the other
    /// kind's ending it is refused for.
    type Row<'a> = (&'a str, &'a [&'a str], Option<&'a str>, Option<&'a str>);

    /// One row per rule of the module's table, and the names each must let through.
    #[test]
    fn each_rule_of_the_table_holds_and_raises_no_false_alarm() {
        let onnx: &[&str] = &["onnx"];
        let svg: &[&str] = &["svg"];
        let rows: [Row; 18] = [
            (".onnx", onnx, Some(".onnx"), None),
            ("out/.ONNX", onnx, Some(".ONNX"), None),
            (".csv", onnx, Some(".csv"), None),
            (".antmodel", onnx, None, None),
            ("tree-min-reach-0.05", onnx, None, None),
            ("ant-v1.2", onnx, None, None),
            ("lr-1.5e3", onnx, None, None),
            ("tree.2024-06", onnx, None, None),
            ("width-0.5x", onnx, None, None),
            ("v2.0rc1", onnx, None, None),
            ("backup2.7z", onnx, None, Some("7z")),
            ("clip.3GP", onnx, None, Some("3gp")),
            ("data.csv", onnx, None, Some("csv")),
            ("t.png", svg, None, Some("png")),
            ("T.SVG", svg, None, None),
            ("model.onnx", onnx, None, None),
            ("model", onnx, None, None),
            ("a.tar-gz", onnx, None, None),
        ];
        for (name, endings, only, other) in rows {
            let p = Path::new(name);
            assert_eq!(
                names_only_an_ending(p, endings).as_deref(),
                only,
                "{name}: only an ending"
            );
            assert_eq!(
                another_kinds_ending(p, endings).as_deref(),
                other,
                "{name}: another kind"
            );
        }
    }

    #[test]
    fn only_a_word_ending_names_a_kind() {
        for kind in ["svg", "CSV", "7z", "3GP", "mp4", "nan"] {
            assert!(names_a_kind(kind), "{kind}");
        }
        // Numbers, with a unit or as a version: `width-0.5x`, `v2.0rc1`.
        for number in [
            "05", "2", "1e5", "5e3", "2024-06", "tar-gz", "", "5x", "5b", "0rc1",
        ] {
            assert!(!names_a_kind(number), "{number}");
        }
    }
}
