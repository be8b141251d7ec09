//! The migration job: runs once for the whole cluster, in its own process (a deploy step,
//! as a Kubernetes Job or an init task would be), so killing it never takes a replica's
//! `/readyz` down with it.
//!
//! It claims the `migration` counter of the cluster latch on a lease, renewed by the
//! latch's maintenance future while the work runs, and reports it when the work is done:
//! every replica's cluster gate opens. A work that fails fails the latch naming
//! `migration` with its message. A process killed mid-migration runs no `Drop`; its lease
//! expires and the next sweep (any replica's probe or watcher) fails the latch naming
//! `migration`. A second run after a report finds it done and does nothing.

use std::fmt;
use std::future::Future;

use futures_lite::future;
use tally_latch::{Failure, NameError};
use tally_redis::{ClaimError, Counter, Reason, ReportError, TrackingLatch};

/// How a run ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Migrated {
    /// This run migrated and reported; the cluster latch opened.
    Done,
    /// An earlier run had reported: nothing to do.
    AlreadyDone,
}

/// Why a run did not migrate.
#[derive(Debug)]
pub(crate) enum MigrationError {
    /// Another live process holds the counter: it is migrating now.
    Running,
    /// The latch had failed (a run died or failed before): nothing can open it.
    Failed(Failure<Reason>),
    /// The claim was refused otherwise, or the server was unreachable.
    Claim(ClaimError),
    /// The work failed; the latch now fails naming `migration` with this message.
    Work(String),
    /// The report was refused or could not be sent.
    Report(ReportError),
}

impl fmt::Display for MigrationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Running => f.write_str("another process is migrating"),
            Self::Failed(failure) => write!(f, "the cluster latch failed earlier: {failure}"),
            Self::Claim(error) => write!(f, "cannot claim the migration: {error}"),
            Self::Work(message) => write!(f, "the migration failed: {message}"),
            Self::Report(error) => write!(f, "cannot report the migration: {error}"),
        }
    }
}

impl std::error::Error for MigrationError {}

/// Claims `counter` on `latch`, calls `claimed` with the handle, runs `work`, and reports
/// (or fails the latch with the work's error). The latch's maintenance future runs beside
/// it, on tokio's timer, so the lease is renewed for as long as the work takes.
pub(crate) async fn run<W>(
    latch: &TrackingLatch,
    counter: &str,
    claimed: impl FnOnce(&Counter),
    work: W,
) -> Result<Migrated, MigrationError>
where
    W: Future<Output = Result<(), String>>,
{
    let migrate = async {
        let mut handle = match latch.claim(counter).await {
            Ok(handle) => handle,
            Err(ClaimError::Name(NameError::Reported(_))) => return Ok(Migrated::AlreadyDone),
            Err(ClaimError::Name(NameError::Claimed(_))) => return Err(MigrationError::Running),
            Err(ClaimError::Failed(failure)) => return Err(MigrationError::Failed(failure)),
            Err(error) => return Err(MigrationError::Claim(error)),
        };
        claimed(&handle);
        if let Err(message) = work.await {
            // Whether or not this failure came first, the latch has failed.
            handle
                .fail(&message)
                .await
                .map_err(MigrationError::Report)?;
            return Err(MigrationError::Work(message));
        }
        // A report is recognized as a repeat on the server, so a lost reply is tried again.
        let mut tries = 0;
        loop {
            match handle.report().await {
                Ok(_) => return Ok(Migrated::Done),
                Err(ReportError::Redis { counter, .. }) if tries < 3 => {
                    tries += 1;
                    handle = *counter;
                    tokio::time::sleep(latch.options().get_poll()).await;
                }
                Err(error) => return Err(MigrationError::Report(error)),
            }
        }
    };
    future::or(migrate, async {
        match latch.maintain(tokio::time::sleep).await {}
    })
    .await
}
