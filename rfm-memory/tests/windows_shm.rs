//! `shm:` on Windows: the mapping this library creates grants only this user, and
//! a mapping that others may open, or that has another size, is refused. (The
//! conformance suite runs on it too.) Run under Wine by `scripts/test.sh`.
#![cfg(windows)]

mod common;

use std::ffi::c_void;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};

use rfm_memory::backend::shm::ShmError;
use rfm_memory::{Device, DeviceError, OpenOptions};
use windows_sys::Win32::Foundation::{LocalFree, INVALID_HANDLE_VALUE};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, GetSecurityInfo,
    SDDL_REVISION_1, SE_KERNEL_OBJECT,
};
use windows_sys::Win32::Security::{
    GetAce, ACCESS_ALLOWED_ACE, ACE_HEADER, ACL, DACL_SECURITY_INFORMATION,
    OWNER_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, PSID, SECURITY_ATTRIBUTES,
};
use windows_sys::Win32::System::Memory::{
    CreateFileMappingW, OpenFileMappingW, FILE_MAP_ALL_ACCESS, PAGE_READWRITE,
};

fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

fn options(size: usize) -> OpenOptions {
    OpenOptions {
        memory_size: size,
        rfm2g_library: None,
        existing_only: false,
        dma_reads_from: None,
    }
}

/// The string form of `sid`.
fn sid_text(sid: PSID) -> String {
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: a valid SID; `text` receives a LocalAlloc'd string.
    assert_ne!(unsafe { ConvertSidToStringSidW(sid, &mut text) }, 0);
    // SAFETY: NUL-terminated UTF-16, freed below.
    let len = (0..).take_while(|&i| unsafe { *text.add(i) } != 0).count();
    // SAFETY: `len` units before the NUL.
    let s = String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(text, len) });
    // SAFETY: allocated by ConvertSidToStringSidW.
    unsafe { LocalFree(text.cast()) };
    s
}

/// A mapping `Local\rfm-NAME` of `size` bytes created with the descriptor `sddl`,
/// as another program could; `None` if this system refuses that descriptor.
fn create_with(name: &str, size: u32, sddl: &str) -> Option<OwnedHandle> {
    let sddl = wide(sddl);
    let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    // SAFETY: a NUL-terminated string; `sd` receives a LocalAlloc'd descriptor.
    let ok = unsafe {
        ConvertStringSecurityDescriptorToSecurityDescriptorW(
            sddl.as_ptr(),
            SDDL_REVISION_1,
            &mut sd,
            std::ptr::null_mut(),
        )
    };
    assert_ne!(ok, 0, "{}", std::io::Error::last_os_error());
    let attributes = SECURITY_ATTRIBUTES {
        nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
        lpSecurityDescriptor: sd,
        bInheritHandle: 0,
    };
    let object = wide(&rfm_memory::backend::shm::object_name(name));
    // SAFETY: a paging-file mapping; attributes and name outlive the call.
    let raw = unsafe {
        CreateFileMappingW(
            INVALID_HANDLE_VALUE,
            &attributes,
            PAGE_READWRITE,
            0,
            size,
            object.as_ptr(),
        )
    };
    // SAFETY: allocated by the conversion above.
    unsafe { LocalFree(sd) };
    // SAFETY: a handle we own when not NULL.
    (!raw.is_null()).then(|| unsafe { OwnedHandle::from_raw_handle(raw) })
}

/// The owner (as text) and the access rules (type and SID as text) of the
/// mapping `Local\rfm-NAME`.
fn security_of(name: &str) -> (String, Vec<(u8, String)>) {
    let object = wide(&rfm_memory::backend::shm::object_name(name));
    // SAFETY: a NUL-terminated name.
    let raw = unsafe { OpenFileMappingW(FILE_MAP_ALL_ACCESS, 0, object.as_ptr()) };
    assert!(!raw.is_null(), "{}", std::io::Error::last_os_error());
    // SAFETY: opened above.
    let handle = unsafe { OwnedHandle::from_raw_handle(raw) };
    let (mut owner, mut dacl, mut sd): (PSID, *mut ACL, PSECURITY_DESCRIPTOR) = (
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
    // SAFETY: an open handle; valid out pointers.
    let err = unsafe {
        GetSecurityInfo(
            handle.as_raw_handle(),
            SE_KERNEL_OBJECT,
            OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
            &mut owner,
            std::ptr::null_mut(),
            &mut dacl,
            std::ptr::null_mut(),
            &mut sd,
        )
    };
    assert_eq!(err, 0);
    assert!(!dacl.is_null(), "a NULL DACL grants everyone");
    // SAFETY: `dacl` points into `sd`, alive until freed below.
    let count = unsafe { (*dacl).AceCount };
    let rules = (0..u32::from(count))
        .map(|i| {
            let mut ace: *mut c_void = std::ptr::null_mut();
            // SAFETY: ACE i exists.
            assert_ne!(unsafe { GetAce(dacl, i, &mut ace) }, 0);
            // SAFETY: every ACE starts with its header; allow and deny ACEs
            // (the only kinds here) have their SID at SidStart.
            unsafe {
                let kind = (*ace.cast::<ACE_HEADER>()).AceType;
                let sid = std::ptr::addr_of_mut!((*ace.cast::<ACCESS_ALLOWED_ACE>()).SidStart);
                (kind, sid_text(sid.cast()))
            }
        })
        .collect();
    let owner = sid_text(owner);
    // SAFETY: allocated by GetSecurityInfo.
    unsafe { LocalFree(sd) };
    (owner, rules)
}

/// This user's SID, as the owner of a mapping this library created.
fn me() -> String {
    let name = common::unique("win-me");
    let _device = Device::open(&format!("shm:{name}"), &options(1 << 16)).unwrap();
    security_of(&name).0
}

#[test]
fn the_mapping_created_grants_only_this_user() {
    let name = common::unique("win-private");
    let _device = Device::open(&format!("shm:{name}"), &options(1 << 16)).unwrap();
    let (owner, rules) = security_of(&name);
    assert!(owner.starts_with("S-1-5-"), "a user's SID: {owner}");
    assert_eq!(rules, [(0, owner)], "one allow rule, for the owner");
}

#[test]
fn a_mapping_of_another_size_is_refused() {
    let name = common::unique("win-size");
    let _first = Device::open(&format!("shm:{name}"), &options(1 << 20)).unwrap();
    let err = Device::open(&format!("shm:{name}"), &options(1000)).unwrap_err();
    assert!(
        matches!(
            err,
            DeviceError::Shm(ShmError::SizeMismatch {
                expected: 1000,
                found: 1048576,
                ..
            })
        ),
        "{err:?}"
    );
}

#[test]
fn a_mapping_others_may_open_is_refused() {
    let me = me();
    // Owned by this user, but Everyone (WD) may do anything; then this user and
    // the Guests (BG). (A NULL DACL, which grants everyone, is refused by the
    // same rule; Wine 8 makes "D:NO_ACCESS_CONTROL" deny everyone instead.)
    for (sddl, who) in [
        (format!("O:{me}D:(A;;GA;;;WD)"), "S-1-1-0"),
        (
            format!("O:{me}D:(A;;GA;;;{me})(A;;GR;;;BG)"),
            "S-1-5-32-546",
        ),
    ] {
        let name = common::unique("win-open");
        let _other = create_with(&name, 1 << 16, &sddl).expect("creating the open mapping");
        let err = Device::open(&format!("shm:{name}"), &options(1 << 16)).unwrap_err();
        assert!(
            matches!(&err, DeviceError::Shm(ShmError::GrantedToOthers { who: w, .. }) if w.contains(who)),
            "{sddl}: {err:?}"
        );
        assert!(err.to_string().contains("refusing"), "{err}");
    }
}

#[test]
fn a_mapping_another_user_owns_is_refused() {
    let name = common::unique("win-owner");
    // Owned by the Guests group: a system may refuse to set that owner, as
    // Linux refuses chown to a non-root user.
    let Some(_other) = create_with(&name, 1 << 16, "O:BGD:(A;;GA;;;WD)") else {
        eprintln!("this system refuses another owner; ownership check not exercised");
        return;
    };
    let err = Device::open(&format!("shm:{name}"), &options(1 << 16)).unwrap_err();
    assert!(
        matches!(&err, DeviceError::Shm(ShmError::NotOwner { owner, .. }) if owner == "S-1-5-32-546"),
        "{err:?}"
    );
}

#[test]
fn an_existing_only_open_of_a_missing_mapping_says_so() {
    let name = common::unique("win-missing");
    let options = OpenOptions {
        existing_only: true,
        ..options(1 << 16)
    };
    let err = Device::open(&format!("shm:{name}"), &options).unwrap_err();
    assert!(
        matches!(err, DeviceError::Shm(ShmError::NoSuchMemory { .. })),
        "{err:?}"
    );
}
