//! Ending jobs in batches: many resolves in one script, or resolves and the next gets in
//! one round trip.

use alloc::sync::Arc;
use alloc::vec::Vec;

use tally_queue::Outcome;

use crate::codec::Codec;
use crate::queue::delivery::error::{ResolveError, ResolveManyError};
use crate::queue::delivery::Delivery;
use crate::queue::engine::{How, Resolve, RESOLVE_CHUNK};
use crate::queue::Queue;

impl<C: Codec> Queue<C> {
    /// Resolves many deliveries of this handle in one script on the server, each with its
    /// outcome, each fenced as [`Delivery::resolve`] is. The answers come back in order:
    /// the item, or [`ResolveError::Stale`] (not counted).
    ///
    /// # Errors
    ///
    /// [`ResolveManyError`] with every delivery back if the server could not be reached,
    /// refused, or the reply was lost: resolving them again is safe (a repeat of a resolve
    /// that did count is recognized and not counted twice).
    ///
    /// # Panics
    ///
    /// If a delivery is another handle's (resolve it with its own handle).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use tally_queue::Outcome;
    ///
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let jobs = queue.get_many(10).await.unwrap();
    /// let answers = queue
    ///     .resolve_many(jobs.into_iter().map(|job| (job, Outcome::Succeeded)).collect())
    ///     .await
    ///     .unwrap();
    /// assert!(answers.iter().all(Result::is_ok));
    /// # }
    /// ```
    #[allow(clippy::type_complexity)]
    pub async fn resolve_many(
        &self,
        resolves: Vec<(Delivery<C>, Outcome)>,
    ) -> Result<Vec<Result<C::Item, ResolveError<C>>>, ResolveManyError<C>> {
        let (answers, _) = self.resolve_inner(resolves, 0).await?;
        Ok(answers)
    }

    /// Resolves many deliveries (as [`resolve_many`](Queue::resolve_many)) and hands out
    /// up to `max` ready jobs (as [`try_get_many`](Queue::try_get_many)) in one round
    /// trip (the resolves' script and the read, sent together): "these are done, give me
    /// the next". The returned deliveries
    /// are empty when nothing is ready; then wait with [`get_many`](Queue::get_many).
    ///
    /// # Cancel safety
    ///
    /// As [`get`](Queue::get): dropped after it was sent, the jobs it took are delivered
    /// by the next get on this handle.
    ///
    /// # Errors
    ///
    /// As [`resolve_many`](Queue::resolve_many).
    ///
    /// # Panics
    ///
    /// As [`resolve_many`](Queue::resolve_many).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use tally_queue::Outcome;
    ///
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) -> Result<(), Box<dyn std::error::Error>> {
    /// let mut jobs = queue.get_many(100).await?;
    /// loop {
    ///     let done = jobs.into_iter().map(|job| (job, Outcome::Succeeded)).collect();
    ///     let (_, next) = queue.resolve_and_get(done, 100).await?;
    ///     jobs = if next.is_empty() { queue.get_many(100).await? } else { next };
    /// }
    /// # }
    /// ```
    #[allow(clippy::type_complexity)]
    pub async fn resolve_and_get(
        &self,
        resolves: Vec<(Delivery<C>, Outcome)>,
        max: usize,
    ) -> Result<(Vec<Result<C::Item, ResolveError<C>>>, Vec<Delivery<C>>), ResolveManyError<C>>
    {
        self.resolve_inner(resolves, max.max(1)).await
    }

    #[allow(clippy::type_complexity)]
    async fn resolve_inner(
        &self,
        mut resolves: Vec<(Delivery<C>, Outcome)>,
        max: usize,
    ) -> Result<(Vec<Result<C::Item, ResolveError<C>>>, Vec<Delivery<C>>), ResolveManyError<C>>
    {
        for (delivery, _) in &resolves {
            assert!(
                Arc::ptr_eq(&delivery.engine, &self.engine),
                "a delivery resolved through another queue handle"
            );
        }
        let mut answers = Vec::with_capacity(resolves.len());
        let mut deliveries = Vec::new();
        // Every chunk but the last resolves only; the last also gets.
        while !resolves.is_empty() || max > 0 {
            let rest = resolves.split_off(resolves.len().min(RESOLVE_CHUNK));
            let last = rest.is_empty();
            let max = if last { max } else { 0 };
            let outcome = {
                let sent: Vec<Resolve<'_>> = resolves
                    .iter()
                    .map(|(delivery, outcome)| {
                        let how = How::of(*outcome);
                        Resolve {
                            entry: &delivery.entry,
                            key: &delivery.key,
                            attempt: delivery.attempt,
                            how,
                            reason: "",
                            lost: &delivery.lost,
                        }
                    })
                    .collect();
                if max > 0 {
                    let _getting = self.engine.getting.lock().await;
                    self.engine.step(&sent, max).await
                } else {
                    self.engine.step(&sent, 0).await
                }
            };
            match outcome {
                Ok((resolved, found, _)) => {
                    for ((delivery, outcome), resolved) in resolves.into_iter().zip(resolved) {
                        answers.push(delivery.answer(outcome, resolved));
                    }
                    deliveries = self.deliveries(found);
                }
                Err((error, token)) => {
                    if error.is_unknown() {
                        for (delivery, _) in &mut resolves {
                            delivery.lost.push(token);
                        }
                    }
                    resolves.extend(rest);
                    return Err(ResolveManyError {
                        answered: answers,
                        resolves,
                        error,
                    });
                }
            }
            resolves = rest;
            if last {
                break;
            }
        }
        Ok((answers, deliveries))
    }
}
