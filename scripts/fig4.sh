#!/usr/bin/env bash
# The paper's Fig. 4 (left, middle): test error and parameter count against the size of
# the training set, for a grown ANT, a fixed CNN built from the same modules (the preset's
# transformer repeated along one path: the All-CNN role) and a linear classifier, all
# trained by the same loop, data pipeline and early stopping. Writes OUT/fig4.csv (one
# row per run, rows already there are kept) and OUT/fig4.svg (two panels, log x-axis).
#
#   bash scripts/fig4.sh [OUT]            # MNIST, mnist-c: hours on 2 cores
#   DATA=cifar-10-batches-bin PRESET=cifar10-c SIZES="50 250 500 2500 5000 25000 45000" \
#       bash scripts/fig4.sh runs/fig4-cifar
#
# Env: DATA (default data/mnist), PRESET (mnist-c), SIZES (50 250 500 2500 5000 25000
# 60000), MODELS (ant cnn linear), CNN_DEPTH (2: the CNN's transformers; mnist-c's two
# give a 5x10x10 map and 5,770 parameters, the size of the trees grown on a few thousand
# images), SEED (0), ANT_BIN (target/release/ant), EXTRA (more `ant train` flags, e.g.
# --device torch), GROW_EXTRA (flags for the grown ANT only, e.g. --epochs-node 20: a
# baseline refuses growth's options), PYTHON (with matplotlib, for the picture).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-runs/fig4}"
data="${DATA:-$repo/data/mnist}"
preset="${PRESET:-mnist-c}"
sizes="${SIZES:-50 250 500 2500 5000 25000 60000}"
models="${MODELS:-ant cnn linear}"
seed="${SEED:-0}"
ant="${ANT_BIN:-$repo/target/release/ant}"
mkdir -p "$out"
csv="$out/fig4.csv"
[ -f "$csv" ] || echo "train_size,model,test_error,params,train_seconds" > "$csv"
for n in $sizes; do
    for model in $models; do
        if grep -q "^$n,$model," "$csv"; then continue; fi
        dir="$out/$model-$n"
        baseline=()
        # shellcheck disable=SC2206
        [ "$model" = ant ] && baseline=(${GROW_EXTRA:-}) || baseline=(--baseline "$model")
        [ "$model" = cnn ] && baseline+=(--max-depth "${CNN_DEPTH:-2}")
        # shellcheck disable=SC2086
        "$ant" train --preset "$preset" --data "$data" --train-limit "$n" --seed "$seed" \
            --out "$dir" --force "${baseline[@]}" ${EXTRA:-} >"$dir.log" 2>&1 \
            || { tail -3 "$dir.log"; exit 1; }
        python3 - "$dir/report.json" "$n" "$model" >>"$csv" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]},{sys.argv[3]},{r['multi_path_error']:.4f},{r['params_total']},{r['train_seconds']:.1f}")
PY
        tail -1 "$csv"
    done
done
"${PYTHON:-python3}" - "$csv" "$out/fig4.svg" <<'PY'
import csv, sys
import matplotlib
matplotlib.use("svg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
fig, (err, par) = plt.subplots(1, 2, figsize=(10, 4))
for model, style in [("ant", "o-"), ("cnn", "s--"), ("linear", "^:")]:
    pts = sorted((int(r["train_size"]), float(r["test_error"]), int(r["params"]))
                 for r in rows if r["model"] == model)
    if not pts:
        continue
    n, e, p = zip(*pts)
    err.plot(n, e, style, label=model.upper() if model != "linear" else "linear")
    par.plot(n, p, style, label=model.upper() if model != "linear" else "linear")
for ax, label in [(err, "test error (%)"), (par, "parameters")]:
    ax.set_xscale("log")
    ax.set_xlabel("training samples")
    ax.set_ylabel(label)
    ax.legend()
par.set_yscale("log")
fig.tight_layout()
fig.savefig(sys.argv[2])
print("picture:", sys.argv[2])
PY
