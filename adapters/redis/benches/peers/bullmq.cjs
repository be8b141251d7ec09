'use strict';
// BullMQ's side of the peers benchmark (bullmq.rs drives it).
//
//   node bullmq.cjs NODE_MODULES SOCKET
//
// NODE_MODULES holds bullmq and ioredis (adapters/redis/benches/report.sh installs them
// outside the repository). One request per line on stdin, one answer per line on stdout:
//
//   prepare WORKLOAD JOBS CONSUMERS BATCH  ->  ready        (untimed set-up)
//   go                                     ->  done         (the timed part)
//   finish                                 ->  ok           (checks, then disconnects)
//
// Any failure answers `error MESSAGE`. Jobs are removed once completed
// (`removeOnComplete`), as the other systems delete an acknowledged entry.

const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');

const [modules, socket] = process.argv.slice(2);
const { Queue, Worker } = require(path.join(modules, 'bullmq'));
const version = (name) =>
  JSON.parse(fs.readFileSync(path.join(modules, name, 'package.json'), 'utf8')).version;

const connection = { path: socket, maxRetriesPerRequest: null };
// JSON-encoded, a job's data is 64 bytes, as the other systems' payloads.
const data = 'x'.repeat(62);
const NAME = 'bench';

let run = null;

function answer(line) {
  process.stdout.write(line + '\n');
}

async function addBulk(queue, jobs, batch) {
  for (let left = jobs; left > 0; left -= batch) {
    const n = Math.min(left, batch);
    await queue.addBulk(Array.from({ length: n }, () => ({ name: 'j', data })));
  }
}

// What a failed run left open (the harness asks for `finish` after a failure, but a run
// that failed inside `finish` may have left its workers running).
async function closeLeftovers() {
  const left = run;
  run = null;
  if (!left) return;
  await Promise.allSettled(left.workers.map((worker) => worker.close()));
  await Promise.allSettled([left.queue.close()]);
}

async function prepare(workload, jobs, consumers, batch) {
  await closeLeftovers();
  const queue = new Queue(NAME, {
    connection,
    defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
  });
  await queue.waitUntilReady();
  run = { workload, jobs, batch, queue, workers: [], completed: 0, failed: 0 };
  if (workload === 'consume') {
    await addBulk(queue, jobs, batch);
    let allDone;
    run.allDone = new Promise((resolve) => (allDone = resolve));
    for (let i = 0; i < consumers; i++) {
      const worker = new Worker(NAME, async () => {}, {
        connection,
        autorun: false,
        concurrency: 1,
      });
      worker.on('completed', () => {
        run.completed += 1;
        if (run.completed === jobs) allDone();
      });
      worker.on('failed', () => {
        run.failed += 1;
      });
      worker.on('error', (e) => {
        run.error = String(e);
      });
      await worker.waitUntilReady();
      run.workers.push(worker);
    }
  }
}

async function go() {
  const { workload, jobs, batch, queue } = run;
  if (workload === 'put-one') {
    for (let i = 0; i < jobs; i++) await queue.add('j', data);
  } else if (workload === 'put-bulk') {
    await addBulk(queue, jobs, batch);
  } else {
    for (const worker of run.workers) {
      worker.run().catch((e) => {
        run.error = String(e);
      });
    }
    await run.allDone;
  }
}

async function finish() {
  if (!run) throw new Error('finish before prepare');
  const { workload, jobs, queue } = run;
  await Promise.all(run.workers.map((worker) => worker.close()));
  const counts = await queue.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed');
  await queue.close();
  const expected =
    workload === 'consume'
      ? { waiting: 0, active: 0, completed: 0, failed: 0, delayed: 0 }
      : { waiting: jobs, active: 0, completed: 0, failed: 0, delayed: 0 };
  const wrong = Object.keys(expected).filter((key) => counts[key] !== expected[key]);
  const { completed, failed, error } = run;
  run = null;
  if (error) throw new Error(error);
  if (wrong.length > 0 || (workload === 'consume' && (completed !== jobs || failed !== 0))) {
    throw new Error(
      `${jobs} jobs; counts ${JSON.stringify(counts)}; ${completed} completed, ${failed} failed`,
    );
  }
}

async function handle(line) {
  const [verb, ...args] = line.trim().split(/\s+/);
  if (verb === 'prepare') {
    const [workload, jobs, consumers, batch] = args;
    await prepare(workload, Number(jobs), Number(consumers), Number(batch));
    return 'ready';
  }
  if (verb === 'go') {
    await go();
    return 'done';
  }
  if (verb === 'finish') {
    await finish();
    return 'ok';
  }
  throw new Error(`unknown request ${JSON.stringify(line)}`);
}

async function main() {
  answer(`hello bullmq ${version('bullmq')}, ioredis ${version('ioredis')}, node ${process.versions.node}`);
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (!line.trim()) continue;
    try {
      answer(await handle(line));
    } catch (e) {
      answer(`error ${String(e && e.stack ? e.stack : e).replace(/\n/g, ' | ')}`);
    }
  }
  process.exit(0);
}

main();
