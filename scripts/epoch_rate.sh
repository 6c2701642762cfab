#!/usr/bin/env bash
# How near the hardware a refinement epoch runs. For each preset's one-path
# tree (`--baseline cnn`, trained 2 epochs on full MNIST) and, given as a run directory,
# any grown tree: the achieved FLOP/s of a refinement epoch (the FLOPs `ant eval` counts
# for the tree, times 3 for each training image (forward, and about twice that
# backward) plus 1 for each validation image, over the epoch's seconds) beside the
# machine's 2-thread matrix-multiply rate (`gemm`, the crate ant's kernels use; and
# PyTorch's where python3 has torch), measured in the same run, and the run's peak RSS
# beside the training images' f32 size; where torch runs, PyTorch's own epoch of the same
# one-path tree (scripts/torch_epoch.py) and its share of PyTorch's matrix-multiply rate.
#
#     bash scripts/epoch_rate.sh [PRESET|RUN_DIR ...]   # default: mnist-a mnist-b mnist-c
#
# A RUN_DIR's refinement epochs come from its records.jsonl (timed when it ran; its peak
# RSS is not known). Name the machine (AVX2 or AVX-512) beside the numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
export RAYON_NUM_THREADS="${RAYON_NUM_THREADS:-2}"
cargo build --release --quiet --bin ant --example gemm_rate
ant=${ANT_BIN:-target/release/ant}  # ANT_BIN: another build, to compare
# The machine's rate: the best of three runs (each the best of 10) before the epochs and
# three after them: on a shared machine it moves by 20% between runs.
gemm_best() { for _ in 1 2 3; do target/release/examples/gemm_rate; done | sort -g | tail -1; }
gemm=$(gemm_best)
torch=$(python3 - <<'PY' 2>/dev/null || echo "-"
import time, torch
torch.set_num_threads(2)
a, b = torch.rand(2048, 2048), torch.rand(2048, 2048)
best = min((lambda t: (a @ b, time.perf_counter() - t)[1])(time.perf_counter()) for _ in range(10))
print(f"{2 * 2048**3 / best / 1e9:.1f}")
PY
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for what in "${@:-mnist-a mnist-b mnist-c}"; do
  for w in $what; do
    if [ -d "$w" ]; then
        dir=$w rss="-"
    else
        dir=$tmp/$w
        /usr/bin/time -f %M -o "$tmp/$w.rss" "$ant" train --preset "$w" --data data/mnist \
            --baseline cnn --refine-epochs 2 --patience 100 --out "$dir" >/dev/null 2>&1
        rss=$(( $(cat "$tmp/$w.rss") / 1024 ))
    fi
    # PyTorch's epoch of the same one-path tree (scripts/torch_epoch.py), where it runs.
    tsec=$( [ "$torch" != "-" ] && python3 scripts/torch_epoch.py "$dir" 54000 6000 "$RAYON_NUM_THREADS" 2>/dev/null || echo "-")
    python3 - "$dir" "$ant" "$rss" "$w" "$tsec" >>"$tmp/rows" <<'PY'
import json, subprocess, sys
d, ant, rss, name, tsec = sys.argv[1:]
ev = json.loads(subprocess.run([ant, "eval", "--model", d, "--data", "data/mnist", "--json"], check=True, capture_output=True).stdout)
tree = json.load(open(f"{d}/tree.json"))
p = tree["provenance"]
recs = [json.loads(l) for l in open(f"{d}/records.jsonl") if l.strip()]
refine = [r["seconds"] for r in recs if r["phase"] in ("refine", "baseline")]
sec = min(refine[1:] or refine)  # the first epoch warms up
f = ev["flops_multi_path"]
work = f * (3 * p["n_train"] + p["n_valid"])
torch = {"torch_sec": float(tsec), "torch_rate": f * (3 * 54000 + 6000) / float(tsec) / 1e9} if tsec != "-" else {}
print(json.dumps({"name": name, "params": ev["params_total"], "flops": f, "sec": sec,
                  "rate": work / sec / 1e9, "rss": rss, **torch}))
PY
  done
done
gemm=$(printf '%s\n%s\n' "$gemm" "$(gemm_best)" | sort -g | tail -1)
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(grep -q avx512f /proc/cpuinfo && echo AVX-512 || echo AVX2 only), $RAYON_NUM_THREADS threads"
echo "matrix multiply 2048^3: gemm $gemm GFLOP/s, PyTorch $torch GFLOP/s"
echo
echo "| tree | params | MFLOP per image | s per epoch | achieved GFLOP/s | of gemm's rate | of PyTorch's rate | PyTorch's epoch: s, GFLOP/s, of its rate | peak RSS MiB (images as f32: 179 MiB) |"
echo "|---|---|---|---|---|---|---|---|---|"
python3 - "$gemm" "$torch" "$tmp/rows" <<'PY'
import json, sys
gemm, torch = float(sys.argv[1]), sys.argv[2]
share = lambda rate: f"{100 * rate / float(torch):.0f}%" if torch != "-" else "-"
for line in open(sys.argv[3]):
    r = json.loads(line)
    peer = f"{r['torch_sec']:.1f}, {r['torch_rate']:.1f}, {share(r['torch_rate'])}" if "torch_sec" in r else "-"
    print(f"| {r['name']} | {r['params']:,} | {r['flops']/1e6:.2f} | {r['sec']:.1f} | {r['rate']:.1f} | "
          f"{100*r['rate']/gemm:.0f}% | {share(r['rate'])} | {peer} | {r['rss']} |")
PY
