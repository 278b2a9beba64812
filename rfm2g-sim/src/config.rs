//! Which emulated board a device path opens: ring, node id, memory size, delay.
//!
//! Looked up, first match wins, at every `RFM2gOpen`:
//! 1. a self-describing path `/dev/rfm2g-sim/RING/NODE[/SIZE]` (no set-up needed;
//!    what tests and scripts use);
//! 2. entries in `$RFM2G_SIM_DEVICES`, separated by `;`;
//! 3. entries in the file named by `$RFM2G_SIM_CONFIG`, one per line, `#` comments.
//!
//! A path none of them names is no board, as on a PC without that card: it
//! used to open a board of a default ring, where a typo (`/dev/rfm2g7` for
//! `/dev/rfm2g1`) coupled with nobody and was reported only as a silent peer.
//! The refusal names the boards configured and the nearest of them.
//!
//! An entry is `DEVICE key=value ...` with keys `ring`, `node` (required), `size`,
//! `delay` and `link`, e.g. `/dev/rfm2g0 ring=lab node=2 size=64M delay=500ns`.

use std::fmt;
use std::time::Duration;

pub const DEVICES_ENV: &str = "RFM2G_SIM_DEVICES";
pub const CONFIG_ENV: &str = "RFM2G_SIM_CONFIG";
pub const DEFAULT_RING: &str = "rfm2g-sim";
/// The smallest PCIE-5565 memory; tests ask for less.
pub const DEFAULT_SIZE: u64 = 64 << 20;
/// The largest PCIE-5565 memory.
pub const MAX_SIZE: u64 = 256 << 20;
pub const MAX_DELAY: Duration = Duration::from_secs(1);
pub const VIRTUAL_PREFIX: &str = "/dev/rfm2g-sim/";
/// Ring names become shm object names `rfm2g-sim.RING`; this keeps them legal.
pub const MAX_RING_LEN: usize = 100;
const KEYS: &str = "ring=NAME, node=0..255, size=BYTES[K|M], delay=N[ns|us|ms], link=up|down";

/// One emulated board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardConfig {
    /// Boards on the same ring share one memory and exchange network interrupts.
    pub ring: String,
    pub node: u16,
    /// Bytes of memory; every board of a ring must agree.
    pub size: u64,
    /// How much later a network interrupt reaches the other nodes.
    pub delay: Duration,
    /// `false` emulates an open fibre: `RFM2gCheckRingCont` fails.
    pub link_up: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// No rule names this path: the emulator's "no such device".
    Unconfigured {
        path: String,
        /// The device paths the configuration names.
        configured: Vec<String>,
    },
    /// A rule names it but is malformed; `origin` says where the rule is.
    Bad {
        origin: String,
        reason: String,
    },
    Unreadable {
        file: String,
        reason: String,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Unconfigured { path, configured } => {
                let named = match configured.is_empty() {
                    true => "no board is configured".to_owned(),
                    false => format!(
                        "the configuration names {}{}",
                        configured.join(", "),
                        rfm_memory::spelling::did_you_mean(
                            path,
                            configured.iter().map(String::as_str)
                        )
                    ),
                };
                write!(
                    f,
                    "no emulated board at `{path}`: {named}; configure it (`{path} ring=NAME \
                     node=N`) in ${DEVICES_ENV} or the file named by ${CONFIG_ENV}, or use the \
                     self-describing {VIRTUAL_PREFIX}RING/NODE[/SIZE]"
                )
            }
            ConfigError::Bad { origin, reason } => write!(f, "{origin}: {reason}"),
            ConfigError::Unreadable { file, reason } => {
                write!(f, "cannot read ${CONFIG_ENV} file `{file}`: {reason}")
            }
        }
    }
}

/// Looks `path` up in this process's environment.
pub fn resolve(path: &str) -> Result<BoardConfig, ConfigError> {
    let devices = std::env::var(DEVICES_ENV).ok();
    let file = match std::env::var(CONFIG_ENV) {
        Ok(name) => match std::fs::read_to_string(&name) {
            Ok(text) => Some((name, text)),
            Err(e) => {
                return Err(ConfigError::Unreadable {
                    file: name,
                    reason: e.to_string(),
                })
            }
        },
        Err(_) => None,
    };
    resolve_with(
        path,
        devices.as_deref(),
        file.as_ref().map(|(n, t)| (n.as_str(), t.as_str())),
    )
}

/// [`resolve`] with the sources passed in (tests cannot safely set variables).
pub fn resolve_with(
    path: &str,
    devices: Option<&str>,
    file: Option<(&str, &str)>,
) -> Result<BoardConfig, ConfigError> {
    if let Some(rest) = path.strip_prefix(VIRTUAL_PREFIX) {
        return virtual_board(path, rest);
    }
    if let Some(devices) = devices {
        for (i, entry) in devices.split(';').enumerate() {
            let origin = || format!("{DEVICES_ENV} entry {}", i + 1);
            if let Some(board) = entry_for(path, entry, origin)? {
                return Ok(board);
            }
        }
    }
    if let Some((name, text)) = file {
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default();
            let origin = || format!("{name}:{}", i + 1);
            if let Some(board) = entry_for(path, line, origin)? {
                return Ok(board);
            }
        }
    }
    let entries = (devices.into_iter().flat_map(|d| d.split(';')))
        .chain(file.into_iter().flat_map(|(_, text)| text.lines()))
        .map(|entry| entry.split('#').next().unwrap_or_default());
    let mut configured: Vec<String> = Vec::new();
    for device in entries.filter_map(|entry| entry.split_whitespace().next()) {
        if !configured.iter().any(|c| c == device) {
            configured.push(device.to_owned());
        }
    }
    Err(ConfigError::Unconfigured {
        path: path.to_owned(),
        configured,
    })
}

fn virtual_board(path: &str, rest: &str) -> Result<BoardConfig, ConfigError> {
    let bad = |reason: String| ConfigError::Bad {
        origin: format!("device path `{path}`"),
        reason: format!("{reason}; the form is {VIRTUAL_PREFIX}RING/NODE[/SIZE]"),
    };
    let parts: Vec<&str> = rest.split('/').collect();
    let (ring, node, size) = match parts.as_slice() {
        [ring, node] => (*ring, *node, None),
        [ring, node, size] => (*ring, *node, Some(*size)),
        _ => return Err(bad("expected two or three parts".into())),
    };
    Ok(BoardConfig {
        ring: parse_ring(ring).map_err(bad)?,
        node: parse_node(node).map_err(bad)?,
        size: size.map_or(Ok(DEFAULT_SIZE), parse_size).map_err(bad)?,
        delay: Duration::ZERO,
        link_up: true,
    })
}

/// The board an entry describes, if the entry is for `path`.
fn entry_for(
    path: &str,
    entry: &str,
    origin: impl Fn() -> String,
) -> Result<Option<BoardConfig>, ConfigError> {
    let mut words = entry.split_whitespace();
    if words.next() != Some(path) {
        return Ok(None);
    }
    let bad = |reason: String| ConfigError::Bad {
        origin: origin(),
        reason,
    };
    let mut board = BoardConfig {
        ring: DEFAULT_RING.to_owned(),
        node: u16::MAX,
        size: DEFAULT_SIZE,
        delay: Duration::ZERO,
        link_up: true,
    };
    for word in words {
        let Some((key, value)) = word.split_once('=') else {
            return Err(bad(format!("`{word}` is not key=value; keys: {KEYS}")));
        };
        match key {
            "ring" => board.ring = parse_ring(value).map_err(bad)?,
            "node" => board.node = parse_node(value).map_err(bad)?,
            "size" => board.size = parse_size(value).map_err(bad)?,
            "delay" => board.delay = parse_delay(value).map_err(bad)?,
            "link" => {
                board.link_up = match value {
                    "up" => true,
                    "down" => false,
                    _ => return Err(bad(format!("link `{value}` is not `up` or `down`"))),
                }
            }
            _ => return Err(bad(format!("unknown key `{key}`; keys: {KEYS}"))),
        }
    }
    if board.node == u16::MAX {
        return Err(bad(format!("`{path}` has no node=0..255")));
    }
    Ok(Some(board))
}

fn parse_ring(ring: &str) -> Result<String, String> {
    if ring.is_empty()
        || ring.len() > MAX_RING_LEN
        || !ring
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return Err(format!(
            "ring `{ring}` must be 1..={MAX_RING_LEN} of letters, digits, `.`, `_`, `-`"
        ));
    }
    Ok(ring.to_owned())
}

fn parse_node(node: &str) -> Result<u16, String> {
    node.parse::<u16>()
        .ok()
        .filter(|n| *n <= 255)
        .ok_or_else(|| format!("node `{node}` is not a node id 0..255"))
}

fn parse_size(size: &str) -> Result<u64, String> {
    let (digits, unit) = match size.as_bytes().last() {
        Some(b'K' | b'k') => (&size[..size.len() - 1], 1 << 10),
        Some(b'M' | b'm') => (&size[..size.len() - 1], 1 << 20),
        _ => (size, 1),
    };
    let bytes = digits.parse::<u64>().ok().and_then(|n| n.checked_mul(unit));
    match bytes {
        Some(b) if (4096..=MAX_SIZE).contains(&b) && b.is_multiple_of(4096) => Ok(b),
        _ => Err(format!(
            "size `{size}` must be a multiple of 4096 bytes from 4K to 256M (64M, 128M and \
             256M are the PCIE-5565 sizes)"
        )),
    }
}

fn parse_delay(delay: &str) -> Result<Duration, String> {
    let (digits, unit) = if let Some(d) = delay.strip_suffix("ns") {
        (d, 1)
    } else if let Some(d) = delay.strip_suffix("us") {
        (d, 1_000)
    } else if let Some(d) = delay.strip_suffix("ms") {
        (d, 1_000_000)
    } else {
        (delay, 1)
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .map(Duration::from_nanos)
        .filter(|d| *d <= MAX_DELAY)
        .ok_or_else(|| format!("delay `{delay}` must be N, Nns, Nus or Nms, at most 1 s"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(ring: &str, node: u16, size: u64) -> BoardConfig {
        BoardConfig {
            ring: ring.into(),
            node,
            size,
            delay: Duration::ZERO,
            link_up: true,
        }
    }

    /// A path no configuration names is no board, as on a PC without that
    /// card: `/dev/rfm2g7` used to open node 7 of a default ring, where a
    /// typo coupled with nobody. The refusal names the boards configured and
    /// the nearest.
    #[test]
    fn a_path_no_configuration_names_is_no_board_and_the_nearest_is_named() {
        for path in ["/dev/rfm2g0", "/dev/rfm2g7", r"\\.\rfm2g1", "/dev/null"] {
            let err = resolve_with(path, None, None).unwrap_err();
            assert_eq!(
                err,
                ConfigError::Unconfigured {
                    path: path.into(),
                    configured: Vec::new()
                }
            );
            let text = err.to_string();
            assert!(
                text.contains("no board is configured") && text.contains("RING/NODE"),
                "{text}"
            );
        }
        let devices = "/dev/rfm2g0 ring=lab node=1; /dev/rfm2g1 ring=lab node=2";
        let err = resolve_with(
            "/dev/rfm2g7",
            Some(devices),
            Some(("lab.conf", "/dev/rfm2g3 node=3 # a third\n")),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains(
                "no emulated board at `/dev/rfm2g7`: the configuration names /dev/rfm2g0, \
                 /dev/rfm2g1, /dev/rfm2g3 (did you mean `/dev/rfm2g0`?)"
            ),
            "{err}"
        );
    }

    #[test]
    fn self_describing_paths_need_no_configuration() {
        assert_eq!(
            resolve_with("/dev/rfm2g-sim/lab/3", None, None),
            Ok(board("lab", 3, 64 << 20))
        );
        assert_eq!(
            resolve_with("/dev/rfm2g-sim/t-1.x/255/1M", None, None),
            Ok(board("t-1.x", 255, 1 << 20))
        );
        for (path, part) in [
            ("/dev/rfm2g-sim/lab", "two or three parts"),
            ("/dev/rfm2g-sim/lab/256", "node `256`"),
            ("/dev/rfm2g-sim/a b/1", "ring `a b`"),
            ("/dev/rfm2g-sim/lab/1/1000", "size `1000`"),
            ("/dev/rfm2g-sim/lab/1/512M", "size `512M`"),
        ] {
            let err = resolve_with(path, None, None).unwrap_err().to_string();
            assert!(err.contains(part) && err.contains("RING/NODE"), "{err}");
        }
    }

    #[test]
    fn entries_come_from_the_variable_then_the_file() {
        let devices =
            "/dev/rfm2g0 ring=lab node=2 size=4K delay=500ns; /dev/rfm2g1 node=9 link=down";
        let file = "# lab\n/dev/rfm2g0 ring=other node=1\n/dev/rfm2g5 ring=f node=5 delay=2us\n";
        let got = |p| resolve_with(p, Some(devices), Some(("sim.conf", file)));
        assert_eq!(
            got("/dev/rfm2g0"),
            Ok(BoardConfig {
                delay: Duration::from_nanos(500),
                ..board("lab", 2, 4096)
            })
        );
        assert_eq!(
            got("/dev/rfm2g1"),
            Ok(BoardConfig {
                link_up: false,
                ..board("rfm2g-sim", 9, 64 << 20)
            })
        );
        assert_eq!(
            got("/dev/rfm2g5"),
            Ok(BoardConfig {
                delay: Duration::from_micros(2),
                ..board("f", 5, 64 << 20)
            })
        );
        // Named by neither: no board (each configured path named once).
        assert_eq!(
            got("/dev/rfm2g3"),
            Err(ConfigError::Unconfigured {
                path: "/dev/rfm2g3".into(),
                configured: ["/dev/rfm2g0", "/dev/rfm2g1", "/dev/rfm2g5"]
                    .map(String::from)
                    .to_vec()
            })
        );
    }

    #[test]
    fn malformed_entries_say_where_and_what() {
        for (devices, part) in [
            (
                "/dev/rfm2g0 ring=lab",
                "entry 1: `/dev/rfm2g0` has no node=0..255",
            ),
            (
                "x node=1;/dev/rfm2g0 node=1 colour=red",
                "entry 2: unknown key `colour`",
            ),
            ("/dev/rfm2g0 node", "entry 1: `node` is not key=value"),
            ("/dev/rfm2g0 node=1 delay=5s", "delay `5s`"),
            ("/dev/rfm2g0 node=1 link=maybe", "link `maybe`"),
        ] {
            let err = resolve_with("/dev/rfm2g0", Some(devices), None)
                .unwrap_err()
                .to_string();
            assert!(err.contains(part), "{err}");
        }
        let err = resolve_with(
            "/dev/rfm2g0",
            None,
            Some(("sim.conf", "\n/dev/rfm2g0 node=x")),
        )
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("sim.conf:2: node `x`"), "{err}");
    }
}
