#![no_main]
//! Model loading: a `tree.json` and its weights (the bytes before and after the first
//! NUL byte, which JSON text cannot hold), checked as `ant eval` checks files; what
//! loads must also predict.
use ant::{Ant, ComputeDevice, Dataset, Inference, Targets, Task};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (json, weights) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let device = ComputeDevice::Cpu.burn().expect("the cpu device");
    if let Ok(model) = Ant::from_bytes(json, weights, &device) {
        predict_one(&model);
    }
});

/// Multi-path and single-path predictions for one sample of zeros (small inputs only:
/// the fuzzer's memory is bounded, the model's input size is not).
fn predict_one(model: &Ant) {
    let shape = model.tree().topology.input;
    if shape.numel() > 4096 {
        return;
    }
    let targets = match model.task() {
        Task::Classification { classes } => Targets::Classes {
            labels: vec![0],
            n_classes: classes,
        },
        Task::Regression { dim } => Targets::Values {
            values: vec![0.0; dim],
            dim,
        },
    };
    let x = vec![0.0; shape.numel()];
    let data = Dataset::new(x, shape.dims(), targets).expect("one sample");
    for mode in [Inference::MultiPath, Inference::SinglePath] {
        // Finite weights may still overflow (1e38 squared): only a panic is a failure.
        model.predict(&data, mode).expect("a loaded model predicts a sample of its shape");
    }
}
