"""A plain multiprocessing script (it knows nothing of mlprof): a Pool of 3
forked workers, each living a fraction of a second, burns CPU in a named
function, for test_dl_workers.py. As the referee, each task writes after
it, in one write to stderr, its worker's pid and the CPU its main thread
spent so far."""
import multiprocessing
import os
import time


def pool_burn(x):
    s = 0
    for k in range(200000):  # POOL HOT LINE
        s += (k * x) % 7
    os.write(2, b"task %d %d\n" % (os.getpid(), time.thread_time_ns()))
    return s


def main():
    with multiprocessing.get_context("fork").Pool(3) as pool:
        r = pool.map(pool_burn, range(24))
    print("done", sum(r))


if __name__ == "__main__":
    main()
