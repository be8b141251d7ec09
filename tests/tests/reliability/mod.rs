//! Helpers shared by the reliability tests: seeds, budgets, cancellation after `k` polls,
//! deadlines that fire after `n` polls, silenced injected panics, and how accepted items
//! ended with the ledger that implies (`ends`).
#![allow(dead_code, unreachable_pub)]

pub mod ends;

use std::future::Future;
use std::pin::Pin;
use std::sync::Once;
use std::task::{Context, Poll};

/// The panic message every injected fault uses; the panic hook keeps these quiet.
pub const INJECTED: &str = "injected fault";

/// Installs (once per test binary) a panic hook that stays silent for injected faults and
/// reports every other panic as the default hook does.
pub fn quiet_injected_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
            if message != Some(INJECTED) {
                default(info);
            }
        }));
    });
}

/// Reads an unsigned number from the environment; `None` when unset. A value that does not
/// parse fails the test rather than being ignored.
pub fn env_u64(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    let value = value.trim();
    let parsed = if let Some(hex) = value.strip_prefix("0x") {
        u64::from_str_radix(hex, 16)
    } else {
        value.replace('_', "").parse()
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={value:?} is not an unsigned number")))
}

/// Iteration counts scaled down under Miri.
pub const fn scaled(normal: u64, miri: u64) -> u64 {
    if cfg!(miri) {
        miri
    } else {
        normal
    }
}

/// The seed of run `index` from `base`: distinct, well spread (SplitMix64).
pub fn derive_seed(base: u64, index: u64) -> u64 {
    let mut z = base.wrapping_add(index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Prints the seed (and how to rerun it) if the thread unwinds while this guard lives, so
/// every failing run names its seed.
pub struct SeedReport {
    pub test: &'static str,
    pub env: &'static str,
    pub seed: u64,
}

impl Drop for SeedReport {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "\n{} failed with seed {:#018x}; rerun just this seed with {}={:#x}\n",
                self.test, self.seed, self.env, self.seed
            );
        }
    }
}

/// Wraps `future` so that it is dropped (cancelled) right after its `k`-th poll returned
/// `Pending`; `k == 0` drops it before the first poll. Resolves to `Some(output)` if the
/// future finished within its `k` polls, `None` if it was cancelled.
pub fn cancel_after<F: Future>(future: F, k: u32) -> CancelAfter<F> {
    CancelAfter {
        inner: Some(Box::pin(future)),
        polls_left: k,
    }
}

/// See [`cancel_after`].
pub struct CancelAfter<F> {
    inner: Option<Pin<Box<F>>>,
    polls_left: u32,
}

impl<F: Future> Future for CancelAfter<F> {
    type Output = Option<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let Some(inner) = this.inner.as_mut() else {
            panic!("CancelAfter polled after it completed");
        };
        if this.polls_left == 0 {
            this.inner = None;
            return Poll::Ready(None);
        }
        this.polls_left -= 1;
        match inner.as_mut().poll(cx) {
            Poll::Ready(output) => {
                this.inner = None;
                Poll::Ready(Some(output))
            }
            Poll::Pending if this.polls_left == 0 => {
                // Cancelled at this await point: the future is dropped while pending.
                this.inner = None;
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// A deadline that stays pending for its first `n` polls and fires on the next one
/// (`n == 0`: at once). Deterministic, unlike a timer: the same schedule of polls always
/// expires at the same point.
pub fn after_polls(n: u32) -> AfterPolls {
    AfterPolls { left: n }
}

/// See [`after_polls`].
#[derive(Debug)]
pub struct AfterPolls {
    left: u32,
}

impl Future for AfterPolls {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.left == 0 {
            return Poll::Ready(());
        }
        self.left -= 1;
        // Ask to be polled again, so the deadline also fires on an executor.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
