//! Key names of one queue, as one handle (consumer) sees them.

use alloc::format;
use alloc::string::String;

/// Every key of one queue, all under the hash tag `{name}` (one cluster slot). The
/// scripts name the keys of rare paths from the tag themselves.
#[derive(Clone, Debug)]
pub(crate) struct Keys {
    pub(crate) tag: String,
    /// The stream, the meta hash and the ledger hash: every script's KEYS[1..=3].
    pub(crate) first: [String; 3],
    ends: String,
    dead: String,
    uncertain: String,
    /// The prefix of this consumer's resolve records.
    done: String,
}

impl Keys {
    pub(crate) fn new(name: &str, consumer: &str) -> Self {
        let tag = format!("{{{name}}}");
        Keys {
            first: [
                format!("{tag}:s"),
                format!("{tag}:meta"),
                format!("{tag}:ledger"),
            ],
            ends: format!("{tag}:ends"),
            dead: format!("{tag}:dead"),
            uncertain: format!("{tag}:uncertain"),
            done: format!("{tag}:done:{consumer}:"),
            tag,
        }
    }

    pub(crate) fn stream(&self) -> &str {
        &self.first[0]
    }

    pub(crate) fn meta(&self) -> &str {
        &self.first[1]
    }

    pub(crate) fn ends(&self) -> &str {
        &self.ends
    }

    pub(crate) fn dead(&self) -> &str {
        &self.dead
    }

    pub(crate) fn uncertain(&self) -> &str {
        &self.uncertain
    }

    /// The record of one of this consumer's calls, by its token.
    pub(crate) fn record(&self, token: u64) -> String {
        format!("{}{token}", self.done)
    }

    /// The key of a put's idempotency key.
    pub(crate) fn idempotency(&self, key: &str) -> String {
        format!("{}:k:{key}", self.tag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_share_one_hash_tag() {
        let keys = Keys::new("jobs", "c1");
        assert_eq!(keys.stream(), "{jobs}:s");
        assert_eq!(keys.meta(), "{jobs}:meta");
        assert_eq!(keys.ends(), "{jobs}:ends");
        assert_eq!(keys.record(7), "{jobs}:done:c1:7");
        assert_eq!(keys.idempotency("k"), "{jobs}:k:k");
    }
}
