//! Device registers outside memory (memory-mapped I/O) reached through the platform: an
//! integer load or store that finds no memory, boot page or CLINT at its address asks the
//! platform ([`Platform::mmio_read`], [`Platform::mmio_write`]) before it raises an access
//! fault. The IceNIC's control registers are such a device (docs/models/icenic.md).
//!
//! The platform is asked at the instruction's issue cycle, as for the nanoPU CSRs, so that a
//! blocked access retried once global time has caught up is asked at the same cycle. A
//! device access ends the core's run (`Exit::Limit`) once it completes: it may have moved
//! an interrupt line or started work the event loop must schedule before the core goes on.

use crate::core::{Core, Ex, LOAD_FAULT, STORE_FAULT};
use crate::error::{BlockOn, Exit};
use crate::mem::NodeMem;
use crate::op::{Kind, Op};
use crate::platform::Platform;

impl Core {
    /// The cycle the current load or store issued at: before `exec`'s one cycle and the
    /// uncached access latency the slow path charged.
    fn issue_cycle(&self) -> u64 {
        self.cycle - 1 - self.t.mmio_latency
    }

    /// A device register's access time in place of the uncached latency the slow path
    /// charged (`TimingParams::device_latency`: the periphery bus's, not the CLINT's).
    fn device_timing(&mut self) {
        self.cycle = self.cycle - self.t.mmio_latency + self.t.device_latency;
    }

    /// A load the memory map refused: a device's register, or the access fault. A device's
    /// value is written back here (extended as the load's kind says) and the run ends.
    #[cold]
    pub(crate) fn device_load<const N: usize, P: Platform>(
        &mut self,
        plat: &mut P,
        op: Op,
        addr: u64,
    ) -> Result<u64, Ex> {
        match plat.mmio_read(self.hart, self.issue_cycle(), addr, N) {
            Ok(Some(v)) => {
                self.device_timing();
                self.cycle += self.t.device_load_extra; // the read's round trip over PCIe
                self.x[op.rd as usize] = extend(op.kind(), v);
                self.ready[op.rd as usize] = self.cycle;
                self.pc += op.len() as u64;
                self.pending = Some(Exit::Limit);
                Err(Ex::Stop)
            }
            Ok(None) => Err(Ex::Trap { cause: LOAD_FAULT, tval: addr }),
            Err(s) => {
                self.cycle -= self.t.mmio_latency;
                self.platform_access(Err(s), BlockOn::Mmio, true)
            }
        }
    }

    /// An integer store: memory, or a device's register when the memory map refuses it.
    #[inline(always)]
    pub(crate) fn int_store<const N: usize, P: Platform>(
        &mut self,
        mem: &mut NodeMem,
        plat: &mut P,
        addr: u64,
        v: u64,
        next: u64,
    ) -> Result<(), Ex> {
        match self.store_op::<N>(mem, addr, v, next) {
            Err(Ex::Trap { cause: STORE_FAULT, tval }) => self.device_store::<N, P>(plat, tval, v, next),
            r => r,
        }
    }

    #[cold]
    fn device_store<const N: usize, P: Platform>(
        &mut self,
        plat: &mut P,
        addr: u64,
        v: u64,
        next: u64,
    ) -> Result<(), Ex> {
        let v = if N >= 8 { v } else { v & ((1u64 << (8 * N)) - 1) };
        match plat.mmio_write(self.hart, self.issue_cycle(), addr, N, v) {
            Ok(true) => {
                self.device_timing();
                self.pc = next;
                self.pending = Some(Exit::Limit);
                Err(Ex::Stop)
            }
            Ok(false) => Err(Ex::Trap { cause: STORE_FAULT, tval: addr }),
            Err(s) => {
                self.cycle -= self.t.mmio_latency;
                self.platform_access(Err(s), BlockOn::Mmio, true)
            }
        }
    }
}

/// A loaded value as the load's kind extends it (RISC-V unprivileged spec 2.6, 5.3).
fn extend(kind: Kind, v: u64) -> u64 {
    match kind {
        Kind::Lb => v as i8 as u64,
        Kind::Lh => v as i16 as u64,
        Kind::Lw => v as i32 as u64,
        Kind::Lbu => v as u8 as u64,
        Kind::Lhu => v as u16 as u64,
        Kind::Lwu => v as u32 as u64,
        _ => v,
    }
}

#[cfg(test)]
mod tests {
    use crate::asm::{self, reg::*};
    use crate::testing::Bench;
    use crate::{Access, Exit, NoNic, Platform, TimingParams};

    /// A node without a NIC (`NoNic`) but for one device register at 0x1001_6000 (IceNIC's
    /// block), which reads as 5.
    struct Device(NoNic);

    impl Platform for Device {
        fn rx_ready(&mut self, hart: usize, now: u64, need: u32) -> Access<()> {
            self.0.rx_ready(hart, now, need)
        }
        fn rx_pop(&mut self, hart: usize, now: u64) -> u64 {
            self.0.rx_pop(hart, now)
        }
        fn tx_ready(&mut self, hart: usize, now: u64) -> Access<()> {
            self.0.tx_ready(hart, now)
        }
        fn tx_push(&mut self, hart: usize, now: u64, word: u64) -> Result<(), String> {
            self.0.tx_push(hart, now, word)
        }
        fn csr_read(&mut self, hart: usize, now: u64, pc: u64, csr: u16) -> Access<u64> {
            self.0.csr_read(hart, now, pc, csr)
        }
        fn csr_write(&mut self, hart: usize, now: u64, csr: u16, value: u64) -> Access<()> {
            self.0.csr_write(hart, now, csr, value)
        }
        fn mmio_read(&mut self, _: usize, _: u64, addr: u64, _: usize) -> Access<Option<u64>> {
            Ok((addr == 0x1001_6000).then_some(5))
        }
        fn mmio_write(&mut self, _: usize, _: u64, addr: u64, _: usize, _: u64) -> Access<bool> {
            Ok(addr == 0x1001_6000)
        }
    }

    /// Cycles to run `access` (with a1 = the register's address) and a dependant of a0, and
    /// the exit code (a0 + 1).
    fn run(access: u32) -> (u64, Exit) {
        let mut code = vec![asm::lui(A1, 0x10016), access, asm::addi(A2, A0, 1)];
        code.extend(asm::exit_with(A2));
        let mut b = Bench::new(&code, false);
        loop {
            match b.core.run(&mut b.mem, &mut Device(NoNic), 10_000) {
                Exit::Limit => continue,
                e => return (b.core.cycle(), e),
            }
        }
    }

    #[test]
    fn a_device_register_costs_the_periphery_bus_path() {
        let t = TimingParams::default();
        let (plain, e) = run(asm::addi(A0, ZERO, 5));
        assert_eq!(e, Exit::Halted(6));
        // A load's dependant issues 1 + device_latency cycles after it (12: the RTL's path,
        // docs/models/icenic.md "Register access timing"), not the CLINT's mmio_latency.
        let (load, e) = run(asm::i(0, A1, 2, A0, 0x03)); // lw a0, 0(a1)
        assert_eq!((load - plain, e), (t.device_latency, Exit::Halted(6)));
        assert_eq!(t.device_latency, 11);
        // A store costs the core the same (the next register access waits for its ack).
        let (store, _) = run(asm::s(0, A0, A1, 2)); // sw a0, 0(a1)
        assert_eq!(store - run(asm::addi(A3, ZERO, 0)).0, t.device_latency);
    }
}
