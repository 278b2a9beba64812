//! Any bytes as an FMU's resources (interface file and node name, split at the
//! first 0xff byte), loaded as fmi2Instantiate loads them: a model or an error,
//! never a panic. A model's instance then takes every variable's get and set in
//! every state a master reaches without a peer.
#![no_main]

use std::ffi::CString;

#[path = "master.rs"]
mod master;

use libfuzzer_sys::fuzz_target;
use fmu_model::fmi2::*;
use fmu_model::{Model, RESOURCE_INTERFACE, RESOURCE_NODE};
use rfm_frames::fmi::FmiType;
use rfm_attitude::*;

fuzz_target!(|data: &[u8]| {
    let (interface, node) = match data.iter().position(|&b| b == 0xff) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b"a"[..]),
    };
    let dir = std::env::temp_dir().join(format!("fuzz-resources-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(RESOURCE_INTERFACE), interface).unwrap();
    std::fs::write(dir.join(RESOURCE_NODE), node).unwrap();
    let Ok(model) = Model::load(&dir) else {
        return;
    };
    // The description is well-formed, and the GUID is what instantiate accepts.
    let xml = model.xml();
    assert!(xml.contains(&model.guid));
    let cb = master::callbacks();
    let guid = CString::new(model.guid.as_str()).unwrap();
    let uri = CString::new(format!("file://{}", dir.display())).unwrap();
    // SAFETY: valid C strings and callbacks; the component is freed below.
    unsafe {
        let c = fmi2_instantiate(c"f".as_ptr(), fmi2CoSimulation, guid.as_ptr(), uri.as_ptr(), &cb, 0, 0);
        assert!(!c.is_null(), "its own GUID was refused");
        for (r, v) in model.variables.iter().enumerate() {
            let r = r as u32;
            match v.kind {
                FmiType::Real => {
                    let mut x = 0.0;
                    let _ = fmi2_get_real(c, &r, 1, &mut x);
                    let _ = fmi2_set_real(c, &r, 1, &1.5);
                }
                FmiType::Integer => {
                    let mut x = 0;
                    let _ = fmi2_get_integer(c, &r, 1, &mut x);
                    let _ = fmi2_set_integer(c, &r, 1, &3);
                }
                FmiType::Boolean => {
                    let mut x = 0;
                    let _ = fmi2_get_boolean(c, &r, 1, &mut x);
                    let _ = fmi2_set_boolean(c, &r, 1, &1);
                }
                FmiType::String => {
                    let mut s: fmi2String = std::ptr::null();
                    let _ = fmi2_get_string(c, &r, 1, &mut s);
                    let long = CString::new("x".repeat(300)).unwrap();
                    let _ = fmi2_set_string(c, &r, 1, &long.as_ptr());
                }
            }
        }
        fmi2_free_instance(c);
    }
});
