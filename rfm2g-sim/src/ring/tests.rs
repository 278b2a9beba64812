use super::node::RESERVED;
use super::{access, NodeState};
use crate::abi::Code;
use std::sync::atomic::Ordering;

#[test]
fn clear_frees_a_slot_a_dead_sender_left_reserved() {
    // SAFETY: NodeState is atomics only, for which all-zero is a valid value.
    let node: NodeState = unsafe { std::mem::zeroed() };
    node.enable(1).unwrap();
    // A sender killed between reserving the slot and publishing the event.
    node.slots[1].store(RESERVED | 7, Ordering::Release);
    assert!(!node.deliver(1, 2, 9, 0), "the slot looks taken");
    node.clear(1);
    assert!(node.deliver(1, 2, 9, 0), "cleared, it takes events again");
    assert_eq!(node.count(1), 1);
}

/// A page-aligned stand-in for ring memory.
#[repr(C, align(4096))]
struct Page([u8; 4096]);

#[test]
fn copies_at_any_offset_and_length_round_trip() {
    let mut page = Page([0; 4096]);
    let base = page.0.as_mut_ptr();
    let data: Vec<u8> = (0..64u8).map(|b| b.wrapping_mul(37) ^ 0x5a).collect();
    for offset in 0..9u32 {
        for len in [0usize, 1, 3, 4, 5, 8, 13, 64] {
            let mut back = vec![0u8; len];
            // SAFETY: `base` is page-aligned and 4096 bytes long.
            unsafe {
                access::write(base, 4096, offset, &data[..len]).unwrap();
                access::read(base, 4096, offset, &mut back).unwrap();
            }
            assert_eq!(back, &data[..len], "offset {offset} len {len}");
        }
    }
    // Little-endian words, as the API presents memory.
    // SAFETY: as above.
    unsafe {
        access::poke32(base, 4096, 100, 0x0403_0201).unwrap();
        assert_eq!(access::peek8(base, 4096, 101), Ok(2));
        assert_eq!(access::peek16(base, 4096, 102), Ok(0x0403));
    }
}

#[test]
fn nothing_outside_the_memory_is_touched() {
    let mut page = Page([0; 4096]);
    let base = page.0.as_mut_ptr();
    let mut buf = [0u8; 8];
    // SAFETY: the memory is declared 4000 bytes, inside the 4096 of `page`: any
    // access the checks let through past 4000 would show in the last bytes.
    unsafe {
        assert_eq!(
            access::write(base, 4000, 3996, &[1; 8]),
            Err(Code::OUT_OF_RANGE)
        );
        assert_eq!(
            access::read(base, 4000, u32::MAX, &mut buf),
            Err(Code::OUT_OF_RANGE)
        );
        assert_eq!(access::poke32(base, 4000, 4000, 1), Err(Code::OUT_OF_RANGE));
        assert_eq!(access::poke16(base, 4000, 3999, 1), Err(Code::OUT_OF_RANGE));
        assert_eq!(
            access::poke16(base, 4000, 3, 1),
            Err(Code::UNALIGNED_OFFSET)
        );
        access::write(base, 4000, 3992, &[7; 8]).unwrap();
    }
    assert!(page.0[3992..4000].iter().all(|b| *b == 7));
    assert!(page.0[4000..].iter().all(|b| *b == 0));
}
