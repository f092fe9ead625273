//! A extension (RISC-V unprivileged spec chapter 14): LR/SC and AMOs, W and D. They must be
//! naturally aligned (else address-misaligned traps, spec 14.4) and target DRAM (else access
//! faults). Timing: a load plus `amo_extra`, result latency of a sub-word load.

use crate::core::{Core, Ex, LOAD_FAULT, STORE_FAULT};
use crate::mem::NodeMem;
use crate::op::{Amo, Kind, Op};

const LOAD_MISALIGNED: u64 = 4;
const STORE_MISALIGNED: u64 = 6;

fn amo_value(f: Amo, old: u64, src: u64, word: bool) -> u64 {
    let (so, ss) = if word { (old as i32 as i64, src as i32 as i64) } else { (old as i64, src as i64) };
    let (uo, us) = if word { (old as u32 as u64, src as u32 as u64) } else { (old, src) };
    match f {
        Amo::Swap => src,
        Amo::Add => old.wrapping_add(src),
        Amo::Xor => old ^ src,
        Amo::And => old & src,
        Amo::Or => old | src,
        Amo::Min => {
            if so <= ss {
                old
            } else {
                src
            }
        }
        Amo::Max => {
            if so >= ss {
                old
            } else {
                src
            }
        }
        Amo::Minu => {
            if uo <= us {
                old
            } else {
                src
            }
        }
        Amo::Maxu => {
            if uo >= us {
                old
            } else {
                src
            }
        }
    }
}

impl Core {
    pub(crate) fn exec_amo(&mut self, op: Op, mem: &mut NodeMem, addr: u64, src: u64) -> Result<(), Ex> {
        let word = matches!(op.kind(), Kind::LrW | Kind::ScW | Kind::AmoW);
        let size = if word { 4 } else { 8 };
        let is_lr = matches!(op.kind(), Kind::LrW | Kind::LrD);
        if !addr.is_multiple_of(size) {
            return Err(Ex::Trap {
                cause: if is_lr { LOAD_MISALIGNED } else { STORE_MISALIGNED },
                tval: addr,
            });
        }
        if mem.dram_page(addr).is_none() {
            return Err(Ex::Trap { cause: if is_lr { LOAD_FAULT } else { STORE_FAULT }, tval: addr });
        }
        self.cycle += self.t.amo_extra;
        let rd = op.rd as usize;
        self.ready[rd] = self.cycle - 1 + self.t.load_latency_subword;
        self.ready_muldiv[rd] = false;
        let pc = self.pc;
        self.pc += op.len() as u64;
        let r = match op.kind() {
            Kind::LrW | Kind::LrD => self.lr(mem, rd, addr, word),
            Kind::ScW | Kind::ScD => self.sc(mem, rd, addr, src, word),
            _ => self.amo(mem, op, addr, src, word),
        };
        if let Err(Ex::Trap { .. }) = r {
            self.pc = pc;
        }
        r
    }

    fn load_sized(&mut self, mem: &mut NodeMem, addr: u64, word: bool) -> Result<u64, Ex> {
        if word {
            Ok(self.load::<4>(mem, addr)? as i32 as i64 as u64)
        } else {
            self.load::<8>(mem, addr)
        }
    }

    fn store_sized(&mut self, mem: &mut NodeMem, addr: u64, v: u64, word: bool) -> Result<(), Ex> {
        if word {
            self.store::<4>(mem, addr, v)
        } else {
            self.store::<8>(mem, addr, v)
        }
    }

    fn lr(&mut self, mem: &mut NodeMem, rd: usize, addr: u64, word: bool) -> Result<(), Ex> {
        let v = self.load_sized(mem, addr, word)?;
        self.x[rd] = v;
        self.reservation = addr;
        Ok(())
    }

    /// SC succeeds only with a reservation on exactly this address; either way the
    /// reservation is gone afterwards (spec 14.2).
    fn sc(&mut self, mem: &mut NodeMem, rd: usize, addr: u64, src: u64, word: bool) -> Result<(), Ex> {
        let ok = std::mem::replace(&mut self.reservation, crate::core::NO_RESERVATION) == addr;
        self.x[rd] = if ok { 0 } else { 1 };
        if ok {
            self.store_sized(mem, addr, src, word)?;
        }
        Ok(())
    }

    fn amo(&mut self, mem: &mut NodeMem, op: Op, addr: u64, src: u64, word: bool) -> Result<(), Ex> {
        let old = self.load_sized(mem, addr, word)?;
        let new = amo_value(Amo::from_imm(op.imm), old, src, word);
        self.store_sized(mem, addr, new, word)?;
        self.x[op.rd as usize] = old;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::asm::{self, reg::*};
    use crate::testing::Bench;
    use crate::Exit;

    const LR: u32 = 0b00010;
    const SC: u32 = 0b00011;

    fn run(code: &[u32]) -> (Bench, Exit) {
        let mut all = asm::la_dram(A1, 0x8000_f100);
        all.extend_from_slice(code);
        all.extend(asm::exit_with(A0));
        let mut b = Bench::new(&all, false);
        let e = b.run(100_000);
        (b, e)
    }

    #[test]
    fn lr_sc_succeeds_once() {
        let (b, e) = run(&[
            asm::amo(LR, 3, A2, A1, 0),
            asm::addi(A4, ZERO, 77),
            asm::amo(SC, 3, A3, A1, A4),
            asm::amo(SC, 3, A5, A1, A4),
            asm::ld(T1, A1, 0),
            asm::addi(A0, ZERO, 0),
        ]);
        assert_eq!(e, Exit::Halted(0));
        assert_eq!((b.core.reg(13), b.core.reg(15), b.core.reg(6)), (0, 1, 77));
    }

    #[test]
    fn amos_return_old_value_and_sign_extend_words() {
        let (b, _) = run(&[
            asm::addi(A2, ZERO, -5),
            asm::amo(0b00000, 2, A3, A1, A2), // amoadd.w: old 0, mem -5
            asm::addi(A2, ZERO, 3),
            asm::amo(0b10100, 2, A4, A1, A2), // amomax.w: old -5, mem 3
            asm::addi(A2, ZERO, -1),
            asm::amo(0b11000, 2, A5, A1, A2),   // amominu.w: old 3, mem 3
            asm::amo(0b00001, 3, T1, A1, ZERO), // amoswap.d
            asm::addi(A0, ZERO, 0),
        ]);
        assert_eq!(b.core.reg(13), 0);
        assert_eq!(b.core.reg(14), (-5i64) as u64);
        assert_eq!(b.core.reg(15), 3);
        assert_eq!(b.core.reg(6), 3);
    }

    #[test]
    fn misaligned_amo_traps() {
        let (_, e) = run(&[asm::addi(A1, A1, 4), asm::amo(0, 3, A3, A1, A2)]);
        let Exit::Error(err) = e else { panic!() };
        assert!(err.to_string().contains("store/AMO address misaligned at 0x8000f104"), "{err}");
    }
}
