//! HTIF console and exit (docs/abi.md "HTIF"; the Berkeley host-target interface used by
//! Spike and the riscv-tests). A store to `tohost` is handled at once, for the storing hart.

use crate::core::{Core, Ex};
use crate::error::{ErrorKind, Exit};
use crate::mem::NodeMem;

/// Syscall numbers of the `magic_mem` protocol (riscv-pk / Linux numbering; 2011 is the
/// frontend's own `getmainvars`, which riscv-pk and the nanoPU prototype's runtime use to
/// fetch argv).
const SYS_WRITE: u64 = 64;
const SYS_EXIT: u64 = 93;
const SYS_GETMAINVARS: u64 = 2011;
/// Linux errno values, returned negated as the frontend does.
const ENOMEM: i64 = 12;
const EFAULT: i64 = 14;
const ENOSYS: i64 = 38;
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

    /// `value`: device (bits 63:56), command (55:48), payload. Device 0 is the syscall
    /// proxy (an odd payload is an exit, `code << 1 | 1`), device 1 command 1 the console.
    fn htif_command(&mut self, mem: &mut NodeMem, value: u64) -> Result<(), Ex> {
        match value >> 56 {
            _ if value == 0 => Ok(()),
            0 if value & 1 == 1 => self.halt((value >> 1) as i64),
            // exit(code) with a negative code: `code << 1 | 1` sign-extends into the device
            // byte (exit(-1) writes all ones); the prototype's runtime does this.
            0xff if value & 1 == 1 => self.halt((value as i64) >> 1),
            1 if value >> 48 == 0x0101 => {
                self.aside.get_mut().console.push(value as u8);
                Ok(())
            }
            0 => self.htif_syscall(mem, value),
            dev => {
                let why = format!("is not an HTIF command (device {dev}, command {})", (value >> 48) & 0xff);
                Err(self.tohost_error(why, value))
            }
        }
    }

    /// Stop with an error naming what was written to `tohost`.
    fn tohost_error(&mut self, why: String, value: u64) -> Ex {
        let msg = format!("tohost: {value:#x} {why}");
        self.pending = Some(self.fatal(ErrorKind::Platform(msg)));
        Ex::Stop
    }

    /// `magic` is the address of `magic_mem[8]`: `[which, arg0, arg1, arg2, ...]`; the
    /// result goes back into `magic_mem[0]` and `fromhost` is set, as the frontend does.
    fn htif_syscall(&mut self, mem: &mut NodeMem, magic: u64) -> Result<(), Ex> {
        let word = |i: u64| {
            let mut b = [0u8; 8];
            mem.read(magic.wrapping_add(8 * i), &mut b).map(|_| u64::from_le_bytes(b))
        };
        let (Ok(which), Ok(a0), Ok(a1), Ok(a2)) = (word(0), word(1), word(2), word(3)) else {
            return Err(self.tohost_error("is the address of a syscall block outside memory".into(), magic));
        };
        let ret = match which {
            SYS_EXIT => return self.halt(a0 as i64),
            // a0 is the descriptor: every one goes to this hart's console.
            SYS_WRITE => self.console_write(mem, a1, a2).map_or(-EFAULT, |n| n as i64),
            SYS_GETMAINVARS => main_vars_to(mem, a0, a1),
            _ => -ENOSYS,
        };
        let _ = mem.write(magic, &ret.to_le_bytes());
        if let Some(fromhost) = self.program.fromhost {
            let _ = mem.write(fromhost, &1u64.to_le_bytes());
        }
        Ok(())
    }

    /// Append up to `len` bytes at `buf` to the console; how many were taken. A write longer
    /// than [`MAX_WRITE`] is a partial write, as POSIX allows: the C library's write loop
    /// sends the rest, and nothing is dropped without the program being told.
    pub(crate) fn console_write(&mut self, mem: &NodeMem, buf: u64, len: u64) -> Result<u64, String> {
        let mut bytes = vec![0u8; len.min(MAX_WRITE) as usize];
        mem.read(buf, &mut bytes)?;
        self.aside.get_mut().console.extend_from_slice(&bytes);
        Ok(bytes.len() as u64)
    }

    /// The program exited: stop this hart with `code`.
    pub(crate) fn halt(&mut self, code: i64) -> Result<(), Ex> {
        self.pending = Some(Exit::Halted(code));
        Err(Ex::Stop)
    }
}

/// `getmainvars(buf, limit)`: argc, the argv pointers, a NULL ending argv and a NULL
/// envp, then the strings, all at `buf` (the layout riscv-pk reads: `buf[0]` is argc,
/// `buf[1..]` argv). 0, or -ENOMEM if it takes more than `limit` bytes, or -EFAULT.
fn main_vars_to(mem: &mut NodeMem, buf: u64, limit: u64) -> i64 {
    let bytes = main_vars(&mem.args, buf);
    if bytes.len() as u64 > limit {
        return -ENOMEM;
    }
    mem.write(buf, &bytes).map_or(-EFAULT, |_| 0)
}

/// The bytes `getmainvars` writes at `buf` for `args`.
fn main_vars(args: &[String], buf: u64) -> Vec<u8> {
    let mut words = vec![args.len() as u64];
    let mut at = buf.wrapping_add(8 * (args.len() as u64 + 3));
    for a in args {
        words.push(at);
        at = at.wrapping_add(a.len() as u64 + 1);
    }
    words.extend([0, 0]);
    let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    for a in args {
        bytes.extend(a.as_bytes().iter().copied().chain([0]));
    }
    bytes
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

    /// Stores `value` (built by `load`) to tohost, then spins.
    fn store_to_tohost(load: &[u32]) -> Bench {
        let mut c = asm::la_tohost(T0);
        c.extend(load);
        c.extend([asm::sd(T1, T0, 0), asm::jal(0, 0)]);
        Bench::new(&c, false)
    }

    #[test]
    fn exit_minus_one_writes_all_ones_and_is_an_exit() {
        let mut b = store_to_tohost(&[asm::addi(T1, ZERO, -1)]);
        assert_eq!(b.run(10_000), Exit::Halted(-1));
        let mut b = store_to_tohost(&[asm::addi(T1, ZERO, -3)]); // exit(-2): -2 << 1 | 1
        assert_eq!(b.run(10_000), Exit::Halted(-2));
    }

    #[test]
    fn a_value_that_is_no_command_is_an_error_naming_it() {
        let mut b = store_to_tohost(&[asm::lui(T1, 0x7f000)]); // device 0, bad address
        let Exit::Error(e) = b.run(10_000) else { panic!("expected an error") };
        assert!(
            e.to_string().contains("tohost: 0x7f000000 is the address of a syscall block outside memory"),
            "{e}"
        );
        let mut b = store_to_tohost(&[asm::addi(T1, ZERO, 10), asm::i(56, T1, 1, T1, 0x13)]); // device 10
        let Exit::Error(e) = b.run(10_000) else { panic!("expected an error") };
        assert!(e.to_string().starts_with("core 0, pc 0x8"), "{e}");
        assert!(
            e.to_string().contains("tohost: 0xa00000000000000 is not an HTIF command (device 10, command 0)"),
            "{e}"
        );
    }

    #[test]
    fn getmainvars_writes_argc_argv_and_the_strings() {
        // magic block at TOHOST+64: [2011, TOHOST+256, 200]; the result comes back in it.
        let mut c = asm::la_dram(A1, TOHOST + 64);
        c.extend([asm::addi(T1, ZERO, 2011), asm::sd(T1, A1, 0)]);
        c.extend([asm::addi(T1, A1, 192), asm::sd(T1, A1, 8)]);
        c.extend([asm::addi(T1, ZERO, 200), asm::sd(T1, A1, 16)]);
        c.extend(asm::la_tohost(T0));
        c.extend([asm::sd(A1, T0, 0), asm::ld(A0, A1, 0)]);
        c.extend(asm::exit_with(A0));
        let mut b = Bench::new(&c, false);
        b.mem.set_args(vec!["prog".into(), "02:00:0a:00:00:02".into(), "10.0.0.2".into()]);
        assert_eq!(b.run(10_000), Exit::Halted(0), "getmainvars returns 0");
        let buf = TOHOST + 256;
        let word = |m: &crate::NodeMem, i: u64| {
            let mut w = [0u8; 8];
            m.read(buf + 8 * i, &mut w).unwrap();
            u64::from_le_bytes(w)
        };
        assert_eq!((word(&b.mem, 0), word(&b.mem, 4), word(&b.mem, 5)), (3, 0, 0), "argc, NULL, NULL");
        let mut s = [0u8; 5];
        b.mem.read(word(&b.mem, 1), &mut s).unwrap();
        assert_eq!((&s, word(&b.mem, 1)), (b"prog\0", buf + 48));
        let mut s = [0u8; 9];
        b.mem.read(word(&b.mem, 3), &mut s).unwrap();
        assert_eq!(&s, b"10.0.0.2\0");
    }

    #[test]
    fn getmainvars_lays_out_pointers_then_strings_and_refuses_a_small_buffer() {
        let bytes = super::main_vars(&["a".into(), "bc".into()], 0x1000);
        assert_eq!(bytes.len(), 8 * 5 + 2 + 3);
        assert_eq!(&bytes[8..16], &(0x1000u64 + 40).to_le_bytes());
        assert_eq!(&bytes[16..24], &(0x1000u64 + 42).to_le_bytes());
        let mut b = Bench::new(&[asm::NOP], false);
        b.mem.set_args(vec!["a".into(), "bc".into()]);
        assert_eq!(super::main_vars_to(&mut b.mem, TOHOST + 256, 44), -super::ENOMEM);
        assert_eq!(super::main_vars_to(&mut b.mem, TOHOST + 256, 45), 0);
        assert_eq!(super::main_vars_to(&mut b.mem, 0x10, 45), -super::EFAULT);
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

    #[test]
    fn an_overlong_console_write_is_partial_and_says_so() {
        let mut b = Bench::new(&asm::exit_with(ZERO), false);
        let n = b.core.console_write(&b.mem, TOHOST, super::MAX_WRITE + 5);
        assert_eq!(n, Ok(super::MAX_WRITE), "the program is told how much was taken");
        assert_eq!(b.core.take_console().len() as u64, super::MAX_WRITE);
    }
}
