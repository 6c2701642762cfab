#!/usr/bin/env python3
"""Per-step counts from `nsys profile --stats=true` output: kernels launched, host
synchronisations, copies and allocations, divided by the number of steps profiled.

    python3 scripts/nsys_counts.py NSYS_OUTPUT.txt STEPS [LABEL]

Reads the kernel summary (cuda_gpu_kern_sum) and the CUDA API summary (cuda_api_sum)
tables as nsys prints them. Standard library only.
"""
import re
import sys


def tables(text):
    """{report name: [(count, name, total ns)]} for the two summaries."""
    out, current, cols = {}, None, None
    for line in text.splitlines():
        # "[6/8] Executing 'cuda_gpu_kern_sum' stats report" (older: "Running [...gpukernsum.py]")
        m = re.search(r"(cuda_gpu_kern_sum|cuda_api_sum|gpukernsum|cudaapisum)", line)
        if m and not re.match(r"\s*[\d.,]+\s", line):
            current = {"gpukernsum": "cuda_gpu_kern_sum", "cudaapisum": "cuda_api_sum"}.get(
                m.group(1), m.group(1))
            cols = None
            out.setdefault(current, [])
            continue
        if current is None:
            continue
        if cols is None:
            if "Name" in line and ("Instances" in line or "Num Calls" in line):
                cols = re.split(r"\s{2,}", line.strip())
            continue
        if not line.strip():
            if out[current]:
                current = None
            continue
        if line.strip().startswith("---"):
            continue
        parts = line.split(None, len(cols) - 1)
        if len(parts) < len(cols):
            continue
        try:
            num = {c: float(p.replace(",", "")) for c, p in zip(cols[:-1], parts[:-1])}
        except ValueError:
            continue
        count = num.get("Instances", num.get("Num Calls", 0))
        out[current].append((count, parts[-1].strip(), num.get("Total Time (ns)", 0)))
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    steps = float(sys.argv[2])
    label = sys.argv[3] if len(sys.argv) > 3 else sys.argv[1]
    with open(sys.argv[1], errors="replace") as f:
        t = tables(f.read())
    kern = t.get("cuda_gpu_kern_sum", [])
    if not kern:
        print(f"{label}: no kernel summary in {sys.argv[1]}")
        return
    total = sum(c for c, _, _ in kern)
    ktime = sum(ns for _, _, ns in kern)
    print(f"{label}: {total / steps:.1f} kernels per step, {ktime / steps / 1e6:.3f} ms of kernel "
          f"time per step ({len(kern)} distinct kernels, {steps:g} steps)")
    for c, name, ns in sorted(kern, key=lambda k: -k[2])[:8]:
        print(f"  {c / steps:7.1f}/step {ns / steps / 1e6:8.3f} ms/step  {name[:110]}")
    api = t.get("cuda_api_sum", [])
    keep = [a for a in api if re.search(r"Synchron|Memcpy|Memset|Launch|Malloc|Free|Event", a[1])]
    for c, name, ns in sorted(keep, key=lambda k: -k[0]):
        print(f"  {c / steps:7.1f}/step {ns / steps / 1e6:8.3f} ms/step  {name}")


if __name__ == "__main__":
    main()
