//! The turn-taking state of a handle's waits (`waits.rs`), with no I/O: who waits on which
//! stream after which id, which round is running, and what the running read covers. The
//! caller keeps it under one lock and does the I/O around it.
//!
//! A round is one blocking read over every registered key, each after the smallest id
//! registered for it. A waiter registers before it looks at the round number, and the round
//! number moves only under the lock after a read returned, so a waiter either sees the
//! round it registered in end, or was covered by the read that ended it. A waiter whose key
//! (or id) the running read does not cover is told to interrupt that read.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// A stream entry id, ordered; `$` (only what is added from now on) is the largest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct StreamId(u64, u64);

const NEWEST: StreamId = StreamId(u64::MAX, u64::MAX);

impl StreamId {
    pub(crate) fn parse(text: &str) -> StreamId {
        if text == "$" {
            return NEWEST;
        }
        let (ms, seq) = text.split_once('-').unwrap_or((text, "0"));
        StreamId(ms.parse().unwrap_or(0), seq.parse().unwrap_or(0))
    }

    pub(crate) fn text(self) -> String {
        if self == NEWEST {
            "$".to_string()
        } else {
            alloc::format!("{}-{}", self.0, self.1)
        }
    }
}

/// A registration: who, in which round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ticket {
    pub(crate) me: u64,
    pub(crate) round: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Turns {
    /// Rounds finished.
    round: u64,
    next_waiter: u64,
    /// Per key, the id each registered waiter has seen.
    wanted: BTreeMap<String, BTreeMap<u64, StreamId>>,
    /// The read in progress: the blocking connection's client id, and what it covers.
    blocking: Option<(Option<i64>, BTreeMap<String, StreamId>)>,
}

impl Turns {
    /// Registers a wait on `key` after `after`. Returns its ticket, and the client id of
    /// the running read if that read does not cover this wait (interrupt it).
    pub(crate) fn register(&mut self, key: &str, after: StreamId) -> (Ticket, Option<i64>) {
        let me = self.next_waiter;
        self.next_waiter += 1;
        self.wanted
            .entry(key.to_string())
            .or_default()
            .insert(me, after);
        let interrupt = match &self.blocking {
            Some((Some(client), covered)) if covered.get(key).is_none_or(|from| *from > after) => {
                Some(*client)
            }
            _ => None,
        };
        let ticket = Ticket {
            me,
            round: self.round,
        };
        (ticket, interrupt)
    }

    /// Removes a registration (the wait ended or was dropped).
    pub(crate) fn unregister(&mut self, key: &str, me: u64) {
        if let Some(waiters) = self.wanted.get_mut(key) {
            waiters.remove(&me);
            if waiters.is_empty() {
                self.wanted.remove(key);
            }
        }
    }

    /// Whether a round ended since `ticket` was taken.
    pub(crate) fn ended(&self, ticket: Ticket) -> bool {
        self.round != ticket.round
    }

    /// Starts a read on the connection with `client` id: returns what it covers, each key
    /// after the smallest id registered for it.
    pub(crate) fn start(&mut self, client: Option<i64>) -> Vec<(String, StreamId)> {
        let keys: BTreeMap<String, StreamId> = self
            .wanted
            .iter()
            .filter_map(|(key, waiters)| Some((key.clone(), *waiters.values().min()?)))
            .collect();
        self.blocking = Some((client, keys.clone()));
        keys.into_iter().collect()
    }

    /// Ends the running read: a read that returned ends the round; one given up (its
    /// leader dropped, or it failed before sending) does not.
    pub(crate) fn stop(&mut self, returned: bool) {
        self.blocking = None;
        if returned {
            self.round += 1;
        }
    }

    /// Whether nobody is registered (every wait ended or was dropped).
    #[cfg(test)]
    pub(crate) fn idle(&self) -> bool {
        self.wanted.is_empty() && self.blocking.is_none()
    }
}

#[cfg(test)]
mod model;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_ids_order_with_newest_last() {
        assert!(StreamId::parse("5-1") < StreamId::parse("5-2"));
        assert!(StreamId::parse("5-9") < StreamId::parse("6-0"));
        assert!(StreamId::parse("0-0") < StreamId::parse("1"));
        assert!(StreamId::parse("999999999999-0") < StreamId::parse("$"));
        assert_eq!(StreamId::parse("7-3").text(), "7-3");
        assert_eq!(StreamId::parse("$").text(), "$");
    }

    #[test]
    fn a_read_covers_each_key_from_its_smallest_id() {
        let mut turns = Turns::default();
        turns.register("a", StreamId::parse("5-0"));
        turns.register("a", StreamId::parse("3-0"));
        turns.register("b", StreamId::parse("$"));
        let keys = turns.start(Some(7));
        assert_eq!(
            keys,
            alloc::vec![
                ("a".to_string(), StreamId::parse("3-0")),
                ("b".to_string(), StreamId::parse("$")),
            ]
        );
    }

    #[test]
    fn a_wait_the_running_read_does_not_cover_interrupts_it() {
        let mut turns = Turns::default();
        turns.register("a", StreamId::parse("5-0"));
        turns.start(Some(7));
        // Covered: the same key from a later id.
        assert_eq!(turns.register("a", StreamId::parse("6-0")).1, None);
        // Not covered: an earlier id, or another key.
        assert_eq!(turns.register("a", StreamId::parse("4-0")).1, Some(7));
        assert_eq!(turns.register("b", StreamId::parse("$")).1, Some(7));
        // A read whose client id is unknown cannot be interrupted.
        turns.stop(true);
        turns.start(None);
        assert_eq!(turns.register("c", StreamId::parse("$")).1, None);
    }

    #[test]
    fn only_a_read_that_returned_ends_the_round() {
        let mut turns = Turns::default();
        let (ticket, _) = turns.register("a", StreamId::parse("$"));
        turns.start(None);
        turns.stop(false);
        assert!(!turns.ended(ticket));
        turns.start(None);
        turns.stop(true);
        assert!(turns.ended(ticket));
        turns.unregister("a", ticket.me);
        assert!(turns.idle());
    }
}
