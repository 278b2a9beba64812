//! Messages to the master's logger (`fmi2CallbackLogger`, or FMI 3.0's
//! `fmi3LogMessageCallback`), never to stderr.
//!
//! Errors and fatal errors are always reported (a master cannot diagnose a failed
//! call otherwise); events, warnings and debug lines only when the master turned
//! debug logging on for their category with `fmi2SetDebugLogging`. The `log` crate
//! is bridged here too: a `log` record emitted while an FMI call runs goes to the
//! logger of the instance being called.

use std::cell::Cell;
use std::ffi::CString;
use std::sync::Once;

use fmu_model::fmi2::*;
use fmu_model::fmi3::{fmi3InstanceEnvironment, fmi3LogMessageCallback};
pub(crate) use fmu_model::Category;

/// The master's logger, of the face it loaded.
#[derive(Debug, Clone, Copy)]
pub enum Sink {
    Fmi2(fmi2CallbackFunctions),
    Fmi3 {
        env: fmi3InstanceEnvironment,
        log: Option<fmi3LogMessageCallback>,
    },
}

/// Where an instance's messages go, and which categories are on.
#[derive(Debug, Clone)]
pub struct Logger {
    sink: Sink,
    name: CString,
    debug: bool,
    /// One flag per entry of [`Category::ALL`].
    enabled: Vec<bool>,
}

impl Logger {
    /// Whether the master loaded the FMI 3.0 face (which says some things
    /// otherwise: a 64-bit integer is exact there).
    pub fn fmi3(&self) -> bool {
        matches!(self.sink, Sink::Fmi3 { .. })
    }

    /// The instance's name, as the master gave it.
    pub fn instance_name(&self) -> String {
        self.name.to_string_lossy().into_owned()
    }
}

/// C strings cannot hold NUL: replace it rather than lose the message.
fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', "\u{fffd}")).expect("NULs replaced")
}

/// The message as a printf format that prints as itself: every `%` doubled.
///
/// A message is passed as the format, with no arguments, because many masters'
/// loggers (small C ones especially) print the format and ignore what follows;
/// passing `"%s"` and the text showed them only `%s`. A formatting logger
/// (FMPy, fmusim) turns each `%%` back into `%`, so every master shows the same
/// text.
fn c_format(text: &str) -> CString {
    c_string(&text.replace('%', "%%"))
}

impl Logger {
    pub fn new(sink: Sink, name: &str, debug: bool) -> Logger {
        Logger {
            sink,
            name: c_string(name),
            debug,
            enabled: vec![true; Category::ALL.len()],
        }
    }

    /// `fmi2SetDebugLogging`: no categories means all of them.
    pub fn set_debug(&mut self, on: bool, categories: &[String]) -> Result<(), String> {
        let mut enabled = vec![categories.is_empty(); Category::ALL.len()];
        for c in categories {
            let i = Category::ALL
                .iter()
                .position(|known| known.name() == c)
                .ok_or_else(|| {
                    let names: Vec<&str> = Category::ALL.iter().map(|k| k.name()).collect();
                    format!(
                        "unknown log category `{c}`; this FMU has {}",
                        names.join(", ")
                    )
                })?;
            enabled[i] = true;
        }
        self.debug = on;
        self.enabled = enabled;
        Ok(())
    }

    fn wants(&self, category: Category) -> bool {
        if matches!(category, Category::Error | Category::Fatal) {
            return true;
        }
        let i = Category::ALL.iter().position(|c| *c == category);
        self.debug && i.is_some_and(|i| self.enabled[i])
    }

    pub fn log(&self, category: Category, message: &str) {
        if !self.wants(category) {
            return;
        }
        let cat = c_string(category.name());
        match self.sink {
            Sink::Fmi2(callbacks) => {
                let Some(logger) = callbacks.logger else {
                    return;
                };
                let format = c_format(message);
                // SAFETY: the master gave this callback for this instance
                // (checked non-NULL at instantiation); every string passed is
                // NUL-terminated and outlives the call; the format holds no
                // conversion (every `%` is doubled), so a logger that formats
                // reads no argument.
                unsafe {
                    logger(
                        callbacks.componentEnvironment,
                        self.name.as_ptr(),
                        category.status(),
                        cat.as_ptr(),
                        format.as_ptr(),
                    )
                };
            }
            Sink::Fmi3 {
                env,
                log: Some(log),
            } => {
                let text = c_string(message);
                // SAFETY: the master gave this callback for this instance;
                // both strings are NUL-terminated and outlive the call (FMI 3.0
                // passes the message as it is, no format).
                unsafe { log(env, category.status(), cat.as_ptr(), text.as_ptr()) };
            }
            Sink::Fmi3 { log: None, .. } => {}
        }
    }
}

thread_local! {
    /// The logger of the instance whose FMI call runs on this thread (NULL outside
    /// calls). A pointer, not a clone: this is set on every call, on the hot path.
    static CURRENT: Cell<*const Logger> = const { Cell::new(std::ptr::null()) };
}

/// A number unique to each running thread: the address of its [`CURRENT`]
/// cell. It has no destructor, so reading it registers none (one would pin the
/// library, see `rfm_core`'s threads), and it is never 0. The same thread-local
/// as the logger's, so that a call that takes its component and routes its
/// log looks up one thread-local, not two: in a library loaded with `dlopen`
/// each lookup is a call to `__tls_get_addr` (a sixth of the step's
/// instructions went to those calls).
#[inline]
pub fn thread_token() -> usize {
    CURRENT.with(|c| c as *const Cell<*const Logger> as usize)
}

/// Routes `log` records to a logger until dropped.
#[derive(Debug)]
pub struct Scope {
    /// This thread's [`CURRENT`], found once: its drop looks up no thread-local.
    /// A raw pointer also keeps the scope on the thread that made it (`!Send`).
    cell: *const Cell<*const Logger>,
    /// The logger to put back.
    outer: *const Logger,
}

impl Scope {
    /// The logger must outlive the scope (the scope lives inside one FMI call).
    #[inline]
    pub fn enter(logger: &Logger) -> Scope {
        install_bridge();
        CURRENT.with(|cell| Scope {
            cell,
            outer: cell.replace(logger),
        })
    }
}

impl Drop for Scope {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: `cell` is this thread's CURRENT (a scope never leaves its
        // thread), which lives as long as the thread, so longer than the scope.
        unsafe { &*self.cell }.set(self.outer);
    }
}

struct Bridge;

impl log::Log for Bridge {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }

    fn log(&self, record: &log::Record) {
        let category = match record.level() {
            log::Level::Error => Category::Error,
            log::Level::Warn => Category::Warning,
            log::Level::Info => Category::Events,
            log::Level::Debug | log::Level::Trace => Category::Debug,
        };
        let logger = CURRENT.with(Cell::get);
        if !logger.is_null() {
            // SAFETY: CURRENT is non-NULL only while a `Scope` lives, and a scope lives
            // inside the FMI call whose instance owns the logger.
            unsafe { &*logger }.log(category, &record.args().to_string());
        }
    }

    fn flush(&self) {}
}

/// Installs the bridge once per process; a host that set its own `log` logger keeps it.
fn install_bridge() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if log::set_logger(&Bridge).is_ok() {
            log::set_max_level(log::LevelFilter::Trace);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::c_format;

    #[test]
    fn a_message_is_a_format_that_prints_as_itself() {
        let format = c_format("100% of `shm:a%sb`\0!");
        assert_eq!(format.to_str().unwrap(), "100%% of `shm:a%%sb`\u{fffd}!");
    }
}
