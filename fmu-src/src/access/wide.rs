//! A 64-bit integer element of a packed struct, or of a signal declared
//! `int64` or `uint64`, as its bits: what FMI 3.0's Int64
//! and UInt64 carry exactly, and FMI 2.0's Real rounds past 2^53 (there, the
//! element is a Real of [`Access::get_plain`]).

use fmu_model::{ForeignValue, PeerValue, Place, Var};
use rfm_frames::fmi::Value;
use rfm_frames::packed::{self, ByteOrder, CType};

use super::Access;
use crate::error::{error, FmiError, FmiResult};

impl Access<'_> {
    /// The bits of `vr`, a 64-bit integer element of a foreign node's struct
    /// (host order; an `int64`'s two's complement): of the newest whole
    /// struct read, 0 before the first, or of the struct this node writes.
    pub fn get_bits(&self, vr: u32) -> FmiResult<u64> {
        let var = &self.model.variables[vr as usize];
        if let Some(bits) = self.signal_bits(var) {
            return bits;
        }
        let (node, field, index, bytes) = match var.place {
            Place::Foreign {
                node,
                value: ForeignValue::Element { field, index },
            } => {
                let link = self.values.link.as_ref();
                let newest = link.and_then(|l| l.foreign()[node].newest());
                (node, field, index, newest.map(|(bytes, _)| bytes))
            }
            Place::ForeignInput { node, field, index } => {
                let bytes = &self.values.foreign_out[node][..];
                (node, field, index, Some(bytes))
            }
            _ => return Err(not_wide(&var.name)),
        };
        let Some(bytes) = bytes else {
            return Ok(0);
        };
        let spec = &self.model.interface.foreign[node];
        let f = &spec.layout.fields[field];
        packed::load_bits(f, index, bytes, spec.layout.order).ok_or_else(|| not_wide(&var.name))
    }

    /// Stores `bits` as `vr`, a 64-bit integer element of a struct this
    /// node's FMU writes for the lab's programs.
    pub fn set_bits(&mut self, vr: u32, bits: u64) -> FmiResult {
        let var = &self.model.variables[vr as usize];
        Self::check_settable(self.state, var)?;
        if let (Place::Input { offset, .. }, Some(e)) = (var.place, var.element) {
            let payload = self.values.frame.payload_mut();
            return packed::store_bits_at(e.ctype, offset, bits, payload, ByteOrder::Little)
                .ok_or_else(|| not_wide(&var.name));
        }
        let Place::ForeignInput { node, field, index } = var.place else {
            return Err(not_wide(&var.name));
        };
        let spec = &self.model.interface.foreign[node];
        let f = &spec.layout.fields[field];
        let bytes = &mut self.values.foreign_out[node];
        packed::store_bits(f, index, bits, bytes, spec.layout.order)
            .ok_or_else(|| not_wide(&var.name))
    }
}

impl Access<'_> {
    /// The bits of `var` if it is an element of a signal of a C type (this
    /// node's, or a peer's as its newest frame taken holds it: its start
    /// before one); `None` for another variable.
    fn signal_bits(&self, var: &Var) -> Option<FmiResult<u64>> {
        let e = var.element?;
        let (payload, offset) = match var.place {
            Place::Input { offset, .. } => (self.values.frame.payload(), offset),
            Place::Output {
                peer,
                value: PeerValue::Signal { offset, .. },
            } => {
                let taken = (self.values.link.as_ref())
                    .map(|link| link.peers()[peer].observed())
                    .filter(|observed| observed.latest().is_some());
                match taken {
                    Some(observed) => (observed.payload(), offset),
                    None => return Some(start_bits(var)),
                }
            }
            _ => return None,
        };
        Some(
            packed::load_bits_at(e.ctype, offset, payload, ByteOrder::Little)
                .ok_or_else(|| not_wide(&var.name)),
        )
    }
}

/// A 64-bit signal's start, which the file gives as a number FMI 2.0's Real
/// holds exactly (the parser checks it): as its C type's bits.
fn start_bits(var: &Var) -> FmiResult<u64> {
    match (var.element.map(|e| e.ctype), &var.start) {
        (Some(CType::Int64), Value::Real(x)) => Ok(*x as i64 as u64),
        (Some(CType::Uint64), Value::Real(x)) => Ok(*x as u64),
        _ => Err(not_wide(&var.name)),
    }
}

#[cold]
fn not_wide(name: &str) -> FmiError {
    error(format!(
        "`{name}` is no 64-bit integer element of a lab's struct or a signal"
    ))
}
