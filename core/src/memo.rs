//! The last few answers of a pure function, kept for a caller that asks the same again: a
//! front end that makes a generator per request hands core the same layout text, node values
//! and options each time, and each step's answer depends on nothing else.
//!
//! Both operations `try_lock`: never a wait (a thread that finds the lock taken works the
//! answer out anew), so that a child of `fork()` whose parent's thread held the lock is not
//! stuck on it. An error is never kept: a bad input is refused each time.

use std::sync::Mutex;

/// Up to `KEEP` answers (`V`) by what was asked (`K`); the oldest goes first.
pub(crate) struct Memo<K, V, const KEEP: usize> {
    last: Mutex<Vec<(K, V)>>,
}

impl<K, V: Clone, const KEEP: usize> Memo<K, V, KEEP> {
    pub(crate) const fn new() -> Self {
        Memo { last: Mutex::new(Vec::new()) }
    }

    /// The answer kept for the question that `asked` recognises.
    pub(crate) fn get(&self, asked: impl Fn(&K) -> bool) -> Option<V> {
        let last = self.last.try_lock().ok()?;
        last.iter().find(|(k, _)| asked(k)).map(|(_, v)| v.clone())
    }

    /// Keeps `answer` to `question`.
    pub(crate) fn put(&self, question: K, answer: V) {
        if let Ok(mut last) = self.last.try_lock() {
            if last.len() >= KEEP {
                last.remove(0);
            }
            last.push((question, answer));
        }
    }
}
