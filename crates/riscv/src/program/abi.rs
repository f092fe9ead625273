//! Which register ABI a program uses: the nanoPU's, where x30 reads pop netRX and x31
//! writes push netTX (docs/abi.md "x30/x31"), or plain RISC-V, where they are ordinary
//! registers. Our runtime says so with the symbol `__nanopu_abi`; the nanoPU prototype's
//! runtime (`tests-lnic`: built with `-ffixed-x30 -ffixed-x31`, no marker) is recognised
//! by its accesses to the LNIC CSRs, which every program that uses the NIC makes
//! (registering its context, reading `lmsgsrdy`). A user can always say which.

use std::fmt;

use crate::platform::{NANOPU_CSR_FIRST, NANOPU_CSR_LAST};
use crate::program::elf::{Segment, PF_X};

/// What the user asked for (`--abi`, a program's `abi` key).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AbiChoice {
    /// Decide from the file (the default).
    #[default]
    Auto,
    NanoPu,
    Plain,
}

impl AbiChoice {
    /// Its names, as `--abi` and a program's `abi` key write them, in `ALL`'s order.
    pub const NAMES: [&'static str; 3] = ["auto", "nanopu", "plain"];
    const ALL: [AbiChoice; 3] = [AbiChoice::Auto, AbiChoice::NanoPu, AbiChoice::Plain];

    pub fn parse(s: &str) -> Result<AbiChoice, String> {
        match Self::NAMES.iter().position(|n| *n == s) {
            Some(i) => Ok(Self::ALL[i]),
            None => Err(format!("abi: {s:?} is not one of \"auto\", \"nanopu\", \"plain\"")),
        }
    }
}

/// Why a program got the ABI it got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AbiSource {
    Asked,
    Marker,
    /// The first LNIC CSR instruction found: (address, CSR).
    LnicCsr(u64, u16),
    /// Neither a marker nor an LNIC CSR access.
    Nothing,
}

impl fmt::Display for AbiSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AbiSource::Asked => write!(f, "asked for"),
            AbiSource::Marker => write!(f, "the program defines __nanopu_abi"),
            AbiSource::LnicCsr(pc, csr) => write!(f, "the instruction at {pc:#x} accesses LNIC CSR {csr:#x}"),
            AbiSource::Nothing => write!(f, "no __nanopu_abi symbol and no LNIC CSR access"),
        }
    }
}

/// (uses the nanoPU ABI, why) for a program with or without the marker symbol.
pub fn decide(choice: AbiChoice, marker: bool, segments: &[Segment], file: &[u8]) -> (bool, AbiSource) {
    match choice {
        AbiChoice::NanoPu => (true, AbiSource::Asked),
        AbiChoice::Plain => (false, AbiSource::Asked),
        AbiChoice::Auto if marker => (true, AbiSource::Marker),
        AbiChoice::Auto => {
            match segments.iter().filter(|s| s.flags & PF_X != 0).find_map(|s| lnic_csr_in(s, file)) {
                Some((pc, csr)) => (true, AbiSource::LnicCsr(pc, csr)),
                None => (false, AbiSource::Nothing),
            }
        }
    }
}

/// The first CSR instruction on an LNIC CSR in `s`'s file bytes, by a linear sweep (a
/// 16-bit parcel unless its low bits are 0b11, RISC-V unprivileged spec 1.5).
fn lnic_csr_in(s: &Segment, file: &[u8]) -> Option<(u64, u16)> {
    // `elf::parse` checked offset + filesz against the file.
    let code = file.get(s.offset as usize..)?.get(..s.filesz as usize)?;
    let mut at = 0;
    while at + 4 <= code.len() {
        let word = u32::from_le_bytes(code[at..at + 4].try_into().ok()?);
        if word & 3 != 3 {
            at += 2;
            continue;
        }
        if let Some(csr) = lnic_csr(word) {
            return Some((s.addr + at as u64, csr));
        }
        at += 4;
    }
    None
}

/// The CSR of a Zicsr instruction (SYSTEM opcode, funct3 != 0) on an LNIC CSR.
fn lnic_csr(word: u32) -> Option<u16> {
    let csr = (word >> 20) as u16;
    let csr_op = word & 0x7f == 0x73 && (word >> 12) & 7 != 0;
    (csr_op && (NANOPU_CSR_FIRST..=NANOPU_CSR_LAST).contains(&csr)).then_some(csr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asm;

    fn seg(code: &[u32]) -> (Vec<Segment>, Vec<u8>) {
        let file: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
        let s = Segment {
            addr: 0x8000_0000,
            offset: 0,
            filesz: file.len() as u64,
            memsz: file.len() as u64,
            flags: PF_X,
        };
        (vec![s], file)
    }

    #[test]
    fn an_lnic_csr_access_makes_a_nanopu_program() {
        let (s, f) = seg(&[asm::NOP, asm::csrrs(asm::reg::A1, 0x052, asm::reg::ZERO)]);
        assert_eq!(decide(AbiChoice::Auto, false, &s, &f), (true, AbiSource::LnicCsr(0x8000_0004, 0x052)));
        assert_eq!(decide(AbiChoice::Plain, false, &s, &f), (false, AbiSource::Asked));
    }

    #[test]
    fn other_csrs_and_plain_code_do_not() {
        let (s, f) = seg(&[asm::NOP, asm::csrrs(asm::reg::A1, 0x340, asm::reg::ZERO), asm::jal(0, 0)]);
        assert_eq!(decide(AbiChoice::Auto, false, &s, &f), (false, AbiSource::Nothing));
        assert_eq!(decide(AbiChoice::Auto, true, &s, &f), (true, AbiSource::Marker));
        assert_eq!(decide(AbiChoice::NanoPu, false, &s, &f), (true, AbiSource::Asked));
        assert!(AbiChoice::parse("bogus").unwrap_err().contains("\"auto\", \"nanopu\", \"plain\""));
    }
}
