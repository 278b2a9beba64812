//! A packed struct's 64-bit integer element as its bits: what FMI 3.0's Int64
//! and UInt64 carry exactly, and FMI 2.0's Real rounds past 2^53 (there, the
//! element is a Real of [`Access::get_plain`]).

use fmu_model::{ForeignValue, Place};
use rfm_frames::packed;

use super::Access;
use crate::error::{error, FmiError, FmiResult};

impl Access<'_> {
    /// The bits of `vr`, a 64-bit integer element of a foreign node's struct
    /// (host order; an `int64`'s two's complement): of the newest whole
    /// struct read, 0 before the first, or of the struct this node writes.
    pub fn get_bits(&self, vr: u32) -> FmiResult<u64> {
        let var = &self.model.variables[vr as usize];
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

#[cold]
fn not_wide(name: &str) -> FmiError {
    error(format!(
        "`{name}` is no 64-bit integer element of a lab's struct"
    ))
}
