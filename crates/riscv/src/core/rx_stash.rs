//! The netRX words a nanoPU register instruction popped (`net.rs` binds and fills them).

/// The netRX words an instruction popped, rs1's first (an instruction reads x30 at most
/// twice), kept until it completes so that a retry after a blocked access does not pop
/// again. Inline in the `Core`: a vector's length and pointer were read at every netRX
/// read.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RxStash {
    words: [u64; 2],
    len: u8,
}

impl RxStash {
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }
    /// The `i`-th word popped (0: rs1's if it reads x30).
    pub(crate) fn word(&self, i: usize) -> u64 {
        self.words[i]
    }
    pub(crate) fn push(&mut self, w: u64) {
        self.words[self.len as usize] = w;
        self.len += 1;
    }
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }
}
