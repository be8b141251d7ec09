//! Key names of one queue, as one handle (consumer) sees them.

use alloc::format;
use alloc::string::String;

/// Every key of one queue, all under the hash tag `{name}` (one cluster slot).
#[derive(Clone, Debug)]
pub(crate) struct Keys {
    pub(crate) tag: String,
    /// stream, meta, ledger, workers, ends, dead, uncertain, clock, void, and this
    /// consumer's resolve records: the order of every script's KEYS[1..=10].
    pub(crate) fixed: [String; 10],
}

impl Keys {
    pub(crate) fn new(name: &str, consumer: &str) -> Self {
        let tag = format!("{{{name}}}");
        let done = format!("done:{consumer}");
        let fixed = [
            "s",
            "meta",
            "ledger",
            "workers",
            "ends",
            "dead",
            "uncertain",
            "clock",
            "void",
            done.as_str(),
        ]
        .map(|suffix| format!("{tag}:{suffix}"));
        Keys { tag, fixed }
    }

    pub(crate) fn stream(&self) -> &str {
        &self.fixed[0]
    }

    pub(crate) fn meta(&self) -> &str {
        &self.fixed[1]
    }

    pub(crate) fn ends(&self) -> &str {
        &self.fixed[4]
    }

    pub(crate) fn dead(&self) -> &str {
        &self.fixed[5]
    }

    pub(crate) fn uncertain(&self) -> &str {
        &self.fixed[6]
    }

    /// The key of a put's idempotency key.
    pub(crate) fn idempotency(&self, key: &str) -> String {
        format!("{}:k:{key}", self.tag)
    }

    /// The fixed keys, as a script's KEYS.
    pub(crate) fn all(&self) -> [&str; 10] {
        let f = &self.fixed;
        [
            &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9],
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_share_one_hash_tag() {
        let keys = Keys::new("jobs", "c1");
        assert_eq!(keys.stream(), "{jobs}:s");
        assert!(keys.fixed.iter().all(|key| key.starts_with("{jobs}:")));
        assert_eq!(keys.fixed[9], "{jobs}:done:c1");
        assert_eq!(keys.idempotency("k"), "{jobs}:k:k");
    }
}
