//! A stream entry id as numbers: the key of the entries a handle holds, and the order the
//! server gives its entries.

use alloc::string::{String, ToString};

/// An entry id as a map key: its `<ms>-<seq>` numbers, as the server writes every id it
/// hands out, or the text of any other id (so that two different ids never share a key).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum EntryKey {
    Id(u64, u64),
    Text(String),
}

impl EntryKey {
    pub(crate) fn of(entry: &str) -> EntryKey {
        match entry_id(entry) {
            Some((ms, seq)) => EntryKey::Id(ms, seq),
            None => EntryKey::Text(entry.to_string()),
        }
    }
}

/// The numbers of an entry id written as the server writes it (`<ms>-<seq>`, decimal
/// without leading zeros), so that ids compare as the server orders them; `None` for any
/// other text.
pub(crate) fn entry_id(entry: &str) -> Option<(u64, u64)> {
    let bytes = entry.as_bytes();
    let dash = bytes.iter().position(|&b| b == b'-')?;
    Some((number(&bytes[..dash])?, number(&bytes[dash + 1..])?))
}

/// A decimal number as the server writes it: digits only, no leading zero, no overflow.
fn number(digits: &[u8]) -> Option<u64> {
    let digit = |b: u8| {
        let digit = b.wrapping_sub(b'0');
        (digit <= 9).then_some(u64::from(digit))
    };
    match digits {
        [] | [b'0', _, ..] => None,
        // Up to 19 digits cannot overflow.
        _ if digits.len() < 20 => digits.iter().try_fold(0, |n, &b| Some(n * 10 + digit(b)?)),
        _ => digits
            .iter()
            .try_fold(0u64, |n, &b| n.checked_mul(10)?.checked_add(digit(b)?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_the_server_writes_are_numbers() {
        assert_eq!(entry_id("1733580000000-0"), Some((1_733_580_000_000, 0)));
        assert_eq!(entry_id("0-1"), Some((0, 1)));
        assert_eq!(
            entry_id("18446744073709551615-18446744073709551615"),
            Some((u64::MAX, u64::MAX))
        );
        assert_eq!(
            entry_id("9999999999999999999-10000000000000000000"),
            Some((9_999_999_999_999_999_999, 10_000_000_000_000_000_000))
        );
        assert_eq!(EntryKey::of("5-7"), EntryKey::Id(5, 7));
    }

    #[test]
    fn any_other_id_keeps_its_text() {
        for text in [
            "",
            "5",
            "-",
            "5-",
            "-5",
            "05-1",
            "5-01",
            "+5-1",
            "5-1-2",
            "a-1",
            "5- 1",
            "18446744073709551616-0",
            "0-18446744073709551616",
            "184467440737095516150-0",
        ] {
            assert_eq!(entry_id(text), None, "{text:?}");
            assert_eq!(EntryKey::of(text), EntryKey::Text(text.to_string()));
        }
        assert!(EntryKey::of("05-1") != EntryKey::of("5-1"));
    }
}
