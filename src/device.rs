//! Where an ANT computes: the devices `--device` names, and the one place that maps them
//! to burn's backends (so that moving from LibTorch to another GPU backend later touches
//! only this module).
//!
//! - `cpu`: burn-flex, pure Rust, always there.
//! - `torch`: LibTorch's CPU kernels; `cuda` / `cuda:N`: LibTorch on NVIDIA GPU N. Both need
//!   a build with the `torch` feature (see `scripts/torch-env.sh`).
//!
//! Random draws (initial weights, the noise that starts split children) always happen on the
//! host, burn-flex, seeded there, and are then moved: one seed grows the same tree on every
//! device, up to the devices' floating-point rounding.

use std::cell::Cell;
use std::fmt;
use std::str::FromStr;
use std::sync::{Mutex, MutexGuard};

use burn::prelude::Device;
use serde::{Deserialize, Serialize};

use crate::error::{AntError, Result};

/// A compute device as the command line names it: `cpu`, `torch`, `cuda` or `cuda:N`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
#[non_exhaustive]
pub enum ComputeDevice {
    /// burn-flex: pure Rust, multi-threaded with rayon.
    #[default]
    Cpu,
    /// LibTorch on the CPU.
    Torch,
    /// LibTorch on the NVIDIA GPU with this index.
    Cuda(usize),
}

impl ComputeDevice {
    /// The names `--device` accepts, for help texts.
    pub const NAMES: &'static str = "cpu, torch, cuda, cuda:N";

    /// burn's device for this choice, or why it cannot be used in this build or on this
    /// machine.
    pub fn burn(self) -> Result<Device> {
        match self {
            ComputeDevice::Cpu => Ok(Device::flex()),
            ComputeDevice::Torch | ComputeDevice::Cuda(_) => torch_device(self),
        }
    }

    /// Whether this device runs LibTorch.
    pub fn is_torch(self) -> bool {
        !matches!(self, ComputeDevice::Cpu)
    }
}

/// Whether `device` is a GPU (LibTorch's `cuda`), autodiff or not.
pub(crate) fn is_gpu(device: &Device) -> bool {
    crate::ops::libtorch_is_cuda(device) == Some(true)
}

// burn-tch is deprecated in burn 0.22 (kept, not removed); it is the backend that builds
// offline here. Moving to a CubeCL backend later changes this function only.
#[cfg(feature = "torch")]
#[allow(deprecated)]
fn torch_device(d: ComputeDevice) -> Result<Device> {
    match d {
        ComputeDevice::Cuda(i) => {
            let found = crate::ops::cuda_device_count();
            if i >= found {
                return Err(device_error(
                    d,
                    format!("no such CUDA GPU: this machine shows {found}"),
                ));
            }
            Ok(Device::libtorch_cuda(i))
        }
        _ => Ok(Device::libtorch()),
    }
}

#[cfg(not(feature = "torch"))]
fn torch_device(d: ComputeDevice) -> Result<Device> {
    Err(device_error(
        d,
        "this build has no LibTorch: `source scripts/torch-env.sh && cargo build --release --features torch`"
            .into(),
    ))
}

fn device_error(d: ComputeDevice, reason: String) -> AntError {
    AntError::Device {
        device: d.to_string(),
        reason,
    }
}

impl fmt::Display for ComputeDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ComputeDevice::Cpu => f.write_str("cpu"),
            ComputeDevice::Torch => f.write_str("torch"),
            ComputeDevice::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}

impl FromStr for ComputeDevice {
    type Err = AntError;

    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            AntError::invalid(
                "device",
                format!("`{s}` is not a device: use one of {}", Self::NAMES),
            )
        };
        match s {
            "cpu" => Ok(ComputeDevice::Cpu),
            "torch" => Ok(ComputeDevice::Torch),
            "cuda" => Ok(ComputeDevice::Cuda(0)),
            _ => {
                let n = s.strip_prefix("cuda:").ok_or_else(bad)?;
                n.parse().map(ComputeDevice::Cuda).map_err(|_| bad())
            }
        }
    }
}

impl TryFrom<String> for ComputeDevice {
    type Error = AntError;
    fn try_from(s: String) -> Result<Self> {
        s.parse()
    }
}

impl From<ComputeDevice> for String {
    fn from(d: ComputeDevice) -> String {
        d.to_string()
    }
}

/// The host device random draws happen on, with `like`'s autodiff context.
pub(crate) fn host_like(like: &Device) -> Device {
    Device::flex().with_autodiff_context_from(like)
}

/// Seeds the host's random draws (see the module docs). Call it only while holding
/// [`hold_draws`]'s guard.
pub(crate) fn seed_draws(seed: u64) {
    Device::flex().seed(seed);
}

/// The host's seeded draws are one stream per process (burn-flex's): two trainings at
/// once would interleave their draws as their threads happen to run, and a seed would
/// no longer decide the tree (a test that grew a split alone grew none beside others on
/// a loaded machine). So whatever seeds and draws holds this first.
static DRAWS: Mutex<()> = Mutex::new(());

thread_local! {
    /// Whether this thread holds [`DRAWS`] (a training holds it through growth, which
    /// asks for it again).
    static HOLDS_DRAWS: Cell<bool> = const { Cell::new(false) };
}

/// While alive, this thread is the only one in the process that seeds or draws.
pub(crate) struct DrawsHeld(Option<MutexGuard<'static, ()>>);

impl Drop for DrawsHeld {
    fn drop(&mut self) {
        // Before the field (the lock) is dropped.
        if self.0.is_some() {
            HOLDS_DRAWS.set(false);
        }
    }
}

/// [`hold_draws`] for a training: while another training holds the draws, waits
/// answering `observer`'s [`should_stop`](crate::observe::Observer::should_stop) (a
/// front end's Ctrl-C), with [`AntError::Interrupted`] if it says stop. The one
/// training lock of a process: the CLI and Python both wait here.
pub(crate) fn hold_draws_for_training(observer: &mut dyn crate::observe::Observer) -> Result<DrawsHeld> {
    if HOLDS_DRAWS.get() {
        return Ok(DrawsHeld(None));
    }
    loop {
        match DRAWS.try_lock() {
            Ok(guard) => return Ok(held(guard)),
            // A training that panicked left nothing behind that the next one reads.
            Err(std::sync::TryLockError::Poisoned(p)) => return Ok(held(p.into_inner())),
            Err(std::sync::TryLockError::WouldBlock) if observer.should_stop() => {
                return Err(AntError::Interrupted);
            }
            Err(std::sync::TryLockError::WouldBlock) => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
        }
    }
}

fn held(guard: MutexGuard<'static, ()>) -> DrawsHeld {
    HOLDS_DRAWS.set(true);
    DrawsHeld(Some(guard))
}

/// Waits until no other thread seeds or draws, then keeps it so until the guard is
/// dropped; at once where this thread already holds it. Each training uses every core
/// anyway, so trainings in one process run one after the other.
pub(crate) fn hold_draws() -> DrawsHeld {
    if HOLDS_DRAWS.get() {
        return DrawsHeld(None);
    }
    // A training that panicked left nothing behind that the next one reads.
    held(DRAWS.lock().unwrap_or_else(|p| p.into_inner()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in [
            ComputeDevice::Cpu,
            ComputeDevice::Torch,
            ComputeDevice::Cuda(0),
            ComputeDevice::Cuda(3),
        ] {
            assert_eq!(d.to_string().parse::<ComputeDevice>().unwrap(), d);
        }
        assert_eq!(
            "cuda".parse::<ComputeDevice>().unwrap(),
            ComputeDevice::Cuda(0)
        );
        for bad in ["gpu", "cuda:", "cuda:x", "cuda:-1", "CPU", ""] {
            let e = bad.parse::<ComputeDevice>().unwrap_err().to_string();
            assert!(e.contains("not a device"), "{bad}: {e}");
        }
    }

    #[cfg(not(feature = "torch"))]
    #[test]
    fn torch_without_the_feature_says_how_to_get_it() {
        for d in [ComputeDevice::Torch, ComputeDevice::Cuda(0)] {
            let e = d.burn().unwrap_err().to_string();
            assert!(e.contains("--features torch"), "{e}");
            assert!(e.contains(&d.to_string()), "{e}");
        }
    }
}
