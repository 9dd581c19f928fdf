//! What a `no_std` cdylib for wasm32 needs beside core: a panic handler (a trap: core does not
//! panic on any input, and a bug must not go on with a broken state) and an allocator for the
//! handles (a few boxed layouts, generators and keys; core itself allocates nothing).

use core::alloc::{GlobalAlloc, Layout};
use core::arch::wasm32;
use core::cell::UnsafeCell;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    wasm32::unreachable()
}

const PAGE: usize = 65536;

/// Blocks of power-of-two sizes, each size's freed blocks kept in a list for the next request
/// of that size, new ones cut from pages taken with `memory.grow`. Handles are small and of a
/// few sizes, so this wastes little and stays a few hundred bytes of code.
struct Blocks {
    free: UnsafeCell<[usize; usize::BITS as usize]>,
    next: UnsafeCell<usize>,
    end: UnsafeCell<usize>,
}

// SAFETY: wasm32-unknown-unknown runs one thread.
unsafe impl Sync for Blocks {}

#[global_allocator]
static ALLOCATOR: Blocks = Blocks {
    free: UnsafeCell::new([0; usize::BITS as usize]),
    next: UnsafeCell::new(0),
    end: UnsafeCell::new(0),
};

fn class(layout: Layout) -> (usize, usize) {
    let size = layout.size().max(layout.align()).max(8).next_power_of_two();
    (size, size.trailing_zeros() as usize)
}

unsafe impl GlobalAlloc for Blocks {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let (size, k) = class(layout);
        // SAFETY: one thread; no reference outlives this call.
        let (free, next, end) =
            unsafe { (&mut *self.free.get(), &mut *self.next.get(), &mut *self.end.get()) };
        if free[k] != 0 {
            let block = free[k];
            // SAFETY: a freed block holds the address of the next free one of its size.
            free[k] = unsafe { *(block as *const usize) };
            return block as *mut u8;
        }
        if *end == 0 {
            // The pages beyond the module's own memory (its data and stack) are ours.
            *end = wasm32::memory_size(0) * PAGE;
            *next = *end;
        }
        let start = (*next + size - 1) & !(size - 1);
        if start + size > *end {
            let pages = (start + size - *end).div_ceil(PAGE);
            if wasm32::memory_grow(0, pages) == usize::MAX {
                return core::ptr::null_mut();
            }
            *end += pages * PAGE;
        }
        *next = start + size;
        start as *mut u8
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let (_, k) = class(layout);
        // SAFETY: one thread; `ptr` is a block of class `k` that is no longer used.
        unsafe {
            let free = &mut *self.free.get();
            *(ptr as *mut usize) = free[k];
            free[k] = ptr as usize;
        }
    }
}
