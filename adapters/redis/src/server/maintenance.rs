//! The loop behind every `maintain` future: one pass, then a third of a lease, or less if
//! a handle dropped something the next pass must deal with.

use core::convert::Infallible;
use core::future::Future;
use core::time::Duration;

use event_listener::Event;
use futures_lite::future;

/// Runs `pass` forever. Between passes it sleeps a third of `lease` (at least 1 ms) with
/// `sleep`, unless `busy` says work is already waiting; `wake` cuts a sleep short. The
/// listener is registered before `busy` is read, so a drop signalled in between is not
/// missed.
pub(crate) async fn every_third_of_a_lease<P, F, S>(
    lease: Duration,
    wake: &Event,
    busy: impl Fn() -> bool,
    mut pass: impl FnMut() -> P,
    mut sleep: F,
) -> Infallible
where
    P: Future,
    F: FnMut(Duration) -> S,
    S: Future,
{
    let period = (lease / 3).max(Duration::from_millis(1));
    loop {
        pass().await;
        let listener = wake.listen();
        if !busy() {
            future::or(
                async {
                    sleep(period).await;
                },
                listener,
            )
            .await;
        }
    }
}
