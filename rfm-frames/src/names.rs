//! Settings spelt as words (`lockstep`, `adaptive`, `framed`): each kind
//! keeps one table of its names, and these read it both ways, so that what
//! a parameter accepts and what a log line prints never disagree.

/// The value `name` stands for in `table`.
pub fn parse<T: Copy>(table: &[(&'static str, T)], name: &str) -> Option<T> {
    table.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
}

/// The name of `value` in `table`, which holds every value.
pub fn name_of<T: PartialEq>(table: &[(&'static str, T)], value: &T) -> &'static str {
    table
        .iter()
        .find(|(_, v)| v == value)
        .map(|(n, _)| *n)
        .expect("every value is in its table")
}
