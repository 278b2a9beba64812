//! Frame write, read and write+read of the framed layout, against plain 64-byte
//! copies measured in the same run (the target: framed write+read within
//! 5x of a plain 64-byte copy), and what liveness costs (a beat, a reading of a
//! peer's liveness words). `cargo bench -p rfm-core --bench frames`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use rfm_core::link::Sample;
use rfm_frames::frame::framed::{FrameBuf, Header, SyncMode};
use rfm_frames::frame::seed::FlightData;
use rfm_frames::frame::Message;
use rfm_frames::slot::{FramedReader, FramedWriter, Ring, SeedReader, SeedWriter};
use rfm_interface as interface;
use rfm_memory::{Device, OpenOptions, Region};

fn region(name: &str) -> Region {
    let d = Device::open(&format!("loopback:bench-{name}"), &OpenOptions::default()).unwrap();
    d.map(0, interface::attitude_region_len(1)).unwrap()
}

/// Slot 0's area of `r` (attitude preset).
fn area(r: &Region) -> Region {
    rfm_frames::area::window(r, &interface::attitude_area(0)).unwrap()
}

/// The attitude frame of `step` (payload filled, not sealed) and its header.
fn sample(step: u64) -> (FrameBuf, Header) {
    let mut frame = FrameBuf::new(Ring::of(&interface::attitude_area(0)).payload_len);
    Sample {
        sim_time: step as f64 * 1e-3,
        attitude: [0.1, 0.2, 0.3],
        status: 1,
        message: Message::new("Hello RFM").unwrap(),
    }
    .write(frame.payload_mut());
    let header = Header {
        writer_slot: 0,
        lag: 0,
        mode: SyncMode::Lockstep,
        epoch: 0x1234_5678_9abc_def0,
        fingerprint: 0x0fed_cba9_8765_4321,
        step,
        sim_time: step as f64 * 1e-3,
        wall_clock_ns: 1_700_000_000_000_000_000,
    };
    (frame, header)
}

fn baselines(c: &mut Criterion) {
    let mut g = c.benchmark_group("copy64");
    let src = [7u8; 64];
    let mut dst = [0u8; 64];
    g.bench_function("memcpy_write_read", |b| {
        b.iter(|| {
            let mut mem = [0u8; 64];
            mem.copy_from_slice(black_box(&src));
            dst.copy_from_slice(black_box(&mem));
            black_box(&dst);
        })
    });
    let r = region("copy64");
    g.bench_function("region_write_read", |b| {
        b.iter(|| {
            r.write(0, black_box(&src)).unwrap();
            r.read(0, black_box(&mut dst)).unwrap();
            black_box(&dst);
        })
    });
    g.finish();
}

fn framed_layout(c: &mut Criterion) {
    let mut g = c.benchmark_group("framed");
    let r = region("framed");
    let ring = Ring::of(&interface::attitude_area(0));
    let mut writer = FramedWriter::new(area(&r), ring).unwrap();
    let reader = FramedReader::new(area(&r), ring).unwrap();
    let (mut f, h) = sample(3);
    let mut buf = reader.buffer();
    g.bench_function("seal", |b| b.iter(|| f.seal(black_box(&h))));
    g.bench_function("check", |b| b.iter(|| black_box(f.check().unwrap())));
    g.bench_function("write", |b| {
        b.iter(|| writer.publish(&mut f, black_box(&h)).unwrap())
    });
    g.bench_function("read", |b| {
        b.iter(|| black_box(reader.read_entry(black_box(3), &mut buf).unwrap()))
    });
    g.bench_function("write_read", |b| {
        b.iter(|| {
            writer.publish(&mut f, black_box(&h)).unwrap();
            black_box(reader.read_entry(black_box(3), &mut buf).unwrap())
        })
    });
    g.finish();
}

fn seed_layout(c: &mut Criterion) {
    let mut g = c.benchmark_group("seed");
    let r = region("seed");
    let mut writer = SeedWriter::new(area(&r)).unwrap();
    let reader = SeedReader::new(area(&r)).unwrap();
    let p = FlightData {
        packet_id: 9,
        timestamp: 1.0,
        attitude: [0.1, 0.2, 0.3],
        status: 1,
        msg: Message::new("Hello RFM").unwrap(),
    };
    g.bench_function("write_read", |b| {
        b.iter(|| {
            writer.publish(black_box(&p)).unwrap();
            black_box(reader.read().unwrap())
        })
    });
    g.finish();
}

/// What liveness adds: a beat (the heartbeat thread's work, every 10 ms) and a
/// reading of a peer's liveness words (a free-mode step's, at most once per ms).
fn liveness(c: &mut Criterion) {
    use rfm_core::link::liveness::Beater;
    use rfm_core::link::ownership::block::Words;
    use rfm_core::link::ownership::PeerWatch;
    let mut g = c.benchmark_group("liveness");
    let r = region("liveness");
    let slot = area(&r);
    // The owner word holds the beater's token, as after a claim.
    let epoch = 0x1234_5679u64;
    slot.store_u32(
        rfm_frames::area::LIVENESS_OFFSET,
        epoch as u32,
        std::sync::atomic::Ordering::Relaxed,
    )
    .unwrap();
    let mut beater = Beater::new(slot.clone(), epoch).unwrap();
    g.bench_function("beat", |b| b.iter(|| black_box(beater.beat().unwrap())));
    let now = std::time::Instant::now();
    let mut watch = PeerWatch::new(Words::read(&slot).unwrap(), now);
    g.bench_function("read_and_observe", |b| {
        b.iter(|| black_box(watch.observe(Words::read(black_box(&slot)).unwrap(), now)))
    });
    g.finish();
}

/// Times `f` once every 300 ns, as a coupling's steps come (the rest of the
/// step not timed): a producer flat out would only measure the memory's
/// bandwidth.
fn paced(b: &mut criterion::Bencher, mut f: impl FnMut(u64)) {
    let pace = std::time::Duration::from_nanos(300);
    b.iter_custom(|iters| {
        let mut spent = std::time::Duration::ZERO;
        for i in 0..iters {
            let t0 = std::time::Instant::now();
            f(i);
            spent += t0.elapsed();
            while t0.elapsed() < pace {}
        }
        spent
    })
}

/// What recording adds to a step (`recordFile`): the two records a node of two
/// queues, the frame it published and the one it took (stamped with the step's
/// time, which the link has read anyway), with the writer thread draining them
/// (into nothing) as it would into a file. The records' cost is
/// `step_records_paced` less `timer_paced`, the cost of timing.
fn recording(c: &mut Criterion) {
    use rfm_record::{queue_capacity, Header, Kind, Recorder};
    let mut g = c.benchmark_group("recording");
    let (mut frame, header) = sample(1);
    frame.seal(&header);
    let published = frame.bytes().to_vec();
    let taken = published.clone();
    let head = Header::for_interface(&interface::attitude(0, 1), Some(0), String::new());
    let capacity = queue_capacity(published.len(), 2);
    let mut recorder =
        Recorder::with_sink("bench.rec".as_ref(), std::io::sink(), &head, capacity).unwrap();
    g.bench_function("step_records_paced", |b| {
        paced(b, |i| {
            let now = 1_700_000_000_000_000_000 + i;
            black_box(recorder.record(Kind::Published, 0, now, black_box(&published)));
            black_box(recorder.record(Kind::Taken, 1, now, black_box(&taken)));
        })
    });
    g.bench_function("timer_paced", |b| {
        paced(b, |i| {
            black_box(i);
        })
    });
    g.finish();
    // A dropped record skips the copy: a run that dropped is no measurement.
    eprintln!(
        "recording/step_records_paced: {} records dropped",
        recorder.dropped()
    );
}

criterion_group!(
    benches,
    baselines,
    framed_layout,
    seed_layout,
    liveness,
    recording
);
criterion_main!(benches);
