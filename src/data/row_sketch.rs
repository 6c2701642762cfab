//! Which rows of a file are rows a model was trained on, when they are not all of them:
//! each row's MD5 (its inputs and target), and a model's record of its training rows as
//! the 256 smallest of theirs (a bottom-k sketch, 4 KB in `tree.json` whatever the
//! rows), from which the share of a file's rows among them is estimated.

use super::{Dataset, Targets};

/// How many row hashes a sketch keeps.
const KEEP: usize = 256;

/// Each row's MD5, of its inputs and target as f32 / u32 bytes.
pub(crate) fn row_digests(d: &Dataset) -> Vec<u128> {
    use md5::{Digest, Md5};
    let mut bytes = Vec::with_capacity(4 * (d.sample_len() + 1));
    (0..d.len())
        .map(|i| {
            bytes.clear();
            d.sample(i).iter().for_each(|v| bytes.extend_from_slice(&v.to_le_bytes()));
            match &d.targets {
                Targets::Classes { labels, .. } => bytes.extend_from_slice(&labels[i].to_le_bytes()),
                Targets::Values { values, dim } => values[i * dim..(i + 1) * dim]
                    .iter()
                    .for_each(|v| bytes.extend_from_slice(&v.to_le_bytes())),
            }
            u128::from_le_bytes(Md5::digest(&bytes).into())
        })
        .collect()
}

/// The `KEEP` smallest distinct 64-bit row hashes of `digests`, ascending.
fn smallest(digests: &[u128]) -> Vec<u64> {
    let mut h: Vec<u64> = digests.iter().map(|&d| d as u64).collect();
    h.sort_unstable();
    h.dedup();
    h.truncate(KEEP);
    h
}

/// A training set's sketch as `tree.json` keeps it: its row count, then its smallest
/// row hashes in hexadecimal.
#[cfg(test)]
pub(crate) fn sketch(d: &Dataset) -> String {
    sketch_of(&row_digests(d))
}

/// [`sketch`] from the rows' digests already computed.
pub(crate) fn sketch_of(digests: &[u128]) -> String {
    let hashes: String = smallest(digests).iter().map(|h| format!("{h:016x}")).collect();
    format!("{} {hashes}", digests.len())
}

/// The estimated share of `test`'s distinct rows that are rows of the training set
/// `sketch` describes; `None` for a sketch that cannot be read, or when no row of
/// `test` falls in its range. A row whose hash is at most the sketch's largest would be
/// in the sketch if it were a training row, so the share among those rows is the share
/// (exact when the sketch holds every training row).
pub(crate) fn share_trained(sketch: &str, test: &Dataset) -> Option<f64> {
    let (_, hex) = sketch.split_once(' ')?;
    let trained: Vec<u64> = (0..hex.len() / 16)
        .map(|i| u64::from_str_radix(hex.get(16 * i..16 * i + 16)?, 16).ok())
        .collect::<Option<_>>()?;
    let bound = match trained.len() {
        KEEP => *trained.last()?,
        _ => u64::MAX,
    };
    let mut tested: Vec<u64> = row_digests(test).iter().map(|&d| d as u64).collect();
    tested.sort_unstable();
    tested.dedup();
    let judged: Vec<u64> = tested.into_iter().take_while(|&h| h <= bound).collect();
    let found = judged.iter().filter(|h| trained.binary_search(h).is_ok()).count();
    (!judged.is_empty()).then(|| found as f64 / judged.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(range: std::ops::Range<usize>) -> Dataset {
        let x = range.clone().flat_map(|i| [i as f32, (i * 7 % 13) as f32]).collect();
        let labels = range.map(|i| (i % 3) as u32).collect();
        Dataset::new(x, vec![2], Targets::Classes { labels, n_classes: 3 }).unwrap()
    }

    #[test]
    fn the_share_of_trained_rows_is_estimated() {
        let train = rows(0..2000);
        let s = sketch(&train);
        let near = |test: Dataset, want: f64| {
            let got = share_trained(&s, &test).unwrap();
            assert!((got - want).abs() < 0.12, "{got} against {want}");
        };
        near(rows(0..2000), 1.0);
        near(rows(0..1000), 1.0);
        near(rows(1000..3000), 0.5);
        near(rows(5000..7000), 0.0);
        assert_eq!(share_trained("x", &train), None);
        // A sketch of every row (fewer than it keeps) is exact.
        let small = sketch(&rows(0..50));
        assert_eq!(share_trained(&small, &rows(1..50)), Some(1.0));
        assert_eq!(share_trained(&small, &rows(25..75)), Some(0.5));
    }
}
