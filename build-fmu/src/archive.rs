//! Writes the .fmu: a zip with forward-slash names and deflated entries, into
//! a temporary file beside the destination that is verified before it is
//! renamed over it. A full disk, a failed verification or a killed build
//! leave the previous .fmu as it was, and no partial file.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use zip::write::SimpleFileOptions;

/// Writes `(name in the archive, contents)` pairs, in order, to `path`:
/// `check` is given the finished temporary file, and `path` is replaced only
/// if it passes.
pub fn write(
    path: &Path,
    entries: &[(String, Vec<u8>)],
    check: impl FnOnce(&Path) -> Result<()>,
) -> Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let name = path
        .file_name()
        .map_or("out".into(), |n| n.to_string_lossy());
    let temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".partial")
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    let failed = || format!("cannot write {} (it is left as it was)", path.display());
    let mut zip = zip::ZipWriter::new(temp.as_file());
    let options = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .unix_permissions(0o644);
    for (entry, data) in entries {
        zip.start_file(entry.as_str(), options)
            .with_context(|| format!("cannot add {entry}"))
            .with_context(failed)?;
        zip.write_all(data)
            .with_context(|| format!("cannot write {entry}"))
            .with_context(failed)?;
    }
    zip.finish().with_context(failed)?;
    // On the disk before the rename: a crash then leaves the old file or the
    // whole new one, never a name on a half-written archive.
    temp.as_file().sync_all().with_context(failed)?;
    check(temp.path())?;
    // A temporary file is made owner-only; an FMU is for every user's master.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let readable = std::fs::Permissions::from_mode(0o644);
        temp.as_file()
            .set_permissions(readable)
            .with_context(failed)?;
    }
    temp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot rename the verified archive onto {}", path.display()))?;
    Ok(())
}
