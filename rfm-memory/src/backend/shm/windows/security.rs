//! Who may open a mapping: this process's user, a descriptor that lets only
//! that user in, and the check that refuses a mapping another user owns or
//! opened to others (a NULL DACL grants everyone).

use super::*;

/// The ACE types read: a mapping of ours holds one ACCESS_ALLOWED rule.
const ACCESS_ALLOWED: u8 = 0;
const ACCESS_DENIED: u8 = 1;

/// Memory the system allocated for us (`LocalAlloc`), freed on drop.
pub(super) struct Local(pub(super) *mut c_void);

impl Drop for Local {
    fn drop(&mut self) {
        // SAFETY: the pointer came from an API documented to allocate with
        // LocalAlloc, and is freed once.
        unsafe { LocalFree(self.0) };
    }
}

/// This process's user: its SID (in `buf`) and the SID's string form.
pub(super) struct User {
    buf: Vec<u64>,
    text: String,
}

impl User {
    pub(super) fn current() -> io::Result<User> {
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: the pseudo-handle of this process; `token` is a valid out pointer.
        if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: OpenProcessToken succeeded: `token` is a handle we now own.
        let token = unsafe { OwnedHandle::from_raw_handle(token) };
        let mut len = 0u32;
        // SAFETY: asks for the size only (NULL buffer, length 0).
        unsafe {
            GetTokenInformation(
                token.as_raw_handle(),
                TokenUser,
                std::ptr::null_mut(),
                0,
                &mut len,
            )
        };
        // u64s: TOKEN_USER holds pointers and must be aligned for them.
        let mut buf = vec![0u64; (len as usize).div_ceil(8).max(1)];
        // SAFETY: `buf` holds `len` bytes, aligned for TOKEN_USER.
        let ok = unsafe {
            GetTokenInformation(
                token.as_raw_handle(),
                TokenUser,
                buf.as_mut_ptr().cast(),
                len,
                &mut len,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        let mut user = User {
            buf,
            text: String::new(),
        };
        user.text = sid_text(user.sid())?;
        Ok(user)
    }

    /// The SID, inside `buf` (TOKEN_USER's pointer points there).
    fn sid(&self) -> PSID {
        // SAFETY: GetTokenInformation filled `buf` with a TOKEN_USER.
        unsafe { (*self.buf.as_ptr().cast::<TOKEN_USER>()).User.Sid }
    }
}

/// A SID as text (`S-1-5-21-…`), for messages and descriptors.
fn sid_text(sid: PSID) -> io::Result<String> {
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: `sid` is a valid SID; `text` receives a LocalAlloc'd string.
    if unsafe { ConvertSidToStringSidW(sid, &mut text) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let _free = Local(text.cast());
    // SAFETY: a NUL-terminated UTF-16 string, valid until `_free` drops.
    let len = (0..).take_while(|&i| unsafe { *text.add(i) } != 0).count();
    // SAFETY: as above; `len` units before the NUL.
    let units = unsafe { std::slice::from_raw_parts(text, len) };
    Ok(String::from_utf16_lossy(units))
}

/// A security descriptor with `user` as owner and one rule: `user` may do
/// anything with the object (protected: nothing is inherited).
pub(super) fn private_descriptor(user: &User) -> io::Result<Local> {
    let sddl = wide(&format!("O:{0}D:P(A;;GA;;;{0})", user.text));
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
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Local(sd))
}

/// Refuses a mapping owned by another user, or whose access rules grant anyone
/// but `user` (a NULL DACL grants everyone).
pub(super) fn check_private(device: &str, handle: HANDLE, user: &User) -> Result<(), ShmError> {
    let mut owner: PSID = std::ptr::null_mut();
    let mut dacl: *mut ACL = std::ptr::null_mut();
    let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    // SAFETY: an open handle with READ_CONTROL; out pointers are valid; `sd`
    // receives a LocalAlloc'd descriptor that `owner` and `dacl` point into.
    let err = unsafe {
        GetSecurityInfo(
            handle,
            SE_KERNEL_OBJECT,
            OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
            &mut owner,
            std::ptr::null_mut(),
            &mut dacl,
            std::ptr::null_mut(),
            &mut sd,
        )
    };
    if err != 0 {
        return Err(ShmError::Os {
            device: device.to_owned(),
            op: "GetSecurityInfo",
            source: io::Error::from_raw_os_error(err as i32),
        });
    }
    let _free = Local(sd);
    // SAFETY: both are valid SIDs (the owner is never NULL for a kernel object).
    if owner.is_null() || unsafe { EqualSid(owner, user.sid()) } == 0 {
        return Err(ShmError::NotOwner {
            device: device.to_owned(),
            owner: if owner.is_null() {
                "no one".into()
            } else {
                sid_or_why(owner)
            },
            me: user.text.clone(),
        });
    }
    refuse_grants(device, dacl, user)
}

/// A SID as text, or why it cannot be read.
fn sid_or_why(sid: PSID) -> String {
    sid_text(sid).unwrap_or_else(|e| format!("(unreadable SID: {e})"))
}

/// Refuses access rules (`dacl`, alive for the call) that grant anyone but
/// `user`, or that this code does not read.
fn refuse_grants(device: &str, dacl: *mut ACL, user: &User) -> Result<(), ShmError> {
    let others = |who: String| ShmError::GrantedToOthers {
        device: device.to_owned(),
        who,
    };
    if dacl.is_null() {
        return Err(others("everyone (it has no access rules)".into()));
    }
    // SAFETY: `dacl` points into a descriptor the caller keeps alive.
    let count = unsafe { (*dacl).AceCount };
    for i in 0..u32::from(count) {
        let mut ace: *mut c_void = std::ptr::null_mut();
        // SAFETY: `i` is below the ACL's count; `ace` points into the descriptor.
        if unsafe { GetAce(dacl, i, &mut ace) } == 0 {
            return Err(os_error(device, "GetAce"));
        }
        // SAFETY: every ACE starts with its header.
        let kind = unsafe { (*ace.cast::<ACE_HEADER>()).AceType };
        match kind {
            ACCESS_ALLOWED => {}
            // A deny rule grants no one anything.
            ACCESS_DENIED => continue,
            // Callback and object rules we do not read, so we do not trust.
            _ => return Err(others(format!("an access rule of type {kind}"))),
        }
        // SAFETY: an ACCESS_ALLOWED_ACE, whose SID starts at SidStart.
        let sid: PSID =
            unsafe { std::ptr::addr_of_mut!((*ace.cast::<ACCESS_ALLOWED_ACE>()).SidStart) }.cast();
        // SAFETY: both are valid SIDs.
        if unsafe { EqualSid(sid, user.sid()) } == 0 {
            return Err(others(sid_or_why(sid)));
        }
    }
    Ok(())
}
