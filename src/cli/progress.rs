//! What `ant` shows while it works: progress bars on stderr, growth decisions and
//! downloads as lines.

use indicatif::{ProgressBar, ProgressStyle};

use ant::digits::g4;
use ant::fetch::{FetchProgress, Step};
use ant::observe::{Decision, EpochRecord, Observer, Stage};

/// A progress bar per download, a line per file in place.
#[derive(Default)]
pub(crate) struct DownloadBars {
    pub(crate) bar: Option<ProgressBar>,
}

impl FetchProgress for DownloadBars {
    fn download_started(&mut self, file: &str, start: u64, total: Option<u64>) {
        let b = ProgressBar::new(total.unwrap_or(0));
        b.set_style(
            ProgressStyle::with_template(
                "{msg:>28} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        b.set_message(file.to_string());
        b.set_position(start);
        self.bar = Some(b);
    }
    fn received(&mut self, bytes: u64) {
        if let Some(b) = &self.bar {
            b.inc(bytes);
        }
    }
    fn download_ended(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
    fn step(&mut self, path: &std::path::Path, step: Step) {
        let what = match step {
            Step::Present => "present and verified",
            Step::Downloaded => "downloaded and verified",
            Step::Unpacked => "unpacked",
        };
        note!("{}: {what}", path.display());
    }
    fn replacing(&mut self, path: &std::path::Path, why: &str, kept_as: &std::path::Path) {
        note!(
            "{}: fails its check ({why}); downloading it again (once a verified copy is in, this file moves to {})",
            path.display(),
            kept_as.display()
        );
    }
}

/// Progress bars on stderr, growth decisions as lines.
#[derive(Default)]
pub(crate) struct ProgressBars {
    pub(crate) bar: Option<ProgressBar>,
}

impl Observer for ProgressBars {
    fn phase_start(&mut self, stage: Stage, max: usize) {
        let bar = ProgressBar::new(max as u64);
        bar.set_style(
            ProgressStyle::with_template("{prefix:>18} [{bar:30}] {pos}/{len} epochs {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_prefix(stage.to_string());
        self.bar = Some(bar);
    }
    fn phase_resumed(&mut self, done: usize) {
        if let Some(b) = &self.bar {
            b.set_position(done as u64);
        }
    }
    fn epoch(&mut self, r: &EpochRecord) {
        if let Some(b) = &self.bar {
            b.inc(1);
            b.set_message(format!(
                "train {} valid {} ({})",
                g4(r.train_loss),
                g4(r.valid_loss),
                g4(r.valid_metric)
            ));
        }
    }
    fn phase_end(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
    fn decision(&mut self, d: &Decision) {
        note!("{d}");
    }
    fn warning(&mut self, m: &str) {
        match &self.bar {
            Some(b) => b.suspend(|| note!("warning: {m}")),
            None => note!("warning: {m}"),
        }
    }
}
