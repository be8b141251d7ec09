//! Key names of one latch, all under the hash tag `{latch:NAME}` (one cluster slot).

use alloc::format;
use alloc::string::String;

#[derive(Clone, Debug)]
pub(crate) struct LatchKeys {
    /// The hash of the latch's and each counter's state.
    pub(crate) spec: String,
    /// The stream of count-down events.
    pub(crate) events: String,
    /// The prefix of each counter's lease key, `lease:<counter>`.
    pub(crate) lease_prefix: String,
    /// Each handle's last look at the server's clock.
    pub(crate) clock: String,
    /// Holder ids of claims their handles gave up (a late landing is refused).
    pub(crate) void: String,
}

impl LatchKeys {
    pub(crate) fn new(name: &str) -> Self {
        let tag = format!("{{latch:{name}}}");
        LatchKeys {
            spec: format!("{tag}:spec"),
            events: format!("{tag}:events"),
            lease_prefix: format!("{tag}:lease:"),
            clock: format!("{tag}:clock"),
            void: format!("{tag}:void"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_share_one_hash_tag() {
        let keys = LatchKeys::new("boot");
        assert_eq!(keys.spec, "{latch:boot}:spec");
        assert_eq!(keys.events, "{latch:boot}:events");
        assert_eq!(keys.lease_prefix, "{latch:boot}:lease:");
    }
}
