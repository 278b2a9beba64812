//! Writes the .fmu: a zip with forward-slash names and deflated entries.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use zip::write::SimpleFileOptions;

/// `(name in the archive, contents)` pairs, written in order.
pub fn write(path: &Path, entries: &[(String, Vec<u8>)]) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut zip = zip::ZipWriter::new(file);
    let options = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .unix_permissions(0o644);
    for (name, data) in entries {
        zip.start_file(name.as_str(), options)
            .with_context(|| format!("cannot add {name}"))?;
        zip.write_all(data)
            .with_context(|| format!("cannot write {name}"))?;
    }
    zip.finish()
        .with_context(|| format!("cannot finish {}", path.display()))?;
    Ok(())
}
