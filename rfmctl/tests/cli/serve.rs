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
