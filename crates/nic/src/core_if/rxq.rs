//! A context's local RX queue: the messages delivered to it, read word by word through
//! netRX (docs/platform.md section 2).
//!
//! A message streams in at one word per cycle: its header is readable from the cycle it
//! starts and its `k`-th payload word `k` cycles later (`Nic::deliver`). The queue keeps each
//! message whole, with its start and how many of its words were read, rather than one entry
//! per word with its cycle: a delivery moves the message's words in instead of copying them
//! one by one (in a 1,024-core NanoSort that copy was 154 of the 376 host instructions of a
//! delivery, callgrind), and what a core reads, and when, is the same.

use crate::message::Words;
use std::collections::VecDeque;

/// Messages a drained queue keeps room for; a queue that grew past them gives the rest back
/// (a burst of messages waiting for a core would otherwise keep its room for the whole run,
/// 48 bytes a message).
const KEEP: usize = 4;

/// One message in the queue.
#[derive(Clone, Debug)]
struct RxMsg {
    /// The cycle its header is readable; word `k` (the header is word 0) is `k` cycles later.
    start: u64,
    header: u64,
    words: Words,
    /// Its words read so far, the header included.
    read: usize,
}

impl RxMsg {
    /// Words not read yet, the header included.
    #[inline]
    fn left(&self) -> usize {
        1 + self.words.len() - self.read
    }

    /// The next word to read and the cycle it is readable at.
    #[inline]
    fn head(&self) -> (u64, u64) {
        let word = match self.read {
            0 => self.header,
            k => self.words[k - 1],
        };
        (self.start + self.read as u64, word)
    }
}

/// The words delivered to a context and not yet read, in order, each readable from its cycle.
/// The cycles never decrease along the queue (`Nic::deliver` starts a message after the
/// previous one's last word).
#[derive(Clone, Debug, Default)]
pub struct RxQueue {
    msgs: VecDeque<RxMsg>,
    /// Words queued over all messages, headers included.
    words: usize,
}

impl RxQueue {
    /// Words queued, headers included.
    #[inline]
    pub fn len(&self) -> usize {
        self.words
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.words == 0
    }

    /// A message whose header (`header`) is readable at `start` and its `words` one a cycle
    /// after it.
    pub fn push(&mut self, start: u64, header: u64, words: Words) {
        debug_assert!(self.last_cycle().is_none_or(|t| t < start), "cycles never decrease");
        self.words += 1 + words.len();
        self.msgs.push_back(RxMsg { start, header, words, read: 0 });
    }

    /// The cycle the last queued word is readable at.
    #[inline]
    pub fn last_cycle(&self) -> Option<u64> {
        self.msgs.back().map(|m| m.start + m.words.len() as u64)
    }

    /// The next word to read and the cycle it is readable at.
    #[inline]
    pub fn front(&self) -> Option<(u64, u64)> {
        self.msgs.front().map(RxMsg::head)
    }

    /// Take the next word (there is one), giving back a drained queue's room.
    #[inline]
    pub fn pop(&mut self) -> u64 {
        let (_, word) = self.msgs.front().expect("a netRX pop on an empty queue").head();
        self.take_head();
        word
    }

    /// `front`, and `pop` if the word is readable at `now`: the word, or the cycle it will
    /// be (`None` if none is queued). A netRX read's one look at the queue where `front`
    /// and `pop` made two.
    #[inline]
    pub fn pop_by(&mut self, now: u64) -> Result<u64, Option<u64>> {
        let Some(m) = self.msgs.front() else { return Err(None) };
        let (at, word) = m.head();
        if at > now {
            return Err(Some(at));
        }
        self.take_head();
        Ok(word)
    }

    /// The head message's next word read: the message dropped once read whole.
    #[inline]
    fn take_head(&mut self) {
        let Some(m) = self.msgs.front_mut() else { return };
        m.read += 1;
        self.words -= 1;
        if m.left() == 0 {
            self.msgs.pop_front();
            self.release();
        }
    }

    /// The cycle at which the `n`-th queued word (1-based) becomes readable, if queued.
    #[inline]
    pub fn ready_at(&self, n: usize) -> Option<u64> {
        // By index, not `iter`: the deque's iterator was a call (fast profile), and the walk
        // nearly always ends at the first message (netRX reads and `lmsgsrdy` ask for one).
        let (mut n, mut i) = (n.checked_sub(1)?, 0);
        while let Some(m) = self.msgs.get(i) {
            if n < m.left() {
                return Some(m.start + (m.read + n) as u64);
            }
            (n, i) = (n - m.left(), i + 1);
        }
        None
    }

    /// Give back a drained queue's room beyond `KEEP` messages.
    fn release(&mut self) {
        if self.msgs.is_empty() {
            super::give_back(&mut self.msgs, KEEP);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The queue answers as a queue of one entry per word with its cycle, the
    /// representation it replaced: the same words, at the same cycles, in the same order,
    /// for random messages pushed and words popped in turns.
    #[test]
    fn reads_as_one_entry_per_word() {
        let mut rng = nanopu_sim::Rng::new(7);
        let (mut q, mut model) = (RxQueue::default(), VecDeque::<(u64, u64)>::new());
        for _ in 0..2000 {
            if rng.below(3) == 0 {
                let start = model.back().map_or(0, |(t, _)| t + 1) + rng.below(4);
                let words: Vec<u64> = (0..rng.below(4)).map(|_| rng.next_u64()).collect();
                let header = rng.next_u64();
                model.push_back((start, header));
                model.extend(words.iter().enumerate().map(|(i, &w)| (start + 1 + i as u64, w)));
                q.push(start, header, words.into());
            } else if let Some(&(t, w)) = model.front() {
                // A read a cycle early, on time or late, or a plain pop.
                let now = (t + rng.below(3)).saturating_sub(1);
                let taken = if rng.below(2) == 0 {
                    assert_eq!(q.pop_by(now), if now < t { Err(Some(t)) } else { Ok(w) });
                    now >= t
                } else {
                    assert_eq!(q.pop(), w);
                    true
                };
                if taken {
                    model.pop_front();
                }
            } else {
                assert_eq!(q.pop_by(u64::MAX), Err(None));
            }
            assert_eq!((q.len(), q.is_empty()), (model.len(), model.is_empty()));
            assert_eq!(q.front(), model.front().map(|&(t, w)| (t, w)));
            assert_eq!(q.last_cycle(), model.back().map(|&(t, _)| t));
            for n in 0..model.len() + 2 {
                let want = n.checked_sub(1).and_then(|i| model.get(i)).map(|&(t, _)| t);
                assert_eq!(q.ready_at(n), want, "word {n}");
            }
        }
    }

    #[test]
    fn a_drained_queue_gives_back_its_room() {
        let mut q = RxQueue::default();
        (0..20).for_each(|k| q.push(10 * k, k, vec![k].into()));
        (0..40).for_each(|_| {
            q.pop();
        });
        assert!(q.is_empty() && q.msgs.capacity() <= KEEP);
    }
}
