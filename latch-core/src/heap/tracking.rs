//! [`TrackingLatch`]: a failable latch whose counters have names.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::ToString;
use alloc::vec::Vec;
use core::convert::Infallible;
use core::fmt;

use crate::heap::counter::Counter;
#[cfg(target_has_atomic = "ptr")]
use crate::heap::counter::OwnedCounter;
use crate::heap::diagnostics::CountDownEvent;
use crate::heap::error::{Failure, NameError, StillPending};
use crate::heap::failable::FailableLatch;
#[cfg(target_has_atomic = "ptr")]
use crate::heap::futures::WaitOwned;
use crate::heap::futures::{Wait, WaitUntil};
use crate::heap::latch::{sealed::Sealed, Latch};
use crate::heap::raw::{RawLatch, Terminal};
use crate::sync::atomic::{AtomicU8, Ordering};

/// The counter has neither reported nor been handed out.
const PENDING: u8 = 0;
/// A [`Counter`] handle owns the report.
const CLAIMED: u8 = 1;
/// The counter's report has been claimed (later reports are duplicates) but its count-down
/// has not landed yet: it is still pending, so a timeout that races it names it.
const REPORTING: u8 = 2;
/// The counter's count-down has landed (or was refused by an ended latch).
const REPORTED: u8 = 3;

type Observer = Box<dyn Fn(&CountDownEvent<'_>) + Send + Sync>;

/// A failable countdown latch built from a list of distinct counter names.
///
/// Each name counts once: a duplicate report is harmless, an unknown name is an error (not a
/// silent miscount), and [`pending`](Self::pending) lists who has not reported. A wait with
/// a deadline that expires names exactly the counters still pending, so "startup timed out"
/// becomes "startup timed out waiting for: shard-7".
///
/// The obvious way to use it is through [`Counter`] handles, one per name: a handle reports
/// with [`Counter::report`], and if it is dropped without reporting (its task returned early
/// or panicked) it fails the latch naming its counter, so a waiter never hangs on a dead
/// counter.
///
/// Each count-down can be observed with its counter name and, under `std`, the time since
/// the latch was built ([`on_count_down`](Self::on_count_down), and `tracing` events under
/// the `tracing` feature); [`time_to_open`](Self::time_to_open) gives the startup time as a
/// value.
///
/// Prefer a join set or task tracker when the named events are just task completions; a
/// tracking latch shines for readiness gating, where components report ready and keep
/// running.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use tally_latch::TrackingLatch;
///
/// let ready = Arc::new(TrackingLatch::new(["consumer", "cache-warmer", "http"]).unwrap());
/// for name in ["consumer", "cache-warmer", "http"] {
///     let counter = ready.counter_owned(name).unwrap();
///     std::thread::spawn(move || {
///         // ... start the component; a panic here fails the latch naming it ...
///         counter.report();
///     });
/// }
/// futures_lite::future::block_on(ready.wait()).unwrap();
/// assert!(ready.pending().is_empty());
/// ```
pub struct TrackingLatch<E = Infallible> {
    latch: FailableLatch<Failure<E>>,
    counters: Box<[Slot]>,
    /// Indices into `counters`, sorted by name, for lookup and duplicate detection.
    by_name: Box<[usize]>,
    observer: Option<Observer>,
    #[cfg(feature = "std")]
    created: std::time::Instant,
    #[cfg(feature = "std")]
    time_to_open: std::sync::OnceLock<core::time::Duration>,
}

struct Slot {
    name: Cow<'static, str>,
    /// `PENDING`, `CLAIMED`, `REPORTING` or `REPORTED`; only ever moves forward.
    state: AtomicU8,
}

impl TrackingLatch {
    /// A latch that opens once every named counter has reported; an empty list starts
    /// open. Only a [`Counter`] dropped without reporting can fail it
    /// ([`Failure::Abandoned`]), so it needs no error type (it is
    /// [`Infallible`](core::convert::Infallible)) and no turbofish; use
    /// [`new_failable`](TrackingLatch::new_failable) for a latch that also fails with an
    /// error of yours.
    ///
    /// # Errors
    ///
    /// [`NameError::Duplicate`] if a name appears twice (a latch for 3 with 4 counters would
    /// open early; names catch it).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::{NameError, TrackingLatch};
    ///
    /// let latch = TrackingLatch::new(["a", "b"]).unwrap();
    /// assert_eq!(latch.count(), 2);
    /// let dup = TrackingLatch::new([String::from("x"), String::from("x")]);
    /// assert_eq!(dup.unwrap_err(), NameError::Duplicate("x".into()));
    /// ```
    pub fn new<I>(names: I) -> Result<Self, NameError>
    where
        I: IntoIterator,
        I::Item: Into<Cow<'static, str>>,
    {
        Self::new_failable(names)
    }
}

impl<E> TrackingLatch<E> {
    /// Like [`new`](TrackingLatch::new), for a latch that can also fail with an error of
    /// type `E` ([`fail`](Self::fail), [`Counter::fail`]); `E` is usually inferred from
    /// those calls.
    ///
    /// # Errors
    ///
    /// [`NameError::Duplicate`] if a name appears twice.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::TrackingLatch;
    ///
    /// let latch = TrackingLatch::new_failable(["db", "cache"]).unwrap();
    /// latch.fail("config missing").unwrap();
    /// assert_eq!(latch.failure().unwrap().error(), Some(&"config missing"));
    /// ```
    pub fn new_failable<I>(names: I) -> Result<Self, NameError>
    where
        I: IntoIterator,
        I::Item: Into<Cow<'static, str>>,
    {
        let counters: Box<[Slot]> = names
            .into_iter()
            .map(|name| Slot {
                name: name.into(),
                state: AtomicU8::new(PENDING),
            })
            .collect();
        let mut by_name: Vec<usize> = (0..counters.len()).collect();
        by_name.sort_unstable_by(|&a, &b| counters[a].name.cmp(&counters[b].name));
        if let Some(pair) = by_name
            .windows(2)
            .find(|pair| counters[pair[0]].name == counters[pair[1]].name)
        {
            return Err(NameError::Duplicate(counters[pair[0]].name.to_string()));
        }
        Ok(Self {
            // Cannot exceed `MAX_COUNT`: that many slots would not fit in the address space.
            latch: FailableLatch::new(counters.len()),
            counters,
            by_name: by_name.into_boxed_slice(),
            observer: None,
            #[cfg(feature = "std")]
            created: std::time::Instant::now(),
            #[cfg(feature = "std")]
            time_to_open: std::sync::OnceLock::new(),
        })
    }

    /// Names this latch in its `tracing` events (the `label` field) and its `Debug`
    /// output. Without the `tracing` feature the label is not kept and this does nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::TrackingLatch;
    ///
    /// let ready = TrackingLatch::new(["db", "http"]).unwrap().with_label("readiness");
    /// assert_eq!(ready.count(), 2);
    /// ```
    #[must_use = "returns the latch with the label set"]
    pub fn with_label(mut self, label: &'static str) -> Self {
        self.latch = self.latch.with_label(label);
        self
    }

    /// The label set by [`with_label`](Self::with_label); empty if none was.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::TrackingLatch;
    ///
    /// let ready = TrackingLatch::new(["a"]).unwrap().with_label("readiness");
    /// assert_eq!(ready.label(), "readiness");
    /// ```
    #[cfg(feature = "tracing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
    pub fn label(&self) -> &'static str {
        self.latch.label()
    }

    /// Calls `observer` on every count-down, with the counter's name, the count remaining
    /// and (under `std`) the time since the latch was built. It runs on the counting thread,
    /// before the waiters that the last count-down releases wake.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use tally_latch::TrackingLatch;
    ///
    /// let log = Arc::new(Mutex::new(Vec::new()));
    /// let sink = log.clone();
    /// let latch = TrackingLatch::new(["db", "cache"])
    ///     .unwrap()
    ///     .on_count_down(move |event| {
    ///         sink.lock().unwrap().push((event.counter().to_owned(), event.remaining()));
    ///     });
    /// latch.count_down_for("cache").unwrap();
    /// latch.count_down_for("db").unwrap();
    /// assert_eq!(*log.lock().unwrap(), [("cache".into(), 1), ("db".into(), 0)]);
    /// ```
    #[must_use = "returns the latch with the observer installed"]
    pub fn on_count_down(
        mut self,
        observer: impl Fn(&CountDownEvent<'_>) + Send + Sync + 'static,
    ) -> Self {
        self.observer = Some(Box::new(observer));
        self
    }

    /// The number of counters that have not reported; frozen once the latch fails (each
    /// refused report still running on another thread can show it one lower until it
    /// returns).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::TrackingLatch;
    ///
    /// let latch = TrackingLatch::new(["a", "b"]).unwrap();
    /// latch.count_down_for("a").unwrap();
    /// assert_eq!(latch.count(), 1);
    /// ```
    pub fn count(&self) -> usize {
        self.latch.count()
    }

    /// Whether every counter has reported (before any failure).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::TrackingLatch;
    ///
    /// let latch = TrackingLatch::new(["a"]).unwrap();
    /// latch.count_down_for("a").unwrap();
    /// assert!(latch.is_open());
    /// ```
    pub fn is_open(&self) -> bool {
        self.latch.is_open()
    }

    /// Why the latch failed, if it failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::TrackingLatch;
    ///
    /// let latch = TrackingLatch::new_failable(["a"]).unwrap();
    /// latch.fail("config missing").unwrap();
    /// assert_eq!(latch.failure().unwrap().error(), Some(&"config missing"));
    /// ```
    pub fn failure(&self) -> Option<&Failure<E>> {
        self.latch.error()
    }

    /// Every counter name, in the order the latch was built with.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::TrackingLatch;
    ///
    /// let latch = TrackingLatch::new(["b", "a"]).unwrap();
    /// assert_eq!(latch.names().collect::<Vec<_>>(), ["b", "a"]);
    /// ```
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.counters.iter().map(|slot| &*slot.name)
    }

    /// The counters that have not reported, in the order the latch was built with. A
    /// counter is pending until its count-down has landed: one that is reporting at this
    /// moment on another thread is still listed.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::TrackingLatch;
    ///
    /// let latch = TrackingLatch::new(["a", "b", "c"]).unwrap();
    /// latch.count_down_for("b").unwrap();
    /// assert_eq!(latch.pending(), ["a", "c"]);
    /// ```
    pub fn pending(&self) -> Vec<&str> {
        self.pending_slots().map(|slot| &*slot.name).collect()
    }

    /// Reports for the counter called `name`. Returns whether this call counted: `false` for
    /// a duplicate report (harmless) or once the latch has failed.
    ///
    /// # Errors
    ///
    /// [`NameError::Unknown`] if no counter has this name; nothing is counted.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::{NameError, TrackingLatch};
    ///
    /// let latch = TrackingLatch::new(["a", "b"]).unwrap();
    /// assert_eq!(latch.count_down_for("a"), Ok(true));
    /// assert_eq!(latch.count_down_for("a"), Ok(false)); // duplicate: harmless
    /// assert_eq!(latch.count_down_for("z"), Err(NameError::Unknown("z".into())));
    /// assert_eq!(latch.count(), 1);
    /// ```
    pub fn count_down_for(&self, name: &str) -> Result<bool, NameError> {
        Ok(self.report(self.index(name)?))
    }

    /// Hands out the handle for the counter called `name`: it reports with
    /// [`Counter::report`] and fails the latch, naming `name`, if dropped without reporting.
    ///
    /// # Errors
    ///
    /// [`NameError::Unknown`] for an unknown name, [`NameError::Claimed`] if this name's
    /// handle was already handed out, [`NameError::Reported`] if it has already reported.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::{NameError, TrackingLatch};
    ///
    /// let latch = TrackingLatch::new(["http"]).unwrap();
    /// let http = latch.counter("http").unwrap();
    /// assert_eq!(latch.counter("http").unwrap_err(), NameError::Claimed("http".into()));
    /// http.report();
    /// assert!(latch.is_open());
    /// ```
    pub fn counter(&self, name: &str) -> Result<Counter<'_, E>, NameError> {
        let index = self.claim(name)?;
        Ok(Counter::new(self, index))
    }

    /// Like [`counter`](Self::counter), for a latch in an [`Arc`](alloc::sync::Arc): the
    /// [`OwnedCounter`] holds a clone of the `Arc`, so it moves into `'static` tasks.
    ///
    /// # Errors
    ///
    /// As for [`counter`](Self::counter).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tally_latch::TrackingLatch;
    ///
    /// let latch = Arc::new(TrackingLatch::new(["worker"]).unwrap());
    /// let worker = latch.counter_owned("worker").unwrap();
    /// std::thread::spawn(move || worker.report()).join().unwrap();
    /// assert!(latch.is_open());
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn counter_owned(
        self: &alloc::sync::Arc<Self>,
        name: &str,
    ) -> Result<OwnedCounter<E>, NameError> {
        let index = self.claim(name)?;
        Ok(OwnedCounter::new(self.clone(), index))
    }

    /// Fails the latch without naming a counter, releasing every waiter.
    ///
    /// # Errors
    ///
    /// Hands `error` back if the latch had already opened or failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::TrackingLatch;
    ///
    /// let latch = TrackingLatch::new_failable(["a"]).unwrap();
    /// assert_eq!(latch.fail("shutting down"), Ok(()));
    /// assert_eq!(latch.fail("again"), Err("again"));
    /// ```
    pub fn fail(&self, error: E) -> Result<(), E> {
        self.fail_because(Failure::Failed {
            counter: None,
            error,
        })
        .map_err(Failure::into_error)
    }

    /// How long the latch took to open, measured from construction; `None` before it opens
    /// and for a failed latch. The opening count-down stamps the time before it opens the
    /// latch, so a waiter it releases always sees `Some`.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::TrackingLatch;
    ///
    /// let latch = TrackingLatch::new(["a"]).unwrap();
    /// assert_eq!(latch.time_to_open(), None);
    /// latch.count_down_for("a").unwrap();
    /// assert!(latch.time_to_open().is_some());
    /// ```
    #[cfg(feature = "std")]
    pub fn time_to_open(&self) -> Option<core::time::Duration> {
        // A stamp left by a count-down that lost the latch to a failure is not a time-to-open.
        self.time_to_open.get().copied().filter(|_| self.is_open())
    }

    /// The name of counter `index`.
    pub(crate) fn name(&self, index: usize) -> &Cow<'static, str> {
        &self.counters[index].name
    }

    /// Reports for counter `index`; see [`count_down_for`](Self::count_down_for).
    pub(crate) fn report(&self, index: usize) -> bool {
        let slot = &self.counters[index];
        // Relaxed: the claim only decides which report for this name counts; the latch's
        // own state word carries the happens-before from counters to waiters.
        if slot.state.fetch_max(REPORTING, Ordering::Relaxed) >= REPORTING {
            return false;
        }
        // The count-down that will open the latch stamps the time before it opens it, so
        // anyone who sees the latch open also sees the time (a racing count-down that opens
        // it instead stamps it in `record`, a moment later).
        #[cfg(feature = "std")]
        if self.latch.count() == 1 {
            let _ = self.time_to_open.set(self.created.elapsed());
        }
        // Release: a reader that sees `REPORTED` (Acquire, in `pending_slots`) also sees
        // this count-down in the latch's state word, so a list with nobody pending implies
        // a latch that has ended or is failing. Stored right after the decrement, before
        // the waiters it may release wake, so they find nobody pending.
        let counted = self.latch.count_down_then(|remaining| {
            slot.state.store(REPORTED, Ordering::Release);
            self.record(index, remaining);
        });
        if !counted {
            // Refused by an ended latch: nothing to count, and nothing pending any more.
            slot.state.store(REPORTED, Ordering::Release);
        }
        counted
    }

    /// Fails the latch with `error`, naming counter `index`; hands `error` back if the
    /// latch had already ended.
    pub(crate) fn counter_failed(&self, index: usize, error: E) -> Result<(), E> {
        self.fail_because(Failure::Failed {
            counter: Some(self.name(index).clone()),
            error,
        })
        .map_err(Failure::into_error)
    }

    /// Whether counter `index` has reported.
    pub(crate) fn has_reported(&self, index: usize) -> bool {
        // Relaxed: a stale `false` only costs a failure that the latch then refuses.
        self.counters[index].state.load(Ordering::Relaxed) >= REPORTING
    }

    /// Fails the latch with `failure`; hands it back if the latch had already ended.
    pub(crate) fn fail_because(&self, failure: Failure<E>) -> Result<(), Failure<E>> {
        #[cfg(feature = "tracing")]
        let (reason, counter) = (
            match &failure {
                Failure::Failed { counter: None, .. } => "failed",
                Failure::Failed { .. } => "counter failed",
                Failure::Abandoned {
                    panicking: false, ..
                } => "abandoned",
                Failure::Abandoned { .. } => "panicked",
            },
            failure.counter().map(ToString::to_string),
        );
        self.latch.fail_quietly(failure)?;
        #[cfg(feature = "tracing")]
        crate::heap::trace::failed(
            self.label(),
            reason,
            counter.as_deref(),
            core::any::type_name::<E>(),
        );
        Ok(())
    }

    fn index(&self, name: &str) -> Result<usize, NameError> {
        self.by_name
            .binary_search_by(|&index| (*self.counters[index].name).cmp(name))
            .map(|position| self.by_name[position])
            .map_err(|_| NameError::Unknown(name.to_string()))
    }

    fn claim(&self, name: &str) -> Result<usize, NameError> {
        let index = self.index(name)?;
        // Relaxed: the claim only decides which caller gets the one handle for this name.
        match self.counters[index].state.compare_exchange(
            PENDING,
            CLAIMED,
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => Ok(index),
            Err(CLAIMED) => Err(NameError::Claimed(name.to_string())),
            Err(_) => Err(NameError::Reported(name.to_string())),
        }
    }

    /// The counters whose count-down has not landed: one reporting at this moment on
    /// another thread is still pending.
    /// An open latch has nobody pending, even while its last reporter has yet to mark its
    /// slot.
    fn pending_slots(&self) -> impl Iterator<Item = &Slot> {
        let open = self.is_open();
        // Acquire: pairs with the Release store of `REPORTED` in `report`, so a counter seen
        // as reported has its count-down visible in the latch's state word.
        self.counters
            .iter()
            .filter(move |slot| !open && slot.state.load(Ordering::Acquire) != REPORTED)
    }

    fn still_pending(&self) -> StillPending {
        StillPending {
            names: self.pending_slots().map(|slot| slot.name.clone()).collect(),
        }
    }

    /// Runs after counter `index` counted, before the waiters it may release wake.
    fn record(&self, index: usize, remaining: usize) {
        let observed = self.observer.is_some() || cfg!(feature = "tracing");
        #[cfg(feature = "std")]
        let elapsed = if remaining == 0 {
            *self.time_to_open.get_or_init(|| self.created.elapsed())
        } else if observed {
            self.created.elapsed()
        } else {
            return;
        };
        #[cfg(not(feature = "std"))]
        if !observed {
            return;
        }
        let event = CountDownEvent {
            counter: &self.counters[index].name,
            remaining,
            #[cfg(feature = "std")]
            elapsed,
        };
        #[cfg(feature = "tracing")]
        event.trace(self.label());
        if let Some(observer) = &self.observer {
            observer(&event);
        }
    }
}

/// The waits: each waiter gets its own clone of the [`Failure`] (so `E: Clone`), owned and,
/// for an `E: 'static`, `'static`; see [`FailableLatch`]'s waits for why a clone and not a
/// shared reference count.
impl<E: Clone> TrackingLatch<E> {
    /// Waits until every counter has reported (`Ok`) or the latch fails (`Err`).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::TrackingLatch;
    ///
    /// let latch = TrackingLatch::new(["a"]).unwrap();
    /// latch.count_down_for("a").unwrap();
    /// assert!(futures_lite::future::block_on(latch.wait()).is_ok());
    /// ```
    pub fn wait(&self) -> Wait<'_, Self> {
        Wait::new(self)
    }

    /// Like [`wait`](Self::wait), for a latch in an [`Arc`](alloc::sync::Arc): the future
    /// owns a clone of the `Arc`, for a spawned `'static` task.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tally_latch::TrackingLatch;
    ///
    /// let ready = Arc::new(TrackingLatch::new(["http"]).unwrap());
    /// let gate = std::thread::spawn({
    ///     let wait = ready.wait_owned();
    ///     move || futures_lite::future::block_on(wait).is_ok()
    /// });
    /// ready.count_down_for("http").unwrap();
    /// assert!(gate.join().unwrap());
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn wait_owned(self: &alloc::sync::Arc<Self>) -> WaitOwned<Self> {
        WaitOwned::new(self.clone())
    }

    /// Waits until the latch opens or fails, or `deadline` (any future) completes: `Ok`
    /// with how the latch ended, `Err` with the counters still pending if the deadline came
    /// first.
    ///
    /// # Errors
    ///
    /// [`StillPending`], naming exactly the counters whose count-down had not landed when
    /// the deadline fired (at least one: a latch that ended meanwhile reports how). A
    /// timed-out wait changes nothing.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::TrackingLatch;
    ///
    /// let latch = TrackingLatch::new(["shard-6", "shard-7"]).unwrap();
    /// latch.count_down_for("shard-6").unwrap();
    /// let pending = futures_lite::future::block_on(latch.wait_until(async {})).unwrap_err();
    /// assert_eq!(pending.to_string(), "timed out waiting for: shard-7");
    /// ```
    pub fn wait_until<D: core::future::Future>(&self, deadline: D) -> WaitUntil<'_, Self, D> {
        WaitUntil::new(self, deadline)
    }

    /// Blocks the thread until the latch opens or fails.
    ///
    /// # Errors
    ///
    /// The [`Failure`], if the latch failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::TrackingLatch;
    ///
    /// let latch = TrackingLatch::new(["a"]).unwrap();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| latch.count_down_for("a").unwrap());
    ///     latch.wait_blocking().unwrap();
    /// });
    /// ```
    #[cfg(feature = "std")]
    pub fn wait_blocking(&self) -> Result<(), Failure<E>> {
        self.wait().block()
    }

    /// Blocks the thread until the latch opens or fails, or `timeout` passes.
    ///
    /// # Errors
    ///
    /// As for [`wait_until`](Self::wait_until).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_latch::TrackingLatch;
    ///
    /// let latch = TrackingLatch::new(["slow"]).unwrap();
    /// let pending = latch.wait_blocking_timeout(Duration::from_millis(5)).unwrap_err();
    /// assert_eq!(pending.to_string(), "timed out waiting for: slow");
    /// ```
    #[cfg(feature = "std")]
    pub fn wait_blocking_timeout(
        &self,
        timeout: core::time::Duration,
    ) -> Result<Result<(), Failure<E>>, StillPending> {
        self.wait().block_for(timeout)
    }
}

impl<E> Failure<E> {
    /// The error of a `Failed` failure built by this crate from a caller's error.
    pub(crate) fn into_error(self) -> E {
        match self {
            Failure::Failed { error, .. } => error,
            Failure::Abandoned { .. } => unreachable!("only `Failed` carries a caller's error"),
        }
    }
}

impl<E: Clone> Latch for TrackingLatch<E> {
    type Output = Result<(), Failure<E>>;
    type Timeout = StillPending;
}

impl<E: Clone> Sealed for TrackingLatch<E> {
    fn raw(&self) -> &RawLatch {
        self.latch.raw_latch()
    }

    fn output(&self, terminal: Terminal) -> <Self as Latch>::Output {
        self.latch.output(terminal)
    }

    fn timed_out(&self) -> Option<<Self as Latch>::Timeout> {
        // Empty only if every counter's count-down has landed, so the latch has opened or
        // is failing (a count-down was refused); either way it is no timeout.
        let pending = self.still_pending();
        (!pending.names.is_empty()).then_some(pending)
    }
}

impl<E> fmt::Debug for TrackingLatch<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("TrackingLatch");
        // The label shows only once set, so unlabelled latches print as before.
        #[cfg(feature = "tracing")]
        if !self.label().is_empty() {
            f.field("label", &self.label());
        }
        f.field("count", &self.count())
            .field("status", &self.latch.raw_latch().status().as_str())
            .field("pending", &self.pending())
            .finish()
    }
}
