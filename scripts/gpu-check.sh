#!/usr/bin/env bash
# Every check of `ant` on an NVIDIA GPU, in one script (about 10 minutes on an H100
# once built): the device tests on cuda, W1/W2 train steps on cuda next to PyTorch on the
# same GPU, and the paper's mnist-a schedule on cuda (cut at ANT_GPU_TRAIN_SECONDS,
# default 300: the run keeps its checkpoint, so `--resume` continues it later).
#
#     bash scripts/gpu-check.sh [OUT_DIR]        # default gpu-out/
#
# Needs what `scripts/torch-env.sh` installs (torch 2.9.0 with its CUDA libraries) and a
# crates cache or network for `cargo build`. Every step writes its log to OUT_DIR.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-gpu-out}"
mkdir -p "$out"
source scripts/torch-env.sh
step() { echo "== $1" | tee -a "$out/summary.txt"; }

step "GPU"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
python -W ignore -c 'import torch; print(torch.cuda.get_device_name(0), torch.version.cuda)' \
    | tee -a "$out/summary.txt"

step "build (--features torch)"
cargo build --release --features torch >"$out/build.txt" 2>&1 || { tail -30 "$out/build.txt"; exit 1; }

step "device tests on cpu, torch and cuda"
ANT_TEST_CUDA=1 cargo test --release --features torch --test devices >"$out/devices.txt" 2>&1
grep -E "^test |test result" "$out/devices.txt" | tee -a "$out/summary.txt"

step "train step, batch 512: ant on cuda, torch (CPU) and cpu"
for d in cuda torch cpu; do
    ANT_DEVICE=$d cargo bench --features torch --bench train_step -- --noplot \
        >"$out/bench-$d.txt" 2>&1
    grep -E "^W[12]|time:" "$out/bench-$d.txt" | tee -a "$out/summary.txt"
done
step "train step, batch 512: the PyTorch peer on the same GPU (mnist-a tree)"
peer=../shared/peer/torch_ant/ant.py
[ -f "$peer" ] || peer=shared/peer/torch_ant/ant.py
if [ -f "$peer" ]; then
    python -W ignore "$peer" --preset mnist-a --bench-step --device cuda --out "$out/peer-bench" \
        >"$out/peer-bench.txt" 2>&1
    tail -5 "$out/peer-bench.txt" | tee -a "$out/summary.txt"
fi

step "mnist-a, paper schedule, on cuda (cut at ${ANT_GPU_TRAIN_SECONDS:-300} s)"
start=$(date +%s)
timeout "${ANT_GPU_TRAIN_SECONDS:-300}" ./target/release/ant train --device cuda \
    --preset mnist-a --data data/mnist --out "$out/mnist-a" >"$out/mnist-a.txt" 2>&1
echo "exit $? after $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
tail -5 "$out/mnist-a.txt" | tee -a "$out/summary.txt"
