//! Watched memory: ranges whose loads and stores a core counts, byte by byte. ZeroNIC nodes
//! watch the regions registered for payload, so that the payload bytes a control-path core
//! touches are counted (docs/models/zeronic.md "The count"). A watched chunk never enters
//! the core's TLBs: its accesses take the slow path, which counts them; an unwatched
//! core's fast path is unchanged.

use super::{Core, Ex, LOAD_FAULT, STORE_FAULT};
use crate::mem::NodeMem;

/// The ranges a core watches and the bytes it has loaded or stored in them.
#[derive(Clone, Debug, Default)]
pub struct Watch {
    ranges: Vec<(u64, u64)>,
    bytes: u64,
}

impl Watch {
    /// Bytes of `[addr, addr + n)` inside a watched range.
    fn overlap(&self, addr: u64, n: usize) -> u64 {
        let end = addr + n as u64;
        let inside = |&(a, b): &(u64, u64)| end.min(b).saturating_sub(addr.max(a));
        self.ranges.iter().map(inside).sum()
    }

    /// Does the core watch anything?
    #[inline]
    pub(crate) fn any(&self) -> bool {
        !self.ranges.is_empty()
    }
}

impl Core {
    /// Count this core's loads and stores in `[addr, addr + len)` from now on.
    pub fn watch(&mut self, addr: u64, len: u64) {
        self.aside.get_mut().watch.ranges.push((addr, addr + len));
        self.tlb.clear();
    }

    /// Bytes this core loaded or stored in watched ranges.
    pub fn watched_bytes(&self) -> u64 {
        self.aside.get().map_or(0, |a| a.watch.bytes)
    }

    /// Does the access touch a chunk with watched bytes (then it must not enter a TLB)?
    #[inline]
    pub(crate) fn watched_chunk(&self, addr: u64, n: usize) -> bool {
        let chunk = crate::sparse::CHUNK;
        let (lo, hi) = (addr / chunk * chunk, (addr + n as u64).div_ceil(chunk) * chunk);
        self.aside.get().is_some_and(|a| a.watch.any() && a.watch.overlap(lo, (hi - lo) as usize) > 0)
    }

    /// A load of `n` bytes in a watched chunk: counted, never cached in the TLB.
    pub(crate) fn load_watched(&mut self, mem: &mut NodeMem, addr: u64, n: usize) -> Result<u64, Ex> {
        let watch = &mut self.aside.get_mut().watch;
        watch.bytes += watch.overlap(addr, n);
        let mut b = [0u8; 8];
        mem.read(addr, &mut b[..n]).map_err(|_| Ex::Trap { cause: LOAD_FAULT, tval: addr })?;
        Ok(u64::from_le_bytes(b))
    }

    /// A store of `n` bytes of `v` in a watched chunk: counted, never cached in the TLB.
    pub(crate) fn store_watched(&mut self, mem: &mut NodeMem, addr: u64, n: usize, v: u64) -> Result<(), Ex> {
        let watch = &mut self.aside.get_mut().watch;
        watch.bytes += watch.overlap(addr, n);
        mem.write(addr, &v.to_le_bytes()[..n]).map_err(|_| Ex::Trap { cause: STORE_FAULT, tval: addr })
    }
}

#[cfg(test)]
mod tests {
    use crate::asm::{self, reg::*};
    use crate::sparse::CHUNK;
    use crate::testing::Bench;

    /// A store that leaves a shared chunk as it is enters the next chunk in the TLB too
    /// (`Core::enter_next_shared`), but not a watched one: a load there is still counted.
    #[test]
    fn a_watched_chunk_after_a_kept_store_is_still_counted() {
        // Zeros the image leaves shared: the last 8 bytes of a chunk, then the next chunk.
        let at = Bench::new(&[asm::jal(ZERO, 0)], false).mem.base + 16 * CHUNK - 8;
        let probe = |watch: bool| {
            let mut code = asm::li64(A0, at);
            code.extend([asm::sd(ZERO, A0, 0), asm::ld(A1, A0, 8), asm::jal(ZERO, 0)]);
            let mut b = Bench::new(&code, false);
            if watch {
                b.core.watch(at + 8, 8);
            }
            b.run(2_000);
            b.core.watched_bytes()
        };
        assert_eq!((probe(false), probe(true)), (0, 8));
    }
}
