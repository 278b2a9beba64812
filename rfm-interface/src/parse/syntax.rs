//! What the TOML parser and serde say of a file, put as a user needs it: the
//! key whose value has the wrong type, and the key a misspelt one most likely
//! meant (by `rfm_memory::spelling`'s one rule of near misses).

use std::ops::Range;

use super::Source;
use crate::InterfaceError;
use rfm_memory::spelling::nearest;

/// The error of a file TOML or serde could not read, at its place.
pub(super) fn error(src: &Source<'_>, e: &toml::de::Error) -> InterfaceError {
    let span = e.span().unwrap_or(0..0);
    let message = e.message().trim_end();
    let what = match unknown_key(message) {
        Some((key, expected)) => match nearest(key, expected) {
            Some(meant) => format!("{message}: did you mean `{meant}`?"),
            None => message.to_owned(),
        },
        None => {
            let message = message.replace("expected i64", "expected an integer");
            match key_before(src.text, &span) {
                Some(key) => format!("`{key}`: {message}"),
                None => message,
            }
        }
    };
    src.error(span, what)
}

/// serde's "unknown field `KEY`, expected one of `A`, `B`" (or "expected `A`
/// or `B`", "expected `A`"): the key and the keys there are.
fn unknown_key(message: &str) -> Option<(&str, impl Iterator<Item = &str>)> {
    let rest = message.strip_prefix("unknown field `")?;
    let (key, expected) = rest.split_once('`')?;
    let names = expected.split('`').skip(1).step_by(2);
    Some((key, names))
}

/// The key whose value starts at `span`: `KEY = ` just before it on its line
/// (a table's or an inline table's).
fn key_before<'a>(text: &'a str, span: &Range<usize>) -> Option<&'a str> {
    let before = text.get(..span.start)?;
    let line = before.rsplit('\n').next()?;
    let key = line.trim_end().strip_suffix('=')?.trim_end();
    // After the last character that is no key's (a byte index past it: the
    // character may be several bytes, a BOM or a letter of another script).
    let start = (key.char_indices().rev())
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    Some(&key[start..]).filter(|k| !k.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_before_a_value_is_found_in_tables_and_inline_tables() {
        let text = "slot = \"0\"\nsignals = [ { name = \"roll\", unit = 3 } ]\n";
        let at = |s: &str| {
            let i = text.find(s).unwrap();
            i..i + s.len()
        };
        assert_eq!(key_before(text, &at("\"0\"")), Some("slot"));
        assert_eq!(key_before(text, &at("3 }")), Some("unit"));
        assert_eq!(key_before(text, &at("[ {")), Some("signals"));
        assert_eq!(key_before(text, &(0..0)), None);
        // A key after a character of several bytes (the fuzzer's BOM): no
        // slice inside it.
        let text = "na\u{feff}me = 3";
        assert_eq!(key_before(text, &(text.len() - 1..text.len())), Some("me"));
        let text = "é= 1";
        assert_eq!(key_before(text, &(3..4)), None);
    }
}
