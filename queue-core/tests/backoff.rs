//! `Backoff`: the delays of each policy, and what jitter may and may not do to them.

use std::time::Duration;

use proptest::prelude::*;
use tally_queue::{Backoff, Jitter};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn a_fixed_policy_waits_the_same_after_every_attempt() {
    let backoff = Backoff::fixed(ms(250));
    for attempt in [0, 1, 2, 10, u32::MAX] {
        assert_eq!(backoff.delay(attempt), ms(250));
        assert_eq!(backoff.ceiling(attempt), ms(250));
    }
}

#[test]
fn an_exponential_policy_doubles_up_to_its_cap_and_reads_attempt_zero_as_one() {
    let backoff = Backoff::exponential(ms(10), ms(300));
    let delays: Vec<_> = (0..=7).map(|attempt| backoff.delay(attempt)).collect();
    assert_eq!(
        delays,
        [
            ms(10),
            ms(10),
            ms(20),
            ms(40),
            ms(80),
            ms(160),
            ms(300),
            ms(300)
        ]
    );
    // A cap below the first delay is every delay.
    assert_eq!(Backoff::exponential(ms(50), ms(5)).delay(1), ms(5));
    // Large attempts and durations saturate at the cap instead of overflowing.
    let huge = Backoff::exponential(Duration::from_secs(u64::MAX / 2), Duration::MAX);
    assert_eq!(huge.delay(3), Duration::MAX);
    assert_eq!(Backoff::exponential(ms(1), ms(9)).delay(33), ms(9));
}

#[test]
fn full_jitter_spreads_jobs_that_failed_together_over_the_whole_range() {
    let backoff = Backoff::fixed(ms(1_000)).with_jitter(Jitter::Full);
    let delays: Vec<Duration> = (0..1_000).map(|id| backoff.delay_for(1, id)).collect();
    assert!(delays.iter().all(|&delay| delay < ms(1_000)));
    // Evenly spread: each tenth of the range gets about a tenth of the jobs.
    for tenth in 0..10 {
        let lands = delays
            .iter()
            .filter(|delay| delay.as_millis() / 100 == tenth)
            .count();
        assert!((60..=140).contains(&lands), "tenth {tenth}: {lands} jobs");
    }
}

#[test]
fn one_job_s_successive_delays_are_drawn_independently() {
    let backoff = Backoff::fixed(ms(1_000)).with_jitter(Jitter::Full);
    let delays: std::collections::HashSet<_> = (1..=20)
        .map(|attempt| backoff.delay_for(attempt, 7))
        .collect();
    assert!(delays.len() > 15, "{delays:?}");
}

proptest! {
    // Under Miri, a handful of cases; no failure file (Miri's isolation has no working
    // directory to put it in).
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn jitter_only_shortens_and_is_a_function_of_its_inputs(
        first in 0u64..10_000_000_000,
        cap in 0u64..100_000_000_000,
        attempt in 0u32..80,
        key in any::<u64>(),
        seed in any::<u64>(),
        doubling in any::<bool>(),
    ) {
        let base = if doubling {
            Backoff::exponential(Duration::from_nanos(first), Duration::from_nanos(cap))
        } else {
            Backoff::fixed(Duration::from_nanos(first))
        }
        .with_seed(seed);
        let ceiling = base.ceiling(attempt);
        prop_assert_eq!(base.delay_for(attempt, key), ceiling);
        if doubling {
            prop_assert!(ceiling <= Duration::from_nanos(cap));
            prop_assert!(base.ceiling(attempt + 1) >= ceiling);
        }
        let full = base.with_jitter(Jitter::Full).delay_for(attempt, key);
        prop_assert!(full <= ceiling);
        prop_assert!(ceiling.is_zero() || full < ceiling);
        let equal = base.with_jitter(Jitter::Equal).delay_for(attempt, key);
        prop_assert!(equal >= ceiling / 2 && equal <= ceiling);
        prop_assert_eq!(full, base.with_jitter(Jitter::Full).delay_for(attempt, key));
    }
}
