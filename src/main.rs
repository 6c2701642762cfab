//! `ant`: grow, refine, save and evaluate Adaptive Neural Trees from the command line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use ant::data::source::{load_source, load_test_for, load_test_rows};
use ant::data::tabular::{Separator, TabularTask, TargetSpec};
use ant::fetch::{FetchOptions, FetchProgress, Known, Step, fetch};
use ant::model::{Inference, TestSplit};
use ant::named::Named;
use ant::observe::{Decision, EpochRecord, Fanout, Observer, Stage};
use ant::params::{ImageNorm, RouterInit, Select, ValidRows};
use ant::persist::write_atomic;
use ant::run::{DataSpec, Existing, Run, RunSpec};
use ant::{
    Ablation, Ant, AntError, AntParams, Augment, Baseline, ComputeDevice, Ensemble, Init, Preset,
    Result,
};
use burn::prelude::Device;

/// A line on stderr. Unlike `eprintln!`, a closed stderr (`ant train 2>&1 | head -1`)
/// does not panic: the message is dropped and the command goes on.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// Writes `text` to stdout. A reader that has gone (`ant predict ... | head -1`) ends
/// the output quietly, as for other command-line tools: that is not an error.
fn print_out(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(AntError::io("<stdout>", e)),
        _ => Ok(()),
    }
}

#[derive(Parser)]
#[command(
    name = "ant",
    version,
    about = "Adaptive Neural Trees (Tanno et al., ICML 2019)"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Grow and refine an ANT, then save it and report test scores.
    #[command(
        override_usage = "ant train --preset <PRESET> --data <DATA> --out <OUT> [OPTIONS]\n       ant train --resume <DIR>"
    )]
    Train(TrainArgs),
    /// Score a saved model on the test set of a data path.
    Eval(EvalArgs),
    /// Remove starved branches (mean validation reach below --min-reach).
    Prune(PruneArgs),
    /// Draw the tree (SVG, PNG or Graphviz DOT) with per-node class distributions.
    Plot(PlotArgs),
    /// Print the tree: modules, output shapes and parameter counts.
    Inspect(InspectArgs),
    /// Plot training and validation curves from a run's records.jsonl.
    Curves(CurvesArgs),
    /// Predict new samples with a saved model (CSV or JSON lines out).
    Predict(PredictArgs),
    /// Write a saved model in another format (ONNX, for any ONNX runtime).
    Export(ExportArgs),
    /// Data sets: download and verify.
    Data {
        #[command(subcommand)]
        cmd: DataCmd,
    },
}

#[derive(Subcommand)]
enum DataCmd {
    /// Download a data set into DIR, verify it, resume partial downloads.
    Fetch(FetchArgs),
}

#[derive(clap::Args)]
struct FetchArgs {
    #[arg(value_parser = named::<Known>())]
    set: Known,
    #[arg(long)]
    dir: PathBuf,
    /// Replaces the canonical URL prefix (the standard file names are appended).
    #[arg(long)]
    base_url: Option<String>,
}

#[derive(clap::Args)]
struct PruneArgs {
    #[arg(long)]
    model: PathBuf,
    /// The data the model was trained on (its recorded validation rows are used).
    #[arg(long)]
    data: PathBuf,
    /// Remove subtrees whose mean reach probability over validation is below this.
    #[arg(long)]
    min_reach: f64,
    #[arg(long)]
    out: PathBuf,
    /// Replace the model in --out if there is one (otherwise such a directory is refused).
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    device: DeviceArg,
}

/// Parses the names of a library enum (listed in `--help`).
fn named<T: Named + Clone + Send + Sync>() -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(T::names())
        .map(|s: String| T::from_name(&s).expect("clap accepts only listed names"))
}

/// A progress bar per download, a line per file in place.
#[derive(Default)]
struct DownloadBars {
    bar: Option<ProgressBar>,
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
    fn replacing(&mut self, path: &std::path::Path, why: &str) {
        note!(
            "{}: fails its check ({why}); downloading it again (it is replaced only by a verified copy)",
            path.display()
        );
    }
}

/// The library's defaults, shown by `--help` (those that depend on the preset are
/// options left unset).
fn defaults() -> AntParams {
    AntParams::new(Preset::Tabular)
}

#[derive(clap::Args)]
struct TrainArgs {
    /// Continue the interrupted run whose output directory is DIR (all other options
    /// are taken from that run).
    #[arg(long, value_name = "DIR", conflicts_with_all = [
        "preset", "data", "target", "task", "delimiter", "skip_rows", "out", "seed",
        "epochs_node", "patience", "refine_epochs", "max_depth", "width", "batch_size",
        "lr", "train_limit", "test_data", "test_fraction", "ablation", "augment",
        "router_init", "router_balance", "router_confidence", "init", "force",
        "ensemble", "member", "baseline", "image_norm", "select", "valid_rows",
    ])]
    resume: Option<PathBuf>,
    /// Train an ensemble of N ANTs into --out (OUT/ensemble.json, OUT/member-K), each
    /// with its own seed and validation rows; with --member K, only member K.
    #[arg(long, value_name = "N")]
    ensemble: Option<usize>,
    /// With --ensemble N: train member K (0 to N-1) alone, e.g. one per process.
    #[arg(long, value_name = "K")]
    member: Option<usize>,
    #[command(flatten)]
    device: DeviceArg,
    /// Replace the model in --out if there is one (otherwise such a directory is refused).
    #[arg(long)]
    force: bool,
    /// Module preset (paper, Table 2).
    #[arg(long, value_parser = named::<Preset>(), required_unless_present = "resume")]
    preset: Option<Preset>,
    /// An IDX directory (MNIST layout), a CIFAR-10 binary directory, a SARCOS .mat /
    /// .csv file, or with --target any table (.csv, .csv.gz).
    #[arg(long, required_unless_present = "resume")]
    data: Option<PathBuf>,
    /// Target column of a table: a header name or a 0-based index.
    #[arg(long)]
    target: Option<String>,
    /// What the target column holds (required with --target).
    #[arg(long, value_parser = named::<TabularTask>(), requires = "target")]
    task: Option<TabularTask>,
    /// Table field separator: ',' ';' tab or space (runs of blanks); detected if unset.
    #[arg(long, requires = "target")]
    delimiter: Option<Separator>,
    /// Lines to drop at the top of a table before its header or first row.
    #[arg(long, default_value_t = 0, requires = "target")]
    skip_rows: usize,
    /// Output directory for tree.json, model-<md5>.safetensors, records.jsonl, report.json
    /// (and, while training, checkpoint/).
    #[arg(long, required_unless_present = "resume")]
    out: Option<PathBuf>,
    #[arg(long, default_value_t = defaults().seed)]
    seed: u64,
    /// Epoch cap per growth candidate (patience usually stops earlier).
    #[arg(long, default_value_t = defaults().epochs_node)]
    epochs_node: usize,
    #[arg(long, default_value_t = defaults().patience)]
    patience: usize,
    /// Refinement epochs (default: the paper's for the preset: sarcos 300, mnist 100,
    /// cifar10 200).
    #[arg(long)]
    refine_epochs: Option<usize>,
    #[arg(long, default_value_t = defaults().max_depth)]
    max_depth: usize,
    /// Width of FC transformers (sarcos, tabular).
    #[arg(long, default_value_t = defaults().width)]
    width: usize,
    #[arg(long, default_value_t = defaults().batch_size)]
    batch_size: usize,
    #[arg(long, default_value_t = defaults().lr)]
    lr: f64,
    /// Use only the first N training samples.
    #[arg(long)]
    train_limit: Option<usize>,
    /// A separate test file (else the data's own test files, else --test-fraction).
    #[arg(long)]
    test_data: Option<PathBuf>,
    /// Seeded fraction of the file held out as the test set when it has none.
    #[arg(long, default_value_t = 0.2)]
    test_fraction: f64,
    #[arg(long, value_parser = named::<Ablation>(), default_value_t = defaults().ablation)]
    ablation: Ablation,
    /// Train a fixed architecture instead of growing an ANT, with the same data, Adam,
    /// checkpoints and model files: linear, mlp-K (K hidden layers of --width tanh
    /// units) or cnn (the preset's transformer repeated along one path). Trained for at
    /// most --refine-epochs epochs, stopped by --patience; the best on validation is kept.
    #[arg(long, value_name = "NAME", value_parser = parse_baseline)]
    baseline: Option<Baseline>,
    /// Training-image augmentation (default: crop-flip for cifar10 presets, else none).
    #[arg(long, value_parser = named::<Augment>())]
    augment: Option<Augment>,
    /// How a split's router starts: `default` (random, as the paper) or `centred` (splits
    /// the leaf's samples in half with confident decisions).
    #[arg(long, value_parser = named::<RouterInit>(), default_value_t = defaults().router_init)]
    router_init: ant::params::RouterInit,
    /// Weight of a load-balancing penalty on each new router during growth (Frosst &
    /// Hinton): asks it to send, on average, half the reaching mass each way. 0: off.
    #[arg(long, default_value_t = defaults().router_balance)]
    router_balance: f64,
    /// Weight of a penalty on the entropy of each new router's decisions during growth:
    /// with --router-balance, the router learns to partition its samples. 0: off.
    #[arg(long, default_value_t = defaults().router_confidence)]
    router_confidence: f64,
    /// How split children start: from the parent's solver, or fresh.
    #[arg(long, value_parser = named::<Init>(), default_value_t = defaults().init)]
    init: Init,
    /// How images are scaled: `mean` subtracts each channel's mean (the paper), `mean-std`
    /// also divides by its standard deviation (the authors' code).
    #[arg(long, value_parser = named::<ImageNorm>(), default_value_t = defaults().image_norm)]
    image_norm: ImageNorm,
    /// Which validation score keeps the best refinement epoch (and decides whether
    /// refinement beat the grown tree): `nll`, or `metric` (error or MSE, ties by NLL).
    #[arg(long, value_parser = named::<Select>(), default_value_t = defaults().select)]
    select: Select,
    /// Which training rows are held out for validation: `drawn` (seeded, stratified by
    /// class for classification) or `last` (the last 10% of the rows as read).
    #[arg(long, value_parser = named::<ValidRows>(), default_value_t = defaults().valid_rows)]
    valid_rows: ValidRows,
}

#[derive(clap::Args)]
struct PredictArgs {
    #[arg(long)]
    model: PathBuf,
    /// CSV rows (the training columns; the target column may be left out), or an IDX
    /// image file / CIFAR-10 batch for an image model.
    #[arg(long)]
    input: PathBuf,
    /// A .csv or .jsonl file (written atomically); CSV on stdout if unset.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Follow the most likely branch at each router instead of mixing all leaves.
    #[arg(long)]
    single_path: bool,
    /// Add every node's reach probability per sample (node order; a router's P(left)
    /// is its left child's reach over its own): JSON "reach", CSV reach_0, reach_1, ...
    #[arg(long)]
    reach: bool,
    #[command(flatten)]
    device: DeviceArg,
}

#[derive(clap::Args)]
struct EvalArgs {
    #[arg(long)]
    model: PathBuf,
    #[arg(long)]
    data: PathBuf,
    /// Print one JSON object on stdout (logs stay on stderr).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    device: DeviceArg,
}

/// `--device`, on every command that computes.
#[derive(clap::Args)]
struct DeviceArg {
    /// Where to compute: cpu (pure Rust), torch (LibTorch's CPU kernels), cuda or cuda:N
    /// (LibTorch on NVIDIA GPU N). torch and cuda need a build with `--features torch`.
    #[arg(long = "device", default_value = "cpu", value_parser = parse_device)]
    choice: ComputeDevice,
}

impl DeviceArg {
    fn burn(&self) -> Result<Device> {
        self.choice.burn()
    }
}

fn parse_baseline(s: &str) -> std::result::Result<Baseline, String> {
    s.parse()
}

fn parse_device(s: &str) -> std::result::Result<ComputeDevice, String> {
    s.parse()
        .map_err(|_| format!("use one of {}", ComputeDevice::NAMES))
}

/// Progress bars on stderr, growth decisions as lines.
#[derive(Default)]
struct ProgressBars {
    bar: Option<ProgressBar>,
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
                "train {:.4} valid {:.4} ({:.2})",
                r.train_loss, r.valid_loss, r.valid_metric
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

/// The run a `train` command line describes.
fn run_spec(a: TrainArgs) -> Result<(PathBuf, RunSpec)> {
    // clap requires these unless --resume.
    let (Some(preset), Some(path), Some(out)) = (a.preset, a.data, a.out) else {
        return Err(AntError::param("--preset, --data and --out are required"));
    };
    let target = match (a.target, a.task) {
        (Some(column), Some(task)) => Some(TargetSpec {
            delimiter: a.delimiter,
            skip_rows: a.skip_rows,
            ..TargetSpec::new(column, task)
        }),
        (Some(_), None) => {
            return Err(AntError::param(
                "--target needs --task classification or --task regression",
            ));
        }
        (None, _) => None,
    };
    let params = AntParams::new(preset)
        .with_seed(a.seed)
        .with_epochs_node(a.epochs_node)
        .with_patience(a.patience)
        .with_max_depth(a.max_depth)
        .with_width(a.width)
        .with_batch_size(a.batch_size)
        .with_lr(a.lr)
        .with_ablation(a.ablation)
        .with_init(a.init)
        .with_router_init(a.router_init)
        .with_router_balance(a.router_balance)
        .with_router_confidence(a.router_confidence)
        .with_image_norm(a.image_norm)
        .with_select(a.select)
        .with_valid_rows(a.valid_rows)
        .with_augment(a.augment)
        .with_refine_epochs(a.refine_epochs)
        .with_baseline(a.baseline);
    let data = DataSpec {
        path,
        test_data: a.test_data,
        test_fraction: a.test_fraction,
        target,
        train_limit: a.train_limit,
    };
    let spec = RunSpec {
        data,
        params,
        member: None,
    };
    Ok((out, spec))
}

fn train(a: TrainArgs) -> Result<()> {
    let choice = a.device.choice;
    let device = choice.burn()?;
    if let Some(dir) = &a.resume {
        if ant::ensemble::is_ensemble(dir) {
            return resume_ensemble(dir, &device, choice);
        }
        let run = Run::resume(dir)?;
        note!("resuming the run in {}", dir.display());
        return train_run(run, &device, choice);
    }
    let existing = if a.force {
        Existing::Replace
    } else {
        Existing::Refuse
    };
    match (a.ensemble, a.member) {
        (None, Some(_)) => Err(AntError::param(
            "--member K needs --ensemble N (the size of the ensemble it belongs to)",
        )),
        (Some(n), member) => {
            let (out, spec) = run_spec(a)?;
            train_ensemble(&out, spec, n, member, existing, (&device, choice))
        }
        (None, None) => {
            let (out, spec) = run_spec(a)?;
            let run = Run::start(&out, spec, existing)?;
            note!(
                "checkpoints every epoch: if stopped, continue with `ant train --resume {}`",
                out.display()
            );
            train_run(run, &device, choice)
        }
    }
}

/// Trains the members of an ensemble of `n` into `out`, one after the other: all of
/// them, or only `member`. `ensemble.json` is written with the first member's run
/// (after its data has been checked); one already there must describe the same run.
fn train_ensemble(
    out: &std::path::Path,
    spec: RunSpec,
    n: usize,
    member: Option<usize>,
    existing: Existing,
    (device, choice): (&Device, ComputeDevice),
) -> Result<()> {
    use ant::ensemble::{EnsembleFile, member_dir};
    if n == 0 {
        return Err(AntError::param("--ensemble must be at least 1"));
    }
    if let Some(k) = member
        && k >= n
    {
        return Err(AntError::param(format!(
            "--member {k} is not a member of --ensemble {n} (members are numbered 0 to {})",
            n - 1
        )));
    }
    let cwd = std::env::current_dir().map_err(|e| AntError::io(".", e))?;
    let file = EnsembleFile::new(spec, n, cwd)?;
    let mut written = file.matches_dir(out)?;
    let members: Vec<usize> = match member {
        Some(k) => vec![k],
        None => (0..n).collect(),
    };
    for k in members {
        let dir = member_dir(out, k);
        let run = Run::start(&dir, file.member_spec(k)?, existing)?;
        if !written {
            file.save(out)?;
            written = true;
        }
        note!(
            "member {k} of {n} (seed {}): if stopped, continue with `ant train --resume {}`",
            run.spec().params.seed,
            dir.display()
        );
        train_run(run, device, choice)?;
    }
    Ok(())
}

/// Finishes the ensemble in `dir`: resumes its interrupted members, trains its missing
/// ones and leaves its trained ones as they are.
fn resume_ensemble(dir: &std::path::Path, device: &Device, choice: ComputeDevice) -> Result<()> {
    use ant::ensemble::{EnsembleFile, MemberState, member_dir, member_state};
    let file = EnsembleFile::open(dir)?;
    for k in 0..file.size {
        let mdir = member_dir(dir, k);
        let run = match member_state(dir, k) {
            MemberState::Trained => {
                note!("member {k} of {}: trained", file.size);
                continue;
            }
            MemberState::Started => Run::resume(&mdir)?,
            MemberState::Missing => Run::start_from(
                &mdir,
                file.member_spec(k)?,
                Existing::Refuse,
                file.cwd.clone(),
            )?,
        };
        note!(
            "member {k} of {}: training into {}",
            file.size,
            mdir.display()
        );
        train_run(run, device, choice)?;
    }
    Ok(())
}

/// Trains `run` to the end, then prints the tree and its test scores.
fn train_run(run: Run, device: &Device, choice: ComputeDevice) -> Result<()> {
    let spec = run.spec();
    let what = match spec.params.baseline {
        Some(b) => format!("baseline {b} ({} modules)", spec.params.preset),
        None => spec.params.preset.to_string(),
    };
    note!(
        "training {what} on {} samples ({} test) from {}, on {}",
        run.train_set().len(),
        run.test_set().len(),
        spec.data.path.display(),
        choice
    );
    let out = run.out().to_path_buf();
    let mut records = run.records_log()?;
    let mut bars = ProgressBars::default();
    let mut obs = Fanout(vec![&mut bars, &mut records]);
    let done = run.fit(device, &mut obs)?;
    let (model, ev) = (&done.model, &done.evaluation);
    note!("{}", model.tree.topology.outline().trim_end());
    let unit = if model.task().is_classification() {
        "% error"
    } else {
        " MSE"
    };
    note!(
        "test: multi-path {:.4}{unit}, single-path {:.4}{unit} on {} samples; {} params; {:.1} s; saved to {}",
        ev.multi_path,
        ev.single_path,
        ev.test_samples,
        model.tree.topology.num_params(),
        done.seconds,
        out.display()
    );
    Ok(())
}

/// The test set of `data` that `model` is scored on (chosen as in its training).
fn test_set(model: &Ant, data: &std::path::Path) -> Result<ant::Dataset> {
    let p = &model.meta.provenance;
    let (test, warning) = load_test_rows(
        data,
        &p.test_split,
        p.target.as_ref(),
        model.meta.class_names.as_deref(),
    )?;
    if let Some(w) = warning {
        note!("warning: {w}");
    }
    ant::predict::check_fits(model, &test, data, true)?;
    Ok(test)
}

fn eval(a: EvalArgs) -> Result<()> {
    let device = a.device.burn()?;
    let (report, outline) = if ant::ensemble::is_ensemble(&a.model) {
        let ens = Ensemble::load(&a.model, &device)?;
        let test = test_set(&ens.members[0], &a.data)?;
        let report = ens.report(&ens.evaluate(&test)?);
        (
            report,
            format!("ensemble of {} members\n", ens.members.len()),
        )
    } else {
        let model = Ant::load(&a.model, &device)?;
        let test = test_set(&model, &a.data)?;
        let report = ant::run::report(&model, &model.evaluate(&test)?);
        (report, model.tree.topology.outline())
    };
    let text = if a.json {
        format!("{}\n", serde_json::to_string(&report).expect("json"))
    } else {
        let mut text = outline;
        for (k, v) in report.as_object().expect("object") {
            match v.as_array() {
                // An ensemble's members: one line each.
                Some(items) => items
                    .iter()
                    .for_each(|m| text.push_str(&format!("{k}: {m}\n"))),
                None => text.push_str(&format!("{k}: {v}\n")),
            }
        }
        text
    };
    print_out(&text)
}

/// The validation and test rows a model was trained with, rebuilt from its provenance.
fn recorded_split(model: &Ant, data: &std::path::Path) -> Result<(ant::Dataset, ant::Dataset)> {
    let prov = &model.meta.provenance;
    let target = prov.target.as_ref();
    let src = match &prov.test_split {
        TestSplit::Fraction { fraction, seed, .. } => {
            load_source(data, None, *fraction, *seed, target)?
        }
        TestSplit::File { path } => {
            load_source(data, Some(std::path::Path::new(path)), 0.2, 0, target)?
        }
        TestSplit::Files | TestSplit::Unknown => {
            load_source(data, None, 0.2, model.meta.config.seed(), target)?
        }
    };
    let mut train = src.train;
    if let Some(n) = prov.train_limit {
        train = train.take_first(n);
    }
    if let Some(m) = prov.member {
        // An ensemble member validated on rows taken in its own order.
        train = m.rows(&train);
    }
    // Only the data the model was trained on gives back its validation rows (a model
    // fitted through the library records no data path: its rows are taken as they come).
    let known = !matches!(prov.test_split, TestSplit::Unknown);
    let other = |why: String| {
        let msg = format!(
            "not the data the model was trained on ({why}): its validation rows cannot be rebuilt"
        );
        AntError::data(data, msg)
    };
    if let Some(sum) = &prov.train_checksum
        && known
        && train.checksum() != *sum
    {
        let why = format!("the checksum of its training rows is not {sum}");
        return Err(other(why));
    }
    let (_, valid) = model.meta.valid_split().apply(&train);
    if known && valid.len() != prov.n_valid {
        let why = format!(
            "{} validation rows, the model had {}",
            valid.len(),
            prov.n_valid
        );
        return Err(other(why));
    }
    let test = load_test_for(
        data,
        &prov.test_split,
        target,
        model.meta.class_names.as_deref(),
    )?;
    Ok((valid, test))
}

fn prune(a: PruneArgs) -> Result<()> {
    let device = a.device.burn()?;
    ant::outputs::check_prune_out(&a.model, &a.data, &a.out, a.force)?;
    if !ant::ensemble::is_ensemble(&a.model) {
        let model = Ant::load(&a.model, &device)?;
        let summary = prune_model(&model, &a.data, a.min_reach, &a.out)?;
        return print_out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&summary).expect("json")
        ));
    }
    // An ensemble: each member pruned into OUT/member-K, ensemble.json copied.
    let ens = Ensemble::load(&a.model, &device)?;
    let mut members = Vec::new();
    for (k, m) in ens.members.iter().enumerate() {
        let out = ant::ensemble::member_dir(&a.out, k);
        let mut summary = prune_model(m, &a.data, a.min_reach, &out)?;
        summary["member"] = serde_json::json!(k);
        members.push(summary);
    }
    ens.file.save(&a.out)?;
    let summary = serde_json::json!({ "min_reach": a.min_reach, "members": members });
    print_out(&format!(
        "{}\n",
        serde_json::to_string_pretty(&summary).expect("json")
    ))
}

/// Prunes `model` (trained on `data`) into `out` with its `prune.json`; returns it.
fn prune_model(
    model: &Ant,
    data: &std::path::Path,
    min_reach: f64,
    out: &std::path::Path,
) -> Result<serde_json::Value> {
    let (valid, test) = recorded_split(model, data)?;
    let (pruned, report) = model.pruned(&valid, min_reach)?;
    pruned.save(out)?;
    ant::outputs::remove_old_descriptions(out)?;
    let (v0, v1) = (model.evaluate(&valid)?, pruned.evaluate(&valid)?);
    let (t0, t1) = (model.evaluate(&test)?, pruned.evaluate(&test)?);
    let summary = serde_json::json!({
        "min_reach": min_reach,
        "removed": report.removed,
        "nodes_removed": report.nodes_removed,
        "params_removed": report.params_removed,
        "params_before": model.tree.topology.num_params(),
        "params_after": pruned.tree.topology.num_params(),
        "valid_multi_path_before": v0.multi_path, "valid_multi_path_after": v1.multi_path,
        "test_multi_path_before": t0.multi_path, "test_multi_path_after": t1.multi_path,
        "test_single_path_before": t0.single_path, "test_single_path_after": t1.single_path,
    });
    write_atomic(
        &out.join("prune.json"),
        serde_json::to_string_pretty(&summary)
            .expect("json")
            .as_bytes(),
    )?;
    Ok(summary)
}

#[derive(clap::Args)]
struct PlotArgs {
    #[arg(long)]
    model: PathBuf,
    /// Data whose test set is routed through the tree (histograms); optional for dot.
    #[arg(long)]
    data: Option<PathBuf>,
    /// tree.svg, tree.png or tree.dot.
    #[arg(long)]
    out: PathBuf,
    /// Picture width in pixels (grows when the tree needs more room).
    #[arg(long, default_value_t = 1600)]
    width: u32,
    /// svg, png or dot (default: the extension of --out).
    #[arg(long)]
    format: Option<String>,
    /// Bins of the routers' left-probability histograms.
    #[arg(long, default_value_t = 10)]
    bins: usize,
    #[command(flatten)]
    device: DeviceArg,
}

#[derive(clap::Args)]
struct ExportArgs {
    #[arg(long)]
    model: PathBuf,
    /// onnx: one .onnx file (opset 17, any batch size; normalisation inside) with the
    /// multi-path and single-path predictions, every router's P(left) and every leaf's
    /// reach probability. web: a static site (open index.html, or serve the folder) that
    /// runs the tree in the browser on a digit you draw, a test sample or feature values,
    /// and shows its routing.
    #[arg(long, value_enum)]
    format: ExportFormat,
    /// The file (onnx) or directory (web) to write, atomically.
    #[arg(long)]
    out: PathBuf,
    /// web: a data path whose first test samples the page offers as examples.
    #[arg(long)]
    data: Option<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ExportFormat {
    Onnx,
    Web,
}

#[derive(clap::Args)]
struct InspectArgs {
    #[arg(long)]
    model: PathBuf,
}

#[derive(clap::Args)]
struct CurvesArgs {
    /// A directory written by `ant train --out` (records.jsonl, tree.json).
    #[arg(long)]
    run: PathBuf,
    /// curves.svg or curves.png.
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value_t = 1600)]
    width: u32,
    /// svg or png (default: the extension of --out).
    #[arg(long)]
    format: Option<String>,
}

fn plot(a: PlotArgs) -> Result<()> {
    let device = a.device.burn()?;
    if !ant::ensemble::is_ensemble(&a.model) {
        let model = Ant::load(&a.model, &device)?;
        return plot_model(&a, &model, &a.out);
    }
    // An ensemble: one picture per member, X-member-K.EXT beside --out X.EXT.
    let ens = Ensemble::load(&a.model, &device)?;
    for (k, m) in ens.members.iter().enumerate() {
        let stem = a.out.file_stem().unwrap_or_default().to_string_lossy();
        let name = match a.out.extension() {
            Some(ext) => format!("{stem}-member-{k}.{}", ext.to_string_lossy()),
            None => format!("{stem}-member-{k}"),
        };
        plot_model(&a, m, &a.out.with_file_name(name))?;
    }
    Ok(())
}

/// Draws `model` into `out` as `a` asks.
fn plot_model(a: &PlotArgs, model: &Ant, out: &std::path::Path) -> Result<()> {
    use ant::viz::{Format, render_tree};
    // The format follows --out (X.svg), not the member's file name.
    let format = Format::choose(a.format.as_deref(), &a.out)?;
    let test = match &a.data {
        Some(d) => {
            let (test, warning) = load_test_rows(
                d,
                &model.meta.provenance.test_split,
                model.meta.provenance.target.as_ref(),
                model.meta.class_names.as_deref(),
            )?;
            if let Some(w) = warning {
                note!("warning: {w}");
            }
            Some(test)
        }
        None if format == Format::Dot => None,
        None => return Err(AntError::param("--data is needed for svg and png pictures")),
    };
    if a.width < 100 {
        return Err(AntError::param("--width must be at least 100"));
    }
    let bytes = render_tree(model, test.as_ref(), format, a.width, a.bins.max(1))?;
    ant::outputs::write_output(out, &bytes, &a.model, a.data.as_deref())?;
    note!("wrote {}", out.display());
    Ok(())
}

fn export(a: ExportArgs) -> Result<()> {
    if ant::ensemble::is_ensemble(&a.model) {
        let msg = "is an ensemble: export one member (its member-K directory)";
        return Err(AntError::data(&a.model, msg));
    }
    let model = Ant::load(&a.model, &ant::default_device())?;
    match a.format {
        ExportFormat::Onnx => {
            ant::outputs::write_output(&a.out, &ant::export::to_onnx(&model)?, &a.model, None)?
        }
        ExportFormat::Web => {
            ant::outputs::check_site_out(&a.out, &a.model, a.data.as_deref())?;
            let examples = match &a.data {
                Some(d) => Some(test_samples(&model, d)?),
                None => None,
            };
            ant::export::write_site(&model, examples.as_ref(), &a.out)?;
        }
    }
    note!("exported to {}", a.out.display());
    Ok(())
}

/// The test set of `data` as the model reads it (for a table, its recorded columns).
fn test_samples(model: &Ant, data: &std::path::Path) -> Result<ant::Dataset> {
    let prov = &model.meta.provenance;
    let test = load_test_for(
        data,
        &prov.test_split,
        prov.target.as_ref(),
        model.meta.class_names.as_deref(),
    )?;
    ant::predict::check_fits(model, &test, data, true)?;
    Ok(test)
}

fn inspect(a: InspectArgs) -> Result<()> {
    use ant::ensemble::{EnsembleFile, MemberState, member_dir, member_state};
    use ant::viz::inspect::inspect_text;
    if !ant::ensemble::is_ensemble(&a.model) {
        let model = Ant::load(&a.model, &ant::default_device())?;
        return print_out(&format!(
            "{}{}",
            baseline_line(&model),
            inspect_text(&model.tree.topology)
        ));
    }
    // An ensemble: its spec, then each member (trained, training or missing).
    let file = EnsembleFile::open(&a.model)?;
    let mut text = format!(
        "ensemble of {} members: preset {}, data {}, seed {}\n",
        file.size,
        file.preset,
        file.spec.data.path.display(),
        file.spec.params.seed
    );
    for k in 0..file.size {
        let dir = member_dir(&a.model, k);
        let seed = file.member_seeds[k];
        match member_state(&a.model, k) {
            MemberState::Trained => {
                let model = Ant::load(&dir, &ant::default_device())?;
                let t = &model.tree.topology;
                text.push_str(&format!(
                    "\nmember {k} (seed {seed}, {}): {} nodes, {} leaves, {} params\n",
                    dir.display(),
                    t.nodes.len(),
                    t.leaves().len(),
                    t.num_params()
                ));
                text.push_str(&baseline_line(&model));
                text.push_str(&inspect_text(t));
            }
            MemberState::Started => text.push_str(&format!(
                "\nmember {k} (seed {seed}, {}): not finished (resume with `ant train --resume {}`)\n",
                dir.display(),
                dir.display()
            )),
            MemberState::Missing => text.push_str(&format!(
                "\nmember {k} (seed {seed}, {}): missing\n",
                dir.display()
            )),
        }
    }
    print_out(&text)
}

/// `baseline NAME ...` for a baseline's model, nothing for an ANT.
fn baseline_line(model: &Ant) -> String {
    match model.meta.config.baseline() {
        Some(b) => format!("baseline {b}: a fixed architecture, trained without growth\n"),
        None => String::new(),
    }
}

fn curves(a: CurvesArgs) -> Result<()> {
    use ant::viz::{Format, render_curves};
    let format = Format::choose(a.format.as_deref(), &a.out)?;
    if a.width < 300 {
        return Err(AntError::param("--width must be at least 300"));
    }
    let bytes = render_curves(&a.run, format, a.width)?;
    ant::outputs::write_output(&a.out, &bytes, &a.run, None)?;
    note!("wrote {}", a.out.display());
    Ok(())
}

fn predict(a: PredictArgs) -> Result<()> {
    use ant::predict::{Format, load_inputs, render};
    let format = match &a.output {
        Some(o) => Format::of(o)?,
        None => Format::Csv,
    };
    let mode = if a.single_path {
        Inference::SinglePath
    } else {
        Inference::MultiPath
    };
    let device = a.device.burn()?;
    let (text, n) = if ant::ensemble::is_ensemble(&a.model) {
        if a.reach {
            let msg = "is an ensemble: --reach describes one tree (give a member-K directory)";
            return Err(AntError::data(&a.model, msg));
        }
        let ens = Ensemble::load(&a.model, &device)?;
        let data = load_inputs(&ens.members[0], &a.input)?;
        let p = ens.predict(&data, mode)?;
        (ant::predict::render_ensemble(&ens, &p, format), data.len())
    } else {
        let model = Ant::load(&a.model, &device)?;
        let data = load_inputs(&model, &a.input)?;
        let reach = match a.reach {
            true => Some(model.node_reach_per_sample(&data)?),
            false => None,
        };
        let p = model.predict(&data, mode)?;
        (render(&model, &p, reach.as_deref(), format), data.len())
    };
    match &a.output {
        Some(o) => {
            ant::outputs::write_output(o, text.as_bytes(), &a.model, Some(&a.input))?;
            note!("{n} predictions written to {}", o.display());
        }
        None => print_out(&text)?,
    }
    Ok(())
}

fn main() -> ExitCode {
    ant::keep_large_buffers();
    // A write beyond `ulimit -f` is then a failed write, reported, not a silent death.
    ant::persist::file_size_limit_is_an_error();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        // Its default reports a failed write with `eprintln!`, which panics when
        // stderr is closed.
        .log_internal_errors(false)
        .init();
    let cli = Cli::parse();
    let res = match cli.cmd {
        Cmd::Train(a) => train(a),
        Cmd::Eval(a) => eval(a),
        Cmd::Prune(a) => prune(a),
        Cmd::Plot(a) => plot(a),
        Cmd::Inspect(a) => inspect(a),
        Cmd::Curves(a) => curves(a),
        Cmd::Predict(a) => predict(a),
        Cmd::Export(a) => export(a),
        Cmd::Data {
            cmd: DataCmd::Fetch(a),
        } => fetch(
            a.set,
            &a.dir,
            &FetchOptions {
                base_url: a.base_url,
                ..FetchOptions::default()
            },
            &mut DownloadBars::default(),
        ),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(AntError::InvalidParam { name, reason }) => {
            // The library names its parameters; here they are flags.
            note!(
                "error: invalid parameter: --{} {reason}",
                name.replace('_', "-")
            );
            ExitCode::from(2)
        }
        Err(e) => {
            note!("error: {e}");
            ExitCode::from(2)
        }
    }
}
