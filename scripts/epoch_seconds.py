#!/usr/bin/env python3
"""Seconds per growth epoch and per refinement epoch of one run, `ant`'s or the peer's,
also per node and per leaf of the tree, so that trees of different sizes compare.

    python3 scripts/epoch_seconds.py ant RUN_DIR [LOG]        # `ant train --out RUN_DIR`
    python3 scripts/epoch_seconds.py peer LOG [RESULTS_JSON]  # torch_ant/ant.py's output

`ant`: RUN_DIR/records.jsonl (one record per epoch; `seconds` = training and validation);
the tree from RUN_DIR/tree.json, else from LOG's decisions (`node N: split (...`), which a
run cut before its end still has. The peer: RESULTS_JSON's epoch_records (train_s +
val_s), else LOG's epoch lines (`[grow:split@3] ep  1 ... (0.4s)`: training only, in
tenths of a second), the tree from RESULTS_JSON's topology, else from LOG's decisions
(`level L node N: ... -> split`). Nodes are counted as each implementation counts them:
`ant`'s deepen adds a transformer to the leaf's edge (no node), the peer's adds a node;
leaves (1 + splits) mean the same in both. Standard library only.
"""
import json
import os
import re
import statistics
import sys


def mean(v):
    return statistics.fmean(v) if v else float("nan")


def summary(who, growth, refine, nodes, leaves, note=""):
    """growth: [(kind, seconds)], refine: [seconds]."""
    kinds = {}
    for k, s in growth:
        kinds.setdefault(k, []).append(s)
    by_kind = ", ".join(f"{k} {mean(v):.3f}" for k, v in sorted(kinds.items()))
    g = [s for _, s in growth]
    line = (f"{who}: growth {len(g)} epochs, {mean(g):.3f} s/epoch ({by_kind}); "
            f"refinement {len(refine)} epochs, {mean(refine):.3f} s/epoch")
    if nodes and refine:
        line += (f" over {nodes} nodes, {leaves} leaves: {mean(refine) / nodes:.4f} s/epoch per"
                 f" node, {mean(refine) / leaves:.4f} per leaf")
    return line + (f" [{note}]" if note else "")


def decisions(log, pattern):
    """Counts of each choice in LOG's decision lines."""
    n = {"split": 0, "deepen": 0}
    if log and os.path.exists(log):
        with open(log, errors="replace") as f:
            for line in f:
                m = re.search(pattern, line)
                if m and m.group(1) in n:
                    n[m.group(1)] += 1
    return n


def ant(run, log=None):
    growth, refine = [], []
    with open(os.path.join(run, "records.jsonl")) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                if r["phase"] == "refine":
                    refine.append(r["seconds"])
                else:
                    growth.append((r.get("candidate") or "?", r["seconds"]))
    tree = os.path.join(run, "tree.json")
    nodes = leaves = None
    if os.path.exists(tree):
        with open(tree) as f:
            t = json.load(f)
        ns = t["nodes"] if isinstance(t, dict) and "nodes" in t else t.get("topology", {}).get("nodes")
        if ns:
            nodes, leaves = len(ns), sum(1 for n in ns if n.get("solver") is not None)
    if nodes is None:
        d = decisions(log, r"node \d+: (split|deepen|keep) \(valid NLL")
        nodes, leaves = 1 + 2 * d["split"], 1 + d["split"]
    return summary("ant", growth, refine, nodes, leaves)


def peer(log, results=None):
    growth, refine, nodes, leaves, note = [], [], None, None, ""
    if results and os.path.exists(results):
        with open(results) as f:
            r = json.load(f)
        for e in r["epoch_records"]:
            s = e["train_s"] + e["val_s"]
            if e["phase"] == "refine":
                refine.append(s)
            else:
                growth.append((e["stage"].split("@")[0], s))
        nodes, leaves = r["topology"]["n_nodes"], r["topology"]["n_leaves"]
    else:
        note = "no results.json: training seconds only, from the log"
        with open(log, errors="replace") as f:
            for line in f:
                m = re.search(r"\[(grow|refine):([^\]@]+)[^\]]*\] ep +\d+ .*\(([\d.]+)s\)", line)
                if m:
                    if m.group(1) == "refine":
                        refine.append(float(m.group(3)))
                    else:
                        growth.append((m.group(2), float(m.group(3))))
        d = decisions(log, r"level \d+ node \d+: .* -> (split|deepen|keep)")
        nodes, leaves = 1 + 2 * d["split"] + d["deepen"], 1 + d["split"]
    return summary("peer", growth, refine, nodes, leaves, note)


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("ant", "peer"):
        sys.exit(__doc__)
    print((ant if sys.argv[1] == "ant" else peer)(*sys.argv[2:4]))


if __name__ == "__main__":
    main()
