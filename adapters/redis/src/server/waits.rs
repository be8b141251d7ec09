//! One blocking connection per handle, shared by all of the handle's waits.
//!
//! A blocking read stalls every command behind it on its connection, so waits cannot use
//! the shared one; and a connection per waiting task runs into the server's `maxclients`.
//! So each handle keeps one blocking connection, and its waits take turns in *rounds*:
//! every wait registers the stream key it waits on and the id it has seen; one of them,
//! the leader, runs a single `XREAD BLOCK` over every registered key (each after the
//! smallest id registered for it) for at most one poll interval; when it returns, the
//! round ends and every wait registered before it wakes. A wake-up is never the truth:
//! each waiter re-reads its own state and waits again if it must.
//!
//! No wake-up is lost: a waiter registers its key before it checks the round, and the
//! round is advanced (and `done` notified) under the state lock after the read returns.
//! A waiter that registers a key the leader's read does not cover interrupts that read
//! (`CLIENT UNBLOCK`), so a new wait is not held up for the rest of someone else's round.
//! A leader that is cancelled hands the turn on: its guard notifies the others, one of
//! which leads next, and its connection (still blocked on the server) is dropped.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use std::sync::Mutex;

use event_listener::Event;
use redis::Value;

use crate::server::conn::{classify, lock, Conn, Live};
use crate::server::error::Error;

/// A stream entry id, ordered; `$` (only what is added from now on) is the largest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct StreamId(u64, u64);

const NEWEST: StreamId = StreamId(u64::MAX, u64::MAX);

impl StreamId {
    fn parse(text: &str) -> StreamId {
        if text == "$" {
            return NEWEST;
        }
        let (ms, seq) = text.split_once('-').unwrap_or((text, "0"));
        StreamId(ms.parse().unwrap_or(0), seq.parse().unwrap_or(0))
    }

    fn text(self) -> String {
        if self == NEWEST {
            "$".to_string()
        } else {
            alloc::format!("{}-{}", self.0, self.1)
        }
    }
}

#[derive(Debug, Default)]
struct State {
    /// Rounds finished.
    round: u64,
    next_waiter: u64,
    /// Per key, the id each registered waiter has seen.
    wanted: BTreeMap<String, BTreeMap<u64, StreamId>>,
    /// The read in progress: the blocking connection's client id, and what it covers.
    blocking: Option<(Option<i64>, BTreeMap<String, StreamId>)>,
}

/// The blocking connection and the waits that share it.
#[derive(Debug, Default)]
pub(crate) struct Waits {
    state: Mutex<State>,
    /// A round ended, or a leader gave up its turn.
    done: Event,
    /// Held by the leader; inside, the blocking connection and its client id.
    leader: async_lock::Mutex<Option<(Live, Option<i64>)>>,
}

impl Waits {
    pub(crate) fn new() -> Self {
        Waits::default()
    }

    /// Waits until `key` may have an entry after `after` (`$`: from now on), or one poll
    /// interval passed, or another wait's round ended. The caller re-reads its state.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing on the server; the other waits go on.
    pub(crate) async fn wait_after(
        &self,
        conn: &Conn,
        key: &str,
        after: &str,
    ) -> Result<(), Error> {
        let id = StreamId::parse(after);
        let (me, round, interrupt) = {
            let mut state = lock(&self.state);
            let me = state.next_waiter;
            state.next_waiter += 1;
            state
                .wanted
                .entry(key.to_string())
                .or_default()
                .insert(me, id);
            let interrupt = match &state.blocking {
                Some((Some(client), covered)) if covered.get(key).is_none_or(|from| *from > id) => {
                    Some(*client)
                }
                _ => None,
            };
            (me, state.round, interrupt)
        };
        let _registered = Registered {
            waits: self,
            key,
            me,
        };
        if let Some(client) = interrupt {
            let mut unblock = redis::cmd("CLIENT");
            unblock.arg("UNBLOCK").arg(client);
            // Best effort: without it (no permission, say), this wait starts with the
            // next round, within one poll interval.
            conn.command(&unblock).await.ok();
        }
        loop {
            let listener = self.done.listen();
            if lock(&self.state).round != round {
                return Ok(());
            }
            if let Some(mut slot) = self.leader.try_lock() {
                if lock(&self.state).round != round {
                    return Ok(());
                }
                return self.lead(conn, &mut slot).await;
            }
            listener.await;
        }
    }

    /// One round: a blocking read over every registered key.
    async fn lead(&self, conn: &Conn, slot: &mut Option<(Live, Option<i64>)>) -> Result<(), Error> {
        let mut turn = Turn {
            waits: self,
            finished: false,
        };
        let (mut live, client) = match slot.take() {
            Some((live, client)) if !live.is_closed() => (live, client),
            _ => {
                let mut live = conn.dial(conn.blocking_timeout()).await?;
                let mut id = redis::cmd("CLIENT");
                id.arg("ID");
                let client = match id.query_async::<Value>(&mut live.con).await {
                    Ok(Value::Int(client)) => Some(client),
                    _ => None,
                };
                (live, client)
            }
        };
        let keys: Vec<(String, StreamId)> = {
            let mut state = lock(&self.state);
            let keys: BTreeMap<String, StreamId> = state
                .wanted
                .iter()
                .filter_map(|(key, waiters)| Some((key.clone(), *waiters.values().min()?)))
                .collect();
            state.blocking = Some((client, keys.clone()));
            keys.into_iter().collect()
        };
        let mut read = redis::cmd("XREAD");
        read.arg("COUNT")
            .arg(1)
            .arg("BLOCK")
            .arg(conn.poll.as_millis() as u64)
            .arg("STREAMS");
        for (key, _) in &keys {
            read.arg(key);
        }
        for (_, id) in &keys {
            read.arg(id.text());
        }
        let result = read.query_async::<Value>(&mut live.con).await;
        turn.finished = true;
        match result {
            Ok(_) => {
                *slot = Some((live, client));
                Ok(())
            }
            Err(error) => Err(classify(error)),
        }
    }
}

/// A waiter's registration, removed when the wait ends or is dropped.
struct Registered<'a> {
    waits: &'a Waits,
    key: &'a str,
    me: u64,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        let mut state = lock(&self.waits.state);
        if let Some(waiters) = state.wanted.get_mut(self.key) {
            waiters.remove(&self.me);
            if waiters.is_empty() {
                state.wanted.remove(self.key);
            }
        }
    }
}

/// The leader's turn: when it ends (or the leader is dropped), the others are told; a
/// finished read also ends the round.
struct Turn<'a> {
    waits: &'a Waits,
    finished: bool,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        {
            let mut state = lock(&self.waits.state);
            state.blocking = None;
            if self.finished {
                state.round += 1;
            }
        }
        self.waits.done.notify(usize::MAX);
    }
}

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
}
