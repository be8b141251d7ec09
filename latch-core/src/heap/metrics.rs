//! The latches' figures through the `metrics` facade (the `metrics` feature): the names, in
//! one place (and in the crate docs' table), and `record_metrics`.

use core::time::Duration;

use crate::heap::latch_of::LatchOf;
use crate::heap::raw::Terminal;

/// Count-downs still needed (gauge).
const PENDING: &str = "tally_latch_pending";
/// 1 once the latch opened (gauge).
const OPEN: &str = "tally_latch_open";
/// 1 once the latch failed (gauge).
const FAILED: &str = "tally_latch_failed";
/// A tracking latch's time from construction to opening (histogram).
const TIME_TO_OPEN_SECONDS: &str = "tally_latch_time_to_open_seconds";

impl<K> LatchOf<K> {
    /// Records this latch's figures through the `metrics` facade, under the label `latch`
    /// = [`label`](Self::label) (see [the names](crate#features)): the count still
    /// pending, and whether it opened or failed. Call it where the figures are read (a
    /// scrape handler, before rendering, or a timer): they then equal the latch's at that
    /// instant, and a count-down costs nothing for them.
    ///
    /// # Examples
    ///
    /// ```
    /// use metrics_util::debugging::{DebugValue, DebuggingRecorder};
    /// use tally_latch::CountDownLatch;
    ///
    /// let recorder = DebuggingRecorder::new();
    /// let snapshotter = recorder.snapshotter();
    /// metrics::with_local_recorder(&recorder, || {
    ///     let shards = CountDownLatch::new(3).with_label("shards");
    ///     shards.count_down();
    ///     shards.record_metrics();
    /// });
    /// let pending = snapshotter
    ///     .snapshot()
    ///     .into_vec()
    ///     .into_iter()
    ///     .find(|(key, ..)| key.key().name() == "tally_latch_pending")
    ///     .map(|(key, _, _, value)| (key.key().labels().next().unwrap().value().to_owned(), value));
    /// assert_eq!(pending, Some(("shards".to_owned(), DebugValue::Gauge(2.0.into()))));
    /// ```
    pub fn record_metrics(&self) {
        let label = self.label();
        let terminal = self.raw.terminal();
        // Lossless: a latch's count is at most `MAX_COUNT`, below 2^53.
        metrics::gauge!(PENDING, "latch" => label).set(self.count() as f64);
        let open = f64::from(u8::from(terminal == Some(Terminal::Open)));
        metrics::gauge!(OPEN, "latch" => label).set(open);
        let failed = f64::from(u8::from(terminal == Some(Terminal::Failed)));
        metrics::gauge!(FAILED, "latch" => label).set(failed);
    }
}

/// The tracking latch `label` opened `after` its construction.
pub(crate) fn opened(label: &'static str, after: Duration) {
    metrics::histogram!(TIME_TO_OPEN_SECONDS, "latch" => label).record(after.as_secs_f64());
}
