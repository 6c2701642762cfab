"""ATen operator calls per training step, counted by callgrind: a GPU's kernel launches and
host synchronisations, counted on a machine without one.

Every LibTorch op goes through `at::_ops::NAME::call` (and `::redispatch` inside
composite ops and autograd), whoever calls it, `ant` through tch or PyTorch from Python,
so the two programs' counts compare op for op. Run each program twice under callgrind
with a different number of steps; the difference divided by the difference in steps is
the count per step (setup and warm-up cancel out):

    source scripts/torch-env.sh
    for R in 2 6; do   # step_phases runs 2R+2 steps: R+1 in phases, R+1 whole
      ANT_DEVICE=torch OMP_NUM_THREADS=1 ANT_PHASE_PARTS=phases ANT_PHASE_TREES=W2 \\
        ANT_PHASE_BATCHES=16 ANT_PHASE_REPS=$R valgrind --tool=callgrind \\
        --callgrind-out-file=ant$R.out STEP_PHASES_BINARY
      OMP_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file=py$R.out \\
        python3 scripts/torch_op_bench.py cpu --threads 1 --parts phases --trees W2 \\
        --batches 16 --reps $R --peer ../shared/peer/torch_step_bench.py
    done
    python3 scripts/aten_counts.py --steps 8 ant=ant2.out,ant6.out PyTorch=py2.out,py6.out

Prints, per step, the op calls of each program (top-level `call`s; `@re` marks
redispatches), with totals, host reads (`_local_scalar_dense`: of a GPU tensor, a
synchronisation) and copies first. PyTorch's Adam on the CPU updates tensor by tensor
(on a GPU it defaults to `foreach`), so its CPU count overstates its GPU one.
"""
import argparse
import collections
import re

FN = re.compile(r"^c?fn=\((\d+)\)(?: (.*))?$")
OP = re.compile(r"at::_ops::(\w+)::(call|redispatch)\(")


def op_calls(path):
    """Calls of each ATen op entry point in one callgrind output file."""
    names, counts, callee = {}, collections.Counter(), None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith(("cfn=", "fn=")):
                m = FN.match(line.rstrip("\n"))
                if m:
                    ident, name = m.groups()
                    if name:
                        names[ident] = name
                    if line.startswith("cfn="):
                        callee = names.get(ident)
            elif line.startswith("calls=") and callee:
                m = OP.match(callee)
                if m:
                    key = m.group(1) + ("" if m.group(2) == "call" else "@re")
                    counts[key] += int(line[6:].split()[0])
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", help="LABEL=SHORT.out,LONG.out")
    ap.add_argument("--steps", type=float, required=True, help="steps LONG ran beyond SHORT")
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    per_step = {}
    for run in args.runs:
        label, files = run.split("=", 1)
        short, long = (op_calls(p) for p in files.split(","))
        per_step[label] = {k: (long[k] - short[k]) / args.steps for k in set(short) | set(long)}
    labels = list(per_step)
    get = lambda label, k: per_step[label].get(k, 0.0)
    keys = sorted({k for d in per_step.values() for k in d if d[k]},
                  key=lambda k: -sum(get(l, k) for l in labels))
    print("| per step | " + " | ".join(labels) + " |")
    print("|---" * (len(labels) + 1) + "|")
    rows = [
        ("op calls (top level)", lambda l: sum(v for k, v in per_step[l].items() if "@" not in k)),
        ("redispatches", lambda l: sum(v for k, v in per_step[l].items() if "@" in k)),
        ("host reads (_local_scalar_dense)", lambda l: get(l, "_local_scalar_dense")),
        ("copies (copy_)", lambda l: get(l, "copy_")),
    ]
    for name, f in rows:
        print(f"| {name} | " + " | ".join(f"{f(l):.0f}" for l in labels) + " |")
    print()
    print("| op | " + " | ".join(labels) + " |")
    print("|---" * (len(labels) + 1) + "|")
    for k in keys[: args.top]:
        print(f"| {k} | " + " | ".join(f"{get(l, k):.1f}" for l in labels) + " |")


if __name__ == "__main__":
    main()
