"""PyTorch's refinement epoch of a one-path tree, as a yardstick for `ant`'s.

Builds the tree's layers (from an `ant` run directory's tree.json) as a torch
Sequential and times one epoch the way `ant` refines: Adam (lr 1e-3, eps 1e-8), batch
512, shuffled, over N_TRAIN random images, then a forward pass over N_VALID without
gradients. Prints the best of two epochs' seconds (after a few warm-up batches), so
that scripts/epoch_rate.sh can put PyTorch's achieved FLOP/s beside ant's.

    python3 scripts/torch_epoch.py RUN_DIR N_TRAIN N_VALID [THREADS]
"""

import json
import sys
import time

import torch
from torch import nn


def layer(spec):
    op = spec["op"]
    if op == "conv":
        return nn.Conv2d(spec["c_in"], spec["c_out"], spec["k"], padding=spec["pad"])
    if op == "linear":
        return nn.Linear(spec["d_in"], spec["d_out"])
    simple = {"relu": nn.ReLU, "tanh": nn.Tanh, "flatten": nn.Flatten}
    if op in simple:
        return simple[op]()
    if op == "max_pool2":
        return nn.MaxPool2d(2)
    if op == "gap":
        return nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten())
    sys.exit(f"torch_epoch.py: layer {op!r} is not built here")


def one_path_model(run_dir):
    tree = json.load(open(f"{run_dir}/tree.json"))
    topo = tree["topology"]
    nodes = topo["nodes"]
    if len(nodes) != 1:
        sys.exit(f"torch_epoch.py: {run_dir}: a one-path tree (one node), not {len(nodes)} nodes")
    specs = [l for edge in nodes[0]["edge"] for l in edge["layers"]] + nodes[0]["solver"]["layers"]
    shape = topo["input"]["Image"]
    return nn.Sequential(*map(layer, specs)), (shape["c"], shape["h"], shape["w"])


def epoch(model, opt, x, y, xv, batch=512):
    start = time.perf_counter()
    model.train()
    for idx in torch.randperm(len(x)).split(batch):
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        for chunk in xv.split(batch):
            model(chunk)
    return time.perf_counter() - start


def main():
    run_dir, n_train, n_valid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(int(sys.argv[4]) if len(sys.argv) > 4 else 2)
    torch.manual_seed(0)
    model, (c, h, w) = one_path_model(run_dir)
    x, xv = torch.randn(n_train, c, h, w), torch.randn(n_valid, c, h, w)
    y = torch.randint(0, model[-1].out_features, (n_train,))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-8)
    epoch(model, opt, x[: 512 * 5], y[: 512 * 5], xv[:512])  # warm-up
    print(f"{min(epoch(model, opt, x, y, xv) for _ in range(2)):.3f}")


if __name__ == "__main__":
    main()
