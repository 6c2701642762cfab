//! The crate's own warnings for Python. The `ant` crate says what a user should know
//! (a column that f32 makes constant, a file read another way) as `tracing` events,
//! which the command line prints; here each goes to the `ant` logger at WARNING, where
//! training's warnings go (`_events.py`), so that Python shows what `ant` would print
//! (a column trained as a constant is said in Python too, not to nobody).

use std::sync::{Mutex, PoisonError};

use pyo3::prelude::*;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

/// Warnings not yet handed to Python, oldest first.
static PENDING: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Sends the process's `tracing` warnings to Python (once; a subscriber already set by
/// the embedding program is kept).
pub fn install() {
    let _ = tracing_subscriber::registry()
        .with(ToPython.with_filter(LevelFilter::WARN))
        .try_init();
}

/// [`Python::detach`] (the GIL released while `f` runs), then the warnings it left.
pub fn detached<T: Send>(py: Python<'_>, f: impl Send + FnOnce() -> T) -> T {
    let out = py.detach(f);
    flush(py);
    out
}

/// Logs the warnings the pool's threads left. A logger that fails is no reason to fail
/// the call that warned.
fn flush(py: Python<'_>) {
    let pending = std::mem::take(&mut *PENDING.lock().unwrap_or_else(PoisonError::into_inner));
    log(py, pending);
}

/// Logs `messages` to the `ant` logger at WARNING.
fn log(py: Python<'_>, messages: impl IntoIterator<Item = String>) {
    let mut messages = messages.into_iter().peekable();
    if messages.peek().is_none() {
        return;
    }
    let Ok(logger) = py
        .import("logging")
        .and_then(|m| m.getattr("getLogger")?.call1(("ant",)))
    else {
        return;
    };
    for message in messages {
        let _ = logger.call_method1("warning", ("%s", message));
    }
}

struct ToPython;

impl<S: Subscriber> Layer<S> for ToPython {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let target = event.metadata().target();
        if *event.metadata().level() > Level::WARN || !is_ours(target) {
            return;
        }
        let mut text = Message(String::new());
        event.record(&mut text);
        // A thread of the crate's pool only queues: the thread that called in may hold
        // the GIL while it waits for the pool. Its warnings leave with `detached`'s.
        // Another thread logs its own at once, as itself (a shared queue would log
        // other threads' warnings under its name).
        if rayon::current_thread_index().is_some() {
            PENDING
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(text.0);
        } else {
            Python::attach(|py| log(py, [text.0]));
        }
    }
}

/// Events of the `ant` crate and of this module (not of the libraries beneath).
fn is_ours(target: &str) -> bool {
    ["ant", "_ant"]
        .iter()
        .any(|c| target == *c || target.strip_prefix(c).is_some_and(|r| r.starts_with("::")))
}

/// The event's message, with any other fields after it.
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if !self.0.is_empty() {
            self.0.push_str(", ");
        }
        if field.name() == "message" {
            self.0.push_str(&format!("{value:?}"));
        } else {
            self.0.push_str(&format!("{}={value:?}", field.name()));
        }
    }
}
