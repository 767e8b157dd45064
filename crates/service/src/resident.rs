//! The prepared keys a lane keeps on its GPU, most recently used first: the least recently
//! used go when there are more than a count or they hold more GPU memory than a bound, a
//! key that runs out of GPU memory while being prepared is prepared once more after the
//! others are dropped, and a proof that runs out of it drops the others for the next attempt.

/// How many prepared keys a lane keeps, and how much GPU memory they may hold.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// Most keys kept (at least one: the key in use).
    pub count: usize,
    /// Most GPU bytes the kept keys hold together (`None`: no bound); the key in use is kept
    /// even where it alone is larger.
    pub bytes: Option<u64>,
}

/// The resident keys, by id, most recently used first.
pub(crate) struct Resident<K> {
    keys: Vec<(String, K)>,
}

impl<K> Resident<K> {
    pub fn new() -> Self {
        Self { keys: Vec::new() }
    }

    /// The ids kept, most recently used first.
    #[cfg(test)]
    pub fn ids(&self) -> Vec<&str> {
        self.keys.iter().map(|(id, _)| id.as_str()).collect()
    }

    /// Key `id`, made the most recently used; prepared by `prepare` where it is not resident.
    /// Where preparing fails with an error `out_of_memory` accepts and other keys are
    /// resident, they are dropped (freeing their GPU memory) and `prepare` runs once more.
    /// Then keys beyond `limits` go, least recently used first (`bytes` gives a key's GPU
    /// memory).
    pub fn get_or_prepare<E>(
        &mut self,
        id: &str,
        limits: Limits,
        bytes: impl Fn(&K) -> u64,
        mut prepare: impl FnMut() -> Result<K, E>,
        out_of_memory: impl Fn(&E) -> bool,
    ) -> Result<&K, E> {
        if let Some(at) = self.keys.iter().position(|(k, _)| k == id) {
            let entry = self.keys.remove(at);
            self.keys.insert(0, entry);
            return Ok(&self.keys[0].1);
        }
        let key = match prepare() {
            Ok(key) => key,
            Err(e) if out_of_memory(&e) && !self.keys.is_empty() => {
                tracing::info!(
                    key = id,
                    dropped = self.keys.len(),
                    "out of GPU memory preparing a key: the resident keys dropped, preparing again"
                );
                self.keys.clear();
                prepare()?
            }
            Err(e) => return Err(e),
        };
        self.keys.insert(0, (id.to_owned(), key));
        self.trim(limits, bytes);
        Ok(&self.keys[0].1)
    }

    /// Drops every key but the most recently used one; returns how many went.
    pub fn keep_most_recent(&mut self) -> usize {
        let dropped = self.keys.len().saturating_sub(1);
        self.keys.truncate(1);
        dropped
    }

    /// Drops the least recently used keys beyond `limits`, never the most recent one.
    fn trim(&mut self, limits: Limits, bytes: impl Fn(&K) -> u64) {
        self.keys.truncate(limits.count.max(1));
        if let Some(max) = limits.bytes {
            let mut total = 0u64;
            let keep = self
                .keys
                .iter()
                .position(|(_, k)| {
                    total = total.saturating_add(bytes(k));
                    total > max
                })
                .map_or(self.keys.len(), |at| at.max(1));
            if keep < self.keys.len() {
                tracing::info!(
                    dropped = self.keys.len() - keep,
                    max_bytes = max,
                    "resident keys over their GPU memory bound: least recently used dropped"
                );
            }
            self.keys.truncate(keep);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake key: its GPU bytes.
    type Key = u64;

    #[derive(Debug, PartialEq)]
    enum Fail {
        OutOfMemory,
        Other,
    }

    fn get(r: &mut Resident<Key>, id: &str, size: u64, limits: Limits) -> Result<Key, Fail> {
        r.get_or_prepare(id, limits, |k| *k, || Ok(size), |e| *e == Fail::OutOfMemory)
            .copied()
    }

    const BY_COUNT: Limits = Limits {
        count: 2,
        bytes: None,
    };

    #[test]
    fn least_recently_used_go_first_by_count() {
        let mut r = Resident::new();
        for id in ["a", "b", "a", "c"] {
            get(&mut r, id, 1, BY_COUNT).unwrap();
        }
        // "a" was used after "b": "b" went when "c" came.
        assert_eq!(r.ids(), ["c", "a"]);
    }

    #[test]
    fn keys_over_the_memory_bound_go_but_never_the_one_in_use() {
        let limits = Limits {
            count: 8,
            bytes: Some(10),
        };
        let mut r = Resident::new();
        get(&mut r, "a", 4, limits).unwrap();
        get(&mut r, "b", 4, limits).unwrap();
        assert_eq!(r.ids(), ["b", "a"]);
        get(&mut r, "c", 4, limits).unwrap();
        assert_eq!(r.ids(), ["c", "b"]);
        // A key larger than the bound alone is kept, alone.
        get(&mut r, "huge", 40, limits).unwrap();
        assert_eq!(r.ids(), ["huge"]);
    }

    #[test]
    fn keep_most_recent_drops_the_others() {
        let mut r = Resident::new();
        assert_eq!(r.keep_most_recent(), 0);
        for id in ["a", "b", "c"] {
            get(
                &mut r,
                id,
                1,
                Limits {
                    count: 4,
                    bytes: None,
                },
            )
            .unwrap();
        }
        assert_eq!(r.keep_most_recent(), 2);
        assert_eq!(r.ids(), ["c"]);
    }

    #[test]
    fn out_of_memory_drops_the_others_and_prepares_once_more() {
        let mut r = Resident::new();
        get(&mut r, "a", 1, BY_COUNT).unwrap();
        let mut calls = 0;
        let got = r.get_or_prepare(
            "b",
            BY_COUNT,
            |k| *k,
            || {
                calls += 1;
                if calls == 1 {
                    Err(Fail::OutOfMemory)
                } else {
                    Ok(2)
                }
            },
            |e| *e == Fail::OutOfMemory,
        );
        assert_eq!(got.copied(), Ok(2));
        assert_eq!(calls, 2);
        assert_eq!(r.ids(), ["b"]);
    }

    /// Asks for `id` with a preparation that always runs out of memory: the error and how
    /// many times it ran.
    fn always_out_of_memory(r: &mut Resident<Key>, id: &str) -> (Option<Fail>, usize) {
        let mut calls = 0;
        let got = r.get_or_prepare(
            id,
            BY_COUNT,
            |k| *k,
            || {
                calls += 1;
                Err::<Key, _>(Fail::OutOfMemory)
            },
            |e| *e == Fail::OutOfMemory,
        );
        (got.err(), calls)
    }

    #[test]
    fn other_failures_and_a_second_out_of_memory_are_returned() {
        let mut r = Resident::new();
        get(&mut r, "a", 1, BY_COUNT).unwrap();
        let other = r.get_or_prepare(
            "b",
            BY_COUNT,
            |k| *k,
            || Err(Fail::Other),
            |e| *e == Fail::OutOfMemory,
        );
        assert_eq!(other.err(), Some(Fail::Other));
        assert_eq!(
            r.ids(),
            ["a"],
            "a failure other than memory keeps the resident keys"
        );
        // One retry after dropping "a", not a loop.
        assert_eq!(
            always_out_of_memory(&mut r, "b"),
            (Some(Fail::OutOfMemory), 2)
        );
        assert!(r.ids().is_empty());
        // With nothing resident, out of memory is returned at once.
        assert_eq!(
            always_out_of_memory(&mut r, "c"),
            (Some(Fail::OutOfMemory), 1)
        );
    }
}
