//! The 32-byte text message both layouts carry (`char msg[32]` in the article).

use std::fmt;

/// Bytes in the message field, including the terminating NUL.
pub const MESSAGE_LEN: usize = 32;

/// A NUL-terminated message of at most 31 bytes, as the article's `msg[32]`.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Message([u8; MESSAGE_LEN]);

/// Text that does not fit the message field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    #[error("message is {len} bytes; at most {} fit (the field is char[{MESSAGE_LEN}] with a NUL)", MESSAGE_LEN - 1)]
    TooLong { len: usize },
    #[error("message contains a NUL byte at {at}; C readers would cut it there")]
    Nul { at: usize },
}

impl Message {
    /// The message holding `text`; refuses what C readers would misread.
    pub fn new(text: &str) -> Result<Message, MessageError> {
        let bytes = text.as_bytes();
        if let Some(at) = bytes.iter().position(|&b| b == 0) {
            return Err(MessageError::Nul { at });
        }
        if bytes.len() >= MESSAGE_LEN {
            return Err(MessageError::TooLong { len: bytes.len() });
        }
        let mut raw = [0u8; MESSAGE_LEN];
        raw[..bytes.len()].copy_from_slice(bytes);
        Ok(Message(raw))
    }

    /// The raw field as found in memory (a peer may not NUL-terminate it).
    pub fn from_raw(raw: [u8; MESSAGE_LEN]) -> Message {
        Message(raw)
    }

    pub fn as_raw(&self) -> &[u8; MESSAGE_LEN] {
        &self.0
    }

    /// The bytes up to the first NUL (all 32 if a foreign writer left none).
    pub fn as_bytes(&self) -> &[u8] {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(MESSAGE_LEN);
        &self.0[..end]
    }

    /// The text, with invalid UTF-8 from foreign writers replaced.
    pub fn to_string_lossy(&self) -> String {
        String::from_utf8_lossy(self.as_bytes()).into_owned()
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string_lossy(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_up_to_31_bytes_and_refuses_more_or_nul() {
        let m = Message::new("Hello RFM").unwrap();
        assert_eq!(m.as_bytes(), b"Hello RFM");
        assert_eq!(m.as_raw()[9..], [0u8; 23]);
        assert!(Message::new(&"x".repeat(31)).is_ok());
        let err = Message::new(&"x".repeat(32)).unwrap_err();
        assert_eq!(err, MessageError::TooLong { len: 32 });
        assert!(err.to_string().contains("at most 31"), "{err}");
        assert_eq!(
            Message::new("a\0b").unwrap_err(),
            MessageError::Nul { at: 1 }
        );
    }

    #[test]
    fn reads_unterminated_and_non_utf8_fields_from_foreign_writers() {
        let m = Message::from_raw([b'A'; MESSAGE_LEN]);
        assert_eq!(m.as_bytes().len(), 32);
        let mut raw = [0u8; MESSAGE_LEN];
        raw[..3].copy_from_slice(&[0xff, b'o', b'k']);
        assert_eq!(Message::from_raw(raw).to_string_lossy(), "\u{fffd}ok");
    }
}
