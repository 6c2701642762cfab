//! The crate-wide error type.

use std::path::PathBuf;

#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum AntError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A data file is malformed: names the file and the problem.
    #[error("{path}: {msg}")]
    Data { path: PathBuf, msg: String },
    /// A parameter or argument is out of range or inconsistent; `name` is the parameter
    /// to blame (as named in [`crate::params::AntParams`]), when there is one.
    #[error("invalid parameter: {}{reason}", .name.map(|n| format!("{n} ")).unwrap_or_default())]
    InvalidParam {
        name: Option<&'static str>,
        reason: String,
    },
    /// Training produced no finite score (e.g. a learning rate far too large, or
    /// regression targets so large that their squared errors overflow).
    #[error(
        "training diverged: the validation NLL is {valid_nll} and the validation error or MSE {valid_metric}, and both must be finite; try a smaller learning rate, or rescale very large targets"
    )]
    Diverged { valid_nll: f64, valid_metric: f64 },
    /// A download failed: the server, the connection or the file it sent.
    #[error("{url}: {reason}")]
    Download { url: String, reason: String },
    #[error("model: {0}")]
    Model(String),
    /// A compute device cannot be used: not in this build, or not on this machine.
    #[error("device {device}: {reason}")]
    Device { device: String, reason: String },
    /// A run stopped by an error (such as a failed write) after it had saved checkpoints
    /// in `dir`, which are kept: it continues with `ant train --resume`.
    #[error(
        "{source} (the run stopped; its checkpoints are kept: continue it with `ant train --resume {}` once this is fixed)",
        dir.display()
    )]
    Stopped {
        dir: PathBuf,
        #[source]
        source: Box<AntError>,
    },
    /// Training was stopped by its observer ([`crate::observe::Observer::should_stop`]).
    #[error("training interrupted")]
    Interrupted,
    /// The model's prediction for some samples is not finite (inputs or weights beyond
    /// what its f32 arithmetic holds): no class or value is made of it. `samples` are
    /// their indices (from 0), as ranges.
    #[error(
        "the model's prediction is not finite for {count} sample{} ({samples}, counted from 0): its inputs or weights are beyond what f32 arithmetic holds, so no class or value is given",
        if *.count == 1 { "" } else { "s" }
    )]
    NotFinite { count: usize, samples: String },
    /// Drawing, parsing or encoding a picture failed: `what` was being done, `reason`
    /// is the drawing library's message.
    #[error("{what}: {reason}")]
    Render { what: String, reason: String },
}

pub type Result<T> = std::result::Result<T, AntError>;

/// `text` for an error message, quoted: whole when short, else its first characters
/// and its length, so that a huge field from a file never floods the terminal.
pub(crate) fn quoted(text: &str) -> String {
    const MAX: usize = 40;
    match text.char_indices().nth(MAX) {
        None => format!("'{text}'"),
        Some((end, _)) => format!("'{}...' ({} bytes)", &text[..end], text.len()),
    }
}

impl AntError {
    /// An I/O failure on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        AntError::Io {
            path: path.into(),
            source,
        }
    }

    /// A malformed data file: `path` is the file, `msg` says what is wrong.
    pub fn data(path: impl Into<PathBuf>, msg: impl Into<String>) -> Self {
        AntError::Data {
            path: path.into(),
            msg: msg.into(),
        }
    }

    /// An invalid user-supplied argument, no one parameter to blame.
    pub fn param(msg: impl Into<String>) -> Self {
        AntError::InvalidParam {
            name: None,
            reason: msg.into(),
        }
    }

    /// Parameter `name` is out of range; `reason` says how ("must be at least 1").
    pub fn invalid(name: &'static str, reason: impl Into<String>) -> Self {
        AntError::InvalidParam {
            name: Some(name),
            reason: reason.into(),
        }
    }

    /// A model-level failure.
    pub fn model(msg: impl Into<String>) -> Self {
        AntError::Model(msg.into())
    }

    /// A picture could not be drawn: `what` names the step ("parsing the SVG"),
    /// `reason` the library's message.
    pub fn render(what: impl Into<String>, reason: impl Into<String>) -> Self {
        AntError::Render {
            what: what.into(),
            reason: reason.into(),
        }
    }
}

/// `items` joined by commas, the first 20 of them (and how many more).
pub(crate) fn list(items: &[String]) -> String {
    let mut text = items
        .iter()
        .take(20)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > 20 {
        text.push_str(&format!(" and {} more", items.len() - 20));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_path() {
        let e = AntError::data("/tmp/x.idx", "truncated");
        assert_eq!(e.to_string(), "/tmp/x.idx: truncated");
        let e = AntError::io(
            "/tmp/y",
            std::io::Error::new(std::io::ErrorKind::NotFound, "gone"),
        );
        assert_eq!(e.to_string(), "/tmp/y: gone");
        assert!(std::error::Error::source(&e).is_some());
        assert_eq!(AntError::param("k").to_string(), "invalid parameter: k");
        assert_eq!(AntError::model("m").to_string(), "model: m");
        assert_eq!(
            AntError::render("parsing the SVG", "bad").to_string(),
            "parsing the SVG: bad"
        );
    }
}
