//! Waiting: the classes of waiters, their lists, counts and turns, the registration every
//! waiting future polls through, and deadlines.
//!
//! - `counted.rs`: a class's `waiting` and `pending` fields, in a word of its own or of the
//!   ring;
//! - `list.rs`: a list of waiters and their wakers, under a lock no user code runs in;
//! - `waiters.rs`: a class of waiters (a list, its count, its turns);
//! - `turns.rs`: the hand-offs a class is owed, so that a woken waiter keeps its item;
//! - `turn.rs`: the turn one attempt holds, used up where the attempt redeems it;
//! - `wake.rs`: what a change reports about the waiters it must wake;
//! - `deferred.rs`: the wakers a notification took out, until their notifier wakes them
//!   outside every lock;
//! - `local.rs` (std): a thread's list of those wakers, and its unparking waker;
//! - `registration.rs`: the poll loop every wait runs ([`Wait`](registration::Wait));
//! - `deadline.rs`: [`Until`](deadline::Until), an operation raced against any deadline
//!   future, and the trait the faces implement for it;
//! - `park.rs` (std): timed blocking on the calling thread.
//!
//! Nothing here knows a queue: the faces and the engine call in.

pub(crate) mod counted;
#[cfg(all(test, feature = "std", not(loom)))]
pub(crate) mod counting_waker;
pub(crate) mod deadline;
#[cfg(target_has_atomic = "ptr")]
pub(crate) mod deferred;
pub(crate) mod list;
#[cfg(all(feature = "std", target_has_atomic = "ptr"))]
mod local;
#[cfg(feature = "std")]
pub(crate) mod park;
pub(crate) mod registration;
pub(crate) mod turn;
pub(crate) mod turns;
pub(crate) mod waiters;
pub(crate) mod wake;
