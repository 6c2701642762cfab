#!/usr/bin/env python3
"""PyTorch's side of `cargo bench --bench step_phases`: the same rows, timed the same way.

W1's and W2's training step (the peer's own trees, from ../shared/peer/torch_step_bench.py)
in phases, forward (to the loss), backward, optimiser (zero_grad and Adam's step), each
ended by a device sync, then the whole step with one sync; and each op kind of W2 (and
W1's FC layers) alone, forward (its output's sum) and backward, at W2's shapes. Prints
markdown tables, ms per call (medians), with the same row names as the Rust bench;
`--compare FILE` (that bench's output) adds a table of both side by side with ratios.

    python3 scripts/torch_op_bench.py cpu --threads 2
    ANT_DEVICE=cuda target/release/deps/step_phases-* >ant.txt   # or the staged binary
    python3 scripts/torch_op_bench.py cuda --compare ant.txt

Needs only torch (and numpy through it); no network.
"""
import argparse
import contextlib
import io
import os
import re
import runpy
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("device", nargs="?", default="cpu", help="cpu, cuda or cuda:N")
    ap.add_argument("--threads", type=int, default=2, help="CPU threads (the peer's default)")
    ap.add_argument("--batches", default=os.environ.get("ANT_PHASE_BATCHES", "16,512"))
    ap.add_argument("--parts", default=os.environ.get("ANT_PHASE_PARTS", "phases,ops"))
    ap.add_argument("--trees", default=os.environ.get("ANT_PHASE_TREES", "W1,W2"))
    ap.add_argument("--seconds", type=float, default=float(os.environ.get("ANT_PHASE_SECONDS", 2)),
                    help="time spent measuring each row (at least 3 calls)")
    ap.add_argument("--reps", type=int, default=int(os.environ.get("ANT_PHASE_REPS", 0)),
                    help="exactly this many calls per row after one warm-up (0: by time)")
    ap.add_argument("--clock", default=os.environ.get("ANT_PHASE_CLOCK", "wall"),
                    choices=["wall", "cpu"],
                    help="cpu: the process's CPU time (one thread on a loaded machine)")
    ap.add_argument("--peer", default=os.path.join(HERE, "..", "..", "shared", "peer",
                                                   "torch_step_bench.py"),
                    help="the peer's torch_step_bench.py (its W1Tree and W2Tree)")
    ap.add_argument("--compare", help="output of `cargo bench --bench step_phases` to set beside")
    return ap.parse_args()


A = parse_args()
DEV = torch.device(A.device)
torch.set_num_threads(A.threads)
torch.manual_seed(0)


def sync():
    if DEV.type == "cuda":
        torch.cuda.synchronize(DEV)


def run(f):
    """Calls f once to warm up, then --reps times or until --seconds are spent (3 to 1000
    calls); f returns the ms of each of its parts. Returns their medians and the count."""
    f()
    start, rows = time.perf_counter(), []
    while True:
        rows.append(f())
        n = len(rows)
        if (A.reps and n >= A.reps) or (not A.reps and (n >= 1000 or (
                n >= 3 and time.perf_counter() - start >= A.seconds))):
            break
    return [statistics.median(col) for col in zip(*rows)], len(rows)


def now():
    return time.process_time() if A.clock == "cpu" else time.perf_counter()


def ms(t):
    return (now() - t) * 1e3


def load_peer():
    """The peer bench's module-level names (W1Tree, W2Tree), without running its benchmark
    (argv 'none'; it still sets the thread count, so it is set again after)."""
    argv = sys.argv
    sys.argv = ["torch_step_bench.py", "none", str(A.threads)]
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # its header line
            g = runpy.run_path(A.peer, run_name="peer")
    finally:
        sys.argv = argv
    torch.set_num_threads(A.threads)
    return g


def phases(name, b, peer):
    if name == "W1":
        m = peer["W1Tree"]().to(DEV)
        x, y = torch.randn(b, 21, device=DEV), torch.randn(b, 7, device=DEV)
    else:
        m = peer["W2Tree"]().to(DEV)
        x = torch.randn(b, 1, 28, 28, device=DEV)
        y = (torch.arange(b, device=DEV) % 10).view(b, 1)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)

    def split():
        t = now()
        loss = m.loss(x, y)
        sync()
        tf = ms(t)
        t = now()
        loss.backward()
        sync()
        tb = ms(t)
        t = now()
        opt.step()
        opt.zero_grad(set_to_none=True)
        sync()
        return tf, tb, ms(t)

    def whole():
        t = now()
        opt.zero_grad(set_to_none=True)
        m.loss(x, y).backward()
        opt.step()
        sync()
        return (ms(t),)

    (f, bw, o), n = run(split)
    (w,), _ = run(whole)
    print(f"| {name} | {b} | {f:.3f} | {bw:.3f} | {o:.3f} | {f + bw + o:.3f} | {w:.3f} | {n} |",
          flush=True)


def op(name, b, shape, fwd, leaves):
    def call():
        t = now()
        s = fwd()
        sync()
        tf = ms(t)
        t = now()
        s.backward()
        sync()
        tb = ms(t)
        for p in leaves:
            p.grad = None
        return tf, tb

    (f, bw), n = run(call)
    print(f"| {name} | {b} | {shape} | {f:.3f} | {bw:.3f} | {n} |", flush=True)


def rand(*dims, grad=True):
    return torch.randn(*dims, device=DEV).requires_grad_(grad)


def ops(b):
    c1 = nn.Conv2d(1, 40, 5).to(DEV)
    x = rand(b, 1, 28, 28, grad=False)
    op("conv 1->40 k5 (input: data)", b, "[B,1,28,28]", lambda: c1(x).sum(),
       list(c1.parameters()))
    c40 = nn.Conv2d(40, 40, 5).to(DEV)
    x = rand(b, 40, 12, 12)
    op("conv 40->40 k5", b, "[B,40,12,12]", lambda: c40(x).sum(), [x, *c40.parameters()])
    x = rand(b, 40, 24, 24)
    op("relu", b, "[B,40,24,24]", lambda: F.relu(x).sum(), [x])
    op("max-pool 2x2", b, "[B,40,24,24]", lambda: F.max_pool2d(x, 2).sum(), [x])
    x = rand(b, 40, 8, 8)
    op("global average pool", b, "[B,40,8,8]", lambda: x.mean((2, 3)).sum(), [x])
    for i, o in [(2560, 10), (40, 40), (256, 256)]:
        lin = nn.Linear(i, o).to(DEV)
        xi = rand(b, i)
        op(f"linear {i}->{o}", b, f"[B,{i}]", lambda l=lin, v=xi: l(v).sum(),
           [xi, *lin.parameters()])
    x = rand(b, 256)
    op("tanh (W1)", b, "[B,256]", lambda: torch.tanh(x).sum(), [x])
    x = rand(b, 10)
    y = (torch.arange(b, device=DEV) % 10).view(b, 1)
    op("log-softmax + gather", b, "[B,10]", lambda: F.log_softmax(x, 1).gather(1, y).sum(), [x])
    x = rand(b, 1)
    op("log-sigmoid", b, "[B,1]", lambda: F.logsigmoid(x).sum(), [x])
    x = rand(b, 2)
    op("log-sum-exp over rows", b, "[B,2]", lambda: torch.logsumexp(x, 1, keepdim=True).sum(),
       [x])


def table_rows(text, heading):
    """The rows of the markdown table under the '## heading...' line of `text`."""
    rows, inside = [], False
    for line in text.splitlines():
        if line.startswith("## "):
            inside = line[3:].startswith(heading)
        elif inside and line.startswith("| ") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[0] not in ("tree", "op"):
                rows.append(cells)
    return rows


def ratio(a, b):
    try:
        return f"{float(a) / float(b):.2f}x"
    except (ValueError, ZeroDivisionError):
        return ""


def compare(ant_text, mine):
    dev = re.search(r"ant on ([^\s,]+)", ant_text)
    dev = dev.group(1) if dev else "?"
    print(f"\n## ant ({dev}) beside PyTorch ({A.device}), ms per call, ratio = ant / PyTorch\n")
    theirs = {(r[0], r[1]): r for r in table_rows(mine, "step phases")}
    print("| tree | batch | forward | PyTorch | ratio | backward | PyTorch | ratio "
          "| optimiser | PyTorch | ratio | step, one sync | PyTorch | ratio |")
    print("|---" * 14 + "|")
    for r in table_rows(ant_text, "step phases"):
        p = theirs.get((r[0], r[1]))
        if p:
            cells = [f"{r[k]} | {p[k]} | {ratio(r[k], p[k])}" for k in (2, 3, 4, 6)]
            print(f"| {r[0]} | {r[1]} | " + " | ".join(cells) + " |")
    theirs = {(r[0], r[1]): r for r in table_rows(mine, "single ops")}
    print("\n| op | batch | input | forward | PyTorch | ratio | backward | PyTorch | ratio |")
    print("|---" * 9 + "|")
    for r in table_rows(ant_text, "single ops"):
        p = theirs.get((r[0], r[1]))
        if p and p[2] == r[2]:
            print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {p[3]} | {ratio(r[3], p[3])} "
                  f"| {r[4]} | {p[4]} | {ratio(r[4], p[4])} |")
        elif p:
            print(f"| {r[0]} | {r[1]} | {r[2]} | shapes differ: PyTorch {p[2]} |||||")


def main():
    batches = [int(s) for s in A.batches.split(",") if s.strip()]
    parts = {s.strip() for s in A.parts.split(",")}
    trees = [s.strip() for s in A.trees.split(",") if s.strip()]
    buf = io.StringIO()

    class Tee(io.TextIOBase):
        def write(self, s):
            buf.write(s)
            return sys.__stdout__.write(s)

        def flush(self):
            sys.__stdout__.flush()

    with contextlib.redirect_stdout(Tee()):
        print(f"# torch_op_bench: PyTorch {torch.__version__} on {A.device}, "
              f"{torch.get_num_threads()} threads, ms per call (medians), {A.clock} clock")
        if "phases" in parts:
            peer = load_peer() if os.path.exists(A.peer) else None
            print(f"\n## step phases, PyTorch on {A.device} (device synced after each phase)\n")
            if peer is None:
                print(f"(no peer bench at {A.peer}: --peer PATH)")
            else:
                print("| tree | batch | forward | backward | optimiser | sum | step, one sync | calls |")
                print("|---|---|---|---|---|---|---|---|")
                for b in batches:
                    for t in trees:
                        phases(t, b, peer)
        if "ops" in parts:
            print(f"\n## single ops through PyTorch on {A.device} "
                  "(forward includes the sum that seeds backward)\n")
            print("| op | batch | input | forward | backward | calls |")
            print("|---|---|---|---|---|---|")
            for b in batches:
                ops(b)
    if A.compare:
        with open(A.compare) as f:
            compare(f.read(), buf.getvalue())


if __name__ == "__main__":
    main()
