//! The nanoPU register instructions a node's cores ran lately, decoded (`net.rs` runs them).

use crate::decode::decode_parcels;
use crate::op::Op;

/// Entries of [`NetOps`] (a power of two).
const NET_OPS: usize = 32;

/// nanoPU register instructions lately run, decoded: (raw bits, op); u32::MAX, never a
/// nanoPU instruction's bits, marks an empty entry. `exec_net` decoded them at every
/// execution, a quarter of its cost (callgrind, 256-core NanoSort). One table serves a
/// node's cores (`NodeMem::net_ops`): they run one program, and a table in each `Core`
/// (384 bytes) put a node's 4 cores in mimalloc's 12 KiB size class (docs/profile.md).
pub(crate) struct NetOps([(u32, Op); NET_OPS]);

impl Default for NetOps {
    fn default() -> NetOps {
        NetOps([(u32::MAX, Op::ILLEGAL0); NET_OPS])
    }
}

impl NetOps {
    /// The instruction a `Kind::Net` op stands for, decoded from its raw bits (remembered
    /// in a small direct-mapped table: a program runs few of them, over and over).
    #[inline]
    pub(crate) fn get(&mut self, raw: u32) -> Op {
        let slot = (raw.wrapping_mul(0x9e37_79b1) >> (32 - NET_OPS.trailing_zeros())) as usize;
        match self.0[slot] {
            (at, op) if at == raw => op,
            _ => self.decode(slot, raw),
        }
    }

    #[cold]
    fn decode(&mut self, slot: usize, raw: u32) -> Op {
        let op = decode_parcels(raw as u16, (raw >> 16) as u16, false);
        self.0[slot] = (raw, op);
        op
    }
}
