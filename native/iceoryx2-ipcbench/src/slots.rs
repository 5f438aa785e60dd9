//! Token slots: the fixed table of outstanding loans and borrowed samples (no allocation on the hot path).

use core::mem::MaybeUninit;

/// Fixed-size table of outstanding loans or samples. A token is `(generation << 32) | (index + 1)`
/// so 0 is never a valid token and a stale token (already sent/released) is detected. Free slots are
/// a stack of indexes: a batch of 16 samples is inserted without scanning the table for each one.
pub(crate) struct Slots<T> {
    // Initialized exactly where `occupied` is set. Not `Option<T>`: a loan is a ~200-byte value, and moving it into
    // and out of an `Option` cost a measurable share of a small message's send (memcpys on every call).
    pub(crate) items: Box<[MaybeUninit<T>]>,
    pub(crate) occupied: Vec<bool>,
    pub(crate) generations: Vec<u32>,
    pub(crate) free: Vec<u32>,
}

impl<T> Slots<T> {
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            items: (0..capacity).map(|_| MaybeUninit::uninit()).collect(),
            occupied: vec![false; capacity],
            generations: vec![0; capacity],
            // popped from the end: slot 0 first
            free: (0..capacity as u32).rev().collect(),
        }
    }

    #[inline]
    pub(crate) fn is_full(&self) -> bool {
        self.free.is_empty()
    }

    /// Caller must check `is_full()` first.
    #[inline]
    pub(crate) fn insert(&mut self, value: T) -> (u64, &mut T) {
        let index = self.free.pop().expect("Slots::insert called while full") as usize;
        let generation = self.generations[index].wrapping_add(1).max(1);
        self.generations[index] = generation;
        self.occupied[index] = true;
        let slot = self.items[index].write(value);
        (((generation as u64) << 32) | (index as u64 + 1), slot)
    }

    #[inline]
    pub(crate) fn index_of(&self, token: u64) -> Option<usize> {
        let index = (token & 0xffff_ffff) as usize;
        if index == 0 || index > self.items.len() {
            return None;
        }
        let index = index - 1;
        (self.occupied[index] && self.generations[index] == (token >> 32) as u32).then_some(index)
    }

    #[inline]
    pub(crate) fn take(&mut self, token: u64) -> Option<T> {
        let index = self.index_of(token)?;
        self.occupied[index] = false;
        self.free.push(index as u32);
        // SAFETY: occupied, so initialized; no longer marked occupied, so never read or dropped again.
        Some(unsafe { self.items[index].assume_init_read() })
    }

    pub(crate) fn clear(&mut self) -> usize {
        let mut n = 0;
        for (item, occupied) in self.items.iter_mut().zip(self.occupied.iter_mut()) {
            if core::mem::take(occupied) {
                // SAFETY: it was occupied, so initialized, and is marked free before anything can see it again.
                unsafe { item.assume_init_drop() };
                n += 1;
            }
        }
        self.free.clear();
        self.free.extend((0..self.items.len() as u32).rev());
        n
    }
}

impl<T> Drop for Slots<T> {
    fn drop(&mut self) {
        self.clear();
    }
}
