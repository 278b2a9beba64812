//! The near miss a user most likely meant: a misspelt device, interface key
//! or emulated board, matched against what there is. One rule for every
//! "did you mean", in the lowest crate that names things a user types (the
//! device strings), so that the interface files and the emulator answer
//! alike.

/// Farthest a misspelling may be from what it meant (Damerau-Levenshtein
/// edits: a character added, dropped, changed, or two swapped): `slto` →
/// `slot`, `/dev/rfmg20` → `/dev/rfm2g0`; and less than half the word, so
/// that a short word is not everyone's near miss.
pub const MOST_EDITS: usize = 2;

/// The one of `candidates` nearest `word`, if one is near enough to be what
/// the user meant (the nearest; of equals, the first).
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(word, c), c))
        .filter(|&(d, _)| d <= MOST_EDITS && 2 * d < word.chars().count().max(2))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// ` did you mean `X`?` for the nearest of `candidates`, or nothing: the
/// clause a message ends its first sentence with.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    nearest(word, candidates).map_or_else(String::new, |c| format!(" (did you mean `{c}`?)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_miss_is_named_and_a_far_one_is_not() {
        let keys = [
            "name", "slot", "offset", "type", "lag", "max_lag", "signals",
        ];
        assert_eq!(nearest("slto", keys), Some("slot"));
        assert_eq!(nearest("typ", keys), Some("type"));
        assert_eq!(nearest("lagg", keys), Some("lag"));
        assert_eq!(nearest("signal", keys), Some("signals"));
        assert_eq!(nearest("maxlag", keys), Some("max_lag"));
        assert_eq!(nearest("colour", keys), None);
        assert_eq!(nearest("x", keys), None);
        assert_eq!(
            nearest("/dev/rfmg20", ["/dev/rfm2g0", "/dev/rfm2g2"]),
            Some("/dev/rfm2g0")
        );
        assert_eq!(did_you_mean("slto", keys), " (did you mean `slot`?)");
        assert_eq!(did_you_mean("colour", keys), "");
    }
}
