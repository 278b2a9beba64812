//! A lab's own packed C structs, which programs other than our FMU write at
//! fixed places of the memory: their C types ([`C_TYPES`], the one table
//! mapping C to FMI 2.0 and 3.0), where their fields lie ([`StructLayout`]), and their
//! bytes as FMI values and back ([`decode`], [`encode`]; a 64-bit integer's
//! bits for FMI 3.0, [`load_bits`]), and a reader that
//! takes only whole ones, by the writer's handshake ([`StructReader`]), with
//! its counterpart for structs an FMU writes ([`StructWriter`]).

mod bits;
mod codec;
mod ctype;
mod layout;
mod reader;
mod writer;

pub use bits::{load_bits, load_bits_at, store_bits, store_bits_at};
pub use codec::{decode, decode_at, encode, encode_at, Decoded, EncodeError, EXACT_LIMIT};
pub use ctype::{CType, CTypeRow, Edge, C_TYPES};
pub use layout::{
    ByteOrder, FieldDecl, LayoutError, Packing, PlacedField, StructLayout, MAX_ELEMENTS,
    MAX_STRUCT_SIZE,
};
pub use reader::{Counting, Mark, Outcome, Read, ReaderError, StructReader, DEFAULT_ATTEMPTS};
pub use writer::StructWriter;
