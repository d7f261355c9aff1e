"""A small PyTorch MLP trained for a few steps, used by the binding tests.

    train_torch.py [--steps N] [--mlprof] [--slow-data SECONDS] [--hist N]

With --mlprof the script uses the binding (module ranges, a loader that
marks steps, layer histograms every N steps); without it the script knows
nothing of mlprof, which is how `mlprof run` profiles it.
"""
import argparse
import sys
import time

import torch


def batches(x, y, bs, slow):
    for i in range(0, len(x) - bs + 1, bs):
        if slow:
            time.sleep(slow)  # a deliberately slow data loader
        yield x[i:i + bs], y[i:i + bs]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--mlprof", action="store_true")
    ap.add_argument("--slow-data", type=float, default=0.0)
    ap.add_argument("--hist", type=int, default=0)
    ap.add_argument("--width", type=int, default=256)
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    bs = 64
    x = torch.randn(args.steps * bs, 64)
    y = (x[:, :8].sum(dim=1) > 0).long()
    model = torch.nn.Sequential(
        torch.nn.Linear(64, args.width), torch.nn.ReLU(),
        torch.nn.Linear(args.width, args.width), torch.nn.ReLU(),
        torch.nn.Linear(args.width, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    it = batches(x, y, bs, args.slow_data)
    if args.mlprof:
        import mlprof
        import mlprof.torch as mt
        mt.instrument(model, histograms_every=args.hist)
        it = mt.loader(it, steps=True, model=model)
    first = last = None
    for xb, yb in it:
        loss = torch.nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if args.mlprof:
            mlprof.scalar("loss", loss.item())
        first = loss.item() if first is None else first
        last = loss.item()
    print("loss %.4f -> %.4f" % (first, last))
    return 0


if __name__ == "__main__":
    sys.exit(main())
