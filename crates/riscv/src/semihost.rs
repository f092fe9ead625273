//! RISC-V semihosting ("RISC-V Semihosting" spec v0.2 over the Arm semihosting interface
//! v2.0): `slli x0,x0,0x1f; ebreak; srai x0,x0,7`, operation in a0, parameter in a1,
//! result in a0. Enough for picolibc's `--oslib=semihost`: console I/O on ":tt", exit,
//! clock and time, heap info. Files other than ":tt" cannot be opened.

use crate::core::{Core, Ex};
use crate::mem::NodeMem;

const SLLI_X0_X0_31: u32 = 0x01f0_1013;
const SRAI_X0_X0_7: u32 = 0x4070_5013;
const ADP_STOPPED_APPLICATION_EXIT: u64 = 0x20026;
/// Handle returned for ":tt" (any non-negative value would do).
const TT_HANDLE: u64 = 1;

impl Core {
    fn word32(mem: &NodeMem, addr: u64) -> Option<u32> {
        let mut b = [0u8; 4];
        mem.read(addr, &mut b).ok().map(|_| u32::from_le_bytes(b))
    }

    fn field(mem: &NodeMem, block: u64, i: u64) -> u64 {
        let mut b = [0u8; 8];
        mem.read(block + 8 * i, &mut b).map_or(0, |_| u64::from_le_bytes(b))
    }

    /// Is the `ebreak` at pc the middle of the semihosting sequence?
    pub(crate) fn is_semihost(&self, mem: &NodeMem) -> bool {
        Self::word32(mem, self.pc.wrapping_sub(4)) == Some(SLLI_X0_X0_31)
            && Self::word32(mem, self.pc + 4) == Some(SRAI_X0_X0_7)
    }

    /// Perform the call; the `ebreak` completes (pc moves past it) unless the program exits.
    pub(crate) fn semihost(&mut self, mem: &mut NodeMem) -> Result<(), Ex> {
        let (op, p) = (self.x[10], self.x[11]);
        let ret = match op {
            0x18 => return self.semihost_exit(mem, p),
            0x20 => return self.semihost_exit_extended(mem, p),
            _ => self.semihost_call(mem, op, p),
        };
        self.x[10] = ret;
        self.pc += 4;
        Ok(())
    }

    fn semihost_call(&mut self, mem: &mut NodeMem, op: u64, p: u64) -> u64 {
        match op {
            0x01 => Self::sys_open(mem, p),
            0x02 | 0x0a | 0x13 => 0,                             // CLOSE, SEEK, ERRNO
            0x03 => self.writec(mem, p),                         // WRITEC
            0x04 => self.write0(mem, p),                         // WRITE0
            0x05 => self.sys_write(mem, p),                      // WRITE
            0x06 => Self::field(mem, p, 2),                      // READ: nothing read (EOF)
            0x09 => 1,                                           // ISTTY
            0x0c => 0,                                           // FLEN
            0x10 => self.cycle / (self.t.clock_hz / 100).max(1), // CLOCK, centiseconds
            0x11 => self.cycle / self.t.clock_hz.max(1),         // TIME, seconds
            0x16 => self.heapinfo(mem, p),
            _ => u64::MAX,
        }
    }

    /// SYS_OPEN: only the console pseudo-file ":tt" exists.
    fn sys_open(mem: &NodeMem, p: u64) -> u64 {
        let (name, len) = (Self::field(mem, p, 0), Self::field(mem, p, 2));
        let mut b = vec![0u8; len.min(64) as usize];
        match mem.read(name, &mut b) {
            Ok(()) if b == b":tt" => TT_HANDLE,
            _ => u64::MAX,
        }
    }

    fn writec(&mut self, mem: &NodeMem, p: u64) -> u64 {
        let mut b = [0u8; 1];
        if mem.read(p, &mut b).is_ok() {
            self.aside.get_mut().console.push(b[0]);
        }
        0
    }

    fn write0(&mut self, mem: &NodeMem, mut p: u64) -> u64 {
        let mut b = [0u8; 1];
        let console = &mut self.aside.get_mut().console;
        while mem.read(p, &mut b).is_ok() && b[0] != 0 && console.len() < 1 << 24 {
            console.push(b[0]);
            p += 1;
        }
        0
    }

    /// SYS_WRITE: returns the number of bytes *not* written.
    fn sys_write(&mut self, mem: &NodeMem, p: u64) -> u64 {
        let (buf, len) = (Self::field(mem, p, 1), Self::field(mem, p, 2));
        self.console_write(mem, buf, len).map_or(len, |n| len - n)
    }

    /// SYS_HEAPINFO: zeros ("unknown"); picolibc then uses its linker-script heap.
    fn heapinfo(&mut self, mem: &mut NodeMem, p: u64) -> u64 {
        let block = Self::field(mem, p, 0);
        let _ = mem.write(block, &[0; 32]);
        0
    }

    /// SYS_EXIT. On RV64 the parameter points to `[reason, subcode]`; a bare reason (the
    /// 32-bit convention) is accepted too.
    fn semihost_exit(&mut self, mem: &NodeMem, p: u64) -> Result<(), Ex> {
        if p == ADP_STOPPED_APPLICATION_EXIT {
            return self.halt(0);
        }
        let reason = Self::field(mem, p, 0);
        let code = if reason == ADP_STOPPED_APPLICATION_EXIT { Self::field(mem, p, 1) as i64 } else { 1 };
        self.halt(code)
    }

    fn semihost_exit_extended(&mut self, mem: &NodeMem, p: u64) -> Result<(), Ex> {
        let (reason, code) = (Self::field(mem, p, 0), Self::field(mem, p, 1));
        self.halt(if reason == ADP_STOPPED_APPLICATION_EXIT { code as i64 } else { 1 })
    }
}
