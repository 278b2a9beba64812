//! A session's token: the low 32 bits of its epoch, the word by which the
//! liveness block, a descriptor and a bridge name the session that wrote
//! them. A type, not a `u32`, so that a token is never compared with a beat,
//! a slot or a bridge's id, and so that "no session" (the word 0) is `None`
//! and never a token.

use std::fmt;

/// The token of one session (never 0: epochs are odd).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token(u32);

impl Token {
    /// The token of session `epoch`.
    pub const fn of(epoch: u64) -> Token {
        Token(epoch as u32)
    }

    /// The token a word of memory holds; `None` for 0 (no session).
    pub fn from_word(word: u32) -> Option<Token> {
        (word != 0).then_some(Token(word))
    }

    /// The word that holds `token` in memory (0 for none).
    pub fn word(token: Option<Token>) -> u32 {
        token.map_or(0, Token::get)
    }

    /// The token as a number (for JSON).
    pub const fn get(self) -> u32 {
        self.0
    }

    /// Whether a frame of session `epoch` is this session's.
    pub fn is_of(self, epoch: u64) -> bool {
        Token::of(epoch) == self
    }
}

/// As every message shows a token: ten hex digits with its `0x`.
impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#010x}", self.0)
    }
}

impl fmt::LowerHex for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_zero_is_no_session_and_a_token_is_its_epochs_low_word() {
        assert_eq!(Token::from_word(0), None);
        let t = Token::of(0x1234_5678_9abc_def1);
        assert_eq!(Token::from_word(0x9abc_def1), Some(t));
        assert_eq!(Token::word(Some(t)), 0x9abc_def1);
        assert_eq!(Token::word(None), 0);
        assert!(t.is_of(0x0000_0001_9abc_def1));
        assert_eq!(t.to_string(), "0x9abcdef1");
    }
}
