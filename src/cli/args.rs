//! `ant`'s command line: the commands and their options (the training parameters are
//! `ant::AntParams`' own, flattened into `ant train`).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use ant::Named;
use ant::TaskKind;
use ant::data::tabular::Separator;
use ant::fetch::Known;
use ant::{AntParams, ComputeDevice, Result};
use burn::prelude::Device;

#[derive(Parser)]
#[command(
    name = "ant",
    version,
    about = "Adaptive Neural Trees (Tanno et al., ICML 2019)"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) cmd: Cmd,
}

#[derive(Subcommand)]
pub(crate) enum Cmd {
    /// Grow and refine an ANT, then save it and report test scores.
    #[command(
        override_usage = "ant train --preset <PRESET> --data <DATA> --out <OUT> [OPTIONS]\n       ant train --resume <DIR>",
        after_help = "Environment: ANT_GROWTH_CACHE_MB caps what growth caches at a leaf (default: a quarter of the machine's memory); rows beyond it run through the frozen tree on each batch: less memory, slower growth, results equal up to rounding."
    )]
    Train(Box<TrainArgs>),
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
pub(crate) enum DataCmd {
    /// Download a data set into DIR, verify it, resume partial downloads.
    Fetch(FetchArgs),
}

#[derive(clap::Args)]
pub(crate) struct FetchArgs {
    #[arg(value_parser = named::<Known>())]
    pub(crate) set: Known,
    #[arg(long)]
    pub(crate) dir: PathBuf,
    /// Replaces the canonical URL prefix (the standard file names are appended).
    #[arg(long)]
    pub(crate) base_url: Option<String>,
}

#[derive(clap::Args)]
pub(crate) struct PruneArgs {
    #[arg(long)]
    pub model: PathBuf,
    /// The data the model was trained on (its recorded validation rows are used).
    #[arg(long)]
    pub(crate) data: PathBuf,
    /// The test file to score the pruned model on (default: the one the model was
    /// tested on, when it was given one with `train --test-data`).
    #[arg(long)]
    pub(crate) test_data: Option<PathBuf>,
    /// Remove subtrees whose mean reach probability over validation is below this.
    #[arg(long)]
    pub(crate) min_reach: f64,
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Replace the model in --out if there is one (otherwise such a directory is refused).
    #[arg(long)]
    pub(crate) force: bool,
    #[command(flatten)]
    pub(crate) table: TableArgs,
    #[command(flatten)]
    pub(crate) device: DeviceArg,
}

/// Parses the names of a library enum (listed in `--help`).
pub(crate) fn named<T: Named + Clone + Send + Sync>()
-> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(T::names())
        .map(|s: String| T::from_name(&s).expect("clap accepts only listed names"))
}

#[derive(clap::Args)]
pub(crate) struct TrainArgs {
    /// Continue the interrupted run whose output directory is DIR (all other options
    /// are taken from that run).
    #[arg(long, value_name = "DIR", conflicts_with_all = [
        "AntParams", "data", "target", "task", "delimiter", "skip_rows", "out",
        "train_limit", "test_data", "test_fraction", "force", "ensemble", "member",
        "image_size",
    ])]
    pub(crate) resume: Option<PathBuf>,
    /// Train an ensemble of N ANTs into --out (OUT/ensemble.json, OUT/member-K), each
    /// with its own seed and validation rows; with --member K, only member K.
    #[arg(long, value_name = "N")]
    pub(crate) ensemble: Option<usize>,
    /// With --ensemble N: train member K (0 to N-1) alone, e.g. one per process.
    #[arg(long, value_name = "K")]
    pub(crate) member: Option<usize>,
    #[command(flatten)]
    pub(crate) device: DeviceArg,
    /// Replace the model in --out if there is one (otherwise such a directory is refused).
    #[arg(long)]
    pub(crate) force: bool,
    /// The training parameters (`ant::AntParams`: one option per field). `None` with
    /// --resume, which takes them from the run.
    #[command(flatten)]
    pub(crate) params: Option<AntParams>,
    /// A folder of image files (one folder per class), an IDX directory (MNIST layout),
    /// a CIFAR-10 binary directory, a NumPy .npz, a SARCOS .mat / .csv file, or with
    /// --target any table (.csv, .csv.gz, .parquet).
    #[arg(long, required_unless_present = "resume")]
    pub(crate) data: Option<PathBuf>,
    /// Target column of a table: a header name or a 0-based index (name:N for a column
    /// named N).
    #[arg(long)]
    pub(crate) target: Option<String>,
    /// What the target column holds (required with --target).
    #[arg(long, value_parser = named::<TaskKind>(), requires = "target")]
    pub(crate) task: Option<TaskKind>,
    /// Table field separator: ',' ';' tab or space (runs of blanks); detected if unset.
    #[arg(long, requires = "target")]
    pub(crate) delimiter: Option<Separator>,
    /// Lines to drop at the top of a table before its header or first row.
    #[arg(long, default_value_t = 0, requires = "target")]
    pub(crate) skip_rows: usize,
    /// Output directory for tree.json, model-<md5>.safetensors, records.jsonl, report.json
    /// (and, while training, checkpoint/).
    #[arg(long, required_unless_present = "resume")]
    pub(crate) out: Option<PathBuf>,
    /// Use only the first N training samples.
    #[arg(long)]
    pub(crate) train_limit: Option<usize>,
    /// Resize a folder's images to HxW pixels (height x width, bilinear), as they are
    /// read; later images given to the model are resized alike.
    #[arg(long, value_name = "HxW")]
    pub(crate) image_size: Option<ant::data::image_size::ImageSize>,
    /// A separate test file (else the data's own test files, else --test-fraction).
    #[arg(long)]
    pub(crate) test_data: Option<PathBuf>,
    /// Seeded fraction of the file held out as the test set when it has none.
    #[arg(long, default_value_t = ant::run::DEFAULT_TEST_FRACTION, conflicts_with = "test_data")]
    pub(crate) test_fraction: f64,
}

#[derive(clap::Args)]
pub(crate) struct PredictArgs {
    #[arg(long)]
    pub model: PathBuf,
    /// CSV or Parquet rows (the training columns; the target column may be left out),
    /// or for an image model image files and folders of them (several may be given),
    /// an IDX image file, a CIFAR-10 batch or a .npy; `-` reads standard input.
    #[arg(long, num_args = 1.., required = true)]
    pub(crate) input: Vec<PathBuf>,
    /// A .csv or .jsonl file (written atomically); `-` or unset: standard output.
    #[arg(long)]
    pub(crate) output: Option<PathBuf>,
    /// csv or jsonl; if unset, as the ending of --output says (CSV on standard output).
    #[arg(long, value_parser = ["csv", "jsonl"])]
    pub(crate) format: Option<String>,
    /// Follow the most likely branch at each router instead of mixing all leaves.
    #[arg(long)]
    pub(crate) single_path: bool,
    /// Add every node's reach probability per sample (node order; a router's P(left)
    /// is its left child's reach over its own): JSON "reach", CSV reach_0, reach_1, ...
    #[arg(long)]
    pub(crate) reach: bool,
    #[command(flatten)]
    pub(crate) table: TableArgs,
    #[command(flatten)]
    pub(crate) device: DeviceArg,
}

#[derive(clap::Args)]
pub(crate) struct EvalArgs {
    #[arg(long)]
    pub model: PathBuf,
    #[arg(long)]
    pub(crate) data: PathBuf,
    /// Print one JSON object on stdout (logs stay on stderr).
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) table: TableArgs,
    #[command(flatten)]
    pub(crate) device: DeviceArg,
}

/// How a command that reads table files for a saved model reads them, where the
/// file is not read as the model's training file was.
#[derive(clap::Args)]
pub(crate) struct TableArgs {
    /// Table field separator: ',' ';' tab or space (runs of blanks); if unset, as the
    /// model's training file (given, or detected).
    #[arg(long)]
    pub(crate) delimiter: Option<Separator>,
    /// Lines to drop at the top of a table before its header or first row; if unset,
    /// as many as the model's training file (a warning says so when a line dropped so
    /// holds values).
    #[arg(long)]
    pub(crate) skip_rows: Option<usize>,
}

impl TableArgs {
    pub(crate) fn reading(&self) -> ant::data::tabular::FileReading {
        ant::data::tabular::FileReading {
            delimiter: self.delimiter,
            skip_rows: self.skip_rows,
        }
    }
}

/// `--device`, on every command that computes.
#[derive(clap::Args)]
pub(crate) struct DeviceArg {
    /// Where to compute: cpu (pure Rust), torch (LibTorch's CPU kernels), cuda or cuda:N
    /// (LibTorch on NVIDIA GPU N). torch and cuda need a build with `--features torch`.
    #[arg(long = "device", default_value = "cpu", value_parser = parse_device)]
    pub(crate) choice: ComputeDevice,
}

impl DeviceArg {
    pub(crate) fn burn(&self) -> Result<Device> {
        self.choice.burn()
    }
}

pub(crate) fn parse_device(s: &str) -> std::result::Result<ComputeDevice, String> {
    s.parse()
        .map_err(|_| format!("use one of {}", ComputeDevice::NAMES))
}

#[derive(clap::Args)]
pub(crate) struct PlotArgs {
    #[arg(long)]
    pub model: PathBuf,
    /// Data whose test set is routed through the tree (histograms); optional for dot.
    #[arg(long)]
    pub(crate) data: Option<PathBuf>,
    /// tree.svg, tree.png or tree.dot.
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Picture width in pixels (grows when the tree needs more room).
    #[arg(long, default_value_t = 1600)]
    pub(crate) width: u32,
    /// svg, png or dot (default: the extension of --out).
    #[arg(long)]
    pub(crate) format: Option<String>,
    /// Bins of the routers' left-probability histograms.
    #[arg(long, default_value_t = 10)]
    pub(crate) bins: usize,
    /// Which model of a run to draw: the final one, or the tree as growth left it before
    /// refinement (kept in the run's grown/).
    #[arg(long, value_enum, default_value_t = Stage::Final)]
    pub(crate) stage: Stage,
    /// For an ensemble, replace the members' pictures (X-member-K beside --out X) if
    /// they exist.
    #[arg(long)]
    pub(crate) force: bool,
    #[command(flatten)]
    pub(crate) table: TableArgs,
    #[command(flatten)]
    pub(crate) device: DeviceArg,
}

/// A model of a run: the final one or the one growth left.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Stage {
    Final,
    Grown,
}

#[derive(clap::Args)]
pub(crate) struct ExportArgs {
    #[arg(long)]
    pub model: PathBuf,
    /// onnx: one .onnx file (opset 17, any batch size; normalisation inside) with the
    /// multi-path and single-path predictions, every router's P(left) and every leaf's
    /// reach probability. web: a static site (open index.html, or serve the folder) that
    /// runs the tree in the browser on a digit you draw, a test sample or feature values,
    /// and shows its routing.
    #[arg(long, value_enum)]
    pub(crate) format: ExportFormat,
    /// The file (onnx) or directory (web) to write, atomically.
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// web: a data path whose first test samples the page offers as examples.
    #[arg(long)]
    pub(crate) data: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) table: TableArgs,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum ExportFormat {
    Onnx,
    Web,
}

#[derive(clap::Args)]
pub(crate) struct InspectArgs {
    #[arg(long)]
    pub model: PathBuf,
}

#[derive(clap::Args)]
pub(crate) struct CurvesArgs {
    /// A directory written by `ant train --out` (records.jsonl, tree.json); given more
    /// than once, the runs are drawn on the same axes, each labelled by the settings
    /// that differ between them.
    #[arg(long, required = true)]
    pub(crate) run: Vec<PathBuf>,
    /// curves.svg or curves.png.
    #[arg(long)]
    pub(crate) out: PathBuf,
    #[arg(long, default_value_t = 1600)]
    pub(crate) width: u32,
    /// svg or png (default: the extension of --out).
    #[arg(long)]
    pub(crate) format: Option<String>,
}
