//! The rule for queue, latch and counter names: they become part of every key.

/// The longest name accepted, in bytes.
pub(crate) const MAX_NAME: usize = 100;

/// Why a name is refused, or `None` if it is fine.
///
/// Names become part of every key, inside a `{...}` hash tag so one queue lives in one
/// cluster slot; braces would break the tag, and spaces, control characters and other
/// punctuation make keys hard to read and to type in `redis-cli`.
pub(crate) fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("it is empty");
    }
    if name.len() > MAX_NAME {
        return Some("it is longer than 100 bytes");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'))
    {
        return Some("only ASCII letters, digits, '_', '-', '.' and ':' are allowed");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_odd_characters_are_refused() {
        assert_eq!(name_problem("jobs"), None);
        assert_eq!(name_problem("mail.v2:eu-west_1"), None);
        assert!(name_problem("").is_some());
        assert!(name_problem("a{b}").is_some());
        assert!(name_problem("two words").is_some());
        assert!(name_problem("é").is_some());
        assert!(name_problem(&"x".repeat(101)).is_some());
        assert_eq!(name_problem(&"x".repeat(100)), None);
    }
}
