"""CPython's asyncio.Queue on the queue workloads, as the baseline for tally-queue.

Run with CPython 3.13 (PYENV_VERSION=3.13.0 python3). Prints one tab-separated line per
workload: name, nanoseconds per item (the best of REPEATS runs of N items).

- one-task: put_nowait + get_nowait + task_done in turn, in one task;
- spsc-bounded128: 1 producer task (await put) + 1 consumer task (await get, task_done);
- mpmc4x4-bounded128: 4 producers + 4 consumers, the same.

Each run ends with `await queue.join()`. N comes from the environment variable OPS
(default 200,000), REPEATS from REPEATS (default 5).
"""

import asyncio
import os
import sys
import time

N = int(os.environ.get("OPS", "200000"))
REPEATS = int(os.environ.get("REPEATS", "5"))
CAPACITY = 128


async def one_task(n):
    queue = asyncio.Queue(CAPACITY)
    start = time.perf_counter_ns()
    for i in range(n):
        queue.put_nowait(i)
        queue.get_nowait()
        queue.task_done()
    await queue.join()
    return time.perf_counter_ns() - start


async def tasks(n, producers, consumers):
    queue = asyncio.Queue(CAPACITY)

    async def produce(count):
        for i in range(count):
            await queue.put(i)

    async def consume():
        while True:
            await queue.get()
            queue.task_done()

    shares = [n // producers + (1 if i < n % producers else 0) for i in range(producers)]
    start = time.perf_counter_ns()
    workers = [asyncio.create_task(consume()) for _ in range(consumers)]
    await asyncio.gather(*(produce(share) for share in shares))
    await queue.join()
    elapsed = time.perf_counter_ns() - start
    for worker in workers:
        worker.cancel()
    await asyncio.gather(*workers, return_exceptions=True)
    return elapsed


WORKLOADS = [
    ("one-task", lambda: one_task(N)),
    ("spsc-bounded128", lambda: tasks(N, 1, 1)),
    ("mpmc4x4-bounded128", lambda: tasks(N, 4, 4)),
]


def main():
    print(f"# {sys.implementation.name} {sys.version.split()[0]}, {N} items, best of {REPEATS}")
    for name, workload in WORKLOADS:
        best = min(asyncio.run(workload()) for _ in range(REPEATS))
        print(f"{name}\t{best / N:.1f}")


if __name__ == "__main__":
    main()
