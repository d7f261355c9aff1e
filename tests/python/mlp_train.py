"""An unmodified PyTorch MLP training loop (it knows nothing of mlprof), for
the operator view and the memory attribution tests: batch 32, one thread,
training for a fixed amount of CPU time (or --steps N steps)."""
import sys
import time

import torch


def main():
    steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 0
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 256), torch.randint(0, 10, (32,))
    t0, n = time.process_time(), 0
    while (n < steps) if steps else (time.process_time() - t0 < 1.5):
        out = model(x)  # FORWARD LINE
        loss = torch.nn.functional.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()  # BACKWARD LINE
        opt.step()
        n += 1
    print("done", n, "steps")


main()
