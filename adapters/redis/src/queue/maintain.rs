//! A handle's part in keeping the queue alive: worker registrations and the maintenance
//! pass.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::convert::Infallible;
use core::future::Future;
use core::time::Duration;

use tally_queue::{AbandonPolicy, JobEvent, Outcome};

use crate::codec::Codec;
use crate::queue::engine::{Dropped, How, Resolve, Resolved, RESOLVE_CHUNK};
use crate::queue::worker::Worker;
use crate::queue::Queue;
use crate::server::error::Error;

impl<C: Codec> Queue<C> {
    /// Registers a worker (see [`Worker`]); run [`maintain`](Queue::maintain) to keep its
    /// heartbeat fresh.
    ///
    /// # Errors
    ///
    /// The transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let _worker = queue.worker().await.unwrap();
    /// # }
    /// ```
    pub async fn worker(&self) -> Result<Worker<C>, Error> {
        let member = self.engine.worker_member();
        self.engine
            .workers(true, core::slice::from_ref(&member))
            .await?;
        self.engine.local().workers.push(member.clone());
        Ok(Worker {
            engine: Arc::clone(&self.engine),
            member,
        })
    }

    /// One pass of background work: removes dropped workers, refreshes the heartbeats of
    /// live ones, ends the deliveries dropped unresolved (by the [`AbandonPolicy`]),
    /// sweeps expired leases that will not be delivered again (policy `Abandon` or
    /// `Uncertain`, last attempt, or after `shutdown_now`) and puts those that will, under
    /// a [redelivery backoff](crate::Options::redelivery_backoff), to wait their delay, and
    /// removes from the group the consumers (one per handle) that hold nothing and were
    /// idle for two leases. Work that failed is kept for the next pass.
    ///
    /// # Errors
    ///
    /// The first transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// queue.maintain_once().await.unwrap();
    /// # }
    /// ```
    pub async fn maintain_once(&self) -> Result<(), Error> {
        let engine = &self.engine;
        let (retired, live, dropped) = {
            let mut local = engine.local();
            (
                core::mem::take(&mut local.retired),
                local.workers.clone(),
                core::mem::take(&mut local.dropped),
            )
        };
        let mut first_error = None;
        if let Err(error) = engine.workers(false, &retired).await {
            engine.local().retired.extend(retired);
            first_error.get_or_insert(error);
        }
        if let Err(error) = engine.workers(true, &live).await {
            first_error.get_or_insert(error);
        }
        if let Err(error) = self.end_dropped(dropped).await {
            first_error.get_or_insert(error);
        }
        if let Err(error) = engine.sweep().await {
            first_error.get_or_insert(error);
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// Ends the deliveries dropped unresolved, by the policy: under `Abandon` and
    /// `Uncertain` in scripts of up to a chunk each; under `Redeliver` each is released
    /// for the next reclaim. What failed is kept for the next pass.
    async fn end_dropped(&self, dropped: Vec<Dropped>) -> Result<(), Error> {
        let engine = &self.engine;
        let (how, reason) = match engine.options.abandon_policy {
            AbandonPolicy::Abandon => (How::Abandoned, "abandoned: dropped unresolved"),
            AbandonPolicy::Uncertain => (
                How::Uncertain,
                "abandoned: dropped unresolved, ended uncertain",
            ),
            AbandonPolicy::Redeliver { .. } => {
                let mut dropped = dropped.into_iter();
                while let Some(lost) = dropped.next() {
                    if let Err(error) = engine.hold(&lost.entry, lost.attempt, false).await {
                        let mut local = engine.local();
                        local.dropped.push(lost);
                        local.dropped.extend(dropped);
                        return Err(error);
                    }
                    engine.local().held.remove(&lost.key);
                }
                return Ok(());
            }
        };
        let mut dropped = dropped;
        while !dropped.is_empty() {
            let rest = dropped.split_off(dropped.len().min(RESOLVE_CHUNK));
            let resolves: Vec<Resolve<'_>> = dropped
                .iter()
                .map(|lost| Resolve {
                    entry: &lost.entry,
                    key: &lost.key,
                    attempt: lost.attempt,
                    how,
                    reason,
                    lost: &lost.lost,
                })
                .collect();
            match engine.step(&resolves, 0).await {
                Ok((resolved, _, _)) => {
                    for (lost, resolved) in dropped.iter().zip(resolved) {
                        let counted = matches!(resolved, Resolved::Counted | Resolved::Repeat(_));
                        if counted && how == How::Uncertain {
                            let id = lost.id;
                            engine.journal.note(|| JobEvent::Ended {
                                id,
                                outcome: Outcome::Uncertain,
                            });
                        }
                    }
                }
                Err((error, token)) => {
                    let mut local = engine.local();
                    for lost in &mut dropped {
                        if error.is_unknown() {
                            lost.lost.push(token);
                        }
                    }
                    local.dropped.extend(dropped);
                    local.dropped.extend(rest);
                    return Err(error);
                }
            }
            dropped = rest;
        }
        Ok(())
    }

    /// The background work, forever: [`maintain_once`](Queue::maintain_once) every third
    /// of a lease, and at once when a delivery or worker is dropped. It always sleeps
    /// between passes (at least a millisecond), and after a failed pass (the server down,
    /// the keys gone) it backs off, from a tenth of that period up to the period, so it
    /// neither hogs its executor nor floods the server. The crate spawns nothing: run this
    /// future on the runtime of your choice, with its sleep (`sleep(d)` must complete
    /// after `d`).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let background = queue.clone();
    /// smol::spawn(async move {
    ///     background.maintain(|d| async_io::Timer::after(d)).await
    /// })
    /// .detach();
    /// # }
    /// ```
    pub async fn maintain<F, S>(&self, sleep: F) -> Infallible
    where
        F: FnMut(Duration) -> S,
        S: Future,
    {
        let engine = &self.engine;
        crate::server::maintenance::every_third_of_a_lease(
            engine.options.lease,
            &engine.wake,
            || {
                let local = engine.local();
                !local.dropped.is_empty() || !local.retired.is_empty()
            },
            || async { self.maintain_once().await.is_ok() },
            sleep,
        )
        .await
    }
}
