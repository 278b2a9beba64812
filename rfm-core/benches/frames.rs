//! Frame write, read and write+read of the framed layout, against plain 64-byte
//! copies measured in the same run (the target: framed write+read within
//! 5x of a plain 64-byte copy), and what liveness costs (a beat, a reading of a
//! peer's liveness words). `cargo bench -p rfm-core --bench frames`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use rfm_core::frame::framed::{self, Frame, SyncMode};
use rfm_core::frame::seed::FlightData;
use rfm_core::frame::{self, Message};
use rfm_core::slot::{FramedReader, FramedWriter, SeedReader, SeedWriter};
use rfm_core::{Device, OpenOptions, Region};

fn region(name: &str) -> Region {
    let d = Device::open(&format!("loopback:bench-{name}"), &OpenOptions::default()).unwrap();
    d.map(0, frame::region_len(1)).unwrap()
}

fn sample(step: u64) -> Frame {
    Frame {
        writer_slot: 0,
        status: 1,
        lag: 0,
        mode: SyncMode::Lockstep,
        epoch: 0x1234_5678_9abc_def0,
        ack_epoch: 0x0fed_cba9_8765_4321,
        step,
        sim_time: step as f64 * 1e-3,
        wall_clock_ns: 1_700_000_000_000_000_000,
        attitude: [0.1, 0.2, 0.3],
        message: Message::new("Hello RFM").unwrap(),
    }
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
    let mut writer = FramedWriter::new(frame::slot(&r, 0).unwrap()).unwrap();
    let reader = FramedReader::new(frame::slot(&r, 0).unwrap()).unwrap();
    let f = sample(3);
    g.bench_function("encode", |b| {
        b.iter(|| black_box(framed::encode(black_box(&f))))
    });
    let bytes = framed::encode(&f);
    g.bench_function("decode", |b| {
        b.iter(|| black_box(framed::decode(black_box(&bytes))))
    });
    g.bench_function("write", |b| {
        b.iter(|| writer.publish(black_box(&f)).unwrap())
    });
    g.bench_function("read", |b| {
        b.iter(|| black_box(reader.read_entry(black_box(3)).unwrap()))
    });
    g.bench_function("write_read", |b| {
        b.iter(|| {
            writer.publish(black_box(&f)).unwrap();
            black_box(reader.read_entry(black_box(3)).unwrap())
        })
    });
    g.finish();
}

fn seed_layout(c: &mut Criterion) {
    let mut g = c.benchmark_group("seed");
    let r = region("seed");
    let mut writer = SeedWriter::new(frame::slot(&r, 0).unwrap()).unwrap();
    let reader = SeedReader::new(frame::slot(&r, 0).unwrap()).unwrap();
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
    use rfm_core::link::liveness::{Beater, PeerWatch, Words};
    let mut g = c.benchmark_group("liveness");
    let r = region("liveness");
    let slot = frame::slot(&r, 0).unwrap();
    // The owner word holds the beater's token, as after a claim.
    let epoch = 0x1234_5679u64;
    slot.store_u32(
        frame::LIVENESS_OFFSET,
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

criterion_group!(benches, baselines, framed_layout, seed_layout, liveness);
criterion_main!(benches);
