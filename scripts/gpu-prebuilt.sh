#!/usr/bin/env bash
# The GPU checks on a machine with no network and no Rust toolchain, using
# binaries built elsewhere against the same libtorch as that machine's PyTorch
# (`scripts/gpu-stage.sh` builds and stages them).
#
#     bash scripts/gpu-prebuilt.sh TARBALL OUT_DIR [checks|profile|mnist-a|peer-mnist-a|rows|ensemble]...
#
# TARBALL holds `ant`, `devices` (the device tests), `kernels` (the library's unit tests,
# run for src/modules/: the kernels), `train_step` and `step_phases` (the benches) and
# `peer/` (../shared/peer); the binaries find libtorch through the machine's
# `python3`. The Python helpers run from this checkout's scripts/ (they need only torch).
# Each step writes its log to OUT_DIR and a line to OUT_DIR/summary.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
stage=/tmp/ant-stage; out="$2"
[ -x "$stage/ant" ] || { mkdir -p "$stage" && xz -dc "$1" | tar xf - -C "$stage"; } || exit 1
shift 2
mkdir -p "$out"
# The tests run `ant` from the path cargo built it at: put it there.
bin="$(grep -aos '/[[:alnum:]/_.-]*/release/ant' "$stage/devices" | head -1)"
[ -n "$bin" ] && [ ! -e "$bin" ] && mkdir -p "$(dirname "$bin")" && ln -s "$stage/ant" "$bin"
lib="$(python3 -W ignore -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')"
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
say() { echo "== $*" | tee -a "$out/summary.txt"; }
secs() { echo $(( $(date +%s) - $1 )); }
# Each line prefixed with the seconds since $1.
stamp() { while IFS= read -r l; do echo "$(( $(date +%s) - $1 ))s $l"; done; }

checks() {
    say "GPU: $(nvidia-smi -L | head -1); $(python3 -W ignore -c 'import torch; print("torch", torch.__version__)')"
    ldd "$stage/ant" | grep "not found" | tee -a "$out/summary.txt"

    say "device tests (cpu, torch, cuda)"
    local t=$(date +%s)
    ANT_TEST_CUDA=1 timeout 200 "$stage/devices" >"$out/devices.txt" 2>&1
    echo "exit $? after $(secs $t) s" | tee -a "$out/summary.txt"
    grep -E "^test |test result|panicked" "$out/devices.txt" | tee -a "$out/summary.txt"

    # The convolution's output and gradients and the fused activations on cuda (LibTorch's
    # backward passes) against burn's (src/modules/{kernels,fused}.rs's tests).
    say "kernel tests (cpu, torch, cuda)"
    t=$(date +%s)
    ANT_TEST_CUDA=1 timeout 120 "$stage/kernels" modules:: device_set >"$out/kernels.txt" 2>&1
    echo "exit $? after $(secs $t) s" | tee -a "$out/summary.txt"
    grep -E "^test |test result|panicked" "$out/kernels.txt" | tee -a "$out/summary.txt"

    say "train step, batch 512, ant on cuda (criterion, 10 samples)"
    ANT_DEVICE=cuda timeout 120 "$stage/train_step" --bench --noplot --warm-up-time 2 \
        --measurement-time 5 >"$out/bench-cuda.txt" 2>&1
    grep -E "^W[12]|time:" "$out/bench-cuda.txt" | tee -a "$out/summary.txt"

    # The same with burn-tch's convolution backward pass (three gradients one by one, the
    # weight's a convolution with batch and channels swapped) instead of LibTorch's fused
    # one (src/modules/kernels.rs).
    say "train step, batch 512, ant on cuda, ANT_CONV_BACKWARD=burn"
    ANT_CONV_BACKWARD=burn ANT_DEVICE=cuda timeout 120 "$stage/train_step" --bench --noplot \
        --warm-up-time 2 --measurement-time 5 >"$out/bench-cuda-generic.txt" 2>&1
    grep -E "^W[12]|time:" "$out/bench-cuda-generic.txt" | tee -a "$out/summary.txt"

    say "train step, batch 512, PyTorch on cuda (../shared/peer/torch_step_bench.py)"
    # The peer's CPU benchmark, unchanged, with every tensor and module made on the GPU;
    # each timed step ends in loss.item(), which waits for the GPU.
    timeout 120 python3 -W ignore -c "import runpy, sys, torch
torch.set_default_device('cuda'); sys.argv = ['bench', 'all']
runpy.run_path('$stage/peer/torch_step_bench.py', run_name='__main__')" \
        >"$out/bench-pytorch-cuda.txt" 2>&1
    tail -6 "$out/bench-pytorch-cuda.txt" | tee -a "$out/summary.txt"
}

# Where a CUDA step goes: W1's and W2's step in phases (forward, backward, Adam, synced
# between) and W2's op kinds alone, forward and backward, at batch 16 and 512, `ant` and
# then PyTorch (scripts/torch_op_bench.py, the peer's own trees) on the same GPU, set side
# by side; then, where nsys is installed, W2's step at batch 16 under nsys for both, with
# kernels, host synchronisations and copies per step (scripts/nsys_counts.py).
profile() {
    say "profile: step phases and single ops, ant on cuda beside PyTorch on cuda (batch 16, 512)"
    # One second per row: a GPU row is milliseconds, so hundreds of calls.
    export ANT_PHASE_SECONDS="${ANT_PHASE_SECONDS:-1}"
    local t=$(date +%s)
    ANT_DEVICE=cuda timeout 240 "$stage/step_phases" >"$out/phases-ant-cuda.txt" 2>&1
    echo "ant: exit $? after $(secs $t) s" | tee -a "$out/summary.txt"
    t=$(date +%s)
    timeout 180 python3 -W ignore scripts/torch_op_bench.py cuda \
        --peer "$stage/peer/torch_step_bench.py" --compare "$out/phases-ant-cuda.txt" \
        >"$out/phases-pytorch-cuda.txt" 2>&1
    echo "PyTorch: exit $? after $(secs $t) s" | tee -a "$out/summary.txt"
    sed -n '/^## ant (/,$p' "$out/phases-pytorch-cuda.txt" | tee -a "$out/summary.txt"
    if ! command -v nsys >/dev/null; then
        say "nsys: not on this machine (no kernel counts)"
        return
    fi
    # 20 timed steps in phases and 20 whole, each after one warm-up: 42 steps.
    say "nsys: W2 step at batch 16, 42 steps each, counts per step (ant, then PyTorch)"
    ANT_DEVICE=cuda ANT_PHASE_PARTS=phases ANT_PHASE_TREES=W2 ANT_PHASE_BATCHES=16 \
        ANT_PHASE_REPS=20 timeout 200 nsys profile --stats=true --force-overwrite true \
        -o /tmp/nsys-ant "$stage/step_phases" >"$out/nsys-ant.txt" 2>&1
    python3 scripts/nsys_counts.py "$out/nsys-ant.txt" 42 "ant, cuda" | tee -a "$out/summary.txt"
    timeout 200 nsys profile --stats=true --force-overwrite true -o /tmp/nsys-pytorch \
        python3 -W ignore scripts/torch_op_bench.py cuda --parts phases --trees W2 \
        --batches 16 --reps 20 --peer "$stage/peer/torch_step_bench.py" \
        >"$out/nsys-pytorch.txt" 2>&1
    python3 scripts/nsys_counts.py "$out/nsys-pytorch.txt" 42 "PyTorch, cuda" \
        | tee -a "$out/summary.txt"
}

# The paper's mnist-a schedule (growth, then 100 refinement epochs), cut at
# ANT_GPU_SECONDS; the run directory comes back as a tarball either way.
# The peer neither shifts images nor waits 10 epochs: `ant` does the same work here
# (`--augment none --patience 5`), so that seconds per epoch compare; `rows` runs today's
# defaults.
mnist_a() {
    say "ant mnist-a, paper schedule, as the peer (no augmentation, patience 5), on cuda (cut at ${ANT_GPU_SECONDS:-330} s)"
    local t=$(date +%s) run=/tmp/ant-mnist-a
    timeout "${ANT_GPU_SECONDS:-330}" "$stage/ant" train --device cuda --preset mnist-a \
        --augment none --patience 5 --data data/mnist --out "$run" 2>&1 \
        | stamp "$t" >"$out/mnist-a.txt"
    echo "exit ${PIPESTATUS[0]} after $(secs $t) s" | tee -a "$out/summary.txt"
    tail -8 "$out/mnist-a.txt" | tee -a "$out/summary.txt"
    # Seconds per growth and refinement epoch, per node and per leaf (a cut run too).
    python3 scripts/epoch_seconds.py ant "$run" "$out/mnist-a.txt" | tee -a "$out/summary.txt"
    tar czf "$out/mnist-a-run.tgz" -C /tmp ant-mnist-a 2>/dev/null
}

peer_mnist_a() {
    say "peer mnist-a, paper schedule, on cuda (cut at ${ANT_PEER_SECONDS:-200} s)"
    rm -rf /tmp/peer-mnist-a  # no results.json of an earlier run
    local t=$(date +%s)
    PYTHONUNBUFFERED=1 timeout "${ANT_PEER_SECONDS:-200}" python3 -W ignore \
        "$stage/peer/torch_ant/ant.py" --preset mnist-a --data data/mnist --device cuda \
        --out /tmp/peer-mnist-a 2>&1 | stamp "$t" >"$out/peer-mnist-a.txt"
    echo "exit ${PIPESTATUS[0]} after $(secs $t) s" | tee -a "$out/summary.txt"
    tail -8 "$out/peer-mnist-a.txt" | tee -a "$out/summary.txt"
    python3 scripts/epoch_seconds.py peer "$out/peer-mnist-a.txt" /tmp/peer-mnist-a/results.json \
        | tee -a "$out/summary.txt"
}

# Rows: the paper's schedule, seeds 0, 1, 2, today's defaults, for each preset
# in ANT_ROWS_PRESETS (default mnist-a; "mnist-a mnist-b" for both), all runs at once on
# the one GPU (each is launch-bound: together they fill it better than one after
# another), each cut at ANT_GPU_SECONDS (default 540). Each run's report.json, tree.json,
# records and log come back, and a line per run: test error multi / single path,
# parameters, seconds. ANT_ROWS_DEVICE (default cuda) and ANT_ROWS_ARGS (extra `ant
# train` options) let the step be tried on a CPU first, e.g.
# ANT_ROWS_DEVICE=cpu ANT_ROWS_ARGS="--train-limit 300 --refine-epochs 1".
rows() {
    local limit="${ANT_GPU_SECONDS:-540}" dev="${ANT_ROWS_DEVICE:-cuda}"
    local presets="${ANT_ROWS_PRESETS:-mnist-a}"
    say "$presets, seeds 0 1 2, paper schedule, all at once on $dev (cut at $limit s)"
    local t=$(date +%s) pids=()
    rm -rf /tmp/ant-rows
    for preset in $presets; do
        for seed in 0 1 2; do
            local run="/tmp/ant-rows/$preset-s$seed"
            mkdir -p /tmp/ant-rows
            # shellcheck disable=SC2086 # ANT_ROWS_ARGS is a list of options
            OMP_NUM_THREADS=2 timeout "$limit" "$stage/ant" train --device "$dev" \
                --preset "$preset" --seed "$seed" --data data/mnist --out "$run" \
                ${ANT_ROWS_ARGS:-} >"$out/rows-$preset-s$seed.txt" 2>&1 &
            pids+=($!)
        done
    done
    for p in "${pids[@]}"; do wait "$p"; done
    echo "all ended after $(secs $t) s" | tee -a "$out/summary.txt"
    python3 - /tmp/ant-rows <<'PY' | tee -a "$out/summary.txt"
import json, pathlib, sys
for run in sorted(pathlib.Path(sys.argv[1]).iterdir()):
    try:
        r = json.loads((run / "report.json").read_text())
    except (OSError, ValueError):
        print(f"{run.name}: no report (cut, or failed: see its log)")
        continue
    print(f"{run.name}: error {r['multi_path_error']}% / {r['single_path_error']}%, "
          f"{r['params_total']} params ({r['params_single_path_avg']:.0f} on one path), "
          f"{r['leaves']} leaves, {r['train_seconds']:.0f} s")
PY
    tar czf "$out/rows-runs.tgz" -C /tmp --exclude='*.safetensors' --exclude='checkpoints' \
        ant-rows 2>/dev/null
}

# The ensemble of 8 mnist-a trees (the paper's 0.29%): the members at once on the
# one GPU (`--ensemble 8 --member K`, each in its own process; the first to start writes
# ensemble.json, the others wait for it and match it), each cut at ANT_GPU_SECONDS, then
# the ensemble's test error. A member cut short is finished later with `ant train
# --resume /tmp/ant-ensemble` (on any device).
ensemble() {
    local limit="${ANT_GPU_SECONDS:-540}" dev="${ANT_ROWS_DEVICE:-cuda}" ens=/tmp/ant-ensemble
    say "mnist-a ensemble of 8, paper schedule, members at once on $dev (cut at $limit s)"
    local t=$(date +%s) pids=()
    rm -rf "$ens"
    for k in 0 1 2 3 4 5 6 7; do
        # shellcheck disable=SC2086 # ANT_ROWS_ARGS is a list of options
        OMP_NUM_THREADS=2 timeout "$limit" "$stage/ant" train --device "$dev" \
            --preset mnist-a --data data/mnist --ensemble 8 --member "$k" --out "$ens" \
            ${ANT_ROWS_ARGS:-} >"$out/ensemble-member-$k.txt" 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    echo "all ended after $(secs $t) s" | tee -a "$out/summary.txt"
    "$stage/ant" eval --model "$ens" --data data/mnist --json --device "$dev" \
        | tee "$out/ensemble-eval.json" | tee -a "$out/summary.txt"
    tar czf "$out/ensemble-runs.tgz" -C /tmp --exclude='checkpoints' ant-ensemble 2>/dev/null
}

for step in "${@:-checks}"; do
    case "$step" in
        checks) checks ;;
        profile) profile ;;
        mnist-a) mnist_a ;;
        peer-mnist-a) peer_mnist_a ;;
        rows) rows ;;
        ensemble) ensemble ;;
        *) echo "unknown step $step" >&2; exit 2 ;;
    esac
done
