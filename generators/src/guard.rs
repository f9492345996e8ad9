//! Panics inside third-party parsers, turned into errors.
//!
//! A malformed input file must give one clear line, never a backtrace: a parser that panics on
//! bad bytes (rather than returning an error) is called through [`quietly`], which catches the
//! unwind and silences the panic message for that call on that thread only (other threads, and
//! panics outside a guarded call, still print as usual).

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// How many guarded calls are running on this thread (they may nest).
    static QUIET: Cell<usize> = const { Cell::new(0) };
}

static HOOK: Once = Once::new();

/// Installs, once, a panic hook that stays silent inside a guarded call and otherwise hands the
/// panic to the hook that was there before.
fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if QUIET.with(Cell::get) == 0 {
                previous(info);
            }
        }));
    });
}

/// Runs `f`; a panic inside it becomes `Err` with the panic's message on one line.
///
/// Only for calls into code that holds no state of ours across the call (a parser given bytes,
/// an encoder given text): whatever it left half-done is dropped with the error.
pub fn quietly<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_hook();
    QUIET.with(|q| q.set(q.get() + 1));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(q.get() - 1));
    result.map_err(|payload| {
        let text = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "an unexplained panic".to_string());
        let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
        format!("its parser failed ({line})")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_message_and_the_thread_goes_on() {
        let e = quietly(|| -> u8 { panic!("bad\n  bytes at {}", 3) }).unwrap_err();
        assert_eq!(e, "its parser failed (bad bytes at 3)");
        let e = quietly(|| -> u8 { panic!("static text") }).unwrap_err();
        assert!(e.contains("static text"), "{e}");
        assert_eq!(quietly(|| 7).unwrap(), 7);
        // Nested guards unwind their counts: after both, panics are loud again (count zero).
        let _ = quietly(|| quietly(|| -> u8 { panic!("inner") }));
        assert_eq!(QUIET.with(Cell::get), 0);
    }
}
