//! The clocks the JS layer reads (`Date.now()`, or a caller's function), below the generator
//! and the layouts that both read them.

use core::sync::atomic::{AtomicU64, Ordering};
use snowflake_core::Clock;

#[cfg(target_arch = "wasm32")]
#[link(wasm_import_module = "snowflake")]
extern "C" {
    /// The JS layer's reading of clock `id`, in Unix ms.
    fn sf_clock_now(id: u32) -> f64;
}

/// No JS outside wasm32: the crate builds there only to be linted.
#[cfg(not(target_arch = "wasm32"))]
unsafe fn sf_clock_now(_id: u32) -> f64 {
    0.0
}

/// A clock the JS layer reads. The system's (`Date.now()`) moves by itself, so a wait spins on
/// it (in a browser's main thread too: `maxWaitMs: 0` never blocks). A caller's clock may
/// stand still, so a wait moves this clock's floor to the instant waited for, as core's
/// `ManualClock` does, as if that time had passed; its IDs never repeat all the same.
pub struct JsClock {
    id: u32,
    system: bool,
    floor: AtomicU64,
}

impl JsClock {
    /// Clock `id` of the JS layer (0: `Date.now()`); `system` when it moves by itself.
    pub fn new(id: u32, system: bool) -> JsClock {
        JsClock { id, system, floor: AtomicU64::new(0) }
    }

    fn read(&self) -> u64 {
        // SAFETY: an import without memory effects on this module.
        let t = unsafe { sf_clock_now(self.id) };
        // A reading before 1970 or not a number reads as 0, which the layout's epoch refuses.
        if t.is_finite() && t > 0.0 {
            t as u64
        } else {
            0
        }
    }
}

impl Clock for JsClock {
    fn now_ms(&self) -> u64 {
        self.read().max(self.floor.load(Ordering::Relaxed))
    }
    fn wait_until_ms(&self, unix_ms: u64) {
        if self.system {
            while self.read() < unix_ms {
                core::hint::spin_loop();
            }
        } else {
            self.floor.fetch_max(unix_ms, Ordering::Relaxed);
        }
    }
}

/// The system clock's reading (`Date.now()`: the JS layer's clock 0), in Unix ms.
pub fn system_now_ms() -> u64 {
    JsClock::new(0, true).read()
}
