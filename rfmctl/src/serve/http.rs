//! The server's answers: the page, the JSON snapshot, the live stream
//! (server-sent events) and the charts. Read-only: nothing here writes the
//! memory, and each request runs in a thread of its own, so ten browsers
//! change nothing for the nodes (the memory is read by the sampler alone).

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use tiny_http::{Header, Method, Request, Response, Server};

use super::history::Source;
use super::{chart, Shared};

/// The page, with its script and styles (all inside the binary).
const PAGE: &str = include_str!("page.html");

/// How long a stream waits for a new snapshot before it sends a comment
/// line (which tells a closed connection apart).
const KEEP_ALIVE: Duration = Duration::from_secs(2);

/// Answers every request of `server`, each in a thread of its own.
pub fn answer(server: Arc<Server>, shared: Arc<Shared>) {
    for request in server.incoming_requests() {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || handle(request, &shared));
    }
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("an ASCII header")
}

fn text(status: u16, body: String, kind: &str) -> Response<std::io::Cursor<Vec<u8>>> {
    Response::from_string(body)
        .with_status_code(status)
        .with_header(header("Content-Type", kind))
        .with_header(header("Cache-Control", "no-store"))
}

/// The query's value of `key`, decoded.
fn query(url: &str, key: &str) -> Option<String> {
    let (_, q) = url.split_once('?')?;
    form_urlencoded::parse(q.as_bytes())
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}

fn handle(request: Request, shared: &Shared) {
    if request.method() != &Method::Get {
        let r = text(
            405,
            "only GET: the page is read-only\n".into(),
            "text/plain",
        );
        let _ = request.respond(r);
        return;
    }
    let url = request.url().to_owned();
    let path = url.split('?').next().unwrap_or("");
    let answer = match path {
        "/" | "/index.html" => Ok(text(200, PAGE.to_owned(), "text/html; charset=utf-8")),
        "/api/snapshot" => Ok(text(
            200,
            shared.snapshot().1.to_string(),
            "application/json",
        )),
        "/api/stream" => return stream(request, shared),
        "/chart/signal.svg" => signal_chart(&url, shared),
        "/chart/timing.svg" => timing_chart(&url, shared),
        _ => Err((
            404,
            format!(
                "no such page: {path} (the page is /, its data /api/snapshot and /api/stream)\n"
            ),
        )),
    };
    let response = answer.unwrap_or_else(|(status, why)| text(status, why, "text/plain"));
    let _ = request.respond(response);
}

type Answer = Result<Response<std::io::Cursor<Vec<u8>>>, (u16, String)>;

fn slot_of(url: &str) -> Result<u64, (u16, String)> {
    let slot = query(url, "slot").ok_or((400, "slot=N is missing\n".to_owned()))?;
    slot.parse::<u8>()
        .map(u64::from)
        .map_err(|_| (400, format!("slot `{slot}` is not a slot number (0-255)\n")))
}

/// Whose signal a chart draws: `slot=S` or `struct=NAME`.
fn source_of(url: &str) -> Result<Source, (u16, String)> {
    match (query(url, "slot"), query(url, "struct")) {
        (Some(_), None) => slot_of(url).map(Source::Slot),
        (None, Some(name)) => Ok(Source::Struct(name)),
        _ => Err((
            400,
            "give either slot=N (a node's signal) or struct=NAME (a struct's field)\n".to_owned(),
        )),
    }
}

fn signal_chart(url: &str, shared: &Shared) -> Answer {
    let source = source_of(url)?;
    let name = query(url, "signal").ok_or((400, "signal=NAME is missing\n".to_owned()))?;
    let seconds = match query(url, "seconds") {
        None => 30,
        Some(s) => s
            .parse::<u64>()
            .ok()
            .filter(|s| (10..=60).contains(s))
            .ok_or((400, format!("seconds `{s}` is not 10 to 60\n")))?,
    };
    let now_ms = shared.snapshot().0;
    let since = now_ms.saturating_sub(seconds * 1000);
    // The points copied out, so that the sampler never waits for a drawing.
    let (points, unit) = {
        let history = shared.history.lock().unwrap_or_else(|e| e.into_inner());
        let (points, unit) = history
            .series(&source, &name, since)
            .ok_or((404, format!("{source} holds no number `{name}`\n")))?;
        (points, unit.to_owned())
    };
    let svg = chart::signal(&name, &unit, &points, (now_ms, seconds)).map_err(|e| (500, e))?;
    Ok(text(200, svg, "image/svg+xml"))
}

fn timing_chart(url: &str, shared: &Shared) -> Answer {
    let slot = slot_of(url)?;
    let (_, snapshot) = shared.snapshot();
    let node = snapshot["slots"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|n| n["slot"].as_u64() == Some(slot))
        .ok_or((404, format!("no node in slot {slot}\n")))?;
    let stats = &node["stats"];
    let numbers = |v: &serde_json::Value| -> Vec<u64> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(serde_json::Value::as_u64)
            .collect()
    };
    let floors = numbers(&stats["histogram_floors_ns"]);
    if floors.is_empty() {
        return Err((404, format!("slot {slot} publishes no statistics\n")));
    }
    let name = node["node"].as_str().unwrap_or("?");
    let svg = chart::timing(
        name,
        &floors,
        &numbers(&stats["step_histogram"]),
        &numbers(&stats["wait_histogram"]),
    )
    .map_err(|e| (500, e))?;
    Ok(text(200, svg, "image/svg+xml"))
}

/// Server-sent events: each new snapshot as one `data:` line, until the
/// browser goes.
fn stream(request: Request, shared: &Shared) {
    let mut out = request.into_writer();
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\
                Connection: close\r\n\r\n";
    if out.write_all(head.as_bytes()).is_err() {
        return;
    }
    let mut seen = 0;
    loop {
        let next = shared.wait_newer(seen, KEEP_ALIVE);
        let sent = match &next {
            Some((version, json)) => {
                seen = *version;
                write!(out, "data: {json}\n\n")
            }
            None => out.write_all(b": waiting\n\n"),
        };
        if sent.and_then(|()| out.flush()).is_err() {
            return;
        }
    }
}
