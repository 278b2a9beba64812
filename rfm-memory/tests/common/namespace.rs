//! A test run again in a private mount namespace, with a filesystem of its
//! own to fill.

/// Runs test `test` of this test binary again in a private mount namespace
/// (`unshare -m`), after `mount` (a shell command: `$2` is `args`' first),
/// with `env` set so that it knows it is the child: a filesystem of its own
/// to fill, harming nobody. Fails, saying why, where the namespace is
/// refused (run as root, as CI does). The child's stdout.
pub fn in_private_mount(
    test: &str,
    mount: &str,
    env: (&str, &std::ffi::OsStr),
    args: &[&std::ffi::OsStr],
) -> String {
    let out = std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c"])
        .arg(format!(
            "{mount} && exec \"$0\" --exact \"$1\" --include-ignored --nocapture"
        ))
        .arg(std::env::current_exe().unwrap())
        .arg(test)
        .args(args)
        .env(env.0, env.1)
        .output()
        .expect("unshare runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !(stderr.contains("Operation not permitted") || stderr.contains("Permission denied"))
            || stdout.contains("running 1 test"),
        "a private mount namespace was refused here (run as root, as CI does): {stderr}"
    );
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "the run in a private mount namespace failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    stdout
}
