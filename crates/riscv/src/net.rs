//! The nanoPU register interface on the core side (docs/platform.md section 2, docs/abi.md): in a
//! program that defines `__nanopu_abi`, reading x30 pops a netRX word and writing x31
//! pushes a netTX word. Such instructions are decoded as `Kind::Net` so the fast path never
//! looks at register numbers; here they are re-decoded and run with the platform calls
//! around them.
//!
//! Order (platform.rs contract): `tx_ready` if x31 is written, `rx_ready(n)` if x30 is read
//! n times; either refusing means no architectural effect. Then the pops (rs1 first), the
//! instruction itself, and the push of the value it wrote to x31. A read of one word asks
//! `rx_word`, readiness and pop in one call (a platform's default is those two calls).

use crate::core::{Core, Ex};
use crate::error::{BlockOn, ErrorKind, Exit};
use crate::mem::NodeMem;
use crate::op::{Op, RX1, RX2, SINK};
use crate::platform::{Platform, Stop};

const NETRX: u8 = 30;
const NETTX: u8 = 31;

impl Core {
    #[cold]
    pub(crate) fn exec_net<P: Platform>(
        &mut self,
        raw: Op,
        mem: &mut NodeMem,
        plat: &mut P,
    ) -> Result<(), Ex> {
        // Undo the prologue of `exec`: the real instruction goes through it below, and the
        // platform is asked at its issue cycle, so a retry asks at the same local time.
        self.cycle -= 1;
        self.stats.instret -= 1;
        let op = mem.net_ops.get(raw.imm as u32);
        self.stall_for(op.rs1, op.rs2);
        // NanoSort's every one: a `mv` from x30 or a `mv` to x31 (callgrind, 1,024-core
        // sort: 716,816 reads and 631,796 writes of its 1,348,612).
        if self.rx_stash.len() == 0 && crate::exec::is_alu(op.kind()) {
            let reads = (op.rs1 == NETRX) as u8 + (op.rs2 == NETRX) as u8;
            if reads == 1 && op.rd != NETTX {
                return self.read_alu(op, plat);
            }
            if reads == 0 && op.rd == NETTX {
                return self.push_alu(op, plat);
            }
        }
        self.exec_net_any(op, mem, plat)
    }

    /// An ALU op reading one netRX word, as `exec_net_any` runs it with nothing stashed: no
    /// stash (nothing after the pop can block), the word bound straight into its slot.
    #[inline(always)]
    fn read_alu<P: Platform>(&mut self, mut op: Op, plat: &mut P) -> Result<(), Ex> {
        let r = plat.rx_word(self.hart, self.cycle);
        let w = self.platform_access(r, BlockOn::NetRx, false)?;
        if op.rs1 == NETRX {
            self.x[RX1 as usize] = w;
            op.rs1 = RX1;
        } else {
            self.x[RX2 as usize] = w;
            op.rs2 = RX2;
        }
        if op.rd == NETRX {
            op.rd = SINK;
        }
        self.exec_alu_bound(op);
        self.raise_quiet(op);
        Ok(())
    }

    /// An ALU op writing x31 and reading no netRX word, as `exec_net_any` runs it.
    #[inline(always)]
    fn push_alu<P: Platform>(&mut self, op: Op, plat: &mut P) -> Result<(), Ex> {
        let r = plat.tx_ready(self.hart, self.cycle);
        self.platform_access(r, BlockOn::NetTx, false)?;
        self.exec_alu_bound(op);
        self.raise_quiet(op);
        self.push_tx(plat)
    }

    /// Any other nanoPU register instruction (or one retried with words stashed).
    #[inline(never)]
    fn exec_net_any<P: Platform>(&mut self, mut op: Op, mem: &mut NodeMem, plat: &mut P) -> Result<(), Ex> {
        let push = op.rd == NETTX;
        if push {
            let r = plat.tx_ready(self.hart, self.cycle);
            self.platform_access(r, BlockOn::NetTx, false)?;
        }
        self.take_rx(op, plat)?;
        self.bind_rx(&mut op);
        if op.rd == NETRX {
            op.rd = SINK;
        }
        let r = self.exec_bound(op, mem, plat);
        self.raise_quiet(op);
        if !matches!(r, Ok(()) | Err(Ex::Recheck)) {
            return r;
        }
        self.rx_stash.clear();
        if push {
            self.push_tx(plat)?;
        }
        r
    }

    /// The fast engine's scoreboard bound (`fast.rs`, `Core::quiet_from`): the decoded op it
    /// ran stands for `op` (whose destination is `SINK`), and went through `exec`'s
    /// prologue again (the write-port rule may move the pending result).
    #[inline(always)]
    fn raise_quiet(&mut self, op: Op) {
        if self.engine != crate::Engine::Interp {
            self.raise_after_exec(op);
        }
    }

    /// Run the instruction a `Net` op stands for, its x30 operands bound, as `exec` does.
    /// Nearly every one is a `mv` to or from a nanoPU register (all of NanoSort's): an ALU
    /// op, run here with `alu` and `exec`'s prologue past its operand wait (`issue_waited`).
    /// The rest go through `exec` out of line: inlined here, its every arm (loads, stores,
    /// their misses) made this function 8,000 machine instructions long for the one arm it
    /// runs.
    #[inline(always)]
    fn exec_bound<P: Platform>(&mut self, op: Op, mem: &mut NodeMem, plat: &mut P) -> Result<(), Ex> {
        if !crate::exec::is_alu(op.kind()) {
            return self.exec_not_alu(op, mem, plat);
        }
        self.exec_alu_bound(op);
        Ok(())
    }

    /// An ALU op (`exec::is_alu`, which every caller has tested), its operands bound, with
    /// `exec`'s prologue except its wait for the operands (`issue_waited`): `exec_net`
    /// waited for them (`stall_for`) before the platform calls, which move no cycle, and
    /// the slots netRX words are bound to (RX1, RX2) are no op's destination, so ready.
    #[inline(always)]
    fn exec_alu_bound(&mut self, op: Op) {
        debug_assert!(crate::exec::is_alu(op.kind()), "not an ALU op: {:?}", op.kind());
        debug_assert!(self.ready[op.rs1 as usize].max(self.ready[op.rs2 as usize]) <= self.cycle);
        // `issue_waited` changes no register value, so the operands may be read before it.
        let (a, b) = (self.slot(op.rs1), self.slot(op.rs2));
        let v = crate::exec::alu(op.kind(), a, b, op.imm as i64 as u64, self.pc).unwrap_or_default();
        self.issue_waited(op);
        self.set_slot(op.rd, v);
        self.pc = self.pc.wrapping_add(op.len() as u64);
    }

    #[inline(never)]
    fn exec_not_alu<P: Platform>(&mut self, op: Op, mem: &mut NodeMem, plat: &mut P) -> Result<(), Ex> {
        self.exec(op, mem, plat)
    }

    /// Pop the netRX words `op` reads that an earlier attempt did not: one through
    /// `rx_word` (nearly every read), two after `rx_ready` said both are there.
    fn take_rx<P: Platform>(&mut self, op: Op, plat: &mut P) -> Result<(), Ex> {
        let pops = (op.rs1 == NETRX) as usize + (op.rs2 == NETRX) as usize;
        let need = pops.saturating_sub(self.rx_stash.len());
        if need == 1 {
            let r = plat.rx_word(self.hart, self.cycle);
            let w = self.platform_access(r, BlockOn::NetRx, false)?;
            self.rx_stash.push(w);
        } else if need == 2 {
            let r = plat.rx_ready(self.hart, self.cycle, 2);
            self.platform_access(r, BlockOn::NetRx, false)?;
            for _ in 0..2 {
                let w = plat.rx_pop(self.hart, self.cycle);
                self.rx_stash.push(w);
            }
        }
        Ok(())
    }

    /// Point x30 operands at the popped words (kept until the instruction completes, so a
    /// retry after a blocked CSR access does not pop again).
    fn bind_rx(&mut self, op: &mut Op) {
        if op.rs1 == NETRX {
            self.x[RX1 as usize] = self.rx_stash.word(0);
            op.rs1 = RX1;
        }
        if op.rs2 == NETRX {
            self.x[RX2 as usize] = self.rx_stash.word((op.rs1 == RX1) as usize);
            op.rs2 = RX2;
        }
    }

    #[inline(always)]
    fn push_tx<P: Platform>(&mut self, plat: &mut P) -> Result<(), Ex> {
        if let Err(msg) = plat.tx_push(self.hart, self.cycle, self.x[NETTX as usize]) {
            self.pending = Some(self.fatal(ErrorKind::Platform(msg)));
            return Err(Ex::Stop);
        }
        Ok(())
    }

    /// Map a platform refusal to a stop: blocked (retry the instruction later: it had no
    /// effect, so `undo` its issue cycle and retirement) or a fatal fault. The answer is
    /// tested inline and the refusal handled out of line: as a `map_err` closure, its
    /// captures were put on the stack at every netRX read, netTX write and CSR access.
    #[inline(always)]
    pub(crate) fn platform_access<T>(
        &mut self,
        r: Result<T, Stop>,
        on: BlockOn,
        undo: bool,
    ) -> Result<T, Ex> {
        match r {
            Ok(v) => Ok(v),
            Err(s) => Err(self.refused(s, on, undo)),
        }
    }

    #[cold]
    #[inline(never)]
    fn refused(&mut self, s: Stop, on: BlockOn, undo: bool) -> Ex {
        self.pending = Some(match s {
            Stop::Blocked => {
                if undo {
                    self.cycle -= 1;
                    self.stats.instret -= 1;
                }
                Exit::Blocked(on)
            }
            Stop::Fault(msg) => self.fatal(ErrorKind::Platform(*msg)),
        });
        Ex::Stop
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use crate::asm::{self, reg::*};
    use crate::testing::Bench;
    use crate::{Access, BlockOn, Exit, Platform, Stop};

    /// Queues standing in for the NIC.
    #[derive(Default)]
    struct Queues {
        rx: VecDeque<u64>,
        tx: Vec<u64>,
        tx_full: bool,
    }

    impl Platform for Queues {
        fn rx_ready(&mut self, _: usize, _: u64, need: u32) -> Access<()> {
            if self.rx.len() >= need as usize {
                Ok(())
            } else {
                Err(Stop::Blocked)
            }
        }
        fn rx_pop(&mut self, _: usize, _: u64) -> u64 {
            self.rx.pop_front().unwrap_or(0)
        }
        fn tx_ready(&mut self, _: usize, _: u64) -> Access<()> {
            if self.tx_full {
                Err(Stop::Blocked)
            } else {
                Ok(())
            }
        }
        fn tx_push(&mut self, _: usize, _: u64, w: u64) -> Result<(), String> {
            self.tx.push(w);
            Ok(())
        }
        fn csr_read(&mut self, _: usize, _: u64, _: u64, _: u16) -> Access<u64> {
            Ok(0)
        }
        fn csr_write(&mut self, _: usize, _: u64, _: u16, _: u64) -> Access<()> {
            Ok(())
        }
    }

    fn program(body: &[u32]) -> Bench {
        let mut c = body.to_vec();
        c.push(asm::addi(A0, ZERO, 0));
        c.extend(asm::exit_with(A0));
        Bench::new(&c, true)
    }

    #[test]
    fn two_pops_rs1_first_and_push_of_result() {
        let mut b =
            program(&[asm::r(0x20, T5, T5, 0, T6, 0x33), asm::addi(A1, T6, 0), asm::addi(T5, ZERO, 5)]);
        let mut q = Queues { rx: [10, 3].into(), ..Default::default() };
        assert_eq!(b.core.run(&mut b.mem, &mut q, 10_000), Exit::Halted(0));
        assert_eq!(q.tx, vec![7], "sub t6, t5, t5 = 10 - 3");
        assert_eq!(b.core.reg(11), 7, "x31 reads the last value written");
        assert_eq!(b.core.reg(30), 0, "writes to x30 are discarded");
    }

    #[test]
    fn a_read_as_the_second_operand_alone() {
        let mut b = program(&[asm::addi(A1, ZERO, 10), asm::r(0x20, T5, A1, 0, A2, 0x33)]);
        let mut q = Queues { rx: [3, 4].into(), ..Default::default() };
        assert_eq!(b.core.run(&mut b.mem, &mut q, 10_000), Exit::Halted(0));
        assert_eq!(b.core.reg(12), 7, "sub a2, a1, t5 = 10 - 3");
        assert_eq!(q.rx, [4], "one word popped");
    }

    #[test]
    fn blocked_read_has_no_effect_and_retries() {
        let mut b = program(&[asm::addi(A1, ZERO, 1), asm::add(A2, T5, A1)]);
        let mut q = Queues::default();
        assert_eq!(b.core.run(&mut b.mem, &mut q, 10_000), Exit::Blocked(BlockOn::NetRx));
        let (pc, n) = (b.core.pc(), b.core.stats().instret);
        assert_eq!(b.core.run(&mut b.mem, &mut q, 10_000), Exit::Blocked(BlockOn::NetRx));
        assert_eq!((b.core.pc(), b.core.stats().instret), (pc, n));
        q.rx.push_back(41);
        assert_eq!(b.core.run(&mut b.mem, &mut q, 10_000), Exit::Halted(0));
        assert_eq!(b.core.reg(12), 42);
    }

    #[test]
    fn blocked_push_and_load_into_x31() {
        let mut c = asm::la_dram(A1, 0x8000_f100);
        c.extend([asm::addi(A2, ZERO, 9), asm::sd(A2, A1, 0), asm::ld(T6, A1, 0)]);
        let mut b = program(&c);
        let mut q = Queues { tx_full: true, ..Default::default() };
        assert_eq!(b.core.run(&mut b.mem, &mut q, 10_000), Exit::Blocked(BlockOn::NetTx));
        q.tx_full = false;
        assert_eq!(b.core.run(&mut b.mem, &mut q, 10_000), Exit::Halted(0));
        assert_eq!(q.tx, vec![9]);
    }

    #[test]
    fn plain_programs_use_x30_x31_as_registers() {
        let mut c = vec![asm::addi(T5, ZERO, 4), asm::add(T6, T5, T5), asm::addi(A0, T6, 0)];
        c.extend(asm::exit_with(A0));
        let mut b = Bench::new(&c, false);
        assert_eq!(b.run(10_000), Exit::Halted(8));
    }

    #[test]
    fn no_nic_is_a_fault_naming_the_core() {
        let mut b = program(&[asm::add(A1, T5, ZERO)]);
        let Exit::Error(e) = b.run(10_000) else { panic!() };
        assert_eq!(e.to_string(), "core 0, pc 0x80000000: netRX read on a node without a NIC");
    }
}
