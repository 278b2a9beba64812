//! The Zenoh session every bridge (and the benchmark's ping-pong) opens: tuned
//! for latency, not throughput. Each choice and what it costs is in the
//! book's "PCs without cards" (`docs/src/guide/bridge.md`).

use std::str::FromStr;

use zenoh::config::EndPoint;
use zenoh::pubsub::Publisher;
use zenoh::qos::{CongestionControl, Priority};
use zenoh::{Config, Session, Wait};

/// Why a session could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error(
        "endpoint `{endpoint}` cannot be parsed ({reason}): give a Zenoh locator such as \
         tcp/192.0.2.10:7447 or tcp/[::1]:7447"
    )]
    Endpoint { endpoint: String, reason: String },
    #[error(
        "endpoint `{endpoint}` is not TCP: this build carries TCP links only, which keep \
         each writer's frames in order (give tcp/HOST:PORT)"
    )]
    Protocol { endpoint: String },
    #[error("cannot configure Zenoh: {0}")]
    Config(String),
    #[error(
        "cannot open the Zenoh session listening on {listen}: {reason} (is the port in use by \
         another rfm-bridge or program? pick another with --listen)"
    )]
    Open { listen: String, reason: String },
}

/// The endpoints a session listens on and connects to.
#[derive(Debug, Clone, Default)]
pub struct Endpoints {
    pub listen: Vec<String>,
    pub connect: Vec<String>,
}

impl Endpoints {
    /// Checks every endpoint parses as a TCP locator, naming the first that does not.
    pub fn check(&self) -> Result<(), NetError> {
        for e in self.listen.iter().chain(&self.connect) {
            let parsed = EndPoint::from_str(e).map_err(|err| NetError::Endpoint {
                endpoint: e.clone(),
                reason: plain(err),
            })?;
            if parsed.protocol().as_str() != "tcp" {
                return Err(NetError::Protocol {
                    endpoint: e.clone(),
                });
            }
            // Zenoh parses `tcp/HOST` (no port) and fails only when it binds.
            let address = parsed.address();
            let port = address
                .as_str()
                .rsplit_once(':')
                .and_then(|(_, p)| p.parse::<u16>().ok());
            if port.is_none() {
                return Err(NetError::Endpoint {
                    endpoint: e.clone(),
                    reason: "no port".into(),
                });
            }
        }
        Ok(())
    }
}

/// Zenoh's error text without the source locations it appends (` at
/// /path/file.rs:61.`), which name its code, not the user's input.
pub fn plain(e: impl std::fmt::Display) -> String {
    let mut s = e.to_string();
    while let Some(at) = s.find(" at /") {
        let Some(rs) = s[at..].find(".rs:") else {
            break;
        };
        let mut end = at + rs + 4;
        let bytes = s.as_bytes();
        while end < s.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        if end < s.len() && bytes[end] == b'.' {
            end += 1;
        }
        s.replace_range(at..end, "");
    }
    s
}

fn json_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("{i:?}")).collect();
    format!("[{}]", quoted.join(","))
}

/// The configuration: peer mode, only the given endpoints, no multicast
/// scouting; a connect that fails is retried from 100 ms, up to every 1 s.
pub fn config(endpoints: &Endpoints) -> Result<Config, NetError> {
    endpoints.check()?;
    let mut c = Config::default();
    let settings = [
        ("mode", "\"peer\"".to_owned()),
        ("listen/endpoints", json_list(&endpoints.listen)),
        ("connect/endpoints", json_list(&endpoints.connect)),
        // Zenoh's peer default (no start-up timeout, no exit on failure)
        // connects in the background and again after a link is lost: a
        // bridge started before its peer, or whose peer restarted, keeps
        // trying, at this pace.
        (
            "connect/retry",
            "{period_init_ms: 100, period_max_ms: 1000, period_increase_factor: 2}".into(),
        ),
        ("listen/exit_on_failure", "true".into()),
        ("scouting/multicast/enabled", "false".into()),
    ];
    for (key, value) in settings {
        c.insert_json5(key, &value)
            .map_err(|e| NetError::Config(format!("{key} = {value}: {}", plain(e))))?;
    }
    Ok(c)
}

/// Opens the session.
pub fn open(endpoints: &Endpoints) -> Result<Session, NetError> {
    let c = config(endpoints)?;
    zenoh::open(c).wait().map_err(|e| NetError::Open {
        listen: if endpoints.listen.is_empty() {
            "no endpoint".into()
        } else {
            endpoints.listen.join(", ")
        },
        reason: plain(e),
    })
}

/// A publisher as every bridge declares it: express (each sample leaves at
/// once instead of waiting to be batched), blocking when the link is
/// congested (a frame is never dropped), at the highest priority.
pub fn publisher(session: &Session, key: &str) -> Result<Publisher<'static>, NetError> {
    session
        .declare_publisher(key.to_owned())
        .express(true)
        .congestion_control(CongestionControl::Block)
        .priority(Priority::RealTime)
        .wait()
        .map_err(|e| NetError::Config(format!("publisher on {key}: {}", plain(e))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_locations_are_cut_from_zenoh_errors() {
        assert_eq!(
            plain("bound to x: [in use (os error 98) at /r/tcp.rs:61.] at /r/unicast.rs:338. end"),
            "bound to x: [in use (os error 98)] end"
        );
    }

    #[test]
    fn endpoints_that_are_not_tcp_locators_with_a_port_are_named() {
        let bad = |e: &str| Endpoints {
            listen: vec!["tcp/127.0.0.1:7447".into()],
            connect: vec![e.into()],
        };
        assert!(bad("tcp/127.0.0.1:7448").check().is_ok());
        for e in [
            "127.0.0.1:7447",
            "tcp/127.0.0.1",
            "udp/127.0.0.1:7447",
            "nonsense",
        ] {
            let err = bad(e).check().unwrap_err().to_string();
            assert!(err.contains(&format!("`{e}`")), "{err}");
        }
    }
}
