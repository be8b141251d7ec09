//! One atomic read of a latch: its state, each counter's, and the first failure.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use tally_latch::Failure;

use crate::latch::reason::Reason;
use crate::server::error::Error;
use crate::server::reply::Reply;

/// Where a latch stands.
///
/// # Examples
///
/// ```
/// assert_eq!(tally_redis::LatchState::Open.to_string(), "open");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LatchState {
    /// Some counters have not reported, and nothing failed.
    Waiting,
    /// Every counter reported.
    Open,
    /// A counter or the owner failed it (the first failure wins).
    Failed,
}

impl fmt::Display for LatchState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LatchState::Waiting => "waiting",
            LatchState::Open => "open",
            LatchState::Failed => "failed",
        })
    }
}

/// Where one counter stands.
///
/// # Examples
///
/// ```
/// use tally_redis::CounterState;
/// assert!(CounterState::Pending.is_pending());
/// assert!(!CounterState::Reported.is_pending());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CounterState {
    /// Nobody holds it.
    Pending,
    /// A holder has it on a lease and has not reported.
    Claimed {
        /// The holder's id.
        holder: String,
    },
    /// It reported.
    Reported,
}

impl CounterState {
    /// Whether the counter has not reported (pending or claimed).
    ///
    /// # Examples
    ///
    /// ```
    /// let claimed = tally_redis::CounterState::Claimed { holder: "h".into() };
    /// assert!(claimed.is_pending());
    /// ```
    pub fn is_pending(&self) -> bool {
        !matches!(self, CounterState::Reported)
    }
}

/// One atomic snapshot of a latch, from
/// [`TrackingLatch::snapshot`](crate::TrackingLatch::snapshot). Times are the server's
/// clock, in milliseconds since the Unix epoch.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(latch: tally_redis::TrackingLatch) {
/// let snapshot = latch.snapshot().await.unwrap();
/// println!("{} ({} left), waiting for {:?}", snapshot.state, snapshot.left, snapshot.pending());
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Snapshot {
    /// The latch's state.
    pub state: LatchState,
    /// Counters that have not reported.
    pub left: u64,
    /// Every counter and its state, in the order the latch was created with.
    pub counters: Vec<(String, CounterState)>,
    /// The first failure, if the latch failed.
    pub failure: Option<Failure<Reason>>,
    /// When the latch was created.
    pub created_ms: u64,
    /// When it opened, if it did.
    pub opened_ms: Option<u64>,
    /// The id of the last event at the time of the snapshot: a wait blocks after it.
    pub(crate) last_event: String,
}

impl Snapshot {
    /// The counters that have not reported, in the order the latch was created with.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(latch: tally_redis::TrackingLatch) {
    /// assert_eq!(latch.snapshot().await.unwrap().pending(), ["http"]);
    /// # }
    /// ```
    pub fn pending(&self) -> Vec<&str> {
        self.counters
            .iter()
            .filter(|(_, state)| state.is_pending())
            .map(|(name, _)| name.as_str())
            .collect()
    }

    /// From creation to opening, if the latch opened.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(latch: tally_redis::TrackingLatch) {
    /// if let Some(took) = latch.snapshot().await.unwrap().time_to_open() {
    ///     println!("ready after {took:?}");
    /// }
    /// # }
    /// ```
    pub fn time_to_open(&self) -> Option<Duration> {
        self.opened_ms
            .map(|opened| Duration::from_millis(opened.saturating_sub(self.created_ms)))
    }

    /// Reads the reply of the STATE script.
    pub(crate) fn parse(mut reply: Reply) -> Result<Snapshot, Error> {
        if reply.status != "ok" || reply.left() < 10 {
            return Err(reply.unexpected());
        }
        let state = match reply.text()?.as_str() {
            "waiting" => LatchState::Waiting,
            "open" => LatchState::Open,
            "failed" => LatchState::Failed,
            other => return Err(Error::Protocol(format!("unknown latch state {other:?}"))),
        };
        let left = reply.int()?;
        let created_ms = reply.int()?;
        let opened = reply.text()?;
        let opened_ms = opened.parse().ok();
        let counter = reply.text()?;
        let kind = reply.text()?;
        let holder = reply.text()?;
        let message = reply.text()?;
        let panicking = reply.text()? == "1";
        let last_event = reply.text()?;
        let failure = (state == LatchState::Failed)
            .then(|| failure(counter, &kind, holder, message, panicking));
        let mut counters = Vec::with_capacity(reply.left() / 3);
        while reply.left() >= 3 {
            let name = reply.text()?;
            let state = reply.text()?;
            let holder = reply.text()?;
            let state = match state.as_str() {
                "pending" => CounterState::Pending,
                "claimed" => CounterState::Claimed { holder },
                "reported" => CounterState::Reported,
                other => return Err(Error::Protocol(format!("unknown counter state {other:?}"))),
            };
            counters.push((name, state));
        }
        Ok(Snapshot {
            state,
            left,
            counters,
            failure,
            created_ms,
            opened_ms,
            last_event,
        })
    }
}

/// The failure in a `failed` reply (counter, kind, holder, message, panicking).
pub(crate) fn failure_of(reply: &mut Reply) -> Result<Failure<Reason>, Error> {
    let counter = reply.text()?;
    let kind = reply.text()?;
    let holder = reply.text()?;
    let message = reply.text()?;
    let panicking = reply.text()? == "1";
    Ok(failure(counter, &kind, holder, message, panicking))
}

/// The stored failure, as tally-latch's [`Failure`].
fn failure(
    counter: String,
    kind: &str,
    holder: String,
    message: String,
    panicking: bool,
) -> Failure<Reason> {
    let named = (!counter.is_empty()).then_some(counter);
    match (kind, named) {
        ("abandoned", Some(counter)) => Failure::Abandoned {
            counter: counter.into(),
            panicking,
        },
        ("expired", named) => Failure::Failed {
            counter: named.map(Into::into),
            error: Reason::LeaseExpired { holder },
        },
        (_, named) => Failure::Failed {
            counter: named.map(Into::into),
            error: Reason::Error(message),
        },
    }
}
