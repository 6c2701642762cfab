#!/usr/bin/env bash
# Train-step times of one or more builds of `ant` beside the PyTorch peer, in rounds, in
# one sitting (the speed tables in docs/RESULTS.md):
#
#     scripts/step_rounds.sh ROUNDS NAME=BENCH [NAME=BENCH ...] > rounds.log
#
# BENCH is a `train_step` bench binary built with `--features torch` (`cargo bench
# --features torch --bench train_step --no-run` prints its path); copy it before building
# another commit. Each round: batch 16 and 512 on `torch` and `cpu` with two threads, the
# peer at each batch, then batch 16 on `torch` with one thread. Needs
# `source scripts/torch-env.sh` (its torch runs the peer) and ../shared/peer.
set -euo pipefail
rounds=$1; shift
peer="$(dirname "$0")/../../shared/peer/torch_step_bench.py"
ant() { # name bench device batch threads
    echo "== $1 $3 batch $4 threads $5"
    OMP_NUM_THREADS=$5 RAYON_NUM_THREADS=$5 ANT_DEVICE=$3 ANT_BENCH_BATCH=$4 "$2" --bench \
        --warm-up-time 2 --measurement-time 4 2>&1 | grep -E "^W[12] |time:" | paste - - |
        sed -E 's/ +/ /g' | grep -v Warning || true
}
peer() { echo "== peer batch $1 threads $2"; BENCH_BATCH=$1 python3 "$peer" all "$2" 2>&1 | grep "train:"; }
for round in $(seq "$rounds"); do
    echo "##### round $round $(date -u +%T)"
    for b in 16 512; do
        for nb in "$@"; do ant "${nb%%=*}" "${nb#*=}" torch $b 2; ant "${nb%%=*}" "${nb#*=}" cpu $b 2; done
        peer $b 2
    done
    for nb in "$@"; do ant "${nb%%=*}" "${nb#*=}" torch 16 1; done
    peer 16 1
done
echo "##### done $(date -u +%T)"
