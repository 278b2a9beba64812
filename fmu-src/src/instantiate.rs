//! `fmi2Instantiate`: the master's arguments checked, the resource location
//! decoded, the model found (the attitude preset by its GUID, any other from the
//! interface in its resources), and a new component made.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, Weak};

use fmu_model::fmi2::*;
use fmu_model::{Model, PRESET_GUID};

use crate::c_args::text;
use crate::component::new_handle;
use crate::instance::Instance;
use crate::logger::{Category, Logger, Sink};

/// A new component, or NULL after telling the master's logger why (when there
/// is a logger to tell).
///
/// # Safety
/// The FMI 2.0 contract of `fmi2Instantiate`: every pointer is NULL or valid.
pub unsafe fn instantiate(
    instance_name: fmi2String,
    fmu_type: fmi2Type,
    fmu_guid: fmi2String,
    resource_location: fmi2String,
    functions: *const fmi2CallbackFunctions,
    logging_on: fmi2Boolean,
) -> fmi2Component {
    let made = catch_unwind(AssertUnwindSafe(|| {
        if functions.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: non-NULL; the master owns the struct for the call (we copy it).
        let callbacks = unsafe { *functions };
        if callbacks.logger.is_none() {
            return std::ptr::null_mut();
        }
        // SAFETY: NULL or a C string, as FMI requires.
        let name = unsafe { text(instance_name) }.unwrap_or("");
        let logger = Logger::new(
            Sink::Fmi2(callbacks),
            if name.is_empty() {
                "rfm_attitude"
            } else {
                name
            },
            logging_on != 0,
        );
        // SAFETY: the master's arguments, as this function's contract says.
        match unsafe { model(name, fmu_type, fmu_guid, resource_location) } {
            Ok(model) => new_handle(logger.clone(), Instance::new(logger, model)),
            Err(e) => {
                logger.log(Category::Error, &format!("fmi2Instantiate: {e}"));
                std::ptr::null_mut()
            }
        }
    }));
    made.unwrap_or(std::ptr::null_mut())
}

/// Why `fmi2Instantiate` made no component: each names the argument and what
/// to do.
#[derive(Debug, thiserror::Error)]
enum InstantiateError {
    #[error("instanceName is NULL, empty or not UTF-8")]
    NoName,
    #[error("fmuType {0}: this FMU supports only fmi2CoSimulation (1)")]
    NotCoSimulation(fmi2Type),
    #[error("fmuGUID is NULL or not UTF-8")]
    NoGuid,
    #[error("fmuResourceLocation is not UTF-8")]
    ResourcesNotUtf8,
    /// The resource location, or the model it and the GUID name.
    #[error("{0}")]
    Model(String),
}

/// The model the master's arguments name, checked.
///
/// # Safety
/// `fmu_guid` and `resource_location` are NULL or C strings.
unsafe fn model(
    name: &str,
    fmu_type: fmi2Type,
    fmu_guid: fmi2String,
    resource_location: fmi2String,
) -> Result<Arc<Model>, InstantiateError> {
    if name.is_empty() {
        return Err(InstantiateError::NoName);
    }
    if fmu_type != fmi2CoSimulation {
        return Err(InstantiateError::NotCoSimulation(fmu_type));
    }
    // SAFETY: NULL or a C string (this function's contract).
    let guid = unsafe { text(fmu_guid) }.ok_or(InstantiateError::NoGuid)?;
    // SAFETY: NULL or a C string (this function's contract).
    let resources = match unsafe { text(resource_location) } {
        Some(uri) => Some(resource_path(uri).map_err(InstantiateError::Model)?),
        None if !resource_location.is_null() => return Err(InstantiateError::ResourcesNotUtf8),
        None => None,
    };
    model_for(guid, resources.as_deref()).map_err(InstantiateError::Model)
}

/// Accepts `file:///abs/path`, `file:/abs/path` and `file://localhost/abs/path`,
/// percent-decoded; anything else is an error.
fn resource_path(uri: &str) -> Result<String, String> {
    let rest = uri
        .strip_prefix("file://localhost/")
        .map(|r| format!("/{r}"))
        .or_else(|| uri.strip_prefix("file:///").map(|r| format!("/{r}")))
        .or_else(|| {
            uri.strip_prefix("file:/")
                .filter(|r| !r.starts_with('/'))
                .map(|r| format!("/{r}"))
        })
        .ok_or_else(|| format!("resource location `{uri}` is not a file: URI (file:///path)"))?;
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| {
                    format!("resource location `{uri}` has a bad percent escape at byte {i}")
                })?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let path = String::from_utf8(out)
        .map_err(|_| format!("resource location `{uri}` does not decode to UTF-8"))?;
    // `file:///C:/dir` names `C:/dir` on Windows.
    let drive = path.as_bytes();
    if cfg!(windows) && drive.len() >= 3 && drive[0] == b'/' && drive[2] == b':' {
        return Ok(path[1..].to_owned());
    }
    Ok(path)
}

/// The model of the FMU whose description has GUID `guid`: the attitude FMU, or
/// the one its resources describe (which must give that GUID).
pub(crate) fn model_for(guid: &str, resources: Option<&str>) -> Result<Arc<Model>, String> {
    // Weak, so that the model is freed with the last instance: a static's
    // contents are never dropped, and an unloaded library would leave it behind.
    static ATTITUDE: Mutex<Weak<Model>> = Mutex::new(Weak::new());
    if guid == PRESET_GUID {
        let mut shared = ATTITUDE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(model) = shared.upgrade() {
            return Ok(model);
        }
        let model = Arc::new(Model::attitude());
        *shared = Arc::downgrade(&model);
        return Ok(model);
    }
    let Some(dir) = resources else {
        return Err(format!(
            "fmuGUID {guid} is not the attitude FMU's, and no fmuResourceLocation was given to \
             read the interface from: give the FMU's resources directory"
        ));
    };
    let model = Model::load(std::path::Path::new(dir)).map_err(|e| {
        format!(
            "fmuGUID {guid}: the FMU's interface cannot be loaded from its resources ({e}); \
             rebuild the FMU with build-fmu"
        )
    })?;
    if model.guid != guid {
        return Err(format!(
            "fmuGUID {guid} does not match {} given by the interface in {dir}: the \
             modelDescription.xml and the resources come from different builds; rebuild the \
             FMU with build-fmu",
            model.guid
        ));
    }
    Ok(Arc::new(model))
}

#[cfg(test)]
mod tests {
    use super::resource_path;

    #[test]
    fn file_uris_of_every_accepted_form_are_percent_decoded() {
        assert_eq!(resource_path("file:///a%20b/res").unwrap(), "/a b/res");
        assert_eq!(resource_path("file:/a/res").unwrap(), "/a/res");
        assert_eq!(resource_path("file://localhost/a").unwrap(), "/a");
        assert!(resource_path("http://x/a").is_err());
        assert!(resource_path("file:///a%2").is_err());
    }
}
