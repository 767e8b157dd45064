//! Buffers for request bodies, kept between submissions. A witness body is read whole into
//! one buffer (the check parses it from there); in a fresh allocation every page of it is
//! faulted in on the handler's thread as the copy reaches it, which took about two thirds of
//! receiving a 33.5 MB witness on loopback (26-33 of 38-45 ms on the 2-core development
//! machine). A kept buffer's pages are resident already, so the copy is only a copy.

use std::sync::{Mutex, PoisonError};

/// Buffers kept at most.
const KEPT: usize = 4;

/// The largest buffer kept (a larger one is freed when its request ends): four of them
/// bound what the pool holds to 1 GiB.
const KEPT_BYTES: usize = 256 << 20;

/// Request-body buffers handed from one submission to the next.
#[derive(Debug, Default)]
pub(crate) struct Bodies {
    kept: Mutex<Vec<Vec<u8>>>,
}

impl Bodies {
    /// An empty buffer with room for `room` bytes: a kept one that has the room, else a new
    /// one, in place of the last kept one when none has it (freed rather than grown: growing
    /// would copy its old bytes), so that the kept buffers follow the bodies' sizes.
    pub(crate) fn take(&self, room: usize) -> Vec<u8> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(i) = kept.iter().position(|b| b.capacity() >= room) {
            return kept.swap_remove(i);
        }
        let freed = kept.pop();
        drop(kept);
        drop(freed);
        Vec::with_capacity(room)
    }

    /// Keeps `buffer` for a later request, unless [`KEPT`] are kept already or it is larger
    /// than [`KEPT_BYTES`].
    pub(crate) fn give(&self, mut buffer: Vec<u8>) {
        if buffer.capacity() > KEPT_BYTES {
            return;
        }
        buffer.clear();
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() < KEPT {
            kept.push(buffer);
        }
    }

    #[cfg(test)]
    fn kept(&self) -> Vec<usize> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.iter().map(Vec::capacity).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_back_empty_with_room_and_the_pool_stays_bounded() {
        let bodies = Bodies::default();
        let mut a = bodies.take(1000);
        assert!(a.is_empty() && a.capacity() >= 1000);
        a.extend_from_slice(&[7; 1000]);
        let ptr = a.as_ptr();
        bodies.give(a);
        // The kept buffer serves a request that fits it, emptied.
        let b = bodies.take(500);
        assert_eq!(b.as_ptr(), ptr);
        assert!(b.is_empty() && b.capacity() >= 1000);
        bodies.give(b);
        // A larger request gets a new buffer in place of the kept one.
        let c = bodies.take(5000);
        assert!(c.is_empty() && c.capacity() >= 5000);
        assert!(bodies.kept().is_empty());
        // At most KEPT are kept, none larger than KEPT_BYTES.
        for _ in 0..KEPT + 2 {
            bodies.give(Vec::with_capacity(10));
        }
        bodies.give(Vec::with_capacity(KEPT_BYTES + 1));
        assert_eq!(bodies.kept().len(), KEPT);
        assert!(bodies.kept().iter().all(|&c| c <= KEPT_BYTES));
        // A full pool keeps no more.
        bodies.give(c);
        assert!(bodies.kept().iter().all(|&c| c < 5000));
        // A request is served from a kept buffer that has its room, not from a smaller one.
        let mixed = Bodies::default();
        for room in [10, 5000, 20] {
            mixed.give(Vec::with_capacity(room));
        }
        assert_eq!(mixed.take(4000).capacity(), 5000);
        let mut left = mixed.kept();
        left.sort_unstable();
        assert_eq!(left, [10, 20]);
    }
}
