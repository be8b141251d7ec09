//! The loop behind every `maintain` future: one pass, then a sleep, always.
//!
//! After a pass that worked, it sleeps a third of a lease, cut short when a handle drops
//! something the next pass must deal with (then at least a millisecond, so that the loop
//! yields to the other tasks of its executor). After a pass that failed, it backs off:
//! from a tenth of the period, doubling up to the period, and a drop does
//! not cut that short (the server is down or refusing; hurrying does not help).

use core::convert::Infallible;
use core::future::Future;
use core::time::Duration;

use event_listener::Event;
use futures_lite::future;

/// The shortest pause between two passes.
const MIN_PAUSE: Duration = Duration::from_millis(1);

/// Runs `pass` forever (it returns whether it worked), sleeping between passes with
/// `sleep` as the module docs say. The listener is registered before `busy` is read, so
/// a drop signalled in between is not missed.
pub(crate) async fn every_third_of_a_lease<P, F, S>(
    lease: Duration,
    wake: &Event,
    busy: impl Fn() -> bool,
    mut pass: impl FnMut() -> P,
    mut sleep: F,
) -> Infallible
where
    P: Future<Output = bool>,
    F: FnMut(Duration) -> S,
    S: Future,
{
    let period = (lease / 3).max(MIN_PAUSE);
    let first_backoff = (period / 10).max(MIN_PAUSE);
    let mut backoff = None;
    loop {
        if pass().await {
            backoff = None;
            let listener = wake.listen();
            if busy() {
                sleep(MIN_PAUSE).await;
            } else {
                future::or(
                    async {
                        sleep(period).await;
                    },
                    listener,
                )
                .await;
            }
        } else {
            let pause = backoff.map_or(first_backoff, |last: Duration| (last * 2).min(period));
            backoff = Some(pause);
            sleep(pause).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::RefCell;

    /// The pauses the loop asks for over passes with these results.
    fn pauses(results: &[bool], busy: bool) -> Vec<Duration> {
        let asked = RefCell::new(Vec::new());
        let left = RefCell::new(results.to_vec());
        let event = Event::new();
        let run = every_third_of_a_lease(
            Duration::from_millis(300),
            &event,
            || busy,
            || {
                let next = left.borrow_mut().remove(0);
                async move { next }
            },
            |pause| {
                asked.borrow_mut().push(pause);
                let last = left.borrow().is_empty();
                async move {
                    if last {
                        future::pending::<()>().await;
                    }
                }
            },
        );
        let until_done = async {
            while !left.borrow().is_empty() {
                future::yield_now().await;
            }
        };
        future::block_on(future::or(async { match run.await {} }, until_done));
        asked.into_inner()
    }

    #[test]
    fn failures_back_off_and_every_pass_sleeps() {
        let ms = Duration::from_millis;
        assert_eq!(
            pauses(&[false, false, false, false, false, true], false),
            [ms(10), ms(20), ms(40), ms(80), ms(100), ms(100)]
        );
        assert_eq!(pauses(&[true, true], true), [MIN_PAUSE, MIN_PAUSE]);
        assert_eq!(
            pauses(&[false, true, false], true),
            [ms(10), MIN_PAUSE, ms(10)]
        );
    }
}
