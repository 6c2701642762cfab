#!/usr/bin/env python3
"""One Markdown table row per `ant train --out RUN_DIR`: test error multi / single path,
parameters in total and on an average single path, leaves, wall time, and seconds per
growth and per refinement epoch (from records.jsonl). Standard library only.

    python3 scripts/table_rows.py runs/results/mnist-a-seed0 runs/results/mnist-a-seed1 ...
"""
import json
import pathlib
import statistics
import sys


def epoch_seconds(run):
    growth, refine = [], []
    for line in (run / "records.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        (refine if r["phase"] == "refine" else growth).append(r["seconds"])
    mean = lambda v: statistics.fmean(v) if v else float("nan")
    return mean(growth), len(growth), mean(refine), len(refine)


def row(run):
    r = json.loads((run / "report.json").read_text())
    err = "multi_path_error" if "multi_path_error" in r else "multi_path_mse"
    single = err.replace("multi", "single")
    g, ng, f, nf = epoch_seconds(run)
    per = lambda s, n: f"{s:.2f} s ({n})" if n else "–"
    return (
        f"| {run.name} | {r[err]:.2f} / {r[single]:.2f} | {r['params_total']:,} | "
        f"{r['params_single_path_avg']:,.0f} | {r['leaves']} | {r['train_seconds'] / 60:.1f} min | "
        f"{per(g, ng)} | {per(f, nf)} |"
    )


print("| run | test error % (multi / single) | params | on a path | leaves | wall | s per growth epoch (epochs) | s per refinement epoch (epochs) |")
print("|---|---|---|---|---|---|---|---|")
for arg in sys.argv[1:]:
    print(row(pathlib.Path(arg)))
