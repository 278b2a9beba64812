//! `serve`'s refusals, each with its exit code and what to do (the page
//! itself is tested in a real browser: tests/python/test_serve.py).

use super::*;

#[test]
fn serve_refuses_a_port_in_use_and_a_memory_that_is_not_there() {
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let listen = format!("127.0.0.1:{port}");
    let (code, _, err) = run(&["serve", "shm:no-such-lab", "--listen", &listen]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("cannot listen on {listen}")) && err.contains("give --listen"),
        "{err}"
    );
    drop(held);
    let (code, _, err) = run(&["serve", "shm:no-such-lab", "--listen", &listen]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("`shm:no-such-lab` does not exist"), "{err}");
}

/// One GET (or `method`) of `path`: the status and the body.
fn http(port: u16, method: &str, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap();
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    (status, body)
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Two memories (two hosts' of one lab, as rfm-bridge joins them), a node
/// running on each: one page, both nodes, each from its own memory; and
/// the server's answers to what it does not serve.
#[test]
fn serve_shows_the_nodes_of_several_memories_on_one_page_and_refuses_what_it_does_not_serve() {
    let (m0, m1) = (shm(1 << 20), shm(1 << 20));
    let (_a, _b) = (running_node(&m0, 0), running_node(&m1, 1));
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut serve = Following::new(
        Command::new(env!("CARGO_BIN_EXE_rfmctl"))
            .args(["serve", &m0.device, &m1.device, "--listen", &listen])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    serve.until("rfmctl: serving");
    // The first snapshot is taken a tenth of a second after the start.
    let deadline = Instant::now() + Duration::from_secs(10);
    let snapshot = loop {
        let (status, body) = http(port, "GET", "/api/snapshot");
        assert_eq!(status, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        if v["slots"].as_array().is_some_and(|s| s.len() == 2) || Instant::now() > deadline {
            break v;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let slot = |i: usize| &snapshot["slots"][i];
    assert_eq!(
        (slot(0)["slot"].as_u64(), slot(1)["slot"].as_u64()),
        (Some(0), Some(1)),
        "{snapshot}"
    );
    assert_eq!(slot(0)["memory"], json!(m0.device), "{snapshot}");
    assert_eq!(slot(1)["memory"], json!(m1.device), "{snapshot}");
    assert_eq!(snapshot["memories"], json!([m0.device, m1.device]));
    assert!(
        snapshot["latency_holds"]
            .as_str()
            .unwrap()
            .contains("synchronised"),
        "{snapshot}"
    );
    for (path, status, says) in [
        ("/nothing", 404, "no such page: /nothing"),
        (
            "/chart/signal.svg?slot=x&signal=roll",
            400,
            "slot `x` is not a slot number",
        ),
        (
            "/chart/signal.svg?slot=0&struct=s&signal=a",
            400,
            "give either slot=N",
        ),
        ("/chart/signal.svg?slot=0", 400, "signal=NAME is missing"),
        (
            "/chart/signal.svg?slot=0&signal=nothing",
            404,
            "slot 0 holds no number `nothing`",
        ),
        (
            "/chart/signal.svg?slot=0&signal=roll&seconds=5",
            400,
            "seconds `5` is not 10 to 60",
        ),
        ("/chart/timing.svg?slot=7", 404, "no node in slot 7"),
    ] {
        let (got, body) = http(port, "GET", path);
        assert_eq!(got, status, "{path}: {body}");
        assert!(body.contains(says), "{path}: {body}");
    }
    let (got, body) = http(port, "POST", "/api/snapshot");
    assert_eq!(got, 405, "{body}");
    assert!(body.contains("read-only"), "{body}");
    serve.child.kill().unwrap();
    serve.finish();
}

/// An interface file none of whose nodes runs on the memory is refused,
/// naming what to do.
#[test]
fn serve_refuses_an_interface_file_of_other_nodes() {
    let m = shm(1 << 20);
    let _node = running_node(&m, 0);
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/interfaces/lab_struct.toml"
    );
    let listen = format!("127.0.0.1:{}", free_port());
    let (code, _, err) = run(&["serve", &m.device, "--interface", file, "--listen", &listen]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("none of")
            && err.contains("runs on this memory")
            && err.contains("give the file its FMUs were built from"),
        "{err}"
    );
}
