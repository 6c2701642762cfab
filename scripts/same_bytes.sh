#!/usr/bin/env bash
# Whether two builds of `ant` give the same models: runs the same short commands with
# each (the README's first command too with --full) and compares every file they write,
# byte for byte, but for the lines that hold wall times. For restructurings that must
# change no result.
#
#     bash scripts/same_bytes.sh OLD_ANT NEW_ANT [--full]
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2 full=${3:-}
root=$(mktemp -d)
runs=(
    "mnist-c|train --preset mnist-c --data data/mnist --train-limit 2000 --refine-epochs 2 --epochs-node 3 --max-depth 2 --accept paper"
    "mnist-a|train --preset mnist-a --data data/mnist --train-limit 600 --refine-epochs 1 --epochs-node 1 --max-depth 1"
    "sarcos|train --preset sarcos --data data/sarcos_inv_test.mat --refine-epochs 3 --epochs-node 3 --max-depth 2 --width 32"
    "iris|train --preset tabular --data data/small/iris.csv --target 4 --skip-rows 1 --task classification --refine-epochs 3 --epochs-node 5 --max-depth 2 --width 16"
    "cnn|train --preset mnist-c --data data/mnist --train-limit 1000 --baseline cnn --refine-epochs 2"
    "ensemble|train --preset tabular --data data/small/iris.csv --target 4 --skip-rows 1 --task classification --refine-epochs 2 --epochs-node 3 --max-depth 1 --width 8 --ensemble 2"
)
[ "$full" = --full ] && runs+=("readme|train --preset mnist-c --data data/mnist --refine-epochs 5 --router-balance 1 --router-confidence 0.2")
for which in old new; do
    bin=$old; [ $which = new ] && bin=$new
    for r in "${runs[@]}"; do
        name=${r%%|*}; args=${r#*|}
        # shellcheck disable=SC2086
        "$bin" $args --out "$root/$which/$name" >/dev/null 2>&1
    done
    "$bin" prune --model "$root/$which/mnist-c" --data data/mnist --min-reach 0.05 \
        --out "$root/$which/mnist-c-pruned" >/dev/null
    "$bin" predict --model "$root/$which/iris" --input data/small/iris.csv \
        --output "$root/$which/iris-predictions.csv" 2>/dev/null
done
# Wall times are the only lines allowed to differ.
# The file list (ant-files.json) holds checksums of the files with wall times: those
# entries are left out there (the files themselves are compared, times stripped).
strip() {
    case $1 in
        */ant-files.json) python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [d["files"].pop(k) for k in list(d["files"]) if k.endswith(("report.json","records.jsonl"))]; print(json.dumps(d, sort_keys=True))' "$1" ;;
        *) sed -E 's/"([a-z_]*seconds)": ?[0-9.e+-]+/"\1": T/g' "$1" ;;
    esac
}
bad=0
while IFS= read -r f; do
    rel=${f#"$root/old/"}
    if ! cmp -s "$f" "$root/new/$rel" && ! diff -q <(strip "$f") <(strip "$root/new/$rel") >/dev/null; then
        echo "differs: $rel"; bad=1
    fi
done < <(find "$root/old" -type f | sort)
n=$(find "$root/old" -type f | wc -l)
[ "$(find "$root/new" -type f | wc -l)" = "$n" ] || { echo "different sets of files"; bad=1; }
[ $bad = 0 ] && echo "same bytes: $n files"
rm -rf "$root"
exit $bad
