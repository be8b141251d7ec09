//! Child-process roles of the latch tests: the test binary re-run with
//! `TALLY_REDIS_ROLE` set. Each role reports on stdout through `report`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_lite::future;
use tally_redis::{LatchOptions, LatchWaitError, OnExpiry, TrackingLatch};

use super::{report, sleep, Rt};

/// The counter a child claims.
pub const COUNTER: &str = "TALLY_REDIS_COUNTER";
/// The latch's counter names, comma-separated.
pub const NAMES: &str = "TALLY_REDIS_NAMES";
/// How long a reporter waits between its claim and its report.
pub const DELAY_MS: &str = "TALLY_REDIS_DELAY_MS";
/// `reclaim` for `OnExpiry::Reclaim`.
pub const POLICY: &str = "TALLY_REDIS_POLICY";

/// The latch tests' options: 300 ms leases, 50 ms polls; `TALLY_REDIS_LEASE_MS` and
/// `TALLY_REDIS_POLICY` override.
pub fn latch_options() -> LatchOptions {
    let lease: u64 = std::env::var("TALLY_REDIS_LEASE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let policy = match std::env::var(POLICY).as_deref() {
        Ok("reclaim") => OnExpiry::Reclaim,
        _ => OnExpiry::Fail,
    };
    LatchOptions::new()
        .lease(Duration::from_millis(lease))
        .poll(Duration::from_millis(50))
        .response_timeout(Duration::from_millis(500))
        .on_expiry(policy)
}

/// Milliseconds since the Unix epoch, on this machine's clock.
pub fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

pub fn run_if_child() {
    let Ok(role) = std::env::var(super::ROLE) else {
        return;
    };
    let rt = Rt::from_env();
    rt.block_on(async {
        let client = redis::Client::open(std::env::var(super::SOCK).unwrap()).unwrap();
        let name = std::env::var(super::NAME).unwrap();
        let names = std::env::var(NAMES).unwrap();
        let latch = TrackingLatch::open(client, &name, names.split(','), latch_options())
            .await
            .unwrap();
        let work = async {
            match role.as_str() {
                "latch_reporter" => reporter(&latch).await,
                "latch_holder" => holder(&latch).await,
                "latch_waiter" => waiter(&latch).await,
                other => panic!("unknown role {other}"),
            }
        };
        // The maintenance future runs beside the role, as an application would spawn it.
        future::or(work, async {
            latch.maintain(async_io::Timer::after).await;
        })
        .await;
    });
}

/// Claims its counter, waits `TALLY_REDIS_DELAY_MS`, reports.
async fn reporter(latch: &TrackingLatch) {
    let name = std::env::var(COUNTER).unwrap();
    let delay: u64 = std::env::var(DELAY_MS)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let counter = latch.claim(&name).await.unwrap();
    report(format!("CLAIMED {name}"));
    sleep(Duration::from_millis(delay)).await;
    let before = now_ms();
    let left = counter.report().await.unwrap();
    report(format!("REPORTED {name} {left} {before}"));
}

/// Claims its counter, says so with its holder id, and holds it (renewing the lease)
/// until killed.
async fn holder(latch: &TrackingLatch) {
    let name = std::env::var(COUNTER).unwrap();
    let counter = latch.claim(&name).await.unwrap();
    report(format!("CLAIMED {name} {}", counter.holder()));
    sleep(Duration::from_secs(60)).await;
    drop(counter);
}

/// Waits up to 20 s and reports how the wait ended, with the time it returned.
async fn waiter(latch: &TrackingLatch) {
    report("WAITING");
    let result = latch
        .wait_until(super::after(Duration::from_secs(20)))
        .await;
    let at = now_ms();
    match result {
        Ok(()) => report(format!("OPENED {at}")),
        Err(LatchWaitError::Failed(failure)) => {
            report(format!("FAILED {} {at}", failure.counter().unwrap_or("-")))
        }
        Err(other) => report(format!("ERROR {other}")),
    }
}
