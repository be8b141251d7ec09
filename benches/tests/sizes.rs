//! The sizes the docs of `tally_queue::fixed::FixedQueue` state for x86-64, beside
//! embassy-sync's `Channel` of the same capacity.

use std::mem::size_of;

use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;
use embassy_sync::channel::Channel;
use tally_queue::fixed::FixedQueue;

#[cfg(target_arch = "x86_64")]
#[test]
fn a_fixed_queue_of_16_u32_beside_embassy_sync_s_channel() {
    let ours = size_of::<FixedQueue<u32, 16, 2>>();
    let channel = size_of::<Channel<CriticalSectionRawMutex, u32, 16>>();
    assert_eq!((ours, channel), (896, 128));
}
