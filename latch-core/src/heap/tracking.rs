//! [`TrackingLatch`]: a failable latch whose counters have names.

use alloc::borrow::Cow;
use alloc::boxed::Box;
#[cfg(feature = "tracing")]
use alloc::string::ToString;
use alloc::vec::Vec;
use core::convert::Infallible;
use core::fmt;

use crate::heap::counter::Counter;
#[cfg(target_has_atomic = "ptr")]
use crate::heap::counter::OwnedCounter;
use crate::heap::diagnostics::CountDownEvent;
use crate::heap::error::{Failure, NameError, StillPending};
use crate::heap::failable::Failable;
use crate::heap::latch_of::{sealed, LatchOf};
use crate::heap::names::Names;
use crate::heap::raw::{RawLatch, Terminal};

type Observer = Box<dyn Fn(&CountDownEvent<'_>) + Send + Sync>;

/// A failable countdown latch built from a list of distinct counter names.
///
/// Each name counts once: a duplicate report is harmless, an unknown name is an error (not
/// a silent miscount), and [`pending`](TrackingLatch::pending) lists who has not reported.
/// A wait with a deadline that expires names exactly the counters still pending, so
/// "startup timed out" becomes "startup timed out waiting for: shard-7".
///
/// The obvious way to use it is through [`Counter`] handles, one per name: a handle reports
/// with [`Counter::report`], and if it is dropped without reporting (its task returned early
/// or panicked) it fails the latch naming its counter, so a waiter never hangs on a dead
/// counter.
///
/// Each count-down can be observed with its counter name and, under `std`, the time since
/// the latch was built ([`on_count_down`](TrackingLatch::on_count_down), and `tracing`
/// events under the `tracing` feature); [`time_to_open`](TrackingLatch::time_to_open) gives
/// the startup time as a value.
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
pub type TrackingLatch<E = Infallible> = LatchOf<Tracking<E>>;

/// The kind of a [`TrackingLatch<E>`]: a count, the counters' names and report states,
/// the first [`Failure<E>`], the count-down observer and, under `std`, the clock behind
/// [`time_to_open`](TrackingLatch::time_to_open).
///
/// # Examples
///
/// ```
/// use tally_latch::{kind::Tracking, LatchOf, TrackingLatch};
///
/// let latch: LatchOf<Tracking> = TrackingLatch::new(["db"]).unwrap();
/// assert_eq!(latch.pending(), ["db"]);
/// ```
pub struct Tracking<E = Infallible> {
    failure: Failable<Failure<E>>,
    names: Names,
    observer: Option<Observer>,
    #[cfg(feature = "std")]
    created: std::time::Instant,
    #[cfg(feature = "std")]
    time_to_open: std::sync::OnceLock<core::time::Duration>,
}

impl LatchOf<Tracking> {
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

impl<E> LatchOf<Tracking<E>> {
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
        let names = Names::new(names)?;
        Ok(Self {
            // Cannot exceed `MAX_COUNT`: that many names would not fit in the address space.
            raw: RawLatch::new(names.len()),
            kind: Tracking {
                failure: Failable::new(),
                names,
                observer: None,
                #[cfg(feature = "std")]
                created: std::time::Instant::now(),
                #[cfg(feature = "std")]
                time_to_open: std::sync::OnceLock::new(),
            },
        })
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
        self.kind.observer = Some(Box::new(observer));
        self
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
        self.kind.failure.error(&self.raw)
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
        self.kind.names.iter().map(|name| &**name)
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
        self.kind.pending(&self.raw).map(|name| &**name).collect()
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
        Ok(self.report(self.kind.names.index(name)?))
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
        let index = self.kind.names.claim(name)?;
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
        let index = self.kind.names.claim(name)?;
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
        self.kind
            .time_to_open
            .get()
            .copied()
            .filter(|_| self.is_open())
    }

    /// The name of counter `index`.
    pub(crate) fn name(&self, index: usize) -> &Cow<'static, str> {
        self.kind.names.name(index)
    }

    /// Reports for counter `index`; see [`count_down_for`](Self::count_down_for).
    pub(crate) fn report(&self, index: usize) -> bool {
        let names = &self.kind.names;
        if !names.start_report(index) {
            return false;
        }
        // The count-down that will open the latch stamps the time before it opens it, so
        // anyone who sees the latch open also sees the time (a racing count-down that opens
        // it instead stamps it in `record`, a moment later).
        #[cfg(feature = "std")]
        if self.raw.count() == 1 {
            let _ = self.kind.time_to_open.set(self.kind.created.elapsed());
        }
        // Marked reported right after the decrement, before the waiters it may release
        // wake, so they find nobody pending.
        let counted = self.raw.count_down_then(|remaining| {
            names.reported(index);
            self.record(index, remaining);
        });
        if !counted {
            // Refused by an ended latch: nothing to count, and nothing pending any more.
            names.reported(index);
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
        self.kind.names.has_reported(index)
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
        self.kind.failure.fail(&self.raw, failure)?;
        #[cfg(feature = "tracing")]
        crate::heap::trace::failed(
            self.label(),
            reason,
            counter.as_deref(),
            core::any::type_name::<E>(),
        );
        Ok(())
    }

    /// Runs after counter `index` counted, before the waiters it may release wake.
    fn record(&self, index: usize, remaining: usize) {
        let observed = self.kind.observer.is_some() || cfg!(feature = "tracing");
        #[cfg(feature = "std")]
        let elapsed = if remaining == 0 {
            *self
                .kind
                .time_to_open
                .get_or_init(|| self.kind.created.elapsed())
        } else if observed {
            self.kind.created.elapsed()
        } else {
            return;
        };
        #[cfg(not(feature = "std"))]
        if !observed {
            return;
        }
        let event = CountDownEvent {
            counter: self.kind.names.name(index),
            remaining,
            #[cfg(feature = "std")]
            elapsed,
        };
        #[cfg(feature = "tracing")]
        event.trace(self.label());
        if let Some(observer) = &self.kind.observer {
            observer(&event);
        }
    }
}

impl<E> Tracking<E> {
    /// The counters whose count-down has not landed in `raw`, in order.
    fn pending<'a>(&'a self, raw: &RawLatch) -> impl Iterator<Item = &'a Cow<'static, str>> {
        self.names.pending(raw.terminal() == Some(Terminal::Open))
    }
}

impl<E> sealed::Kind for Tracking<E> {
    const NAME: &'static str = "TrackingLatch";

    fn fmt_fields(&self, raw: &RawLatch, f: &mut fmt::DebugStruct<'_, '_>) {
        let pending: Vec<&str> = self.pending(raw).map(|name| &**name).collect();
        f.field("status", &raw.status().as_str())
            .field("pending", &pending);
    }
}

impl<E: Clone> sealed::Ends for Tracking<E> {
    type Output = Result<(), Failure<E>>;
    type Timeout = StillPending;

    #[inline]
    fn output(&self, terminal: Terminal) -> Self::Output {
        sealed::Ends::output(&self.failure, terminal)
    }

    fn timed_out(&self, raw: &RawLatch) -> Option<StillPending> {
        // Empty only if every counter's count-down has landed, so the latch has opened or
        // is failing (a count-down was refused); either way it is no timeout.
        let names: Vec<_> = self.pending(raw).cloned().collect();
        (!names.is_empty()).then_some(StillPending { names })
    }
}

impl<E> fmt::Debug for Tracking<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tracking").finish_non_exhaustive()
    }
}
