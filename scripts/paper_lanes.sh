#!/usr/bin/env bash
# Issue 40's long rows in two lanes of one thread each, niced, in the background: Table 4
# on SARCOS and MNIST, the patience study, the eight mnist-a ensemble members. Each row
# keeps what finished and resumes what was cut (scripts/results.sh), so running this
# again after a session's end goes on where the runs stopped. A copy of the binary runs,
# so that rebuilding meanwhile changes nothing.
#
#     bash scripts/paper_lanes.sh          # logs: runs/results/lane-1.log, lane-2.log
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x target/release/ant ] || cargo build --release --quiet
mkdir -p runs/results
cp target/release/ant runs/results/ant-lanes
export ANT_BIN=runs/results/ant-lanes RAYON_NUM_THREADS=1
lane() { for r in "$@"; do nice -n 10 bash scripts/results.sh "$r" || echo "$r: failed ($?)"; done; }
# Whole sections first (patience), then Table 4 and the ensemble's members, the ensemble
# scored as soon as its last member ends (in whichever lane), then the longest HMEs
# (mnist-c's third seed, mnist-b) last.
lane table4-sarcos patience patience-plot table4-mnist-c-seed0 table4-mnist-c-seed1 \
    mnist-a-ensemble-0 mnist-a-ensemble-2 mnist-a-ensemble-4 mnist-a-ensemble-6 \
    mnist-a-ensemble-eval table4-mnist-c-seed2 >>runs/results/lane-1.log 2>&1 &
lane table4-mnist-a table4-mnist-b-no-router mnist-a-ensemble-1 mnist-a-ensemble-3 \
    mnist-a-ensemble-5 mnist-a-ensemble-7 mnist-a-ensemble-eval table4-mnist-b \
    >>runs/results/lane-2.log 2>&1 &
echo "lanes started: tail -f runs/results/lane-1.log runs/results/lane-2.log"
