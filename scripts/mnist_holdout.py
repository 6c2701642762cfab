#!/usr/bin/env python3
"""Write MNIST's training set split into a study set (issue 33's held-out rows).

    python3 scripts/mnist_holdout.py data/mnist runs/mnist-holdout

OUT gets IDX files in MNIST's layout: its training files hold the first 54,000
training images, its test files the last 6,000. A run on OUT draws its validation
rows from the first 54,000 and reports "test" scores on the last 6,000, which no
run's growth or model selection sees, so settings can be compared without the
real test set.
"""
import gzip
import struct
import sys
from pathlib import Path

HELD_OUT = 6000


def read_idx(path):
    data = gzip.open(path, "rb").read()
    dims = data[3]
    shape = struct.unpack(">" + "I" * dims, data[4 : 4 + 4 * dims])
    return data[:4], shape, data[4 + 4 * dims :]


def write_idx(path, magic, shape, body):
    tmp = path.with_suffix(".tmp")
    with gzip.open(tmp, "wb") as f:
        f.write(magic + struct.pack(">" + "I" * len(shape), *shape) + body)
    tmp.replace(path)


def main(src, out):
    src, out = Path(src), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for kind in ["images-idx3-ubyte", "labels-idx1-ubyte"]:
        magic, shape, body = read_idx(src / f"train-{kind}.gz")
        row = len(body) // shape[0]
        keep = shape[0] - HELD_OUT
        write_idx(out / f"train-{kind}.gz", magic, (keep, *shape[1:]), body[: keep * row])
        write_idx(out / f"t10k-{kind}.gz", magic, (HELD_OUT, *shape[1:]), body[keep * row :])


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
