#!/usr/bin/env bash
# The long rows of docs/RESULTS.md (Table 4 and the supplement) in lanes of one thread
# each, niced, in the background (all finished by 2026-11-29, a2500dc). The rows that
# finished (the ensemble of 8, every other Table 4 row) are in docs/RESULTS.md and run no
# more. Each row keeps what finished and resumes what was cut (scripts/results.sh);
# scripts/carry.sh brings cut runs from an earlier machine first, so running this again
# on a later machine goes on where the runs stopped. A copy of the binary runs, so that
# rebuilding meanwhile changes nothing.
#
#     bash scripts/paper_lanes.sh          # logs: runs/results/lane-1.log, lane-2.log
#     bash scripts/carry.sh save           # before the machine's time ends, then commit carry/
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x target/release/ant ] || cargo build --release --quiet
mkdir -p runs/results
bash scripts/carry.sh restore
cp target/release/ant runs/results/ant-lanes
export ANT_BIN=runs/results/ant-lanes RAYON_NUM_THREADS=1
lane() { for r in "$@"; do nice -n 10 bash scripts/results.sh "$r" || echo "$r: failed ($?)"; done; }
# The last row (mnist-b's HME) finished with a2500dc: no lane is left to run. To run a row
# again in a lane, name it here, e.g.
#     lane table4-mnist-b-no-transformer >>runs/results/lane-2.log 2>&1 &
# (a finished row's archive is not kept in carry/: on another machine it trains anew).
echo "issue 40's long rows have all finished (docs/RESULTS.md); carry/ restored into runs/results"
