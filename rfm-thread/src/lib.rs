//! The threads the library starts (the heartbeat, the recorder's writer), started
//! so that they do not pin the library in the master's process.
//!
//! `std::thread::spawn` runs spawn hooks: it reads a thread-local of the
//! *spawning* thread whose destructor glibc registers against this library
//! (`__cxa_thread_atexit_impl`), and a library with a registered destructor is
//! not unmapped by `dlclose` until that thread exits. The spawning thread is the
//! master's, which lives as long as the master: a master that loads a fresh copy
//! of the FMU per run (FMPy's `simulate_fmu`) then kept every copy mapped. On
//! Linux a thread is therefore started with `pthread_create`, which touches
//! nothing of the spawning thread; its own thread-locals are destroyed when it
//! ends. Every [`Thread`] is joined when dropped, so no code of the library runs
//! once the objects that started its threads are gone.
//!
//! Windows runs thread-local destructors from the library's own TLS callback,
//! which `FreeLibrary` removes with it: nothing pins, and `std::thread` serves.

use std::io;

/// A thread running until its body returns; dropping it waits for that.
#[derive(Debug)]
pub struct Thread {
    handle: Option<imp::Handle>,
}

impl Thread {
    /// Starts `body` on a new thread named `name` (at most 15 bytes are shown).
    /// A panic in `body` ends the thread only.
    pub fn spawn<F: FnOnce() + Send + 'static>(name: &str, body: F) -> io::Result<Thread> {
        let handle = imp::spawn(name, body)?;
        Ok(Thread {
            handle: Some(handle),
        })
    }

    /// Waits for the body to return.
    pub fn join(mut self) {
        self.wait();
    }

    fn wait(&mut self) {
        if let Some(handle) = self.handle.take() {
            imp::join(handle);
        }
    }
}

impl Drop for Thread {
    fn drop(&mut self) {
        self.wait();
    }
}

#[cfg(unix)]
mod imp {
    use std::ffi::c_void;
    use std::io;
    use std::mem::MaybeUninit;
    use std::panic::{catch_unwind, AssertUnwindSafe};

    #[derive(Debug)]
    pub struct Handle(libc::pthread_t);

    /// The thread's entry: runs the boxed body once. A panic must not unwind out
    /// of an `extern "C"` function, so it ends here.
    extern "C" fn start<F: FnOnce()>(arg: *mut c_void) -> *mut c_void {
        // SAFETY: `arg` is the `Box<F>` that `spawn` leaked for this thread, and
        // only this call takes it back.
        let body = unsafe { Box::from_raw(arg.cast::<F>()) };
        let _ = catch_unwind(AssertUnwindSafe(body));
        std::ptr::null_mut()
    }

    pub fn spawn<F: FnOnce() + Send + 'static>(name: &str, body: F) -> io::Result<Handle> {
        let arg = Box::into_raw(Box::new(body)).cast::<c_void>();
        let mut id = MaybeUninit::<libc::pthread_t>::uninit();
        // SAFETY: `id` is written by pthread_create on success; `start::<F>`
        // matches the start routine's signature and takes `arg` back exactly once.
        let rc =
            unsafe { libc::pthread_create(id.as_mut_ptr(), std::ptr::null(), start::<F>, arg) };
        if rc != 0 {
            // SAFETY: the thread was not created, so `arg` is still ours to free.
            drop(unsafe { Box::from_raw(arg.cast::<F>()) });
            return Err(io::Error::from_raw_os_error(rc));
        }
        // SAFETY: pthread_create succeeded and wrote the id.
        let id = unsafe { id.assume_init() };
        name_thread(id, name);
        Ok(Handle(id))
    }

    /// Names the thread for `top -H` and debuggers; a name that cannot be set
    /// is no failure.
    #[cfg(target_os = "linux")]
    fn name_thread(id: libc::pthread_t, name: &str) {
        let short: String = name.chars().filter(|&c| c != '\0').take(15).collect();
        if let Ok(name) = std::ffi::CString::new(short) {
            // SAFETY: `id` is a live thread (not yet joined); the name is a
            // NUL-terminated string of at most 15 bytes plus the NUL.
            unsafe { libc::pthread_setname_np(id, name.as_ptr()) };
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn name_thread(_: libc::pthread_t, _: &str) {}

    pub fn join(handle: Handle) {
        // SAFETY: the thread was created joinable and is joined once (the handle
        // is consumed).
        unsafe { libc::pthread_join(handle.0, std::ptr::null_mut()) };
    }
}

#[cfg(windows)]
mod imp {
    use std::io;

    pub type Handle = std::thread::JoinHandle<()>;

    pub fn spawn<F: FnOnce() + Send + 'static>(name: &str, body: F) -> io::Result<Handle> {
        std::thread::Builder::new().name(name.into()).spawn(body)
    }

    pub fn join(handle: Handle) {
        let _ = handle.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    #[test]
    fn a_thread_runs_its_body_and_dropping_it_waits_for_the_end() {
        let done = Arc::new(AtomicU32::new(0));
        let seen = Arc::clone(&done);
        let thread = Thread::spawn("rfm-test", move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            seen.store(1, Ordering::Release);
        })
        .unwrap();
        drop(thread);
        assert_eq!(done.load(Ordering::Acquire), 1);
    }

    /// The body ran up to its panic, the join returned, and this thread goes
    /// on: a test that only joined would pass if the body never ran.
    #[test]
    fn a_panic_ends_only_the_thread() {
        let reached = Arc::new(AtomicU32::new(0));
        let seen = Arc::clone(&reached);
        Thread::spawn("rfm-test", move || {
            seen.store(1, Ordering::Release);
            panic!("inside the thread")
        })
        .unwrap()
        .join();
        assert_eq!(reached.load(Ordering::Acquire), 1, "the body ran");
    }
}
