//! NumPy's files: `.npy` (one array, `np.save`) and `.npz` (several, `np.savez` or
//! `np.savez_compressed`), recognised by their bytes.
//!
//! An `.npz` holds the samples and their labels: `x` and `y` (also `X`, `images`,
//! `data`, `features`, `inputs` and `labels`, `targets`, `target`, `label`), or the
//! layout of Keras' `mnist.npz`, `x_train`, `y_train`, `x_test`, `y_test` (the test
//! arrays are then the test set). Any numeric dtype is read (bools, integers, floats),
//! in C or Fortran order; an object array (pickled Python objects) is refused.
//!
//! The samples' shape says what they are:
//!
//! | shape | read as |
//! |---|---|
//! | `(n, d)` | table rows of `d` features |
//! | `(n, h, w)` | greyscale images |
//! | `(n, h, w, c)`, `c` in 1, 3, 4 | images, channels last (NumPy's, PIL's and Keras' order; a fourth channel, alpha, is dropped) |
//! | `(n, c, h, w)`, `c` in 1, 3, and the last axis not 1, 3 or 4 | images, channels first (PyTorch's order) |
//!
//! An ambiguous shape (`(n, 3, 32, 3)`) is read channels last. Images of bytes
//! (`uint8`) become values in 0..1, as IDX and CIFAR-10 bytes do; other dtypes are
//! taken as they are. Labels of integers or bools are classes (their values, sorted,
//! are the class names); labels of floats are regression targets (`(n,)` or `(n, k)`).

use std::io::{Cursor, Read};
use std::path::Path;

use npyz::{DType, NpyFile, Order, TypeChar};

use super::{Dataset, Targets, Values};
use crate::error::{AntError, Result};

/// Whether `bytes` are an `.npy` file.
pub fn is_npy(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x93NUMPY")
}

/// Whether `bytes` are a zip archive holding at least one `.npy` member.
pub fn is_npz(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04")
        && zip::ZipArchive::new(Cursor::new(bytes))
            .is_ok_and(|z| z.file_names().any(|n| n.is_ok_and(|n| n.ends_with(".npy"))))
}

/// One array read: its shape, its values in C order, and whether it held bytes or
/// integers.
struct Array {
    shape: Vec<usize>,
    values: Vec<f64>,
    kind: Kind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bytes,
    Integers,
    Floats,
}

/// The names of the samples' and the labels' arrays in an `.npz`.
const SAMPLES: [&str; 6] = ["x", "images", "data", "features", "inputs", "samples"];
const LABELS: [&str; 5] = ["y", "labels", "targets", "target", "label"];

/// The arrays of an `.npz` or `.npy` file's `bytes`, by name (`arr_0` for an `.npy`).
fn arrays(bytes: &[u8], path: &Path) -> Result<Vec<(String, Array)>> {
    if is_npy(bytes) {
        return Ok(vec![(
            "arr_0".to_string(),
            parse(bytes, path, "the array")?,
        )]);
    }
    let bad = |e: zip::result::ZipError| {
        AntError::data(path, format!("is not a readable .npz archive ({e})"))
    };
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(bad)?;
    let mut out = vec![];
    for i in 0..zip.len() {
        let mut member = zip.by_index(i).map_err(bad)?;
        let name = member.name().map_err(bad)?.into_owned();
        let Some(name) = name.strip_suffix(".npy").map(str::to_string) else {
            continue;
        };
        crate::os::check_file_fits(member.size(), path, "an array of the .npz")?;
        let mut data = Vec::with_capacity(member.size() as usize);
        member
            .read_to_end(&mut data)
            .map_err(|e| AntError::io(path, e))?;
        let array = parse(&data, path, &format!("array {name}"))?;
        out.push((name, array));
    }
    Ok(out)
}

/// Parses one `.npy` array (`what` names it in errors).
fn parse(bytes: &[u8], path: &Path, what: &str) -> Result<Array> {
    let err = |why: &str| AntError::data(path, format!("{what}: {why}"));
    if header_text(bytes).contains("'|O'") {
        return Err(err("an object array (pickled Python objects), which is not numbers: save a numeric array (np.asarray(a, dtype=float))"));
    }
    let npy = NpyFile::new(bytes).map_err(|e| err(&format!("not a readable .npy array ({e})")))?;
    let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
    let order = npy.order();
    let DType::Plain(t) = npy.dtype() else {
        return Err(err("a structured array (named fields): save a plain numeric array"));
    };
    // A header may claim any shape: a product past u64 is refused, not wrapped.
    let n = npy.shape().iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    let Some(n) = n else {
        return Err(err(&format!("its shape {shape:?} holds more values than memory can")));
    };
    crate::os::check_file_fits(n.saturating_mul(8), path, "its values as numbers")?;
    let Some(read) = values_of(npy, &t) else {
        return Err(err(&format!("of dtype {t}, which is not a number ant reads (bool, integers, float32, float64)")));
    };
    let (values, kind) = read.map_err(|e| err(&format!("cut short or damaged ({e})")))?;
    let values = match order {
        Order::C => values,
        Order::Fortran => c_order(&values, &shape),
    };
    Ok(Array { shape, values, kind })
}

/// The values of `npy`, of the dtype `t`, as f64 and their kind; `None` for a dtype
/// that is not a number read here.
fn values_of(npy: NpyFile<&[u8]>, t: &npyz::TypeStr) -> Option<std::io::Result<(Vec<f64>, Kind)>> {
    fn read<T: npyz::Deserialize>(npy: NpyFile<&[u8]>, to: impl Fn(T) -> f64) -> std::io::Result<Vec<f64>> {
        Ok(npy.into_vec::<T>()?.into_iter().map(to).collect())
    }
    let kind = match t.type_char() {
        TypeChar::Uint if t.size_field() == 1 => Kind::Bytes,
        TypeChar::Float => Kind::Floats,
        _ => Kind::Integers,
    };
    let values = match (t.type_char(), t.size_field()) {
        (TypeChar::Uint, 1) => read(npy, <f64 as From<u8>>::from),
        (TypeChar::Bool, 1) => read(npy, |b: bool| f64::from(u8::from(b))),
        (TypeChar::Uint, 2) => read(npy, <f64 as From<u16>>::from),
        (TypeChar::Uint, 4) => read(npy, <f64 as From<u32>>::from),
        (TypeChar::Uint, 8) => read(npy, |v: u64| v as f64),
        (TypeChar::Int, 1) => read(npy, <f64 as From<i8>>::from),
        (TypeChar::Int, 2) => read(npy, <f64 as From<i16>>::from),
        (TypeChar::Int, 4) => read(npy, <f64 as From<i32>>::from),
        (TypeChar::Int, 8) => read(npy, |v: i64| v as f64),
        (TypeChar::Float, 4) => read(npy, <f64 as From<f32>>::from),
        (TypeChar::Float, 8) => read(npy, |v: f64| v),
        _ => return None,
    };
    Some(values.map(|v| (v, kind)))
}

/// The header's text of an `.npy` file (its dtype, even where the parser refuses it).
fn header_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(256)]).into_owned()
}

/// Values stored in Fortran order (first axis fastest) in C order (last axis fastest).
fn c_order(values: &[f64], shape: &[usize]) -> Vec<f64> {
    let mut out = Vec::with_capacity(values.len());
    let mut index = vec![0usize; shape.len()];
    for _ in 0..values.len() {
        let mut at = 0;
        let mut stride = 1;
        for (k, &i) in index.iter().enumerate() {
            at += i * stride;
            stride *= shape[k];
        }
        out.push(values[at]);
        for k in (0..shape.len()).rev() {
            index[k] += 1;
            if index[k] < shape[k] {
                break;
            }
            index[k] = 0;
        }
    }
    out
}

/// The samples and labels of a NumPy file: training ones, and the test ones of a
/// Keras-style `.npz` (`x_test`, `y_test`).
pub struct NumpyData {
    pub train: Dataset,
    pub test: Option<Dataset>,
    pub class_names: Option<Vec<String>>,
}

/// Reads a NumPy file with its labels (`train`, `eval`).
pub fn load_labelled(bytes: &[u8], path: &Path) -> Result<NumpyData> {
    if is_npy(bytes) {
        let msg = "is a .npy file: one array, with no labels; save the samples and their labels together (np.savez('data.npz', x=x, y=y))";
        return Err(AntError::data(path, msg));
    }
    let mut arrays = arrays(bytes, path)?;
    let mut take = |names: &[&str], suffix: &str| {
        let at = arrays.iter().position(|(n, _)| {
            let n = n.to_ascii_lowercase();
            names.iter().any(|want| n == format!("{want}{suffix}"))
        })?;
        Some(arrays.remove(at))
    };
    let (x_train, y_train) = (take(&SAMPLES, "_train"), take(&LABELS, "_train"));
    let (x_test, y_test) = (take(&SAMPLES, "_test"), take(&LABELS, "_test"));
    let (x, y) = match (x_train, y_train) {
        (Some(x), Some(y)) => (x, y),
        _ => match (take(&SAMPLES, ""), take(&LABELS, "")) {
            (Some(x), Some(y)) => (x, y),
            (x, _) => {
                let names: Vec<String> = arrays
                    .iter()
                    .map(|(n, _)| n.clone())
                    .chain(x.map(|(n, _)| n))
                    .collect();
                let msg = format!(
                    "holds no labels beside its samples (arrays: {}): save them as y (np.savez('data.npz', x=x, y=y))",
                    names.join(", ")
                );
                return Err(AntError::data(path, msg));
            }
        },
    };
    let labels: Vec<&Array> = std::iter::once(&y.1)
        .chain(y_test.as_ref().map(|(_, a)| a))
        .collect();
    let classes = class_values(&labels);
    let train = dataset(&x, &y, classes.as_deref(), path)?;
    let test = match (x_test, y_test) {
        (Some(x), Some(y)) => Some(dataset(&x, &y, classes.as_deref(), path)?),
        (None, None) => None,
        (Some((n, _)), None) | (None, Some((n, _))) => {
            let msg = format!("holds {n} without its partner (x_test and y_test go together)");
            return Err(AntError::data(path, msg));
        }
    };
    if let Some(test) = &test {
        check_test_fits(&train, test, path)?;
    }
    let class_names = classes.map(|c| c.iter().map(|v| number_text(*v)).collect());
    Ok(NumpyData {
        train,
        test,
        class_names,
    })
}

/// The samples of a NumPy file without labels (`predict`): its one array, or an
/// `.npz`'s samples (`x`, else `x_test`).
pub fn load_samples(bytes: &[u8], path: &Path) -> Result<Dataset> {
    let mut arrays = arrays(bytes, path)?;
    let at = match arrays.len() {
        1 => Some(0),
        _ => ["", "_test"].iter().find_map(|suffix| {
            arrays.iter().position(|(n, _)| {
                SAMPLES
                    .iter()
                    .any(|s| n.to_ascii_lowercase() == format!("{s}{suffix}"))
            })
        }),
    };
    let Some(at) = at else {
        return Err(AntError::data(path, "holds no samples array (x)"));
    };
    let (name, x) = arrays.remove(at);
    let (values, shape) = samples(&x, path, &name)?;
    let n = x.shape.first().copied().unwrap_or(0);
    let targets = Targets::Values {
        values: vec![0.0; n],
        dim: 1,
    };
    Dataset::of_values(values, shape, targets)
}

/// The sorted distinct values of integer labels, when the labels are integers.
fn class_values(labels: &[&Array]) -> Option<Vec<f64>> {
    if labels.iter().any(|a| a.kind == Kind::Floats) {
        return None;
    }
    let mut v: Vec<f64> = labels
        .iter()
        .flat_map(|a| a.values.iter().copied())
        .collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    Some(v)
}

/// An integer label's text: `7`, not `7.0`.
fn number_text(v: f64) -> String {
    format!("{v}")
}

/// A data set of the samples `x` and labels `y` (classes by their place in `classes`).
fn dataset(
    (xn, x): &(String, Array),
    (yn, y): &(String, Array),
    classes: Option<&[f64]>,
    path: &Path,
) -> Result<Dataset> {
    let n = x.shape.first().copied().unwrap_or(0);
    let classes_of_columns = classes.is_some() && y.shape.len() == 2 && y.shape[1] != 1;
    if y.shape.first().copied().unwrap_or(0) != n || y.shape.len() > 2 || classes_of_columns {
        let msg = format!(
            "{yn} has shape {:?}, but {xn} holds {n} samples: the labels must be one per sample, shape ({n},)",
            y.shape
        );
        return Err(AntError::data(path, msg));
    }
    let (values, shape) = samples(x, path, xn)?;
    let targets = match classes {
        Some(c) => Targets::Classes {
            labels: y
                .values
                .iter()
                .map(|v| c.partition_point(|k| k < v) as u32)
                .collect(),
            n_classes: c.len(),
        },
        None => Targets::Values {
            values: y.values.iter().map(|&v| v as f32).collect(),
            dim: y.shape.get(1).copied().unwrap_or(1),
        },
    };
    Dataset::of_values(values, shape, targets)
}

/// Refuses Keras-style test arrays that do not fit the training ones: samples of
/// another shape, or classes no training sample has.
fn check_test_fits(train: &Dataset, test: &Dataset, path: &Path) -> Result<()> {
    if test.sample_shape != train.sample_shape {
        let msg = format!(
            "x_test's samples are of shape {:?}, but x_train's are {:?}",
            test.sample_shape, train.sample_shape
        );
        return Err(AntError::data(path, msg));
    }
    match (&train.targets, &test.targets) {
        (Targets::Classes { labels: a, .. }, Targets::Classes { labels: b, .. }) => {
            super::check_test_classes(a, b, path)
        }
        _ => Ok(()),
    }
}

/// The samples of `x` in the modules' layout (images channels first), and their shape:
/// images of bytes as bytes, everything else as f32 values.
fn samples(x: &Array, path: &Path, name: &str) -> Result<(Values, Vec<usize>)> {
    if x.shape.len() > 1 && x.shape[1..].contains(&0) {
        let msg = format!("{name} has shape {:?}: its samples hold no values", x.shape);
        return Err(AntError::data(path, msg));
    }
    if x.kind == Kind::Bytes && x.shape.len() > 2 {
        let (v, shape) = laid_out(x, path, name, |f| f as u8)?;
        return Ok((Values::Bytes(v), shape));
    }
    let (v, shape) = laid_out(x, path, name, |f| f as f32)?;
    Ok((Values::F32(v), shape))
}

/// [`samples`]' layout, each value made by `v`.
fn laid_out<T>(
    x: &Array,
    path: &Path,
    name: &str,
    v: impl Fn(f64) -> T,
) -> Result<(Vec<T>, Vec<usize>)> {
    match x.shape[..] {
        [_, d] => Ok((x.values.iter().map(|&f| v(f)).collect(), vec![d])),
        [_, h, w] => Ok((x.values.iter().map(|&f| v(f)).collect(), vec![1, h, w])),
        [_, c, h, w] if ![1, 3, 4].contains(&w) && [1, 3].contains(&c) => {
            Ok((x.values.iter().map(|&f| v(f)).collect(), vec![c, h, w]))
        }
        [n, h, w, c] if [1, 3, 4].contains(&c) => {
            let kept = c.min(3);
            let mut out = Vec::with_capacity(n * kept * h * w);
            for s in x.values.chunks(h * w * c) {
                for ch in 0..kept {
                    out.extend(s.iter().skip(ch).step_by(c).map(|&f| v(f)));
                }
            }
            Ok((out, vec![kept, h, w]))
        }
        _ => {
            let msg = format!(
                "{name} has shape {:?}: samples are (n, d) rows or (n, h, w), (n, h, w, c), (n, c, h, w) images",
                x.shape
            );
            Err(AntError::data(path, msg))
        }
    }
}
