//! Zenoh's own floor for the benchmark: a 128-byte lockstep ping-pong between
//! two processes, with the bridge's configuration and publication settings.
//!
//! `zenoh-pingpong pong --listen ENDPOINT` answers every ping;
//! `zenoh-pingpong ping --connect ENDPOINT --count N --out FILE` sends N pings
//! one at a time, and writes each round trip (ns, u64 little-endian) to FILE.

fn main() -> std::process::ExitCode {
    match rfm_bridge::pingpong::main(std::env::args().skip(1).collect()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("zenoh-pingpong: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
