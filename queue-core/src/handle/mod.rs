//! The handles a queue gives out: [`Delivery`](delivery::Delivery) (an item that must end
//! once, over the shared [`Lease`](lease::Lease)), and the role guards
//! [`Worker`](worker::Worker) and [`Producer`](producer::Producer). A handle calls the fate
//! layer (`fate/`) or the raw queue (`engine/`), never another face.

pub(crate) mod delivery;
pub(crate) mod lease;
pub(crate) mod producer;
pub(crate) mod worker;
