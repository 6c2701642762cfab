//! The rows a saved model was trained and tested on, rebuilt from its provenance: the
//! test rows every command scores it on, and the validation rows pruning decides on.

use std::path::Path;

use super::Ant;
use crate::data::Dataset;
use crate::data::source::{load_source, load_test_rows, load_training_rows};
use crate::data::split::TestSplit;
use crate::error::{AntError, Result};

impl Ant {
    /// `data` (as `crate::data::check_compatible` checks it) or an error naming `path`.
    pub fn check_fits_file(&self, data: &Dataset, path: &Path, with_targets: bool) -> Result<()> {
        let input = self.tree().topology.input;
        crate::data::check_compatible(data, input, self.task(), with_targets)
            .map_err(|m| m.in_file(path))
    }

    /// The test rows of the data at `path` that this model is scored on, chosen as in
    /// its training (the data's own test files, or its recorded seeded fraction), read
    /// as it read its data and checked to fit it; with a warning for the caller to show
    /// when those rows cannot be the ones it was tested on.
    pub fn test_rows(&self, path: &Path) -> Result<(Dataset, Option<String>)> {
        let m = self.meta();
        let p = &m.provenance;
        let names = m.class_names.as_deref();
        if let Some(e) = self.no_table_layout(path) {
            return Err(e);
        }
        let trained = |train: &Dataset| self.are_its_training_rows(train);
        let (test, warning) = load_test_rows(
            path,
            &p.test_split,
            p.target.as_ref(),
            p.image_size,
            names,
            &trained,
        )
        .map_err(|e| self.not_its_kind_of_data(path).unwrap_or(e))?;
        self.check_fits_file(&test, path, true)?;
        let warning = match warning {
            // Every row of another file is scored: say how many were trained on.
            Some(other) => Some(match self.trained_share(&test) {
                Some(share) => format!(
                    "{other}; about {:.0}% of them are rows the model was trained on",
                    100.0 * share
                ),
                None => other,
            }),
            None => self.trained_on_warning(&test, path),
        };
        Ok((test, warning))
    }

    /// Whether `train`, the rows a seeded split of its file left for training (before its
    /// train limit and member order), are those this model was trained on, by their
    /// checksum; `None` for a model that recorded none.
    fn are_its_training_rows(&self, train: &Dataset) -> Option<bool> {
        let p = &self.meta().provenance;
        let sum = p.train_checksum.as_ref()?;
        let mut rows = std::borrow::Cow::Borrowed(train);
        if let Some(n) = p.train_limit {
            rows = std::borrow::Cow::Owned(rows.first_for_training_copied(n));
        }
        if let Some(m) = p.member {
            rows = std::borrow::Cow::Owned(m.rows(&rows));
        }
        Some(rows.checksum() == *sum)
    }

    /// A warning when `test` (read from `path`) is exactly the rows this model was
    /// trained on (its training and validation rows): scores on them say nothing of new
    /// data. Asked only of models tested on a file of their own or fitted through the
    /// library: a held-out fraction and a data set's test files are other rows by
    /// construction, and a checksum of them would cost a pass over every test value.
    fn trained_on_warning(&self, test: &Dataset, path: &Path) -> Option<String> {
        let p = &self.meta().provenance;
        if !matches!(p.test_split, TestSplit::File { .. } | TestSplit::Unknown) {
            return None;
        }
        let trained = p.train_checksum.as_ref()?;
        let same = match (&p.train_row_set, p.member) {
            // The rows in any order (a model that records their set).
            (Some(set), _) => test.row_set_checksum() == *set,
            // A member's checksum is of the rows in its own order.
            (None, Some(m)) => m.rows(test).checksum() == *trained,
            (None, None) => test.checksum() == *trained,
        };
        if same {
            return Some(crate::data::source::trained_rows_warning(path, trained));
        }
        let share = self.trained_share(test)?;
        Some(crate::data::source::trained_share_warning(path, share))
    }

    /// The share of `test`'s rows that are this model's training rows, when it is a
    /// fifth or more (49 of 50 training rows, or a whole file most of which was trained
    /// on, is said too). Estimated from the model's sketch of them.
    fn trained_share(&self, test: &Dataset) -> Option<f64> {
        let sketch = self.meta().provenance.train_row_sketch.as_deref()?;
        let share = crate::data::row_sketch::share_trained(sketch, test)?;
        (share >= crate::data::source::TRAINED_SHARE).then_some(share)
    }

    /// Why `path` cannot hold this model's kind of input, when it plainly cannot: images
    /// for a model of table rows, or a table for a model of images. Said before a
    /// reader's own error, which would judge the file by another format's rules.
    pub(crate) fn not_its_kind_of_data(&self, path: &Path) -> Option<AntError> {
        use crate::spec::Shape;
        let input = self.tree().topology.input;
        let crate::data::detect::Holds { found, images } = crate::data::detect::holds(path)?;
        let wants = match input {
            Shape::Image { c, h, w } if !images => {
                format!("{c}x{h}x{w} images (an IDX or CIFAR-10 directory)")
            }
            Shape::Flat { d } if images => {
                format!("rows of {d} numeric features: give a table file")
            }
            _ => return None,
        };
        let msg = format!(
            "{found}, and the model (preset {}, trained on {}) reads {wants}",
            self.meta().preset,
            self.meta().provenance.data
        );
        Some(AntError::data(path, msg))
    }

    /// Why no file can hold this model's test rows, when none can: a model fitted through
    /// the library (Python) on rows with several outputs records no table layout (a
    /// table's target is one column), and only SARCOS's files (21 features, 7 outputs)
    /// are read without one.
    fn no_table_layout(&self, path: &Path) -> Option<AntError> {
        let p = &self.meta().provenance;
        let library = p.target.is_none() && matches!(p.test_split, TestSplit::Unknown);
        let crate::spec::Shape::Flat { d } = self.tree().topology.input else {
            return None;
        };
        let crate::task::Task::Regression { dim } = self.task() else {
            return None;
        };
        if !library || dim == 1 || crate::data::sarcos::is_sarcos_layout(d, dim) {
            return None;
        }
        let msg = format!(
            "the model was fitted through the library on rows of {d} features and {dim} outputs, a layout no table records (a table's target is one column): score it where it was fitted (Python: model.score)"
        );
        Some(AntError::data(path, msg))
    }

    /// The validation and test rows this model was trained with, rebuilt from its
    /// provenance and the data at `path`; an error when that is not the data it was
    /// trained on (its checksum or row counts differ). A model tested on a file of its
    /// own is tested on `test_data` when given, else on the file it records; when that
    /// cannot be read (moved, or a pipe of the training command), there are no test
    /// rows and the warning says so. A model fitted through the library has none either.
    pub fn recorded_rows(&self, path: &Path, test_data: Option<&Path>) -> Result<RecordedRows> {
        let prov = &self.meta().provenance;
        let target = prov.target.as_ref();
        let size = prov.image_size;
        let mut warning = None;
        let both = |s: crate::data::source::Source| (s.train, Some(s.test));
        let (mut train, test) = match (&prov.test_split, test_data) {
            (TestSplit::File { path: recorded }, given) => {
                let test = given.unwrap_or(Path::new(recorded));
                match unreadable(test).filter(|_| given.is_none()) {
                    None => {
                        let (train, rows) =
                            both(load_source(path, Some(test), 0.2, 0, target, size)?);
                        let share = rows.as_ref().and_then(|t| self.trained_share(t));
                        warning =
                            share.map(|s| crate::data::source::trained_share_warning(test, s));
                        (train, rows)
                    }
                    Some(why) => {
                        warning = Some(format!(
                            "{}: the model's test file {why}: no test scores; give --test-data to score it",
                            test.display()
                        ));
                        (load_training_rows(path, target, size)?, None)
                    }
                }
            }
            (split, Some(given)) => return Err(not_its_test_file(split, given)),
            (TestSplit::Fraction { fraction, seed, .. }, None) => {
                both(load_source(path, None, *fraction, *seed, target, size)?)
            }
            (TestSplit::Files, None) => {
                let seed = self.meta().config.seed;
                both(load_source(path, None, 0.2, seed, target, size)?)
            }
            (TestSplit::Unknown, None) => {
                let valid = self.library_rows(path)?;
                return Ok(RecordedRows {
                    valid,
                    test: None,
                    warning,
                });
            }
        };
        if let Some(n) = prov.train_limit {
            train = train.first_for_training(n);
        }
        if let Some(m) = prov.member {
            // An ensemble member validated on rows taken in its own order.
            train = m.rows(&train);
        }
        // The test rows came from the same read (a pipe can be read once): the training
        // rows' checksum shows the data is the model's, so its split is the model's.
        let valid = self.valid_rows_of(&train, path)?;
        Ok(RecordedRows {
            valid,
            test,
            warning,
        })
    }

    /// The validation rows of a model fitted through the library (Python): `path` must
    /// hold every row it was fitted on, the features then the target as `ant eval`
    /// reads a table for it, and nothing else.
    fn library_rows(&self, path: &Path) -> Result<Dataset> {
        if let Some(e) = self.no_table_layout(path) {
            return Err(e);
        }
        let p = &self.meta().provenance;
        let names = self.meta().class_names.as_deref();
        let (mut rows, _) =
            load_test_rows(path, &p.test_split, p.target.as_ref(), None, names, &|_| {
                None
            })
            .map_err(|e| self.not_its_kind_of_data(path).unwrap_or(e))?;
        self.check_fits_file(&rows, path, true)?;
        if let Some(m) = p.member {
            rows = m.rows(&rows);
        }
        self.valid_rows_of(&rows, path)
    }

    /// The validation rows the model took from `train` (its training and validation
    /// rows, read from `path`), or an error when they cannot be those it was trained on:
    /// their checksum or count differs, or no checksum was recorded.
    fn valid_rows_of(&self, train: &Dataset, path: &Path) -> Result<Dataset> {
        let prov = &self.meta().provenance;
        let other = |why: String| {
            let msg = format!(
                "not the data the model was trained on ({why}): its validation rows cannot be rebuilt"
            );
            AntError::data(path, msg)
        };
        match &prov.train_checksum {
            Some(sum) if train.checksum() != *sum => {
                return Err(other(format!(
                    "the checksum of its training rows is not {sum}"
                )));
            }
            None if matches!(prov.test_split, TestSplit::Unknown) => {
                return Err(other(
                    "the model records no checksum of its rows".to_string(),
                ));
            }
            _ => {}
        }
        let (_, valid) = self.meta().valid_split().apply(train);
        if valid.len() != prov.n_valid {
            let why = format!(
                "{} validation rows, the model had {}",
                valid.len(),
                prov.n_valid
            );
            return Err(other(why));
        }
        Ok(valid)
    }
}

/// The rows [`Ant::recorded_rows`] rebuilds: validation rows, and test rows where they
/// can be read (`warning` says why not, when a test file could not be).
pub struct RecordedRows {
    pub valid: Dataset,
    pub test: Option<Dataset>,
    pub warning: Option<String>,
}

/// Why a recorded test file cannot be read now: missing, or not a file nor a folder (a
/// pipe such as `/dev/fd/62` lives as long as the command that made it).
fn unreadable(path: &Path) -> Option<String> {
    match std::fs::metadata(path) {
        Err(e) => Some(format!("cannot be read ({e})")),
        Ok(m) if m.is_file() || m.is_dir() => None,
        Ok(_) => Some("is no file nor folder (a pipe of the training command?)".into()),
    }
}

/// `--test-data` for a model whose test rows are not a file of their own.
fn not_its_test_file(split: &TestSplit, given: &Path) -> AntError {
    let rows = match split {
        TestSplit::Fraction { .. } => "a held-out fraction of --data",
        TestSplit::Files => "the data's own test files",
        _ => "none (it was fitted through the library)",
    };
    let msg = format!("--test-data: this model's test rows are {rows}: leave it out");
    AntError::data(given, msg)
}
