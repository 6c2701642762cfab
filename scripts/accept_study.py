"""Choose growth's acceptance rule (and other defaults) on rows that neither training nor
growth saw: issue 22's study.

Each data set is split, with a fixed seed independent of the runs' seeds, into training
rows (growth carves its validation rows from these, as always), *held-out* rows that no
run sees, and the test rows. Every (data set, rule, seed) is trained with `ant train`,
then scored on the held-out rows with `ant predict`; the test score comes from its
`report.json` and is reported beside, never used to choose.

    python scripts/accept_study.py prepare DIR
    python scripts/accept_study.py run DIR [--sets mnist5k,sarcos,digits,breast_cancer]
        [--rules paper,z:1,z:2] [--seeds 0,1,2] [--ant target/release/ant] [-- EXTRA...]
    python scripts/accept_study.py table DIR

`prepare` needs numpy and scipy (SARCOS is a MATLAB file). Results go to
DIR/results.jsonl, one line per run; `run` skips the runs already there, so it resumes.
EXTRA options go to every `ant train` (e.g. `--device torch`, `--image-norm mean-std`);
a label for them is part of each result's key (`--tag`).
"""

import argparse
import gzip
import json
import os
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: MNIST training rows kept out of every run (its last 6,000).
MNIST_HOLDOUT = 6000
#: Fractions of a table for the held-out and the test rows (the rest trains).
TABLE_HOLDOUT, TABLE_TEST = 0.15, 0.2
SPLIT_SEED = 12345


def read_idx(path):
    with gzip.open(path) as f:
        data = f.read()
    dims = data[3]
    shape = struct.unpack(">" + "I" * dims, data[4 : 4 + 4 * dims])
    return shape, data[4 + 4 * dims :]


def prepare(out):
    import numpy as np
    import scipy.io

    out.mkdir(parents=True, exist_ok=True)
    # MNIST: the last 6,000 training images, as an IDX file `ant predict` reads.
    (n, h, w), pixels = read_idx(ROOT / "data/mnist/train-images-idx3-ubyte.gz")
    _, labels = read_idx(ROOT / "data/mnist/train-labels-idx1-ubyte.gz")
    start = n - MNIST_HOLDOUT
    with open(out / "mnist-holdout-images-idx3-ubyte", "wb") as f:
        f.write(struct.pack(">BBBBIII", 0, 0, 8, 3, MNIST_HOLDOUT, h, w))
        f.write(pixels[start * h * w :])
    (out / "mnist-holdout-labels.json").write_text(json.dumps(list(labels[start:])))
    # Tables: train / held-out / test CSV files without a header.
    rng = np.random.default_rng(SPLIT_SEED)
    tables = {
        "sarcos": scipy.io.loadmat(ROOT / "data/sarcos_inv_test.mat")["sarcos_inv_test"],
        "digits": np.loadtxt(gzip.open(ROOT / "data/small/digits.csv.gz"), delimiter=","),
        "breast_cancer": np.loadtxt(ROOT / "data/small/breast_cancer.csv", delimiter=",", skiprows=1),
    }
    for name, rows in tables.items():
        order = rng.permutation(len(rows))
        n_test, n_hold = round(TABLE_TEST * len(rows)), round(TABLE_HOLDOUT * len(rows))
        parts = {
            "test": order[:n_test],
            "holdout": order[n_test : n_test + n_hold],
            "train": order[n_test + n_hold :],
        }
        for part, idx in parts.items():
            np.savetxt(out / f"{name}-{part}.csv", rows[idx], delimiter=",", fmt="%.10g")
    print(f"prepared {out}")


def data_args(name, d):
    """`ant train`'s data options for a data set of the study."""
    if name.startswith("mnist"):
        limit = {"mnist5k": 5000, "mnist54k": 60000 - MNIST_HOLDOUT}[name]
        return ["--preset", "mnist-c", "--data", str(ROOT / "data/mnist"), "--train-limit", str(limit)]
    split = ["--data", str(d / f"{name}-train.csv"), "--test-data", str(d / f"{name}-test.csv")]
    if name == "sarcos":
        return ["--preset", "sarcos", *split]
    target = {"digits": "64", "breast_cancer": "30"}[name]
    return ["--preset", "tabular", *split, "--target", target, "--task", "classification"]


def holdout_score(name, d, ant, model):
    """Held-out error (%) or MSE of `model`."""
    if name.startswith("mnist"):
        rows, truth = d / "mnist-holdout-images-idx3-ubyte", json.loads((d / "mnist-holdout-labels.json").read_text())
    else:
        rows = d / f"{name}-holdout.csv"
        truth = [line.split(",") for line in rows.read_text().split()]
    pred = d / "pred.csv"
    subprocess.run([ant, "predict", "--model", str(model), "--input", str(rows), "--output", str(pred)], check=True)
    lines = pred.read_text().split()
    header, body = lines[0].split(","), [line.split(",") for line in lines[1:]]
    if name == "sarcos":
        cols = [header.index(f"prediction_{j}") for j in range(7)]
        sq = [(float(r[c]) - float(t[21 + j])) ** 2 for r, t in zip(body, truth) for j, c in enumerate(cols)]
        return sum(sq) / len(sq)
    col = header.index("prediction")
    want = truth if name.startswith("mnist") else [int(float(t[-1])) for t in truth]
    wrong = sum(int(float(r[col])) != int(y) for r, y in zip(body, want))
    return 100.0 * wrong / len(body)


def run(d, sets, rules, seeds, ant, extra, tag):
    results = d / "results.jsonl"
    done = set()
    if results.exists():
        done = {(r["set"], r["rule"], r["seed"], r["tag"]) for r in map(json.loads, results.read_text().split("\n")[:-1])}
    for name in sets:
        for seed in seeds:
            for rule in rules:
                if (name, rule, seed, tag) in done:
                    continue
                out = d / "runs" / f"{name}-{rule.replace(':', '')}-s{seed}{'-' + tag if tag else ''}"
                cmd = [ant, "train", *data_args(name, d), "--accept", rule, "--seed", str(seed), "--out", str(out), *extra]
                out.parent.mkdir(parents=True, exist_ok=True)
                shutil.rmtree(out, ignore_errors=True)  # an interrupted earlier try
                print(" ".join(cmd), flush=True)
                t0 = time.time()
                subprocess.run(cmd, check=True, stderr=open(str(out) + ".log", "w"))
                wall = time.time() - t0
                report = json.loads((out / "report.json").read_text())
                key = "multi_path_mse" if "multi_path_mse" in report else "multi_path_error"
                row = {
                    "set": name, "rule": rule, "seed": seed, "tag": tag,
                    "params": report["params_total"], "params_single_path": report["params_single_path_avg"],
                    "leaves": report["leaves"], "holdout": holdout_score(name, d, ant, out),
                    "test": report[key], "valid_nll": report["valid_nll"], "wall_s": round(wall, 1),
                }
                print(json.dumps(row), flush=True)
                with open(results, "a") as f:
                    f.write(json.dumps(row) + "\n")


def table(d):
    rows = [json.loads(x) for x in (d / "results.jsonl").read_text().split("\n")[:-1]]
    groups = {}
    for r in rows:
        groups.setdefault((r["set"], r["tag"], r["rule"]), []).append(r)
    mean = lambda xs: sum(xs) / len(xs)
    print("| data | options | rule | seeds | params (mean) | leaves | held-out (mean) | test (mean) | wall s (mean) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (name, tag, rule), rs in sorted(groups.items()):
        rs.sort(key=lambda r: r["seed"])
        f = lambda k, p: " / ".join(f"{r[k]:.{p}f}" for r in rs) + f" ({mean([r[k] for r in rs]):.{p}f})"
        print(
            f"| {name} | {tag or '-'} | {rule} | {','.join(str(r['seed']) for r in rs)} | "
            f"{' / '.join(str(r['params']) for r in rs)} ({mean([r['params'] for r in rs]):,.0f}) | "
            f"{' / '.join(str(r['leaves']) for r in rs)} | {f('holdout', 3)} | {f('test', 3)} | {f('wall_s', 0)} |"
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", choices=["prepare", "run", "table"])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--sets", default="mnist5k,sarcos,digits,breast_cancer")
    ap.add_argument("--rules", default="paper,z:1,z:2")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--ant", default=str(ROOT / "target/release/ant"))
    ap.add_argument("--tag", default="", help="a label for EXTRA, part of each result's key")
    ap.add_argument("extra", nargs="*", help="options for every `ant train` (after --)")
    a, rest = ap.parse_known_args()
    a.extra = a.extra + [x for x in rest if x != "--"]
    d = a.dir.resolve()
    if a.cmd == "prepare":
        prepare(d)
    elif a.cmd == "run":
        seeds = [int(s) for s in a.seeds.split(",")]
        run(d, a.sets.split(","), a.rules.split(","), seeds, a.ant, a.extra, a.tag)
    else:
        table(d)


if __name__ == "__main__":
    sys.exit(main())
