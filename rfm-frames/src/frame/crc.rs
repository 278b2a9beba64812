//! The frame CRC (CRC-32C of a frame from byte 8 on), computed in three lanes.
//!
//! Every step computes two: the writer seals its frame, the reader checks its
//! peer's. The CRC-32C instruction has a latency of 3 cycles and a throughput of
//! one per cycle, so one chain over a frame is latency-bound: over the attitude
//! frame's 120 bytes, 15.6 ns through the crc32c crate on the benchmark VM. Three
//! chains over thirds of the words, joined by two table-driven shifts, took
//! 11.4 ns. The result is the standard CRC-32C, bit for bit (the tests compare it
//! with the crc32c crate), so the frame format does not change.
//!
//! Joining rests on the CRC's linearity: for the raw register (no inversions),
//! `crc(s, A‖B) = shift(crc(s, A), |B|) ⊕ crc(0, B)`, where `shift(x, n)` runs `x`
//! over `n` zero bytes. That shift is linear in `x`, so it is a table per byte of
//! `x` (4 × 256 words), built once per frame length and shared.

use std::sync::{Arc, Mutex, Weak};

type Table = [[u32; 256]; 4];

/// The three-lane CRC of frames of one length.
pub(crate) struct Lanes {
    /// Words (u64) covered: the frame from byte 8 on.
    words: usize,
    /// Words per lane in the first two lanes (the third takes the rest).
    lane: usize,
    /// Shifts over the second and third lanes, and over the third.
    over_two: Box<Table>,
    over_one: Box<Table>,
}

impl std::fmt::Debug for Lanes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lanes")
            .field("words", &self.words)
            .finish_non_exhaustive()
    }
}

/// The lanes for `words` words, shared by every frame of that length; `None`
/// where the CPU has no CRC-32C instruction (the crc32c crate's path then).
///
/// The cache holds the lanes weakly: their tables are freed with the last frame
/// that uses them, so a library unloaded after its last instance leaves no
/// tables behind in the master's heap (a static's contents are never dropped).
pub(crate) fn lanes(words: usize) -> Option<Arc<Lanes>> {
    if !supported() || words < 3 {
        return None;
    }
    static CACHE: Mutex<Vec<Weak<Lanes>>> = Mutex::new(Vec::new());
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache.retain(|weak| weak.strong_count() > 0);
    if let Some(lanes) = cache
        .iter()
        .filter_map(Weak::upgrade)
        .find(|lanes| lanes.words == words)
    {
        return Some(lanes);
    }
    let lanes = Arc::new(Lanes::new(words));
    cache.push(Arc::downgrade(&lanes));
    Some(lanes)
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
fn supported() -> bool {
    std::arch::is_x86_feature_detected!("sse4.2")
}

#[cfg(not(all(target_arch = "x86_64", not(miri))))]
fn supported() -> bool {
    false
}

impl Lanes {
    fn new(words: usize) -> Lanes {
        let lane = words / 3;
        Lanes {
            words,
            lane,
            over_two: table((words - lane) * 8),
            over_one: table((words - 2 * lane) * 8),
        }
    }

    /// The CRC-32C of `data` (its bytes little-endian, as a frame stores them).
    pub(crate) fn crc(&self, data: &[u64]) -> u32 {
        assert_eq!(data.len(), self.words, "lanes are built per frame length");
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        // SAFETY: `Lanes` exist only where SSE4.2 was detected (`lanes`).
        return unsafe { self.crc_sse42(data) };
        #[cfg(not(all(target_arch = "x86_64", not(miri))))]
        unreachable!("lanes are never built without the instruction")
    }

    #[cfg(all(target_arch = "x86_64", not(miri)))]
    #[target_feature(enable = "sse4.2")]
    fn crc_sse42(&self, data: &[u64]) -> u32 {
        use std::arch::x86_64::_mm_crc32_u64;
        let (first, rest) = data.split_at(self.lane);
        let (second, third) = rest.split_at(self.lane);
        let (mut a, mut b, mut c) = (u64::from(u32::MAX), 0u64, 0u64);
        for ((x, y), z) in first.iter().zip(second).zip(third) {
            a = _mm_crc32_u64(a, u64::from_le(*x));
            b = _mm_crc32_u64(b, u64::from_le(*y));
            c = _mm_crc32_u64(c, u64::from_le(*z));
        }
        for z in &third[self.lane..] {
            c = _mm_crc32_u64(c, u64::from_le(*z));
        }
        let raw = shift(&self.over_two, a as u32) ^ shift(&self.over_one, b as u32) ^ c as u32;
        !raw
    }
}

fn shift(table: &Table, x: u32) -> u32 {
    let [b0, b1, b2, b3] = x.to_le_bytes();
    table[0][usize::from(b0)]
        ^ table[1][usize::from(b1)]
        ^ table[2][usize::from(b2)]
        ^ table[3][usize::from(b3)]
}

/// CRC-32C's polynomial, bit-reversed as the register holds it.
const POLY: u32 = 0x82F6_3B78;

/// The shift over `bytes` zero bytes (a multiple of 8), as a table.
fn table(bytes: usize) -> Box<Table> {
    // Running the raw register over zeros is linear in the register: shift
    // each of its 32 bits once (the crate's combine does it in log(bytes)
    // steps; running it over the zeros took 25 s for a 16 MiB frame), then
    // every entry is the XOR of its bits' shifts. `crc32c_combine(x, 0, n)`
    // is that shift of x: combining with the empty CRC of n zeros.
    //
    // The shift is multiplication by x^(8·bytes) modulo the polynomial, and
    // bit b of the (reflected) register is x^(31−b), so bit b−1 is x times bit
    // b, and its shift is x times bit b's: one zero bit run through the
    // register. One combine and 31 such steps give all 32 shifts; a combine per
    // bit built every node's tables 32 times slower (60 % of the handshake
    // model's time, unoptimized).
    let mut basis = [0u32; 32];
    basis[31] = crc32c::crc32c_combine(1 << 31, 0, bytes);
    for b in (0..31).rev() {
        let above = basis[b + 1];
        basis[b] = (above >> 1) ^ if above & 1 == 1 { POLY } else { 0 };
    }
    // Each entry is the one with its lowest bit cleared, XOR that bit's shift.
    let mut t = Box::new([[0u32; 256]; 4]);
    for (i, row) in t.iter_mut().enumerate() {
        for j in 1..256 {
            row[j] = row[j & (j - 1)] ^ basis[8 * i + j.trailing_zeros() as usize];
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_the_standard_crc32c_for_every_length() {
        if !supported() {
            return;
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for words in 3..200 {
            let data: Vec<u64> = (0..words)
                .map(|_| {
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    seed
                })
                .collect();
            let bytes: Vec<u8> = data.iter().flat_map(|w| w.to_le_bytes()).collect();
            let lanes = lanes(words).expect("supported");
            assert_eq!(lanes.crc(&data), crc32c::crc32c(&bytes), "{words} words");
        }
    }

    #[test]
    fn each_entry_is_the_crates_shift_of_its_bits() {
        for bytes in [8, 16, 120, 4096, 1 << 24] {
            let t = table(bytes);
            for (i, row) in t.iter().enumerate() {
                for j in [0u32, 1, 0x80, 0xa5, 0xff] {
                    let x = j << (8 * i);
                    let want = crc32c::crc32c_combine(x, 0, bytes);
                    assert_eq!(row[j as usize], want, "{bytes} bytes, byte {i}, {j:#x}");
                }
            }
        }
    }
}
