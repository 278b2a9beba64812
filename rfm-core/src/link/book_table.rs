//! The byte layouts that a module's `//!` comment and the book's
//! `memory-layout.md` both give as a table (the liveness block's words, the
//! statistics block's fields), read alike, so that each module's test holds
//! both copies to its constants.

/// The rows `| +offset | … |` of the table in `text` (a `//!` comment or
/// markdown) headed by the row `header`: (offset, the name in cell
/// `name_cell`, up to a `:`).
pub(crate) fn rows(text: &str, header: &str, name_cell: usize) -> Vec<(usize, String)> {
    text.lines()
        .map(|l| l.trim_start_matches("//!").trim())
        .skip_while(|l| *l != header)
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let offset = cells.get(1)?.strip_prefix('+')?.parse().ok()?;
            let name = cells.get(name_cell)?.split(':').next()?.trim().to_owned();
            Some((offset, name))
        })
        .collect()
}
