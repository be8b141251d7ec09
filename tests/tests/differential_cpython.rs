//! Differential test against CPython 3.13's `asyncio.Queue`.
//!
//! Random operation scripts (put, try_put, get, try_get, resolve, shutdown, shutdown_now,
//! join, len, cancel) are generated from seeds, run on CPython through
//! `tests/python/queue_driver.py` (one interpreter for the whole batch), and run here on
//! `tally_queue::Queue`, stepping the futures by hand with wakers that record their wake-ups.
//! After every step the two are compared on everything the designs share: each result and
//! refusal kind, the items delivered, which waiting operations finished and how, the buffer
//! length, the unfinished count, and whether a fresh `join` returns at once.
//!
//! Where the designs differ on purpose, the comparator maps our result onto CPython's and
//! checks our stronger promise on the side; each mapping is documented at `Mapping`.
//!
//! The interpreter is `DIFF_PYTHON` if set, else the first of `python3.13` and `python3`
//! that is CPython 3.13 (with pyenv: `PYENV_VERSION=3.13 cargo test`). Without one, the
//! tests that need it print a loud `SKIPPED` notice and pass, except under `CI=true`, where
//! they fail: CI never passes without comparing (`integration_tests::external`).
//! `DIFF_SCRIPTS` sets the number of scripts, `DIFF_SEED` reruns one script's seed,
//! `DIFF_BASE_SEED` moves the seed sequence.

mod reliability;

use std::future::Future;
use std::io::Write;
use std::path::Path;
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use integration_tests::external;
use reliability::{derive_seed, env_u64};
use serde_json::{json, Value};
use tally_queue::futures::{Get, Join, Put};
use tally_queue::{
    Delivery, GetError, JobId, Ledger, Outcome, PutError, Queue, TryGetError, TryPutError,
};

// ------------------------------------------------------------------------ scripts

#[derive(Clone, Debug)]
enum Op {
    Put(u64),
    TryPut(u64),
    Get,
    TryGet,
    /// Ends the held delivery at `index` (modulo the number held) with `outcome`; `None`
    /// drops it unresolved (abandoned).
    Resolve {
        index: usize,
        outcome: Option<Outcome>,
    },
    Shutdown,
    ShutdownNow,
    Join,
    Len,
    /// Cancels the waiting operation at `index` (modulo the number waiting).
    Cancel(usize),
}

#[derive(Debug)]
struct Script {
    seed: u64,
    /// 0 is unbounded, as in asyncio.
    maxsize: usize,
    ops: Vec<Op>,
}

impl Script {
    fn generate(seed: u64) -> Script {
        let mut rng = fastrand::Rng::with_seed(seed);
        let maxsize = if rng.u8(0..4) == 0 {
            0
        } else {
            rng.usize(1..=4)
        };
        let len = rng.usize(10..=60);
        // Shutdowns are rare, so most of a script runs on an open queue.
        let shutdown_weight = rng.u8(0..3);
        let mut ops = Vec::with_capacity(len);
        for step in 0..len {
            let item = step as u64;
            let op = match rng.u8(0..40) {
                0..=6 => Op::Put(item),
                7..=11 => Op::TryPut(item),
                12..=17 => Op::Get,
                18..=21 => Op::TryGet,
                22..=29 => Op::Resolve {
                    index: rng.usize(0..8),
                    outcome: match rng.u8(0..5) {
                        0 => None,
                        1 => Some(Outcome::Rejected),
                        2 => Some(Outcome::Uncertain),
                        _ => Some(Outcome::Succeeded),
                    },
                },
                30..=31 => Op::Join,
                32..=33 => Op::Len,
                34..=35 => Op::Cancel(rng.usize(0..8)),
                36 if shutdown_weight > 0 => Op::Shutdown,
                37 if shutdown_weight > 1 => Op::ShutdownNow,
                _ => Op::Len,
            };
            ops.push(op);
        }
        Script { seed, maxsize, ops }
    }

    fn to_json(&self) -> Value {
        let ops: Vec<Value> = self
            .ops
            .iter()
            .map(|op| match op {
                Op::Put(item) => json!({"op": "put", "item": item}),
                Op::TryPut(item) => json!({"op": "try_put", "item": item}),
                Op::Get => json!({"op": "get"}),
                Op::TryGet => json!({"op": "try_get"}),
                Op::Resolve { index, outcome } => json!({
                    "op": "resolve",
                    "index": index,
                    "outcome": outcome.map_or("abandoned".to_string(), |o| o.to_string()),
                }),
                Op::Shutdown => json!({"op": "shutdown"}),
                Op::ShutdownNow => json!({"op": "shutdown_now"}),
                Op::Join => json!({"op": "join"}),
                Op::Len => json!({"op": "len"}),
                Op::Cancel(index) => json!({"op": "cancel", "index": index}),
            })
            .collect();
        json!({"maxsize": self.maxsize, "ops": ops})
    }
}

// ------------------------------------------------------------------- our side

/// A waker that records that it was woken.
#[derive(Default)]
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

enum Waiting<'a> {
    Put(u64, Pin<Box<Put<'a, u64>>>),
    Get(Pin<Box<Get<'a, u64>>>),
    Join(Pin<Box<Join<'a, u64>>>),
}

struct Slot<'a> {
    step: usize,
    waiting: Waiting<'a>,
    flag: Arc<Flag>,
}

/// What a finished waiting operation reports.
enum Finished<'a> {
    Put(Result<JobId, PutError<u64>>, u64),
    Get(Result<Delivery<'a, u64>, GetError>),
    Join(Ledger),
}

impl<'a> Slot<'a> {
    fn poll(&mut self) -> Option<Finished<'a>> {
        let waker = Waker::from(Arc::clone(&self.flag));
        let mut cx = Context::from_waker(&waker);
        match &mut self.waiting {
            Waiting::Put(item, put) => match put.as_mut().poll(&mut cx) {
                Poll::Ready(result) => Some(Finished::Put(result, *item)),
                Poll::Pending => None,
            },
            Waiting::Get(get) => match get.as_mut().poll(&mut cx) {
                Poll::Ready(result) => Some(Finished::Get(result)),
                Poll::Pending => None,
            },
            Waiting::Join(join) => match join.as_mut().poll(&mut cx) {
                Poll::Ready(ledger) => Some(Finished::Join(ledger)),
                Poll::Pending => None,
            },
        }
    }
}

/// The accounting our queue must show, kept by the runner itself.
#[derive(Default)]
struct Tally {
    next_id: u64,
    succeeded: u64,
    rejected: u64,
    uncertain: u64,
    abandoned: u64,
    discarded: u64,
}

struct Ours<'a> {
    queue: &'a Queue<u64>,
    held: Vec<Delivery<'a, u64>>,
    slots: Vec<Slot<'a>>,
    tally: Tally,
}

impl<'a> Ours<'a> {
    // Mapping (put): asyncio's put/put_nowait return nothing; ours return the item's
    // `JobId`. Both map to "ok"; on our side the ids must be the sequence 0, 1, 2, ...
    // (ids are drawn in order, one per accepted put).
    //
    // Mapping (refusals): `QueueFull` is `TryPutError::Full(item)` and `QueueShutDown` is
    // `PutError::ShutDown(item)`; ours hand the refused item back, which must be the item
    // that was put. (`NoWorkers` cannot happen: no worker guard is ever registered.)
    fn accepted(&mut self, result: Result<JobId, TryPutError<u64>>, item: u64) -> Value {
        match result {
            Ok(id) => {
                assert_eq!(id.get(), self.tally.next_id, "ids are issued in sequence");
                self.tally.next_id += 1;
                json!("ok")
            }
            Err(error) => {
                let kind = match &error {
                    TryPutError::Full(_) => "full",
                    TryPutError::ShutDown(_) => "shutdown",
                    other => panic!("unexpected refusal {other:?}"),
                };
                assert_eq!(
                    error.into_inner(),
                    item,
                    "a refused put handed back another item"
                );
                json!(kind)
            }
        }
    }

    // Mapping (get): asyncio hands out the bare item; ours a `Delivery` holding it. The
    // item is compared; the delivery is held until a resolve step ends it.
    fn delivered(&mut self, result: Result<Delivery<'a, u64>, GetError>) -> Value {
        match result {
            Ok(delivery) => {
                let item = *delivery;
                self.held.push(delivery);
                json!({"ok": item})
            }
            Err(GetError::ShutDown) => json!("shutdown"),
        }
    }

    fn finished(&mut self, finished: Finished<'a>) -> Value {
        match finished {
            Finished::Put(result, item) => self.accepted(result.map_err(TryPutError::from), item),
            Finished::Get(result) => self.delivered(result),
            Finished::Join(ledger) => {
                assert_eq!(ledger.unfinished(), 0, "join returned with work unfinished");
                json!("done")
            }
        }
    }

    fn wait(&mut self, step: usize, waiting: Waiting<'a>) -> Value {
        let mut slot = Slot {
            step,
            waiting,
            flag: Arc::default(),
        };
        match slot.poll() {
            Some(finished) => self.finished(finished),
            None => {
                self.slots.push(slot);
                json!("pending")
            }
        }
    }

    /// Re-polls woken operations, in the order issued, until none is woken; returns those
    /// that finished. Then polls every operation still waiting once more, unwoken: one that
    /// finishes now had lost its wake-up, which fails the test.
    fn settle(&mut self) -> Vec<Value> {
        let mut completed = Vec::new();
        loop {
            let mut progress = false;
            let mut i = 0;
            while i < self.slots.len() {
                if self.slots[i].flag.0.swap(false, Ordering::SeqCst) {
                    progress = true;
                    if let Some(finished) = self.slots[i].poll() {
                        let slot = self.slots.remove(i);
                        let result = self.finished(finished);
                        completed.push((slot.step, result));
                        continue;
                    }
                }
                i += 1;
            }
            if !progress {
                break;
            }
        }
        for slot in &mut self.slots {
            assert!(
                slot.poll().is_none(),
                "the operation of step {} could finish but was never woken",
                slot.step
            );
        }
        completed.sort_by_key(|(step, _)| *step);
        completed
            .into_iter()
            .map(|(step, result)| json!({"step": step, "result": result}))
            .collect()
    }

    fn step(&mut self, step: usize, op: &Op) -> Value {
        let queue = self.queue;
        let result = match *op {
            Op::Put(item) => self.wait(step, Waiting::Put(item, Box::pin(queue.put(item)))),
            Op::Get => self.wait(step, Waiting::Get(Box::pin(queue.get()))),
            Op::Join => self.wait(step, Waiting::Join(Box::pin(queue.join()))),
            Op::TryPut(item) => {
                let result = queue.try_put(item);
                self.accepted(result, item)
            }
            // Mapping (try_get): `QueueEmpty` is `TryGetError::Empty`, `QueueShutDown` is
            // `TryGetError::ShutDown`.
            Op::TryGet => match queue.try_get() {
                Ok(delivery) => self.delivered(Ok(delivery)),
                Err(TryGetError::Empty) => json!("empty"),
                Err(TryGetError::ShutDown) => json!("shutdown"),
            },
            // Mapping (resolve): asyncio's `task_done()` is tied to no item and carries no
            // outcome; ours ends one held delivery, with an outcome or by dropping it
            // (abandoned). Both lower the unfinished count by one, which is what is
            // compared; the outcome is checked against our ledger at the end. A step with
            // nothing held does nothing on either side (asyncio's `task_done` underflow
            // cannot be written in our design).
            Op::Resolve { index, outcome } => {
                if self.held.is_empty() {
                    json!("none")
                } else {
                    let delivery = self.held.remove(index % self.held.len());
                    let item = *delivery;
                    match outcome {
                        Some(outcome) => {
                            assert_eq!(delivery.resolve(outcome), item);
                            match outcome {
                                Outcome::Succeeded => self.tally.succeeded += 1,
                                Outcome::Rejected => self.tally.rejected += 1,
                                Outcome::Uncertain => self.tally.uncertain += 1,
                            }
                        }
                        None => {
                            drop(delivery);
                            self.tally.abandoned += 1;
                        }
                    }
                    json!({"ok": item})
                }
            }
            Op::Shutdown => {
                queue.shutdown();
                Value::Null
            }
            // Mapping (shutdown_now): asyncio's `shutdown(immediate=True)` discards the
            // buffer; ours returns it with the ids. The returned items must be exactly the
            // buffer CPython discarded, in order, and each counts as discarded.
            Op::ShutdownNow => {
                let drained = queue.shutdown_now();
                self.tally.discarded += drained.len() as u64;
                let items: Vec<u64> = drained.iter().map(|&(_, item)| item).collect();
                json!({"drained": items})
            }
            Op::Len => json!(queue.len()),
            // Mapping (cancel): asyncio cancels the task; ours drops the future. A cancelled
            // put was not accepted on either side (ours drops the item with the future).
            Op::Cancel(index) => {
                if self.slots.is_empty() {
                    json!("none")
                } else {
                    let slot = self.slots.remove(index % self.slots.len());
                    json!({"cancelled": slot.step})
                }
            }
        };
        let completed = self.settle();
        // Mapping (join): asyncio's join is edge-triggered and ours level-triggered; with
        // every step run to quiescence, "would a fresh join return at once" is the same
        // question on both sides.
        let join_now = {
            let mut join = Box::pin(queue.join());
            join.as_mut()
                .poll(&mut Context::from_waker(Waker::noop()))
                .is_ready()
        };
        json!({
            "step": step,
            "result": result,
            "completed": completed,
            "len": queue.len(),
            "unfinished": queue.unfinished(),
            "join_now": join_now,
            "pending": self.slots.iter().map(|slot| slot.step).collect::<Vec<_>>(),
        })
    }
}

/// Runs `script` on our queue and compares each step with CPython's line.
fn compare(number: usize, script: &Script, python: &[Value]) {
    let queue = match script.maxsize {
        0 => Queue::unbounded(),
        n => Queue::bounded(n).unwrap(),
    };
    let mut ours = Ours {
        queue: &queue,
        held: Vec::new(),
        slots: Vec::new(),
        tally: Tally::default(),
    };
    assert_eq!(
        python.len(),
        script.ops.len(),
        "script {number}: CPython ran a different number of steps"
    );
    for (step, op) in script.ops.iter().enumerate() {
        let mut theirs = python[step].clone();
        theirs.as_object_mut().unwrap().remove("script");
        let mine = ours.step(step, op);
        if mine != theirs {
            let shown: Vec<String> = script.ops[..=step]
                .iter()
                .enumerate()
                .map(|(i, op)| format!("  {i}: {op:?}"))
                .collect();
            panic!(
                "script {number} (seed {:#x}, maxsize {}) diverges at step {step} ({op:?})\n  ours:    {mine}\n  cpython: {theirs}\nsteps:\n{}",
                script.seed,
                script.maxsize,
                shown.join("\n")
            );
        }
    }
    // Our ledger, field by field, against the runner's own tally.
    drop(ours.slots);
    let buffered = queue.len() as u64;
    let in_flight = ours.held.len() as u64;
    drop(ours.held);
    let ledger = queue.ledger();
    let t = &ours.tally;
    let expected = {
        let mut ledger = Ledger::default();
        ledger.accepted = t.next_id;
        ledger.buffered = buffered;
        ledger.in_flight = 0;
        ledger.succeeded = t.succeeded;
        ledger.rejected = t.rejected;
        ledger.uncertain = t.uncertain;
        ledger.abandoned = t.abandoned + in_flight;
        ledger.discarded = t.discarded;
        ledger
    };
    assert_eq!(
        ledger, expected,
        "script {number} (seed {:#x}): ledger",
        script.seed
    );
    assert!(ledger.is_balanced());
}

// ------------------------------------------------------------------ the driver

/// The CPython 3.13 interpreter, or `None` after a loud notice (outside CI only).
fn cpython(test: &str) -> Option<String> {
    external::require("CPython 3.13", test, external::cpython_313())
}

fn run_cpython(program: &str, scripts: &[Script]) -> Vec<Vec<Value>> {
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/queue_driver.py");
    let mut child = Command::new(program)
        .arg(&driver)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| {
            panic!(
                "the differential test needs CPython 3.13 (`{program}`), which could not be \
                 started: {error}"
            )
        });
    let mut input = String::new();
    for script in scripts {
        input.push_str(&script.to_json().to_string());
        input.push('\n');
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child
        .wait_with_output()
        .expect("the CPython driver did not finish");
    writer
        .join()
        .unwrap()
        .expect("could not send the scripts to CPython");
    let stdout = String::from_utf8(output.stdout).expect("the driver printed UTF-8");
    assert!(
        output.status.success(),
        "the differential test needs CPython 3.13 (`{program}`); the driver failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let mut lines = stdout.lines();
    let header: Value = serde_json::from_str(lines.next().expect("the driver printed nothing"))
        .expect("the driver's first line is JSON");
    assert_eq!(header["implementation"], "cpython", "{header}");
    let version = header["python"].as_str().unwrap_or_default();
    assert!(
        version.starts_with("3.13."),
        "CPython 3.13 is needed, found {version}"
    );

    let mut results: Vec<Vec<Value>> = scripts.iter().map(|_| Vec::new()).collect();
    for line in lines {
        let value: Value = serde_json::from_str(line).expect("the driver prints JSON lines");
        let number = value["script"]
            .as_u64()
            .expect("each line names its script") as usize;
        results[number].push(value);
    }
    results
}

/// How many steps of `script` issue a `get` while another `get` waits, or a `put` while
/// another `put` waits, judged by CPython's record of the step before: the steps where
/// arrival order decides who is served.
fn second_waiters(script: &Script, python: &[Value]) -> usize {
    let same_kind =
        |a: &Op, b: &Op| matches!((a, b), (Op::Get, Op::Get) | (Op::Put(_), Op::Put(_)));
    (1..script.ops.len())
        .filter(|&step| {
            python[step - 1]["pending"]
                .as_array()
                .expect("each line lists the waiting operations")
                .iter()
                .any(|waiting| {
                    let waiting = waiting.as_u64().unwrap() as usize;
                    same_kind(&script.ops[waiting], &script.ops[step])
                })
        })
        .count()
}

#[test]
fn scripts_agree_with_cpython_asyncio_queue() {
    let Some(program) = cpython("scripts_agree_with_cpython_asyncio_queue") else {
        return;
    };
    let started = Instant::now();
    let scripts: Vec<Script> = match env_u64("DIFF_SEED") {
        Some(seed) => vec![Script::generate(seed)],
        None => {
            let count = env_u64("DIFF_SCRIPTS").unwrap_or(400);
            let base = env_u64("DIFF_BASE_SEED").unwrap_or(0xD1FF);
            (0..count)
                .map(|i| Script::generate(derive_seed(base, i)))
                .collect()
        }
    };
    let python = run_cpython(&program, &scripts);
    let (mut steps, mut queued_behind) = (0, 0);
    for (number, (script, theirs)) in scripts.iter().zip(&python).enumerate() {
        compare(number, script, theirs);
        steps += script.ops.len();
        queued_behind += second_waiters(script, theirs);
    }
    eprintln!(
        "differential: {} scripts, {steps} steps compared with CPython ({queued_behind} \
         waiters queued behind another of their kind) in {:.1?}",
        scripts.len(),
        started.elapsed()
    );
    // A full batch must exercise arrival order, or the comparison above proves little.
    if scripts.len() >= 100 {
        assert!(queued_behind > 0, "no script had two waiters of a kind");
    }
}

/// Two getters wait; the first takes the first item; the second item must go to the second
/// getter, as CPython's asyncio.Queue does (FIFO `_getters`), not to the third.
#[test]
fn waiters_are_served_in_arrival_order() {
    let queue = Queue::unbounded();
    let flags: Vec<Arc<Flag>> = (0..3).map(|_| Arc::default()).collect();
    let wakers: Vec<Waker> = flags.iter().map(|f| Waker::from(Arc::clone(f))).collect();
    let mut getters: Vec<_> = (0..3).map(|_| Box::pin(queue.get())).collect();
    for (getter, waker) in getters.iter_mut().zip(&wakers) {
        assert!(getter
            .as_mut()
            .poll(&mut Context::from_waker(waker))
            .is_pending());
    }
    queue.try_put("a").unwrap();
    // Poll whatever was woken, in arrival order, as an executor would.
    let poll_woken = |getters: &mut Vec<Pin<Box<Get<'_, &'static str>>>>| {
        let mut got = Vec::new();
        for (i, getter) in getters.iter_mut().enumerate() {
            if flags[i].0.swap(false, Ordering::SeqCst) {
                if let Poll::Ready(delivery) =
                    getter.as_mut().poll(&mut Context::from_waker(&wakers[i]))
                {
                    got.push((i, delivery.unwrap().succeed()));
                }
            }
        }
        got
    };
    assert_eq!(poll_woken(&mut getters), [(0, "a")]);
    poll_woken(&mut getters);
    queue.try_put("b").unwrap();
    assert_eq!(
        poll_woken(&mut getters),
        [(1, "b")],
        "the second getter waited longest"
    );
}

/// The comparator itself must notice a divergence: a script run against the wrong
/// capacity differs from CPython's run at the first put that meets a full queue.
#[test]
fn the_comparator_detects_a_divergence() {
    let Some(program) = cpython("the_comparator_detects_a_divergence") else {
        return;
    };
    let script = Script {
        seed: 0,
        maxsize: 1,
        ops: vec![Op::TryPut(0), Op::TryPut(1), Op::Len],
    };
    let python = run_cpython(&program, std::slice::from_ref(&script));
    let wrong = Script {
        seed: 0,
        maxsize: 2,
        ops: script.ops.clone(),
    };
    let diverged = std::panic::catch_unwind(|| compare(0, &wrong, &python[0]));
    assert!(diverged.is_err());
    compare(0, &script, &python[0]);
}
