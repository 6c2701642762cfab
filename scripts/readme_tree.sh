#!/usr/bin/env bash
# Regenerates docs/tree.png, the README's picture: the README's first command, then
# `ant plot` of it on the MNIST test images. Prints the run's test line; the README's
# caption quotes it.
#
#     bash scripts/readme_tree.sh            (about 4 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
ant="${ANT_BIN:-target/release/ant}"
[ -n "${ANT_BIN:-}" ] || cargo build --release --quiet
out=runs/readme-tree
"$ant" train --preset mnist-c --data data/mnist --refine-epochs 5 --router-balance 1 \
    --router-confidence 0.2 --out "$out" --force 2>&1 | tail -1
"$ant" inspect --model "$out" | head -1
"$ant" plot --model "$out" --data data/mnist --out docs/tree.png
