//! The library's log events on stderr, as the command's own lines: `warning: ...`.
//! Without `RUST_LOG`, every warning of `ant` is shown (a warning hidden by a default
//! filter is a result silently wrong) and only errors of the crates below it.

use std::fmt;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// What the command shows when `RUST_LOG` says nothing.
pub(crate) const DEFAULT_FILTER: &str = "error,ant=warn";

/// Sends log events to stderr, one line each, prefixed by their level's word.
pub(crate) fn init() {
    let filter = filter(&ant::env::rust_log());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        // Its default reports a failed write with `eprintln!`, which panics when
        // stderr is closed.
        .log_internal_errors(false)
        .event_format(Line)
        .init();
}

/// The filter of `RUST_LOG`'s directives: [`DEFAULT_FILTER`] when it has none (unset,
/// empty or not understood), and `ant`'s warnings kept unless a directive names `ant`
/// (`RUST_LOG=wgpu_core=off` quiets that crate, not `ant`'s warnings).
fn filter(directives: &str) -> EnvFilter {
    let names_ant = directives.split(',').any(|d| {
        let target = d.split(['=', '[']).next().unwrap_or("").trim();
        let bare_level = !d.contains(['=', '['])
            && ["warn", "info", "debug", "trace"].contains(&target.to_ascii_lowercase().as_str());
        // A bare level that shows warnings (`info`) shows ant's already.
        target == "ant" || target.starts_with("ant::") || bare_level
    });
    match EnvFilter::try_new(directives) {
        Ok(_) if directives.trim().is_empty() => EnvFilter::new(DEFAULT_FILTER),
        Ok(f) if names_ant => f,
        Ok(f) => f.add_directive("ant=warn".parse().expect("a directive")),
        Err(_) => EnvFilter::new(DEFAULT_FILTER),
    }
}

/// `warning: MESSAGE`, as the command's own notes are written.
struct Line;

impl<S, N> FormatEvent<S, N> for Line
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut w: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let word = match *event.metadata().level() {
            Level::ERROR => "error",
            Level::WARN => "warning",
            Level::INFO => "note",
            Level::DEBUG | Level::TRACE => "debug",
        };
        let mut message = String::new();
        ctx.field_format()
            .format_fields(Writer::new(&mut message), event)?;
        writeln!(w, "{word}: {}", one_line(&message))
    }
}

/// `text` on one line: a line break or other control character (from a file's name or
/// a cell of it) is written as its escape, `\n` or `\u{7}` (a file name holding a
/// newline would split an error into two `error:` lines, the second naming a file that
/// does not exist). Every line the command writes to stderr
/// goes through here.
pub(crate) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}
