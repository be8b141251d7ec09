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
//! No wake-up is lost: a waiter listens and registers its key before it checks the round;
//! the round is advanced under the state lock after the read returns; and `done` is
//! notified only once the leader's slot is released, so a waiter that found the slot
//! taken is told after it is free.
//! A waiter that registers a key the leader's read does not cover interrupts that read
//! (`CLIENT UNBLOCK`), so a new wait is not held up for the rest of someone else's round.
//! A leader that is cancelled hands the turn on: its guard releases the slot, then notifies
//! the others, one of which leads next, and its connection (still blocked on the server)
//! is dropped. The turn-taking state lives in `turns.rs`, with a loom model of this
//! protocol.

use alloc::string::String;
use alloc::vec::Vec;
use std::sync::Mutex;

use event_listener::Event;
use redis::Value;

use crate::server::conn::{classify, lock, Conn, Live};
use crate::server::error::Error;
use crate::server::turns::{StreamId, Turns};

/// What the leader's slot holds: the blocking connection and its client id, once dialled.
type Held = Option<(Live, Option<i64>)>;

/// The blocking connection and the waits that share it.
#[derive(Debug, Default)]
pub(crate) struct Waits {
    state: Mutex<Turns>,
    /// The leader's slot was let go (a round ended, or a leader gave up its turn).
    done: Event,
    /// Held by the leader; inside, the blocking connection and its client id.
    leader: async_lock::Mutex<Held>,
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
        let (ticket, interrupt) = lock(&self.state).register(key, StreamId::parse(after));
        let _registered = Registered {
            waits: self,
            key,
            me: ticket.me,
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
            if lock(&self.state).ended(ticket) {
                return Ok(());
            }
            if let Some(guard) = self.leader.try_lock() {
                let mut slot = Slot {
                    waits: self,
                    guard: Some(guard),
                };
                if lock(&self.state).ended(ticket) {
                    return Ok(());
                }
                let Some(guard) = slot.guard.as_mut() else {
                    unreachable!("the slot is held until it is dropped")
                };
                return self.lead(conn, guard).await;
            }
            listener.await;
        }
    }

    /// One round: a blocking read over every registered key.
    async fn lead(&self, conn: &Conn, slot: &mut Held) -> Result<(), Error> {
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
        let keys: Vec<(String, StreamId)> = lock(&self.state).start(client);
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
        lock(&self.waits.state).unregister(self.key, self.me);
    }
}

/// The leader's slot, held by one wait at a time. Whenever it is let go (a round ended,
/// the leader was dropped, or the round had ended before it led), it is released first
/// and the other waits are told after: a wait that found it taken has parked by then, so
/// it wakes and finds it free. (Told before the release, it could park again on a slot
/// that nobody hands on, and wait for good.)
struct Slot<'a> {
    waits: &'a Waits,
    guard: Option<async_lock::MutexGuard<'a, Held>>,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        self.waits.done.notify(usize::MAX);
    }
}

/// The leader's turn: when it ends (or the leader is dropped), the read stops; a finished
/// read also ends the round. (The slot's release then tells the others.)
struct Turn<'a> {
    waits: &'a Waits,
    finished: bool,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        lock(&self.waits.state).stop(self.finished);
    }
}
