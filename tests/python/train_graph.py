"""A small training run for the model-graph tests (tests/python/test_graph.py).

    train_graph.py MODEL OUTDIR STEPS

MODEL is "two" (head(relu(fc_a(x) + fc_b(x))), the functional ReLU) or
"deep" (a generated model of about 220 modules: 12 stages of 4 residual
blocks). The model is instrumented (module ranges and its graph, recorded
once) and trained on random data with mlprof steps; the reports go to
OUTDIR. Prints "graph_seconds S" (what recording the graph cost) and
"hooks_left N" (graph hooks still installed after training: 0 expected).
"""
import sys

import torch

import mlprof
import mlprof.torch


class TwoBranch(torch.nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.fc_a = torch.nn.Linear(16, width)
        self.fc_b = torch.nn.Linear(16, width)
        self.head = torch.nn.Linear(width, 4)

    def forward(self, x):
        return self.head(torch.relu(self.fc_a(x) + self.fc_b(x)))


class Block(torch.nn.Module):
    def __init__(self, w):
        super().__init__()
        self.fc1 = torch.nn.Linear(w, w)
        self.act = torch.nn.ReLU()
        self.fc2 = torch.nn.Linear(w, w)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(x)))


class Stage(torch.nn.Module):
    def __init__(self, w, n):
        super().__init__()
        self.blocks = torch.nn.Sequential(*[Block(w) for _ in range(n)])

    def forward(self, x):
        return self.blocks(x)


def deep(w=8, stages=12, blocks=4):
    return torch.nn.Sequential(torch.nn.Linear(16, w), *[Stage(w, blocks) for _ in range(stages)],
                               torch.nn.Linear(w, 4))


def main():
    kind, outdir, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = TwoBranch() if kind == "two" else deep()
    print("modules", len(list(model.modules())))
    model = mlprof.torch.instrument(model, histograms_every=2)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    mlprof.init(output=outdir + "/", report=True)
    x, y = torch.randn(64, 16), torch.randint(0, 4, (64,))
    for _ in range(steps):
        with mlprof.torch.step(model):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    rec = model._mlprof_graph
    print("graph_seconds %.6f" % rec.seconds)
    print("hooks_left", len(rec.handles))
    print("edges", len(rec.edges))


if __name__ == "__main__":
    main()
