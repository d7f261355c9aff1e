"""An unmodified PyTorch script (it knows nothing of mlprof) whose input
is the bottleneck: a DataLoader with 2 forked workers whose __getitem__
burns CPU in a named function, for test_dl_workers.py. As the referee,
each worker writes after each item, in one write to stderr, its pid, the
CPU its main thread spent in slow_transform so far and its whole CPU."""
import os
import sys
import time

import torch

SPENT = [0]


def slow_transform(i):
    t0 = time.thread_time_ns()
    s = 0
    for k in range(60000):  # WORKER HOT LINE
        s += (k * i) % 7
    SPENT[0] += time.thread_time_ns() - t0
    return s


class Burn(torch.utils.data.Dataset):
    def __len__(self):
        return 160

    def __getitem__(self, i):
        x = torch.full((16,), float(slow_transform(i) % 3))
        os.write(2, b"item %d %d %d\n" % (os.getpid(), SPENT[0], time.thread_time_ns()))
        return x


def main():
    torch.set_num_threads(1)
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    model = torch.nn.Linear(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = torch.utils.data.DataLoader(Burn(), batch_size=8, num_workers=workers)
    n = 0
    for x in loader:
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        n += 1
    print("done", n)


if __name__ == "__main__":
    main()
