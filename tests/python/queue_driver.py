"""Runs queue operation scripts on CPython's asyncio.Queue and prints what happened.

Reads JSON Lines on stdin, one script per line:

    {"maxsize": 2, "ops": [{"op": "put", "item": 0}, {"op": "get"}, ...]}

and prints, for every step of every script, one JSON line:

    {"script": 0, "step": 3, "result": ..., "completed": [...], "len": 1,
     "unfinished": 1, "join_now": false, "pending": [1]}

Operations: put, try_put, get, try_get, resolve (task_done for the held item at
"index", modulo the number held; "outcome" is ignored, asyncio has none), shutdown,
shutdown_now (shutdown(immediate=True)), join, len, cancel (cancels the pending
operation at "index", modulo the number pending). put, get and join run as tasks; one
still waiting after the step settles stays pending and is reported in "completed" of
the step during which it finished, in the order the operations were issued.

"unfinished" reads the queue's private _unfinished_tasks counter (the count join waits
on), and shutdown_now reports the buffer as it was just before shutdown(immediate=True)
discarded it: both are observations for the comparison, not part of the queue's API.
"""

import asyncio
import json
import sys

# Enough event-loop turns for every chain of wake-ups a single step can start.
SETTLE_TURNS = 20


async def settle():
    for _ in range(SETTLE_TURNS):
        await asyncio.sleep(0)


def task_result(kind, task):
    if kind == "join":
        return "done"
    error = task.exception()
    if isinstance(error, asyncio.QueueShutDown):
        return "shutdown"
    if error is not None:
        raise error
    if kind == "put":
        return "ok"
    return {"ok": task.result()}


async def run(number, script):
    queue = asyncio.Queue(maxsize=script["maxsize"])
    held = []
    pending = []  # (step, kind, task), in the order issued

    async def start(step, kind, coroutine):
        task = asyncio.ensure_future(coroutine)
        pending.append((step, kind, task))
        return task

    for step, op in enumerate(script["ops"]):
        name = op["op"]
        result = None
        own = None
        if name == "put":
            own = await start(step, "put", queue.put(op["item"]))
        elif name == "get":
            own = await start(step, "get", queue.get())
        elif name == "join":
            own = await start(step, "join", queue.join())
        elif name == "try_put":
            try:
                queue.put_nowait(op["item"])
                result = "ok"
            except asyncio.QueueFull:
                result = "full"
            except asyncio.QueueShutDown:
                result = "shutdown"
        elif name == "try_get":
            try:
                item = queue.get_nowait()
                held.append(item)
                result = {"ok": item}
            except asyncio.QueueEmpty:
                result = "empty"
            except asyncio.QueueShutDown:
                result = "shutdown"
        elif name == "resolve":
            if held:
                item = held.pop(op["index"] % len(held))
                queue.task_done()
                result = {"ok": item}
            else:
                result = "none"
        elif name == "shutdown":
            queue.shutdown()
        elif name == "shutdown_now":
            drained = list(queue._queue)
            queue.shutdown(immediate=True)
            result = {"drained": drained}
        elif name == "len":
            result = queue.qsize()
        elif name == "cancel":
            if pending:
                victim_step, _, task = pending.pop(op["index"] % len(pending))
                task.cancel()
                result = {"cancelled": victim_step}
            else:
                result = "none"
        else:
            raise ValueError(f"unknown operation {name!r}")

        await settle()
        completed = []
        still = []
        for entry in pending:
            entry_step, kind, task = entry
            if task.done():
                value = task_result(kind, task)
                if kind == "get" and value != "shutdown":
                    held.append(value["ok"])
                if task is own:
                    result = value
                else:
                    completed.append({"step": entry_step, "result": value})
            else:
                still.append(entry)
        pending[:] = still
        if own is not None and not own.done():
            result = "pending"

        probe = asyncio.ensure_future(queue.join())
        await asyncio.sleep(0)
        join_now = probe.done()
        probe.cancel()
        await asyncio.sleep(0)

        print(json.dumps({
            "script": number,
            "step": step,
            "result": result,
            "completed": completed,
            "len": queue.qsize(),
            "unfinished": queue._unfinished_tasks,
            "join_now": join_now,
            "pending": [entry[0] for entry in pending],
        }, separators=(",", ":")))

    for _, _, task in pending:
        task.cancel()
    await asyncio.gather(*(task for _, _, task in pending), return_exceptions=True)


def main():
    if sys.version_info[:2] != (3, 13):
        sys.exit(f"queue_driver.py needs CPython 3.13, not {sys.version}")
    print(json.dumps({"python": sys.version.split()[0],
                      "implementation": sys.implementation.name}), flush=True)
    for number, line in enumerate(sys.stdin):
        if line.strip():
            asyncio.run(run(number, json.loads(line)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
