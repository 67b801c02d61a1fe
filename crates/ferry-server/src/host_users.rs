//! Host users' passwords, checked through PAM: AUTHINFO AUTHTYPE(IDPWOS) for a user id
//! that is not in the queue manager's own repository, as MQ checks the host's users.
//!
//! PAM is the host's: `libpam.so.0` is loaded at run time (so building Ferry needs no PAM
//! headers, and a host without PAM answers "unavailable"), and the PAM service is
//! `ferry` (`/etc/pam.d/ferry`; MQ's is `ibmmq`). With no such file PAM uses its `other`
//! service, which usually refuses. The check blocks (PAM modules sleep after a failure, or
//! ask a directory), so the runtime calls it off the thread that serves connections.

use libloading::Library;
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::OnceLock;

/// The PAM service Ferry authenticates with.
pub const PAM_SERVICE: &str = "ferry";

/// What PAM said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostCheck {
    /// The password is the host user's, and the account may be used.
    Valid,
    /// PAM refused the user id and password (or the account).
    Refused(String),
    /// PAM could not be asked (no libpam on this host).
    Unavailable(String),
}

const PAM_SUCCESS: c_int = 0;
const PAM_BUF_ERR: c_int = 5;
const PAM_PROMPT_ECHO_OFF: c_int = 1;
const PAM_PROMPT_ECHO_ON: c_int = 2;
const PAM_SILENT: c_int = 0x8000;
const PAM_DISALLOW_NULL_AUTHTOK: c_int = 0x0001;

#[repr(C)]
struct PamMessage {
    msg_style: c_int,
    msg: *const c_char,
}

#[repr(C)]
struct PamResponse {
    resp: *mut c_char,
    resp_retcode: c_int,
}

#[repr(C)]
struct PamConv {
    conv: extern "C" fn(c_int, *mut *const PamMessage, *mut *mut PamResponse, *mut c_void) -> c_int,
    appdata_ptr: *mut c_void,
}

type PamStart =
    unsafe extern "C" fn(*const c_char, *const c_char, *const PamConv, *mut *mut c_void) -> c_int;
type PamCall = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;
type PamStrerror = unsafe extern "C" fn(*mut c_void, c_int) -> *const c_char;

fn library() -> Result<&'static Library, String> {
    static PAM: OnceLock<Result<Library, String>> = OnceLock::new();
    PAM.get_or_init(|| {
        // SAFETY: loading the system's PAM library runs its initialisers, which is what
        // every program that uses PAM does.
        unsafe { Library::new("libpam.so.0") }.map_err(|e| format!("libpam.so.0: {e}"))
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// Answers PAM's prompts with the password (`appdata`: a NUL-terminated password); the
/// responses are allocated with malloc, as PAM frees them.
extern "C" fn conversation(
    n: c_int,
    messages: *mut *const PamMessage,
    responses: *mut *mut PamResponse,
    appdata: *mut c_void,
) -> c_int {
    let Ok(count) = usize::try_from(n) else {
        return PAM_BUF_ERR;
    };
    if count == 0 || messages.is_null() || responses.is_null() || appdata.is_null() {
        return PAM_BUF_ERR;
    }
    // SAFETY: PAM passes `n` messages (Linux-PAM: an array of pointers) and expects
    // `*responses` to be set to `n` malloc'ed responses it will free; `appdata` is the
    // password CString `check_password` keeps alive for the whole call.
    unsafe {
        let out = libc::calloc(count, std::mem::size_of::<PamResponse>()).cast::<PamResponse>();
        if out.is_null() {
            return PAM_BUF_ERR;
        }
        for i in 0..count {
            let m = *messages.add(i);
            if m.is_null() {
                continue;
            }
            if matches!((*m).msg_style, PAM_PROMPT_ECHO_OFF | PAM_PROMPT_ECHO_ON) {
                (*out.add(i)).resp = libc::strdup(appdata.cast::<c_char>());
            }
        }
        *responses = out;
    }
    PAM_SUCCESS
}

/// Checks `user`'s `password` with PAM service [`PAM_SERVICE`] (authentication, then the
/// account). Blocks.
pub fn check_password(user: &str, password: &str) -> HostCheck {
    let lib = match library() {
        Ok(l) => l,
        Err(e) => return HostCheck::Unavailable(e),
    };
    let (Ok(service), Ok(c_user), Ok(c_password)) = (
        CString::new(PAM_SERVICE),
        CString::new(user),
        CString::new(password),
    ) else {
        return HostCheck::Refused("a NUL character in the user id or password".into());
    };
    // SAFETY: the symbols are PAM's documented entry points with these signatures; the
    // handle is used only between pam_start and pam_end; the conversation's appdata
    // (the password) outlives the handle.
    unsafe {
        let symbols = (
            lib.get::<PamStart>(b"pam_start\0"),
            lib.get::<PamCall>(b"pam_authenticate\0"),
            lib.get::<PamCall>(b"pam_acct_mgmt\0"),
            lib.get::<PamCall>(b"pam_end\0"),
            lib.get::<PamStrerror>(b"pam_strerror\0"),
        );
        let (Ok(start), Ok(authenticate), Ok(account), Ok(end), Ok(strerror)) = symbols else {
            return HostCheck::Unavailable("libpam.so.0 lacks PAM's entry points".into());
        };
        let conv = PamConv {
            conv: conversation,
            appdata_ptr: c_password.as_ptr() as *mut c_void,
        };
        let mut handle: *mut c_void = std::ptr::null_mut();
        let rc = start(service.as_ptr(), c_user.as_ptr(), &conv, &mut handle);
        if rc != PAM_SUCCESS || handle.is_null() {
            return HostCheck::Unavailable(format!("pam_start failed ({rc})"));
        }
        let describe = |rc: c_int| {
            let text = strerror(handle, rc);
            if text.is_null() {
                format!("PAM error {rc}")
            } else {
                std::ffi::CStr::from_ptr(text)
                    .to_string_lossy()
                    .into_owned()
            }
        };
        let mut rc = authenticate(handle, PAM_SILENT | PAM_DISALLOW_NULL_AUTHTOK);
        let result = if rc != PAM_SUCCESS {
            HostCheck::Refused(describe(rc))
        } else {
            rc = account(handle, PAM_SILENT);
            if rc == PAM_SUCCESS {
                HostCheck::Valid
            } else {
                HostCheck::Refused(describe(rc))
            }
        };
        end(handle, rc);
        result
    }
}
