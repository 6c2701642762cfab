#!/usr/bin/env bash
# Reading MNIST's 70,000 PNG files: `ant` (the image-folder reader, decoding on every
# core) against Pillow's one-process loop, in turn, three times each, on one machine.
# ant's figure is a whole `ant train` that reads and decodes every file and then stops
# at a refusal (the first 20 rows hold one class), so it bounds the decoding from above.
#
#     bash scripts/decode_bench.sh [PYTHON_WITH_PILLOW_AND_NUMPY]
set -euo pipefail
cd "$(dirname "$0")/.."
py=${1:-python3}
dir=${ANT_BENCH_DIR:-/tmp/ant-mnist-files}
[ -d "$dir/png" ] || python3 scripts/mnist_as_files.py "$dir"
cargo build --release --quiet
loop=$(mktemp)
cat >"$loop" <<'PY'
import os, sys, numpy as np
from PIL import Image
root, n = sys.argv[1], 0
for split in ('train', 'test'):
    for c in sorted(os.listdir(os.path.join(root, split))):
        d = os.path.join(root, split, c)
        for f in sorted(os.listdir(d)):
            np.asarray(Image.open(os.path.join(d, f)).convert('L'), dtype=np.float32) / 255.0
            n += 1
assert n == 70000, n
PY
seconds() { local t0; t0=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; echo "$(date +%s.%N) - $t0" | bc; }
for round in 1 2 3; do
    a=$(seconds ./target/release/ant train --preset mnist-c --data "$dir/png" --train-limit 20 \
        --epochs-node 1 --refine-epochs 0 --max-depth 0 --out "$dir/never")
    b=$(seconds "$py" "$loop" "$dir/png")
    echo "round $round: ant $a s, Pillow $b s, ratio $(echo "scale=2; $b / $a" | bc)"
done
rm -f "$loop"
