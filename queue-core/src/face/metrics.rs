//! `record_metrics` (the `metrics` feature): the ledger through the `metrics` facade, under
//! the queue's label. The metric names are listed once, in the crate docs.

use crate::queue::Queue;

impl<T> Queue<T> {
    /// Records a [`ledger`](Queue::ledger) snapshot through the `metrics` facade, under
    /// the label `queue` = [`label`](Queue::label) (see [the names](crate#metrics)):
    /// `accepted` and each outcome as counters (set to the ledger's figure), `buffered`
    /// and `in flight` as gauges, and the redeliveries and dead letters kept.
    ///
    /// Call it where the figures are read: in the scrape handler, before rendering, or on
    /// a timer. The figures then equal the ledger's at that instant, and a job costs
    /// nothing for them; only the time in flight is recorded as each delivery ends.
    ///
    /// # Examples
    ///
    /// ```
    /// use metrics_util::debugging::{DebugValue, DebuggingRecorder};
    /// use tally_queue::Queue;
    ///
    /// let recorder = DebuggingRecorder::new();
    /// let snapshotter = recorder.snapshotter();
    /// metrics::with_local_recorder(&recorder, || {
    ///     let queue = Queue::unbounded().with_label("emails");
    ///     queue.try_put("hello").unwrap();
    ///     queue.try_put("bye").unwrap();
    ///     queue.try_get().unwrap().succeed();
    ///     queue.record_metrics();
    /// });
    /// let figures: Vec<(String, DebugValue)> = snapshotter
    ///     .snapshot()
    ///     .into_vec()
    ///     .into_iter()
    ///     .filter(|(key, ..)| key.key().labels().any(|l| l.value() == "emails"))
    ///     .filter(|(key, ..)| !key.key().name().ends_with("_seconds"))
    ///     .map(|(key, _, _, value)| {
    ///         let outcome = key.key().labels().find(|l| l.key() == "outcome");
    ///         let name = match outcome {
    ///             Some(outcome) => format!("{}/{}", key.key().name(), outcome.value()),
    ///             None => key.key().name().to_string(),
    ///         };
    ///         (name, value)
    ///     })
    ///     .collect();
    /// assert!(figures.contains(&("tally_queue_accepted_total".into(), DebugValue::Counter(2))));
    /// assert!(figures.contains(&(
    ///     "tally_queue_ended_total/succeeded".into(),
    ///     DebugValue::Counter(1)
    /// )));
    /// assert!(figures.contains(&("tally_queue_buffered".into(), DebugValue::Gauge(1.0.into()))));
    /// ```
    pub fn record_metrics(&self) {
        crate::metrics::record(
            self.label(),
            &self.ledger(),
            self.redeliveries(),
            self.dead_letters(),
        );
    }
}
