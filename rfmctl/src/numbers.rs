//! Numbers as people type them at a lab console: `4096`, `0x1000`, `4K`, `1M`.

/// Parses decimal, `0x` hex, or a decimal with a `K`/`M` (KiB/MiB) suffix.
pub fn parse_u64(text: &str) -> Result<u64, String> {
    let t = text.trim().replace('_', "");
    let parsed = if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else if let Some(k) = t.strip_suffix(['K', 'k']) {
        k.parse::<u64>().ok().and_then(|n| n.checked_mul(1 << 10))
    } else if let Some(m) = t.strip_suffix(['M', 'm']) {
        m.parse::<u64>().ok().and_then(|n| n.checked_mul(1 << 20))
    } else {
        t.parse::<u64>().ok()
    };
    parsed.ok_or_else(|| format!("`{text}` is not a number (use 4096, 0x1000, 4K or 1M)"))
}

/// Like [`parse_u64`], for a 32-bit quantity.
pub fn parse_u32(text: &str) -> Result<u32, String> {
    let n = parse_u64(text)?;
    u32::try_from(n).map_err(|_| format!("`{text}` does not fit in 32 bits"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_people_type() {
        assert_eq!(parse_u64("4096"), Ok(4096));
        assert_eq!(parse_u64("0x1000"), Ok(4096));
        assert_eq!(parse_u64("0XfF"), Ok(255));
        assert_eq!(parse_u64("4K"), Ok(4096));
        assert_eq!(parse_u64("1M"), Ok(1 << 20));
        assert_eq!(parse_u64("1_000"), Ok(1000));
        assert!(parse_u64("-1")
            .unwrap_err()
            .contains("`-1` is not a number"));
        assert!(parse_u64("0x").is_err());
        assert!(parse_u64("99999999999999999999").is_err());
        assert_eq!(parse_u32("0xffffffff"), Ok(u32::MAX));
        assert!(parse_u32("0x100000000").unwrap_err().contains("32 bits"));
    }
}
