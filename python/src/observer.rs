//! Training events for Python, and Ctrl-C.
//!
//! Training runs with the GIL released. [`PyObserver`] takes it back briefly:
//! - to pass each event (epoch, decision, warning, phase) to a Python callable as
//!   `callable(kind, json)`, `json` the event as `ant train` writes it;
//! - every 50 ms at most, between mini-batches, to run Python's signal handlers: a
//!   `KeyboardInterrupt` (or any exception a handler or the callable raises) stops
//!   training, and is raised once the GIL is back.

use std::time::{Duration, Instant};

use ant::observe::{Decision, EpochRecord, Observer, Stage};
use pyo3::prelude::*;

/// How often, at most, training asks Python whether a signal arrived.
const SIGNAL_CHECK_EVERY: Duration = Duration::from_millis(50);

pub struct PyObserver {
    /// `callable(kind, json)`, if any.
    events: Option<Py<PyAny>>,
    /// The exception that stopped training (raised to the caller of `fit`).
    error: Option<PyErr>,
    last_check: Instant,
}

impl PyObserver {
    pub fn new(events: Option<Py<PyAny>>) -> PyObserver {
        PyObserver {
            events,
            error: None,
            last_check: Instant::now(),
        }
    }

    /// The exception that stopped training, if one did.
    pub fn take_error(&mut self) -> Option<PyErr> {
        self.error.take()
    }

    /// Sends one event; an exception of the callable stops training.
    fn send(&mut self, kind: &str, json: String) {
        let Some(f) = &self.events else {
            return;
        };
        if self.error.is_some() {
            return;
        }
        let res = Python::attach(|py| f.call1(py, (kind, json)).map(drop));
        if let Err(e) = res {
            self.error = Some(e);
        }
    }
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

impl Observer for PyObserver {
    fn phase_start(&mut self, stage: Stage, max_epochs: usize) {
        let event = serde_json::json!({
            "phase": stage.phase(),
            "node": stage.node(),
            "candidate": stage.candidate(),
            "max_epochs": max_epochs,
        });
        self.send("phase", event.to_string());
    }

    fn epoch(&mut self, record: &EpochRecord) {
        self.send("epoch", json(record));
    }

    fn decision(&mut self, decision: &Decision) {
        let mut event = serde_json::to_value(decision).unwrap_or_default();
        event["text"] = decision.to_string().into();
        self.send("decision", event.to_string());
    }

    fn warning(&mut self, message: &str) {
        self.send("warning", json(&message));
    }

    fn should_stop(&mut self) -> bool {
        if self.error.is_none() && self.last_check.elapsed() >= SIGNAL_CHECK_EVERY {
            self.last_check = Instant::now();
            if let Err(e) = Python::attach(|py| py.check_signals()) {
                self.error = Some(e);
            }
        }
        self.error.is_some()
    }
}
