#!/usr/bin/env bash
# Wall time and test score of the same job on `--device cpu`, `--device torch` and the
# independent PyTorch ANT (../shared/peer/torch_ant), one after the other on this machine.
#
#     bash scripts/side-by-side.sh sarcos|mnist5k [OUT_DIR]
#
# sarcos:  the 4,449-row SARCOS file, 20% held out, the preset's schedule (300 refinement epochs)
# mnist5k: 5,000 MNIST training images, mnist-c, growth then 2 refinement epochs
# Needs a build with `--features torch` (scripts/torch-env.sh) and the peer beside the repo.
set -euo pipefail
cd "$(dirname "$0")/.."
job="${1:?sarcos or mnist5k}"
out="${2:-runs/side-by-side-$job}"
peer="${ANT_PEER:-../shared/peer/torch_ant/ant.py}"
source scripts/torch-env.sh
mkdir -p "$out"
case "$job" in
    sarcos)
        ours=(--preset sarcos --data data/sarcos_inv_test.mat --test-fraction 0.2)
        theirs=(--preset sarcos --data data/sarcos_inv_test.mat --sarcos-split) ;;
    mnist5k)
        ours=(--preset mnist-c --data data/mnist --train-limit 5000 --refine-epochs 2)
        theirs=(--preset mnist-c --data data/mnist --train-subset 5000 --refine-epochs 2) ;;
    *) echo "unknown job $job" >&2; exit 2 ;;
esac
timed() { # name, command...
    local name=$1; shift
    local t0; t0=$(date +%s.%N)
    "$@" >"$out/$name.log" 2>&1
    printf '%-6s %7.1f s  %s\n' "$name" "$(echo "$(date +%s.%N) - $t0" | bc)" \
        "$(tail -1 "$out/$name.log" | cut -c1-160)"
}
for d in cpu torch; do
    timed "$d" "${ANT_BIN:-./target/release/ant}" train "${ours[@]}" --device "$d" --out "$out/$d" --force
done
timed peer python -W ignore "$peer" "${theirs[@]}" --threads "$(nproc)" --quiet --out "$out/peer"
