//! Settings spelt as words (`lockstep`, `adaptive`, `framed`): each kind
//! keeps one table of its names ([`Named::NAMES`]), read both ways and for
//! the list of what is accepted, so that what a parameter accepts, what its
//! refusal lists and what a log line prints never disagree.

/// A kind spelt as words: its table, and what it is called in messages.
pub trait Named: Copy + PartialEq + Sized + 'static {
    /// What a message calls the kind: "sync mode".
    const KIND: &'static str;
    /// Each value by its word; every value is in it.
    const NAMES: &'static [(&'static str, Self)];

    /// The value `word` stands for.
    fn from_word(word: &str) -> Result<Self, UnknownWord> {
        (Self::NAMES.iter())
            .find(|(n, _)| *n == word)
            .map(|&(_, v)| v)
            .ok_or_else(|| UnknownWord {
                kind: Self::KIND,
                given: word.to_owned(),
                words: Self::NAMES.iter().map(|(n, _)| *n).collect(),
            })
    }

    /// The word of `self`.
    fn word(&self) -> &'static str {
        (Self::NAMES.iter())
            .find(|(_, v)| v == self)
            .map(|(n, _)| *n)
            .expect("every value is in its table")
    }

    /// Every word, in the table's order.
    fn words() -> Vec<&'static str> {
        Self::NAMES.iter().map(|(n, _)| *n).collect()
    }
}

/// `a, b or c`: a list of accepted words as a message gives it.
pub fn either(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [head @ .., last] => format!("{} or {last}", head.join(", ")),
    }
}

/// A word that is none of its kind's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} `{given}`; expected {}", either(words))]
pub struct UnknownWord {
    pub kind: &'static str,
    pub given: String,
    pub words: Vec<&'static str>,
}

/// `FromStr` and `Display` of a [`Named`] kind, by its table.
#[macro_export]
macro_rules! named_words {
    ($t:ty) => {
        impl std::str::FromStr for $t {
            type Err = $crate::names::UnknownWord;

            fn from_str(s: &str) -> Result<$t, Self::Err> {
                <$t as $crate::names::Named>::from_word(s)
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($crate::names::Named::word(self))
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_of_words_reads_as_a_sentence() {
        assert_eq!(either(&["a"]), "a");
        assert_eq!(either(&["a", "b"]), "a or b");
        assert_eq!(either(&["a", "b", "c"]), "a, b or c");
    }
}
