//! [`Wake`]: what a change found out about the waiters it must wake, as it reports it to
//! its caller (the buffers' claims and endings, `buffer/moves.rs`).

/// Whether a change must wake waiters of a class, as the change itself found out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wake {
    /// Nobody: nothing became available, or the change read no waiter counted.
    No,
    /// The change read the class's count in its own read-modify-write and found waiters:
    /// notify without checking again.
    Counted,
    /// As [`Wake::Counted`], and the change also counted the notification it asks for as
    /// pending (a ring claim, see `ring.rs`): notify one waiter; if that reaches nobody,
    /// withdraw the pending count and notify once more, counted only as it reaches a
    /// listener.
    Reserved,
    /// Something became available; check the count first.
    Check,
}

impl Wake {
    /// [`Wake::Counted`] if the change read waiters in its own read-modify-write.
    #[inline]
    pub(crate) fn counted_if(waiting: bool) -> Wake {
        if waiting {
            Wake::Counted
        } else {
            Wake::No
        }
    }

    /// [`Wake::Reserved`] if the change counted a pending notification in its own
    /// read-modify-write.
    #[inline]
    pub(crate) fn reserved_if(notify: bool) -> Wake {
        if notify {
            Wake::Reserved
        } else {
            Wake::No
        }
    }

    /// [`Wake::Check`] if something became available, for waiters the change did not
    /// count.
    #[inline]
    pub(crate) fn check_if(available: bool) -> Wake {
        if available {
            Wake::Check
        } else {
            Wake::No
        }
    }
}
