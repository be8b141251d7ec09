//! What a put and a take tell their caller, the same for every buffer.

use crate::job_id::JobId;
use crate::wait::wake::Wake;

/// A put the buffer refused; the item comes back.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PutRefused<T> {
    /// The limit is reached (counting the slots owed to woken putters).
    Full(T),
    /// The buffer is closed.
    Closed(T),
}

/// An item a get took out.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Taken<T> {
    pub(crate) id: JobId,
    pub(crate) item: T,
    /// Whether to wake a putter for the slot the take freed (a buffered limit).
    pub(crate) putters: Wake,
    /// The buffer is closed and this was the last item it will hold: tell the getters
    /// that wait for it (the growable buffer; see `growable.rs`).
    pub(crate) last: bool,
}

/// What some endings did.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ended {
    /// Nothing is unfinished now. Looked at only when joiners are counted or the buffer
    /// was asked to (`Buffer::watch_settled`), and `false` otherwise: on a ring, the look
    /// reads the producers' word.
    pub(crate) settled: bool,
    /// Whether to wake the joiners: only if the endings settled the queue (`settled`),
    /// which [`wakes_anyone`](Ended::wakes_anyone) relies on.
    pub(crate) joiners: Wake,
    /// Whether to wake putters for the slots the endings freed (an unfinished limit).
    pub(crate) putters: Wake,
}

impl Ended {
    /// Whether the endings concern any waiter: they settled the queue (the joiners, and
    /// the getters while returns can still come) or freed a slot. One test of two fields:
    /// joiners are woken only by a settling ending.
    #[inline]
    pub(crate) fn wakes_anyone(&self) -> bool {
        debug_assert!(self.settled || self.joiners == Wake::No);
        self.settled || self.putters != Wake::No
    }
}

/// Why a take found nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Nothing {
    /// Nothing to take now.
    Empty,
    /// Closed and empty: final.
    Closed,
}
