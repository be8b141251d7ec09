//! What the raw queue holds for an item: the item itself, or, under the `metrics` feature,
//! the item with the instant it became buffered (accepted, returned, or held), so that its
//! take records the time it spent buffered. Without the feature every function here is
//! the identity, and the raw queue holds the bare item.

#[cfg(feature = "metrics")]
use crate::error::TryPutError;

/// What the histograms of a queue are recorded under: nothing without the feature.
#[cfg(not(feature = "metrics"))]
pub(crate) type Keys = ();

/// What the histograms of a queue are recorded under.
#[cfg(feature = "metrics")]
pub(crate) type Keys = crate::metrics::Keys;

/// The keys for the queue `label`.
#[inline(always)]
pub(crate) fn keys(label: &'static str) -> Keys {
    #[cfg(feature = "metrics")]
    return crate::metrics::Keys::new(label);
    #[cfg(not(feature = "metrics"))]
    let _ = label;
}

/// The item as the raw queue holds it.
#[cfg(not(feature = "metrics"))]
pub(crate) type Slot<T> = T;

/// The item as the raw queue holds it: with the instant it became buffered.
#[cfg(feature = "metrics")]
pub(crate) type Slot<T> = Stamped<T>;

/// An item and the instant it became buffered.
#[cfg(feature = "metrics")]
pub(crate) struct Stamped<T> {
    item: T,
    since: std::time::Instant,
}

/// The item, as it becomes buffered.
#[inline(always)]
pub(crate) fn stamp<T>(item: T) -> Slot<T> {
    #[cfg(feature = "metrics")]
    return Stamped {
        item,
        since: std::time::Instant::now(),
    };
    #[cfg(not(feature = "metrics"))]
    item
}

/// The item, leaving the buffer for anywhere but a delivery (a drain, a dead letter, a
/// refused put or return).
#[inline(always)]
pub(crate) fn unstamp<T>(slot: Slot<T>) -> T {
    #[cfg(feature = "metrics")]
    return slot.item;
    #[cfg(not(feature = "metrics"))]
    slot
}

/// The item, taken for a delivery of the queue whose keys are `keys`, wrapped in that
/// delivery by `wrap`; its time buffered is recorded once the delivery exists, so that a
/// panicking recorder unwinds a delivery (which ends as abandoned), not a bare item.
/// (Without the feature the raw queue hands out the item itself.)
#[cfg(feature = "metrics")]
#[inline(always)]
pub(crate) fn taken<T, D>(keys: &Keys, slot: Slot<T>, wrap: impl FnOnce(T) -> D) -> D {
    let Stamped { item, since } = slot;
    let delivery = wrap(item);
    crate::metrics::buffered_for(keys, since.elapsed());
    delivery
}

/// The item, taken for a delivery, wrapped in that delivery by `wrap`, with the instant it
/// became buffered, for [`record_buffered`] once the take is over.
#[cfg(feature = "metrics")]
#[inline(always)]
pub(crate) fn split<T, D>(slot: Slot<T>, wrap: impl FnOnce(T) -> D) -> (D, std::time::Instant) {
    let Stamped { item, since } = slot;
    (wrap(item), since)
}

/// Records the time buffered of an item taken for a delivery of the queue whose keys are
/// `keys`.
#[cfg(feature = "metrics")]
#[inline(always)]
pub(crate) fn record_buffered(keys: &Keys, since: std::time::Instant) {
    crate::metrics::buffered_for(keys, since.elapsed());
}

/// A refused put's error, with the bare item. (Without the feature the error holds it.)
#[cfg(feature = "metrics")]
#[inline(always)]
pub(crate) fn refused<T>(error: TryPutError<Slot<T>>) -> TryPutError<T> {
    match error {
        TryPutError::Full(slot) => TryPutError::Full(slot.item),
        TryPutError::ShutDown(slot) => TryPutError::ShutDown(slot.item),
        TryPutError::NoWorkers(slot) => TryPutError::NoWorkers(slot.item),
    }
}
