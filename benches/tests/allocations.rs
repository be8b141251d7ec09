//! With a counting global allocator: the latch's count-down, open-wait and opening with no
//! waiters, and the queue's put + get + resolve when nobody has to wait, allocate nothing.

use benches::counting::{allocations_of, count_this_thread, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn steady_state_paths_do_not_allocate() {
    count_this_thread();
    for name in [
        "latch/count_down/ours",
        "latch/wait_open/ours",
        "latch/open_no_waiters/ours",
        "queue/floor/ours",
        "noalloc/count_down/fixed",
        "noalloc/wait_open/fixed",
        "noalloc/release_one/fixed",
    ] {
        // The difference between two sizes is the per-operation cost; set-up cancels out.
        let small = allocations_of(name, 1_000);
        let large = allocations_of(name, 11_000);
        assert_eq!(large - small, 0, "{name} allocates per operation");
    }
}
