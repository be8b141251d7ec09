//! `LatchExt` under `futures_lite::future::block_on`, with async-io's timer: the shared suite in `adapters/suite/latch.rs`.

use core::future::Future;

use tally_smol::LatchExt;

fn block_on<F: Future>(future: F) -> F::Output {
    futures_lite::future::block_on(future)
}

#[path = "../../suite/latch.rs"]
mod suite;
