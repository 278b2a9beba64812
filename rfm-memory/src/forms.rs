//! The device string's forms, one table: what parsing accepts ([`crate::spec`]),
//! what errors quote, and what a misspelt string is matched against.

/// The accepted forms, quoted in errors.
pub const DEVICE_FORMS: &str =
    "`/dev/rfm2gN` (Linux) or `\\\\.\\rfm2gN` (Windows) for an RFM2g board (N its number, \
     0..255; `/dev/rfm2g-sim/RING/NODE` on the emulator), `shm:NAME` for shared memory on \
     this host, `loopback:NAME` for the instances of one process, or `replay:PATH` to play \
     the peers from a recording";

/// What follows a board path's prefix.
#[derive(Debug, Clone, Copy)]
enum Rest {
    /// The board's number, 0..255, as the driver names its devices.
    Number,
    /// The emulator's `RING/NODE[/SIZE]`, which it checks itself.
    Emulated,
}

/// The RFM2g board paths a device string may name: the driver's on Linux and
/// on Windows, and the emulator's self-describing one. What parsing accepts,
/// and what a misspelt path is matched against.
const BOARD_PATHS: [(&str, Rest); 3] = [
    ("/dev/rfm2g", Rest::Number),
    (r"\\.\rfm2g", Rest::Number),
    ("/dev/rfm2g-sim/", Rest::Emulated),
];

/// Whether `path` is one of [`BOARD_PATHS`].
pub(crate) fn is_board_path(path: &str) -> bool {
    BOARD_PATHS.iter().any(|&(prefix, rest)| {
        path.strip_prefix(prefix).is_some_and(|r| match rest {
            Rest::Number => {
                (1..=3).contains(&r.len())
                    && r.bytes().all(|b| b.is_ascii_digit())
                    && r.parse::<u8>().is_ok()
            }
            Rest::Emulated => !r.is_empty(),
        })
    })
}

/// The board paths a misspelt `path` is matched against: each numbered
/// form with the boards 0..9, then with the number `path` ends with.
pub(crate) fn board_candidates(path: &str) -> Vec<String> {
    let digits = path.len() - path.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let own = &path[path.len() - digits..];
    let numbers = (0..10)
        .map(|n| n.to_string())
        .chain((!own.is_empty()).then(|| own.to_owned()));
    let numbers: Vec<String> = numbers.collect();
    BOARD_PATHS
        .iter()
        .filter(|(_, rest)| matches!(rest, Rest::Number))
        .flat_map(|(prefix, _)| numbers.iter().map(move |n| format!("{prefix}{n}")))
        .filter(|c| is_board_path(c))
        .collect()
}

/// The other forms' prefixes, which a misspelt prefix (`smh:`) is matched
/// against.
pub(crate) const PREFIXES: [&str; 3] = ["shm:", "loopback:", REPLAY];

/// What a replay's device string starts with.
pub(crate) const REPLAY: &str = "replay:";
