#!/usr/bin/env bash
# Seeds for the `model` fuzz target: real models (tree.json, a NUL byte, the weights)
# trained by the CLI (`cargo build --release` first): a tabular tree with splits and a
# small mnist-c tree (convolutions), in fuzz/corpus/model.
#   bash fuzz/model-seeds.sh && cargo +nightly fuzz run model -- -max_len=262144
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
ant="${ANT_BIN:-$repo/target/release/ant}"
out="$repo/fuzz/corpus/model"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
python3 - "$tmp/q.csv" <<'PY'
import random, sys
random.seed(0)
with open(sys.argv[1], "w") as f:
    f.write("a,b,y\n")
    for _ in range(600):
        a, b = random.uniform(-1, 1), random.uniform(-1, 1)
        f.write(f"{a:.4f},{b:.4f},{0 if a > 0 and b > 0 else 1 if a <= 0 and b <= 0 else 2}\n")
PY
"$ant" train --preset tabular --data "$tmp/q.csv" --target y --task classification \
    --ablation no-transformer --width 8 --epochs-node 12 --refine-epochs 3 --seed 5 \
    --out "$tmp/tabular" 2>/dev/null
"$ant" train --preset mnist-c --data "$repo/data/mnist" --train-limit 300 --epochs-node 1 \
    --refine-epochs 1 --max-depth 1 --seed 0 --out "$tmp/mnist" 2>/dev/null
for m in tabular mnist; do
    weights=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["weights"]["file"])' "$tmp/$m/tree.json")
    { cat "$tmp/$m/tree.json"; printf '\0'; cat "$tmp/$m/$weights"; } > "$out/$m"
done
ls -l "$out"
