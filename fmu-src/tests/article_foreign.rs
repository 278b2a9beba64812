//! The article's sender and receiver (rfm2g-sim/c, unchanged C programs)
//! couple with an FMU through `FlightData` declared as a foreign node in an
//! interface file, not the built-in seed layout: the FMU reads every packet
//! the sender writes, exactly, and the receiver every packet the FMU writes,
//! on two boards of an emulated ring, as on two PCs, and with the FMU on
//! `shm:` (the ring's own shared memory object, past its header, as a
//! program on a host without the card would map it). Each FMU's master is a
//! child process (each board needs its own `RFM2G_SIM_DEVICES`), and the
//! master acknowledges packets as the article's handshake asks, through a
//! foreign node too (the word at 128).

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{article_program, interface_fmu, sim_library, unique, Fmu, RingGuard};
use fmu_model::fmi2::*;

const H: f64 = 0.001;
const PACKETS: u64 = 300;
const MASTER_ENV: &str = "RFM_ARTICLE_FOREIGN_MASTER";

/// The article's header, as a lab writes its memory map: the packet at 0
/// (packed), the receiver's acknowledgement at 128, and the FMU node `sim`
/// placed past them. `{flight}` and `{ack}` say who writes which.
const ARTICLE: &str = r#"
name = "article"
memory_size = 65536
[[node]]
name = "sim"
slot = 0
signals = [ { name = "x", type = "Real" } ]
[[node]]
name = "flight"
offset = 0
align = "packed"
{flight}
fields = [
  { name = "header", type = "uint32" },
  { name = "packetId", type = "uint64" },
  { name = "timestamp", type = "double", unit = "s" },
  { name = "attitude", type = "float", count = 3, unit = "rad" },
  { name = "status", type = "uint8" },
  { name = "msg", type = "char[32]" },
]
[[node]]
name = "ack"
offset = 128
handshake = "none"
{ack}
fields = [ { name = "id", type = "uint32" } ]
"#;

/// The sender writes the packet (its id last, waiting for the ack before the
/// next); the FMU acknowledges.
fn from_the_sender() -> String {
    ARTICLE
        .replace(
            "{flight}",
            r#"handshake = { kind = "counter", field = "packetId", counts = "after-data" }"#,
        )
        .replace("{ack}", r#"writer = "sim""#)
}

/// The FMU writes the packet (the article's flag: header cleared, packet,
/// header set); the receiver acknowledges.
fn to_the_receiver() -> String {
    ARTICLE
        .replace(
            "{flight}",
            "writer = \"sim\"\nhandshake = { kind = \"flag\", field = \"header\", value = 0x55AA55AA }",
        )
        .replace("{ack}", "")
}

/// The packet the sender writes for `id` (sender.c), which the receiver
/// direction writes too.
fn packet(id: u64) -> (f32, f32, f32, u8, String) {
    (
        id as f32 * 0.001,
        -(id as f32) * 0.002,
        (id % 360) as f32,
        (id & 0xff) as u8,
        format!("Hello RFM {id}"),
    )
}

/// One line as the article's programs print it, parsed: id, timestamp,
/// attitude (their `%.9g` gives each float back exactly), status, msg.
fn parse(line: &str) -> (u64, f64, [f32; 3], u32, String) {
    let mut w = line.splitn(7, ' ');
    let mut next = || w.next().unwrap_or_else(|| panic!("a short line: {line}"));
    (
        next().parse().unwrap(),
        next().parse().unwrap(),
        [(); 3].map(|_| next().parse().unwrap()),
        next().parse().unwrap(),
        next().to_owned(),
    )
}

/// Where the FMU's master finds the ring: its own board of the emulated
/// ring, or the ring's `shm:` object.
#[derive(Clone, Copy)]
enum On {
    Board,
    Shm,
}

impl On {
    fn word(self) -> &'static str {
        match self {
            On::Board => "board",
            On::Shm => "shm",
        }
    }
}

/// The FMU of node `sim` of `interface`, started on `ring` as `on` says.
fn fmu(interface: &str, on: On, ring: &str) -> Fmu {
    // A shm: object's size is the memory_size every program sharing it
    // declares: the ring's header and its memory.
    let shm_size = rfm2g::ring::HEADER_LEN + 65536;
    let interface = match on {
        On::Board => interface.to_owned(),
        On::Shm => interface.replace("memory_size = 65536", &format!("memory_size = {shm_size}")),
    };
    let fmu = interface_fmu(&interface, "sim");
    fmu.set("syncMode", "free");
    let lib = sim_library();
    match on {
        On::Board => fmu.set_all(&[
            ("device", "/dev/rfm2g0"),
            ("rfm2gLibrary", lib.to_str().unwrap()),
        ]),
        On::Shm => fmu.set_all(&[
            ("device", &format!("shm:rfm2g-sim.{ring}")),
            ("regionOffset", &rfm2g::ring::HEADER_LEN.to_string()),
        ]),
    }
    assert_eq!(fmu.init(), fmi2OK, "{:?}", fmu.log());
    fmu
}

/// The master reading the sender: prints each new packet's values, exactly,
/// and acknowledges it.
fn read_packets(on: On, ring: &str) {
    let sim = fmu(&from_the_sender(), on, ring);
    let (mut last, mut k) = (0u64, 0u64);
    let deadline = Instant::now() + Duration::from_secs(60);
    while last < PACKETS {
        assert!(
            Instant::now() < deadline,
            "packet {last} was the last in 60 s"
        );
        assert_eq!(sim.step(k as f64 * H, H), fmi2OK, "{:?}", sim.log());
        k += 1;
        let id = sim.real("flight.packetId") as u64;
        if id == last {
            continue;
        }
        let a = sim.reals(&[
            "flight.attitude[0]",
            "flight.attitude[1]",
            "flight.attitude[2]",
        ]);
        println!(
            "packet {id} {:?} {:?} {:?} {:?} {} {}",
            sim.real("flight.timestamp"),
            a[0] as f32,
            a[1] as f32,
            a[2] as f32,
            sim.integer("flight.status"),
            sim.string("flight.msg"),
        );
        assert_eq!(sim.set("ack.id", &id.to_string()), fmi2OK);
        last = id;
    }
    // The last acknowledgement goes out with the next step.
    assert_eq!(sim.step(k as f64 * H, H), fmi2OK, "{:?}", sim.log());
    println!(
        "the FMU's reads of the sender's packets: {} retries, {} given up",
        sim.integer("flight.link.retries"),
        sim.integer("flight.link.gaveUp")
    );
}

/// The master writing for the receiver: packet after packet, each once the
/// receiver acknowledged the one before.
fn write_packets(on: On, ring: &str) {
    let sim = fmu(&to_the_receiver(), on, ring);
    let mut k = 0u64;
    let deadline = Instant::now() + Duration::from_secs(60);
    for id in 1..=PACKETS {
        let (r, p, y, status, msg) = packet(id);
        sim.set_all(&[
            ("flight.packetId", &id.to_string()),
            ("flight.timestamp", &(id as f64 * H).to_string()),
            ("flight.attitude[0]", &f64::from(r).to_string()),
            ("flight.attitude[1]", &f64::from(p).to_string()),
            ("flight.attitude[2]", &f64::from(y).to_string()),
            ("flight.status", &status.to_string()),
            ("flight.msg", &msg),
        ]);
        while sim.real("ack.id") as u64 != id {
            assert!(
                Instant::now() < deadline,
                "packet {id} unacknowledged after 60 s"
            );
            assert_eq!(sim.step(k as f64 * H, H), fmi2OK, "{:?}", sim.log());
            k += 1;
        }
    }
}

const RING_ENV: &str = "RFM_ARTICLE_FOREIGN_RING";

/// This test again, as the FMU's master (`role`), on `ring`.
fn child(test: &str, role: &str, ring: &str) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture"])
        .env(MASTER_ENV, role)
        .env(RING_ENV, ring)
        .env(
            "RFM2G_SIM_DEVICES",
            format!("/dev/rfm2g0 ring={ring} node=2 size=64K"),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The article's program `name`, on board 1 of `ring`; returns once the ring
/// exists, so that an FMU on `shm:` finds its object.
fn program(name: &str, args: &[&str], ring: &str) -> std::process::Child {
    let child = Command::new(article_program(name))
        .args(args)
        .env(
            "RFM2G_SIM_DEVICES",
            format!("/dev/rfm2g0 ring={ring} node=1 size=64K"),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let object = format!("/dev/shm/rfm2g-sim.{ring}");
    let size = (rfm2g::ring::HEADER_LEN + 65536) as u64;
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::metadata(&object).map_or(true, |m| m.len() < size) {
        assert!(
            Instant::now() < deadline,
            "{name} made no ring {object} in 10 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

fn finished(name: &str, child: std::process::Child) -> String {
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{name} failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The sender on board 1; the FMU's master reads, on `on`.
fn from_the_senders_packets(test: &str, on: On) {
    if let Ok(role) = std::env::var(MASTER_ENV) {
        assert_eq!(role, format!("read-{}", on.word()));
        return read_packets(on, &std::env::var(RING_ENV).unwrap());
    }
    let ring = unique(&format!("article-read-{}", on.word()));
    let _ring = RingGuard(ring.clone());
    let sender = program("sender", &["/dev/rfm2g0", &PACKETS.to_string()], &ring);
    let master = child(test, &format!("read-{}", on.word()), &ring);
    let sent = finished("sender", sender);
    let read = finished("the FMU's master", master);
    let packets: Vec<&str> = read
        .lines()
        .filter_map(|l| l.strip_prefix("packet "))
        .collect();
    assert_eq!(packets.len() as u64, PACKETS, "{read}");
    for (line, got) in sent.lines().zip(&packets) {
        let (id, t, a, status, msg) = parse(line);
        let fmu: Vec<&str> = got.splitn(7, ' ').collect();
        assert_eq!(fmu[0].parse::<u64>().unwrap(), id);
        assert_eq!(fmu[1].parse::<f64>().unwrap(), t, "packet {id}: timestamp");
        for i in 0..3 {
            assert_eq!(
                fmu[2 + i].parse::<f32>().unwrap(),
                a[i],
                "packet {id}: attitude[{i}]"
            );
        }
        assert_eq!(
            fmu[5].parse::<u32>().unwrap(),
            status,
            "packet {id}: status"
        );
        assert_eq!(fmu[6], msg, "packet {id}: msg");
    }
    let reads = read.lines().find(|l| l.starts_with("the FMU's reads"));
    println!("{}", reads.expect("the master says what its reads took"));
}

/// The receiver on board 1; the FMU's master writes, on `on`.
fn to_the_receivers_packets(test: &str, on: On) {
    if let Ok(role) = std::env::var(MASTER_ENV) {
        assert_eq!(role, format!("write-{}", on.word()));
        return write_packets(on, &std::env::var(RING_ENV).unwrap());
    }
    let ring = unique(&format!("article-write-{}", on.word()));
    let _ring = RingGuard(ring.clone());
    let receiver = program(
        "receiver",
        &["/dev/rfm2g0", &PACKETS.to_string(), "poll"],
        &ring,
    );
    let master = child(test, &format!("write-{}", on.word()), &ring);
    finished("the FMU's master", master);
    let received = finished("receiver", receiver);
    let lines: Vec<&str> = received.lines().collect();
    assert_eq!(lines.len() as u64, PACKETS, "{received}");
    for (n, line) in lines.iter().enumerate() {
        let id = n as u64 + 1;
        let (r, p, y, status, msg) = packet(id);
        assert_eq!(
            parse(line),
            (id, id as f64 * H, [r, p, y], u32::from(status), msg),
            "the receiver's line {id}"
        );
    }
}

#[test]
fn an_fmu_reads_every_packet_of_the_articles_sender_on_an_emulated_ring() {
    from_the_senders_packets(
        "an_fmu_reads_every_packet_of_the_articles_sender_on_an_emulated_ring",
        On::Board,
    );
}

#[test]
fn an_fmu_on_shm_reads_every_packet_of_the_articles_sender() {
    from_the_senders_packets(
        "an_fmu_on_shm_reads_every_packet_of_the_articles_sender",
        On::Shm,
    );
}

#[test]
fn the_articles_receiver_reads_every_packet_an_fmu_writes_on_an_emulated_ring() {
    to_the_receivers_packets(
        "the_articles_receiver_reads_every_packet_an_fmu_writes_on_an_emulated_ring",
        On::Board,
    );
}

#[test]
fn the_articles_receiver_reads_every_packet_an_fmu_on_shm_writes() {
    to_the_receivers_packets(
        "the_articles_receiver_reads_every_packet_an_fmu_on_shm_writes",
        On::Shm,
    );
}
