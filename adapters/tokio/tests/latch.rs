//! `LatchExt` under a current-thread tokio runtime: the shared suite in `adapters/suite/latch.rs`.

use core::future::Future;

use tally_tokio::LatchExt;

fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime")
        .block_on(future)
}

#[path = "../../suite/latch.rs"]
mod suite;
