//! A small set of task indices: inline for the first 64 tasks, spilling beyond.

/// A set of task indices. Sixteen bytes (each URL of a crawl has four):
/// the first 64 tasks inline, the rest behind one thin pointer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct TaskSet {
    low: u64,
    // Boxed on purpose: a thin pointer keeps the set at 16 bytes, and the
    // extra allocation is only made past 64 tasks.
    #[allow(clippy::box_collection)]
    high: Option<Box<Vec<u64>>>,
}

impl TaskSet {
    /// Add `i`; true when it was not there.
    pub(crate) fn insert(&mut self, i: usize) -> bool {
        if i < 64 {
            let had = self.low & (1 << i) != 0;
            self.low |= 1 << i;
            return !had;
        }
        let w = i / 64 - 1;
        let words = self.high.get_or_insert_default();
        if words.len() <= w {
            words.resize(w + 1, 0);
        }
        let had = words[w] & (1 << (i % 64)) != 0;
        words[w] |= 1 << (i % 64);
        !had
    }

    /// Whether `i` is in the set.
    pub(crate) fn contains(&self, i: usize) -> bool {
        if i < 64 {
            return self.low & (1 << i) != 0;
        }
        self.high
            .as_ref()
            .and_then(|w| w.get(i / 64 - 1))
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Whether the set is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.low == 0 && self.high.as_ref().is_none_or(|w| w.iter().all(|x| *x == 0))
    }

    /// The members, ascending.
    pub(crate) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        let low = (0..64).filter(|i| self.low & (1 << i) != 0);
        let high = self.high.iter().flat_map(|words| {
            words.iter().enumerate().flat_map(|(w, bits)| {
                (0..64)
                    .filter(move |b| bits & (1 << b) != 0)
                    .map(move |b| (w + 1) * 64 + b)
            })
        });
        low.chain(high)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_bytes() {
        assert_eq!(std::mem::size_of::<TaskSet>(), 16);
    }

    #[test]
    fn inline_and_spilled() {
        let mut s = TaskSet::default();
        assert!(s.is_empty());
        assert!(s.insert(3));
        assert!(!s.insert(3));
        assert!(s.insert(70));
        assert!(s.insert(200));
        assert!(s.contains(3) && s.contains(70) && s.contains(200));
        assert!(!s.contains(4) && !s.contains(71));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![3, 70, 200]);
    }
}
