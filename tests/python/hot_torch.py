"""An unmodified PyTorch script (it knows nothing of mlprof) with two hot
spots, for test_pyframes.py: a Python loop and a matrix product in torch.
Each runs for a fixed amount of CPU time."""
import time

import torch


def python_loop(n):
    s = 0
    for i in range(n):
        s += i * i % 7  # HOT PYTHON LINE
    return s


def torch_matmul(a, b, reps):
    for _ in range(reps):
        c = a @ b  # HOT TORCH LINE
    return c


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    a, b = torch.randn(256, 256), torch.randn(256, 256)
    t0 = time.process_time()
    while time.process_time() - t0 < 0.8:
        python_loop(20000)
    t0 = time.process_time()
    while time.process_time() - t0 < 0.8:
        torch_matmul(a, b, 20)
    print("done")


main()
