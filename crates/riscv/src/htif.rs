//! HTIF console and exit (docs/abi.md "HTIF"; the Berkeley host-target interface used by
//! Spike and the riscv-tests). A store to `tohost` is handled at once, for the storing hart.

use crate::core::{Core, Ex};
use crate::error::Exit;
use crate::mem::NodeMem;

/// Syscall numbers of the `magic_mem` protocol (riscv-pk / Linux numbering).
const SYS_WRITE: u64 = 64;
const SYS_EXIT: u64 = 93;
/// Longest console write honoured at once (guards against a bogus length).
const MAX_WRITE: u64 = 1 << 20;

impl Core {
    /// Called after every slow-path DRAM store: act if it touched `tohost`.
    pub(crate) fn htif_check(&mut self, mem: &mut NodeMem, addr: u64, n: usize) -> Result<(), Ex> {
        let Some(tohost) = self.program.tohost else {
            return Ok(());
        };
        if addr + n as u64 <= tohost || addr >= tohost + 8 {
            return Ok(());
        }
        let mut b = [0u8; 8];
        let _ = mem.read(tohost, &mut b);
        let value = u64::from_le_bytes(b);
        // The mailbox is consumed at once: the program sees tohost back at 0.
        let _ = mem.write(tohost, &[0; 8]);
        self.htif_command(mem, value)
    }

    fn htif_command(&mut self, mem: &mut NodeMem, value: u64) -> Result<(), Ex> {
        if value == 0 {
            return Ok(());
        }
        if value & 1 == 1 && value >> 56 == 0 {
            return self.halt((value >> 1) as i64);
        }
        if value >> 48 == 0x0101 {
            self.console.push(value as u8);
            return Ok(());
        }
        self.htif_syscall(mem, value)
    }

    /// `value` is the address of `magic_mem[8]`: `[which, arg0, arg1, arg2, ...]`.
    fn htif_syscall(&mut self, mem: &mut NodeMem, magic: u64) -> Result<(), Ex> {
        let word = |i: u64| {
            let mut b = [0u8; 8];
            mem.read(magic + 8 * i, &mut b).map(|_| u64::from_le_bytes(b))
        };
        let (which, a0, a1, a2) = match (word(0), word(1), word(2), word(3)) {
            (Ok(w), Ok(x), Ok(y), Ok(z)) => (w, x, y, z),
            _ => return Ok(()),
        };
        let ret = match which {
            SYS_EXIT => return self.halt(a0 as i64),
            SYS_WRITE => self.console_write(mem, a1, a2).map_or(u64::MAX, |_| a2),
            _ => u64::MAX,
        };
        let _ = a0; // fd: every descriptor goes to this hart's console
        let _ = mem.write(magic, &ret.to_le_bytes());
        if let Some(fromhost) = self.program.fromhost {
            let _ = mem.write(fromhost, &1u64.to_le_bytes());
        }
        Ok(())
    }

    /// Append `len` bytes at `buf` to the console.
    pub(crate) fn console_write(&mut self, mem: &NodeMem, buf: u64, len: u64) -> Result<(), String> {
        let mut bytes = vec![0u8; len.min(MAX_WRITE) as usize];
        mem.read(buf, &mut bytes)?;
        self.console.extend_from_slice(&bytes);
        Ok(())
    }

    /// The program exited: stop this hart with `code`.
    pub(crate) fn halt(&mut self, code: i64) -> Result<(), Ex> {
        self.pending = Some(Exit::Halted(code));
        Err(Ex::Stop)
    }
}

#[cfg(test)]
mod tests {
    use crate::asm::{self, reg::*, TOHOST};
    use crate::testing::Bench;
    use crate::Exit;

    #[test]
    fn putchar_and_exit() {
        let mut c = asm::la_tohost(T0);
        c.extend([asm::lui(T1, 0x01010), asm::i(32, T1, 1, T1, 0x13)]); // 0x0101 << 48
        c.extend([
            asm::addi(T1, T1, 'A' as i32),
            asm::sd(T1, T0, 0),
            asm::ld(T2, T0, 0),
            asm::addi(A0, T2, 3),
        ]);
        c.extend(asm::exit_with(A0));
        let mut b = Bench::new(&c, false);
        assert_eq!(b.run(10_000), Exit::Halted(3), "tohost reads back as 0");
        assert_eq!(b.core.take_console(), b"A");
        assert_eq!(b.core.halted(), Some(3));
    }

    #[test]
    fn magic_mem_write_syscall() {
        // magic block at TOHOST+64: [64, 1, TOHOST+128, 2]; "hi" at TOHOST+128.
        let mut c = asm::la_dram(A1, TOHOST + 64);
        for (k, v) in [64, 1, 0, 2].iter().enumerate() {
            c.extend([asm::addi(T1, ZERO, *v), asm::sd(T1, A1, 8 * k as i32)]);
        }
        c.extend([asm::addi(T1, A1, 64), asm::sd(T1, A1, 16)]);
        c.extend([asm::addi(T2, ZERO, 0x68), asm::i(0, T1, 0, 0, 0x23) | (T2 << 20)]); // sb 'h'
        c.extend([asm::addi(T2, ZERO, 0x69), asm::s(1, T2, T1, 0)]); // sb 'i'
        c.extend(asm::la_tohost(T0));
        c.extend([asm::sd(A1, T0, 0), asm::ld(A0, T0, 8), asm::addi(A0, A0, -1)]);
        c.extend(asm::exit_with(A0));
        let mut b = Bench::new(&c, false);
        assert_eq!(b.run(10_000), Exit::Halted(0), "fromhost = 1");
        assert_eq!(b.core.take_console(), b"hi");
    }
}
