//! Where a packed binary loads: the newest glibc symbol version the linux64
//! library needs, and the DLLs the win64 one imports. Simulator PCs run RHEL 8,
//! Rocky 8 and Ubuntu 20.04 (glibc 2.28 and 2.31) and Windows 10 and later;
//! a binary that needs more fails to load there, in the master, with a
//! message about a symbol the user never heard of.

use anyhow::{bail, Context, Result};
use object::read::elf::ElfFile64;
use object::read::pe::PeFile64;
use object::{Endianness, Object};

/// The oldest glibc the linux64 binary loads on.
pub const GLIBC_FLOOR: (u32, u32) = (2, 28);

/// The DLLs every Windows 10 has, which alone the win64 binary may import
/// (lower case). MinGW's own runtime (libgcc_s, libwinpthread) is not among
/// them: linked dynamically it would not be on the PC.
pub const SYSTEM_DLLS: &[&str] = &[
    "kernel32.dll",
    "ntdll.dll",
    "advapi32.dll",
    "userenv.dll",
    "ws2_32.dll",
    "bcrypt.dll",
    "bcryptprimitives.dll",
    "msvcrt.dll",
    "ucrtbase.dll",
    "shell32.dll",
    "ole32.dll",
    "oleaut32.dll",
    "synchronization.dll",
];

/// The newest `GLIBC_x.y` version an ELF library's symbols need.
pub fn newest_glibc(binary: &[u8]) -> Result<Option<(u32, u32)>> {
    let elf = ElfFile64::<Endianness>::parse(binary).context("not a 64-bit ELF library")?;
    let (endian, sections) = (elf.endian(), elf.elf_section_table());
    let Some((mut needs, link)) = sections.gnu_verneed(endian, binary)? else {
        return Ok(None);
    };
    let strings = sections.strings(endian, binary, link)?;
    let mut newest = None;
    while let Some((_, mut aux)) = needs.next()? {
        while let Some(a) = aux.next()? {
            let name = String::from_utf8_lossy(a.name(endian, strings)?).into_owned();
            if let Some(v) = name.strip_prefix("GLIBC_").and_then(parse_version) {
                newest = newest.max(Some(v));
            }
        }
    }
    Ok(newest)
}

fn parse_version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().map_or(Some(0), |m| m.parse().ok())?;
    Some((major, minor))
}

/// The DLLs a PE library imports, lower case.
pub fn imported_dlls(binary: &[u8]) -> Result<Vec<String>> {
    let pe = PeFile64::parse(binary).context("not a 64-bit PE library")?;
    let mut dlls = Vec::new();
    for import in Object::imports(&pe)? {
        dlls.push(String::from_utf8_lossy(import?.library()).to_ascii_lowercase());
    }
    dlls.sort();
    dlls.dedup();
    Ok(dlls)
}

/// The glibc of the systems simulator PCs run, oldest first: the one table
/// the warnings and refusals name systems from.
pub const SYSTEMS: [(&str, (u32, u32)); 7] = [
    ("RHEL 8 / Rocky 8", (2, 28)),
    ("Ubuntu 20.04", (2, 31)),
    ("Debian 11", (2, 31)),
    ("RHEL 9 / Rocky 9", (2, 34)),
    ("Ubuntu 22.04", (2, 35)),
    ("Debian 12", (2, 36)),
    ("Ubuntu 24.04", (2, 39)),
];

/// The systems of [`SYSTEMS`] whose glibc is older than `needs`.
fn without(needs: (u32, u32)) -> String {
    let names: Vec<String> = SYSTEMS
        .iter()
        .filter(|(_, v)| *v < needs)
        .map(|(name, (major, minor))| format!("{name} (glibc {major}.{minor})"))
        .collect();
    names.join(", ")
}

/// The linux64 binary against the glibc it must load on. With `required`
/// (`--glibc`, what the scripts pass), a binary that needs a newer one is
/// refused; without it (a machine without cargo-zigbuild builds against its
/// own glibc), the systems it will not load on are returned as a warning.
pub fn check_linux(
    what: &str,
    binary: &[u8],
    required: Option<(u32, u32)>,
) -> Result<Option<String>> {
    let needs =
        newest_glibc(binary).with_context(|| format!("{what}: cannot read its symbol versions"))?;
    let Some(v) = needs else {
        return Ok(None);
    };
    match required {
        Some(floor) if v > floor => bail!(
            "{what} needs glibc {}.{} (a symbol of version GLIBC_{}.{}): it would not load on \
             glibc {}.{} ({}), which --glibc asks for. Build it against {}.{} with cargo-zigbuild \
             (pip install ziglang cargo-zigbuild; scripts/setup.sh does), which build-fmu uses \
             when it is on the PATH",
            v.0,
            v.1,
            v.0,
            v.1,
            floor.0,
            floor.1,
            without((floor.0, floor.1 + 1)),
            floor.0,
            floor.1
        ),
        None if v > GLIBC_FLOOR => Ok(Some(format!(
            "warning: {what} needs glibc {}.{}: it will not load on {}; for those, build on \
             a machine with cargo-zigbuild (scripts/setup.sh installs it), or pass --glibc {}.{} \
             to refuse such a binary",
            v.0,
            v.1,
            without(v),
            GLIBC_FLOOR.0,
            GLIBC_FLOOR.1
        ))),
        _ => Ok(None),
    }
}

/// `--glibc X.Y`.
pub fn parse_glibc(text: &str) -> std::result::Result<(u32, u32), String> {
    parse_version(text)
        .filter(|v| *v >= (2, 17))
        .ok_or_else(|| format!("`{text}` is not a glibc version such as 2.28"))
}

/// The win64 binary imports only [`SYSTEM_DLLS`].
pub fn check_windows(what: &str, binary: &[u8]) -> Result<()> {
    let dlls = imported_dlls(binary).with_context(|| format!("{what}: cannot read its imports"))?;
    let foreign: Vec<&String> = dlls
        .iter()
        .filter(|d| !SYSTEM_DLLS.contains(&d.as_str()) && !d.starts_with("api-ms-win-"))
        .collect();
    if !foreign.is_empty() {
        bail!(
            "{what} imports {foreign:?}, which Windows 10 does not have: link them statically \
             (MinGW's runtime is, by Rust's x86_64-pc-windows-gnu)"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Debian 12's /bin/ls needs glibc 2.34 (`__libc_start_main`): refused
    /// against the 2.28 floor, naming it; its zlib (2.14) passes.
    #[test]
    fn a_library_that_needs_a_newer_glibc_is_named_with_the_floor() {
        let ls = std::fs::read("/bin/ls").expect("/bin/ls on a Debian machine");
        assert_eq!(newest_glibc(&ls).unwrap(), Some((2, 34)));
        let err = check_linux("ls", &ls, Some((2, 28)))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ls needs glibc 2.34") && err.contains("not load on glibc 2.28"),
            "{err}"
        );
        let zlib = std::fs::read("/usr/lib/x86_64-linux-gnu/libz.so.1").expect("zlib1g");
        assert_eq!(check_linux("libz", &zlib, Some((2, 28))).unwrap(), None);
    }

    /// Without --glibc (a machine without cargo-zigbuild), a binary for this
    /// machine's glibc is packed with a warning naming the systems it will
    /// not load on, not refused.
    #[test]
    fn without_a_required_glibc_a_newer_one_is_a_warning_naming_the_systems() {
        let ls = std::fs::read("/bin/ls").expect("/bin/ls on a Debian machine");
        let warning = check_linux("ls", &ls, None).unwrap().expect("a warning");
        assert!(
            warning.contains("ls needs glibc 2.34")
                && warning.contains("RHEL 8 / Rocky 8 (glibc 2.28), Ubuntu 20.04 (glibc 2.31), Debian 11 (glibc 2.31)")
                && !warning.contains("RHEL 9")
                && warning.contains("--glibc 2.28"),
            "{warning}"
        );
        assert!(check_linux("ls", &ls, Some((2, 34))).unwrap().is_none());
        assert_eq!(parse_glibc("2.31"), Ok((2, 31)));
        assert!(parse_glibc("two").is_err());
    }

    /// MinGW's libstdc++ needs its runtime DLLs beside it: refused, naming
    /// them; the win32-threads libgcc_s, which imports only system DLLs, passes.
    #[test]
    fn a_dll_that_imports_more_than_windows_has_is_named_with_its_imports() {
        let dir = "/usr/lib/gcc/x86_64-w64-mingw32/12-posix";
        let stdcxx = std::fs::read(format!("{dir}/libstdc++-6.dll")).expect("g++-mingw-w64");
        let err = check_windows("libstdc++", &stdcxx).unwrap_err().to_string();
        assert!(
            err.contains("libgcc_s_seh-1.dll") && err.contains("libwinpthread-1.dll"),
            "{err}"
        );
        let runtime =
            std::fs::read("/usr/lib/gcc/x86_64-w64-mingw32/12-win32/libgcc_s_seh-1.dll").unwrap();
        check_windows("libgcc_s", &runtime).unwrap();
    }

    #[test]
    fn versions_parse_as_numbers() {
        assert_eq!(parse_version("2.28"), Some((2, 28)));
        assert_eq!(parse_version("2.3.4"), Some((2, 3)));
        assert!(parse_version("2.9") < parse_version("2.28"));
        assert_eq!(parse_version("PRIVATE"), None);
    }
}
