//! The state word's format: the one place that packs and unpacks it.
//!
//! The word holds the *next free slot*: a logical tick `L`, the rollover counter `r` (when the
//! layout has a `rollover` field) and the next free sequence number `s < 2^sequence_bits`,
//! packed as `L | r | s` from high to low. Because it holds the next free slot (not the last
//! one used) it needs no "nothing issued yet" sentinel, and a 64-bit layout still fits. The
//! coordination layer reads it through [`Word`] too (a state file's exact high-water mark at
//! close, a lease's floor), never by shifting bits of its own.

use core::sync::atomic::{AtomicU64, Ordering};

/// How a layout's state word is packed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Word {
    /// `log2` of the sequence capacity: the bits of `s`.
    seq_bits: u32,
    /// The bits of the rollover counter `r` (0 without a rollover field).
    roll_bits: u32,
    /// The layout's last tick: a floor past it is its last slot, which is never issued.
    max_tick: u64,
}

impl Word {
    pub(crate) const fn new(seq_bits: u32, roll_bits: u32, max_tick: u64) -> Word {
        Word { seq_bits, roll_bits, max_tick }
    }

    /// `(L, r, s)` of a word.
    #[inline]
    pub(crate) const fn unpack(&self, w: u64) -> (u64, u64, u64) {
        let (sb, rb) = (self.seq_bits, self.roll_bits);
        let s = w & ((1 << sb) - 1);
        let r = if rb == 0 { 0 } else { (w >> sb) & ((1 << rb) - 1) };
        let l = if sb + rb >= 64 { 0 } else { w >> (sb + rb) };
        (l, r, s)
    }

    /// The word of `(L, r, s)`.
    #[inline]
    pub(crate) const fn pack(&self, l: u64, r: u64, s: u64) -> u64 {
        let (sb, rb) = (self.seq_bits, self.roll_bits);
        let l = if sb + rb >= 64 { 0 } else { l << (sb + rb) };
        l | (r << sb) | s
    }

    /// The word whose next free slot is the start of tick `floor` (rollover `r`); a floor
    /// past the layout's last tick is its last slot, which is never issued.
    pub(crate) const fn floor(&self, floor: u64, r: u64) -> u64 {
        if floor > self.max_tick {
            self.pack(self.max_tick, r, (1 << self.seq_bits) - 1)
        } else {
            self.pack(floor, r, 0)
        }
    }

    /// Moves the next free slot of `cell` up to the start of tick `floor` if it is below.
    pub(crate) fn raise_to(&self, cell: &AtomicU64, floor: u64) {
        let mut cur = cell.load(Ordering::Acquire);
        loop {
            let (l, r, _) = self.unpack(cur);
            if l >= floor {
                return;
            }
            match cell.compare_exchange(cur, self.floor(floor, r), Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return,
                Err(now) => cur = now,
            }
        }
    }

    /// Moves the next free slot of `cell` strictly up: one slot (with a rollover field, to
    /// the next tick's start), so one slot is never issued. A word at the layout's last slot,
    /// where nothing is issued, is written as it is. It always writes, with a
    /// compare-and-swap: another thread's compare-and-swap from a word read before it fails,
    /// and a thread that reads the word after it sees every store made before it (how a
    /// lease's new claim reaches the lean path: see `HighWater::fast`).
    pub(crate) fn step_past(&self, cell: &AtomicU64) {
        let last = self.floor(self.max_tick.saturating_add(1), 0);
        let mut cur = cell.load(Ordering::Acquire);
        loop {
            let (l, r, _) = self.unpack(cur);
            let next = if l > self.max_tick || (l == self.max_tick && cur >= last) {
                self.floor(self.max_tick.saturating_add(1), r)
            } else if self.roll_bits == 0 {
                cur + 1
            } else {
                self.floor(l + 1, r)
            };
            match cell.compare_exchange(cur, next, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return,
                Err(now) => cur = now,
            }
        }
    }

    /// The end (an exclusive tick) of what may have been issued from a word: the tick holds
    /// issued IDs when its next free sequence number is above 0. `None` with a rollover
    /// field, whose tick can sit below ticks issued under a lower counter.
    pub(crate) const fn issued_end(&self, w: u64) -> Option<u64> {
        if self.roll_bits > 0 {
            return None;
        }
        let (l, _, s) = self.unpack(w);
        Some(if s > 0 { l + 1 } else { l })
    }
}

#[cfg(test)]
mod tests {
    use super::Word;

    #[test]
    fn packs_and_unpacks() {
        let w = Word::new(12, 2, (1 << 41) - 1);
        let word = w.pack(123_456, 3, 4095);
        assert_eq!(w.unpack(word), (123_456, 3, 4095));
        assert_eq!(w.issued_end(word), None);
        let w = Word::new(12, 0, (1 << 41) - 1);
        assert_eq!(w.issued_end(w.pack(10, 0, 0)), Some(10));
        assert_eq!(w.issued_end(w.pack(10, 0, 1)), Some(11));
        assert_eq!(w.unpack(w.floor(1 << 41, 0)), ((1 << 41) - 1, 0, 4095));
    }

    #[test]
    fn a_step_moves_the_word_strictly_up() {
        use core::sync::atomic::{AtomicU64, Ordering};
        let (w, wr) = (Word::new(12, 0, 1000), Word::new(12, 2, 1000));
        for (format, from, to) in [
            (w, (10, 0, 7), (10, 0, 8)),
            // The tick's last slot carries into the next tick.
            (w, (10, 0, 4095), (11, 0, 0)),
            // A fresh word (0) moves too.
            (w, (0, 0, 0), (0, 0, 1)),
            // With a rollover field: the next tick's start, its counter kept.
            (wr, (10, 3, 7), (11, 3, 0)),
            // At the layout's end: up to its last slot, never issued, where it stays.
            (w, (1000, 0, 4094), (1000, 0, 4095)),
            (w, (1000, 0, 4095), (1000, 0, 4095)),
        ] {
            let cell = AtomicU64::new(format.pack(from.0, from.1, from.2));
            format.step_past(&cell);
            assert_eq!(format.unpack(cell.load(Ordering::Relaxed)), to, "from {from:?}");
        }
    }

    #[test]
    fn a_sixty_four_bit_word_keeps_its_tick() {
        // time:1 + sequence:63: L has one bit above s.
        let w = Word::new(63, 0, 1);
        assert_eq!(w.unpack(w.pack(1, 0, 5)), (1, 0, 5));
    }
}
