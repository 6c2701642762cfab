#!/usr/bin/env bash
# Regenerates the rows of docs/RESULTS.md, each alone or all in turn (hours on 2 cores;
# not part of CI). Every row's model and logs go to runs/results/ROW; the numbers are in
# its report.json (one tree) or its `ant eval --json` output (ensembles).
#
#     bash scripts/results.sh ROW...        # e.g. sarcos-ensemble
#     bash scripts/results.sh all
#
# Rows: mnist-a  mnist-b  mnist-a-paper  mnist-b-paper  mnist-a-cnn  mnist-a-star  mnist-a-cnn-full  mnist-a-star-full
#       mnist-a-holdout  mnist-baselines  mnist-a-ensemble
#       mnist-c-full  mnist-c-default  mnist-c-full-paper  mnist-c-5k  sarcos  sarcos-ensemble
#       table4-sarcos  table4-mnist-c  table4-mnist-a  table4-mnist-b  patience  patience-plot
#       table4-mnist-c-seedS (S = 0..2, both ablations of one seed)
#       table4-mnist-a-no-router (and -no-transformer; the same for mnist-b: one ablation each)
#       mnist-a-ensemble-K (K = 0..7, one member each)  mnist-a-ensemble-eval
#       mnist-c-5k-ensemble  fig4  side-by-side-sarcos  side-by-side-mnist5k
#       fidelity-5k  fidelity-full  fidelity-valid-rows   (the fidelity controls of docs/JOURNAL.md; ANT_DEVICE=torch for
#       LibTorch, which the report's numbers used: source scripts/torch-env.sh first)
set -euo pipefail
cd "$(dirname "$0")/.."
ant="${ANT_BIN:-target/release/ant}"
root=runs/results
mkdir -p "$root"

train() { # row, ant train flags...
    local row=$1; shift
    "$ant" train "$@" --out "$root/$row" --force >"$root/$row.log" 2>&1
    echo "$row: $(tail -1 "$root/$row.log")"
}

# Like train, but a row that finished is kept and one that was cut (a machine's time
# ending, a kill) continues from its last epoch: the long rows of Table 4 outlast a machine.
train_or_resume() { # row, ant train flags...
    local row=$1 dir="$root/$1"; shift
    if [ -f "$dir/report.json" ] && [ ! -d "$dir/checkpoint" ]; then
        echo "$row: kept ($dir/report.json)"
    elif [ -d "$dir/checkpoint" ]; then
        "$ant" train --resume "$dir" >>"$root/$row.log" 2>&1
        echo "$row: $(tail -1 "$root/$row.log")"
    else
        "$ant" train "$@" --out "$dir" >"$root/$row.log" 2>&1
        echo "$row: $(tail -1 "$root/$row.log")"
    fi
}

ensemble() { # row, data, ant train flags...
    local row=$1 data=$2; shift 2
    "$ant" train "$@" --data "$data" --ensemble 8 --out "$root/$row" --force >"$root/$row.log" 2>&1
    "$ant" eval --model "$root/$row" --data "$data" --json >"$root/$row.json"
    echo "$row: $root/$row.json"
}

row() {
    case "$1" in
        # The paper's Table 1 on MNIST, its protocol being the defaults: seeds
        # 0, 1, 2 each; RAYON_NUM_THREADS=1 runs two rows at once on 2 cores. The rows
        # without -paper ran under `--accept z:1`, the default until d99e1d4.
        mnist-a|mnist-b) for seed in 0 1 2; do
                train "$1-seed$seed" --preset "$1" --data data/mnist --seed "$seed" --accept z:1
            done ;;
        # The paper's acceptance rule (the default since d99e1d4).
        mnist-a-paper|mnist-b-paper) for seed in 0 1 2; do
                train "$1-seed$seed" --preset "${1%-paper}" --data data/mnist --seed "$seed" --accept paper
            done ;;
        # The single-path CNN the pretrained start (*) begins from, and mnist-a* itself.
        # (one CNN per seed: a start must hold out the run's own validation rows)
        mnist-a-cnn) train "$1" --preset mnist-a --data data/mnist --baseline cnn ;;
        mnist-a-star) train mnist-a-cnn-seed1 --preset mnist-a --data data/mnist --baseline cnn --seed 1
            train mnist-a-cnn-seed2 --preset mnist-a --data data/mnist --baseline cnn --seed 2
            for seed in 0 1 2; do
                local cnn="$root/mnist-a-cnn-seed$seed"
                [ "$seed" = 0 ] && cnn="$root/mnist-a-cnn"
                train "$1-seed$seed" --preset mnist-a --data data/mnist --seed "$seed" --init-from "$cnn" \
                    --accept z:1
            done ;;
        # The same from a CNN trained all 100 epochs (no early stop), one per seed.
        mnist-a-cnn-full) train "$1" --preset mnist-a --data data/mnist --baseline cnn --patience 100
            for seed in 1 2; do
                train "$1-seed$seed" --preset mnist-a --data data/mnist --baseline cnn \
                    --patience 100 --seed "$seed"
            done ;;
        mnist-a-star-full) for seed in 0 1 2; do
                local cnn="$root/mnist-a-cnn-full-seed$seed"
                [ "$seed" = 0 ] && cnn="$root/mnist-a-cnn-full"
                train "$1-seed$seed" --preset mnist-a --data data/mnist --seed "$seed" --init-from "$cnn" \
                    --accept z:1
            done ;;
        # The held-out study: MNIST's first 54,000 training images to train on
        # (validation rows drawn from them), its last 6,000 as the test set, which no
        # choice was made on: the default then (z:1), the paper's acceptance rule, the NLL
        # rule; seed 1.
        mnist-a-holdout) python3 scripts/mnist_holdout.py data/mnist runs/mnist-holdout
            train holdout-a-default --preset mnist-a --data runs/mnist-holdout --accept z:1
            train holdout-a-paper --preset mnist-a --data runs/mnist-holdout --accept paper
            train holdout-a-nll --preset mnist-a --data runs/mnist-holdout --select nll --accept z:1
            train holdout-a-default-seed1 --preset mnist-a --data runs/mnist-holdout --seed 1 --accept z:1
            train holdout-a-paper-seed1 --preset mnist-a --data runs/mnist-holdout --seed 1 \
                --accept paper ;;
        mnist-baselines) for b in linear mlp-1 mlp-2; do
                train "mnist-baseline-$b" --preset mnist-a --data data/mnist --baseline "$b"
            done ;;
        # Eight trees (about eight times a seed's time: for a GPU, or a long night).
        mnist-a-ensemble) ensemble "$1" data/mnist --preset mnist-a --device "${ANT_DEVICE:-cpu}" ;;
        mnist-c-full) train "$1" --preset mnist-c --data data/mnist --augment none \
            --refine-epochs 5 --router-balance 1 --router-confidence 0.2 ;;
        # The paper's mnist-c row with shifted images, the defaults of the build that
        # measured it (RESULTS ran it with ANT_DEVICE=torch and --select nll).
        mnist-c-full-paper) for seed in 0 1 2; do
                train "$1-seed$seed" --preset mnist-c --data data/mnist --seed "$seed" \
                    --augment shift --patience 10 --select nll --device "${ANT_DEVICE:-cpu}"
            done ;;
        # mnist-c under today's defaults (the paper's protocol), the paper's full schedule.
        mnist-c-default) for seed in 0 1 2; do
                train "$1-seed$seed" --preset mnist-c --data data/mnist --seed "$seed"
            done ;;
        mnist-c-5k) for seed in 0 1 2; do
                train "$1-seed$seed" --preset mnist-c --data data/mnist --train-limit 5000 --seed "$seed" \
                    --accept z:1
            done ;;
        sarcos) train "$1" --preset sarcos --data data/sarcos_inv_test.mat --test-fraction 0.2 ;;
        sarcos-ensemble) ensemble "$1" data/sarcos_inv_test.mat --preset sarcos --test-fraction 0.2 ;;
        mnist-c-5k-ensemble) ensemble "$1" data/mnist --preset mnist-c --train-limit 5000 \
            --device "${ANT_DEVICE:-cpu}" ;;
        fig4) bash scripts/fig4.sh "$root/fig4" ;;
        # One setting changed at a time against the defaults when they ran (mean
        # subtraction, the best refinement epoch by validation NLL, MNIST not augmented).
        fidelity-5k) for arm in "mean-nll:--select nll" "mean-std-nll:--image-norm mean-std --select nll" \
                "mean-metric:--select metric"; do
                for seed in 0 1 2; do
                    # shellcheck disable=SC2086 # the arm's flags are words
                    train "$1-${arm%%:*}-seed$seed" --preset mnist-c --data data/mnist \
                        --train-limit 5000 --seed "$seed" --device "${ANT_DEVICE:-cpu}" ${arm#*:}
                done
            done ;;
        fidelity-full) for arm in "mean-nll:--select nll" "mean-std-nll:--image-norm mean-std --select nll" \
                "mean-metric:--select metric"; do
                # shellcheck disable=SC2086
                train "$1-${arm%%:*}" --preset mnist-c --data data/mnist \
                    --device "${ANT_DEVICE:-cpu}" ${arm#*:}
            done ;;
        fidelity-valid-rows) # the peer's validation rows: the last 10% of the training rows
            for seed in 0 1 2; do
                train "$1-5k-seed$seed" --preset mnist-c --data data/mnist --train-limit 5000 \
                    --seed "$seed" --device "${ANT_DEVICE:-cpu}" --valid-rows last
            done
            train "$1-full-mean-std" --preset mnist-c --data data/mnist \
                --device "${ANT_DEVICE:-cpu}" --image-norm mean-std --valid-rows last ;;
        side-by-side-sarcos) bash scripts/side-by-side.sh sarcos "$root/$1" ;;
        side-by-side-mnist5k) bash scripts/side-by-side.sh mnist5k "$root/$1" ;;
        all) for r in sarcos sarcos-ensemble mnist-c-5k mnist-c-5k-ensemble mnist-c-full \
                mnist-c-full-paper fig4 side-by-side-sarcos side-by-side-mnist5k; do row "$r"; done ;;
        # Table 4: the ANT against the same growth without routers (a CNN that
        # only deepens) and without transformers (an HME); SARCOS on the README's split.
        table4-sarcos) for seed in 0 1 2; do
                for ab in none no-router no-transformer; do
                    train_or_resume "$1-$ab-seed$seed" --preset sarcos --data data/sarcos_inv_test.mat \
                        --test-fraction 0.2 --seed "$seed" --ablation "$ab"
                done
            done ;;
        table4-mnist-c) for seed in 0 1 2; do row "$1-seed$seed"; done ;;
        table4-mnist-c-seed[0-2]) local seed=${1##*-seed}
            for ab in no-router no-transformer; do
                train_or_resume "table4-mnist-c-$ab-seed$seed" --preset mnist-c --data data/mnist \
                    --seed "$seed" --ablation "$ab"
            done ;;
        table4-mnist-a|table4-mnist-b) for ab in no-router no-transformer; do
                row "$1-$ab"
            done ;;
        table4-mnist-[ab]-no-router|table4-mnist-[ab]-no-transformer) local preset=${1#table4-}
            train_or_resume "$1-seed0" --preset "${preset%%-no-*}" --data data/mnist --ablation "${1#table4-mnist-?-}" ;;
        # The supplement's patience study: mnist-c, seed 0, growth patience 1, 5 and 15;
        # `ant curves --run A --run B --run C` draws them on one picture.
        patience) for p in 1 5 15; do
                train_or_resume "$1-$p" --preset mnist-c --data data/mnist --patience "$p"
            done ;;
        patience-plot) "$ant" curves --run "$root/patience-1" --run "$root/patience-5" \
                --run "$root/patience-15" --out "$root/patience.svg" ;;
        # The supplement's ensemble of 8 mnist-a trees, one member a row (each member draws
        # its own validation rows), then the ensemble scored.
        mnist-a-ensemble-[0-7]) local k=${1##*-} dir="$root/mnist-a-ensemble8"
            if [ -f "$dir/member-$k/report.json" ] && [ ! -d "$dir/member-$k/checkpoint" ]; then
                echo "$1: kept"
            elif [ -d "$dir/member-$k/checkpoint" ]; then
                "$ant" train --resume "$dir/member-$k" >>"$root/$1.log" 2>&1
            else
                "$ant" train --preset mnist-a --data data/mnist --ensemble 8 --member "$k" --out "$dir" \
                    >"$root/$1.log" 2>&1
            fi
            echo "$1: $(tail -1 "$root/$1.log")" ;;
        mnist-a-ensemble-eval) local k
            for k in 0 1 2 3 4 5 6 7; do # all eight members, finished, or no score
                if [ ! -f "$root/mnist-a-ensemble8/member-$k/report.json" ] \
                    || [ -d "$root/mnist-a-ensemble8/member-$k/checkpoint" ]; then
                    echo "$1: member $k has not finished; not scored"; return 0
                fi
            done
            "$ant" eval --model "$root/mnist-a-ensemble8" --data data/mnist --json \
                >"$root/mnist-a-ensemble8.json"
            echo "$1: $root/mnist-a-ensemble8.json" ;;
        *) echo "unknown row $1 (see the head of $0)" >&2; exit 2 ;;
    esac
}

for r in "${@:?name a row, or all}"; do row "$r"; done
