//! `QueueExt` under `futures_lite::future::block_on`, with async-io's timer: the shared suite in `adapters/suite/queue.rs`.

use core::future::Future;

use tally_smol::QueueExt;

fn block_on<F: Future>(future: F) -> F::Output {
    futures_lite::future::block_on(future)
}

#[path = "../../suite/queue.rs"]
mod suite;
