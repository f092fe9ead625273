//! The boot-info page at 0x1000 (layout in docs/abi.md).

/// Address of the boot page in every node.
pub const BOOT_BASE: u64 = 0x1000;
const BOOT_SIZE: usize = 4096;
/// Words before the argv pointers: the header fields of docs/abi.md, magic to rtc_cycles.
const HEADER_WORDS: usize = 12;

/// What the loader tells a node's cores at reset.
pub struct BootInfo<'a> {
    pub ncores: u64,
    pub node: u64,
    pub mac: u64,
    pub ip: u32,
    pub argv: &'a [String],
    pub dram_base: u64,
    pub dram_size: u64,
    /// Period of the timer-driven scheduler in cycles; 0 selects the NIC-driven one.
    pub sched_timer_cycles: u64,
    /// Core cycles per `mtime` tick (`TimingParams::rtc_cycles`), for software that sets
    /// timers in cycles.
    pub rtc_cycles: u64,
}

/// IPv4 address of node `n`: 10.0.0.(2+n) (prototype convention, docs/platform.md section 2).
pub fn node_ip(n: u32) -> u32 {
    nanopu_sim::packet::NODE_IP_BASE + n
}

/// MAC address of node `n`: locally administered 02:00:0a:00:00:00 + 2 + n.
pub fn node_mac(n: u32) -> u64 {
    0x0200_0a00_0000 + 2 + n as u64
}

/// Dotted-quad text of an IPv4 address.
pub fn ip_text(ip: u32) -> String {
    let b = ip.to_be_bytes();
    format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3])
}

/// Colon-separated text of a MAC address.
pub fn mac_text(mac: u64) -> String {
    let b = mac.to_be_bytes();
    b[2..].iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(":")
}

impl BootInfo<'_> {
    /// The page's bytes up to its last string's end (the rest of the page reads as 0), or
    /// an error if argv does not fit in it.
    pub fn encode(&self) -> Result<Vec<u8>, String> {
        let argc = self.argv.len();
        let ptrs_at = HEADER_WORDS * 8;
        let mut strings_at = ptrs_at + 8 * argc;
        // The page up to its last string's end: the rest of it reads as 0 (`write_boot`).
        let end = strings_at + self.argv.iter().map(|a| a.len() + 1).sum::<usize>();
        if end > BOOT_SIZE {
            return Err(format!("args: the arguments do not fit in the {BOOT_SIZE}-byte boot page"));
        }
        let mut page = vec![0u8; end];
        let header = [
            u64::from_le_bytes(*b"NANOPUBI"),
            2,
            self.ncores,
            self.node,
            self.mac,
            self.ip as u64,
            argc as u64,
            BOOT_BASE + ptrs_at as u64,
            self.dram_base,
            self.dram_size,
            self.sched_timer_cycles,
            self.rtc_cycles,
        ];
        debug_assert_eq!(header.len(), HEADER_WORDS, "argv pointers follow the header");
        put_words(&mut page, 0, &header);
        for (i, arg) in self.argv.iter().enumerate() {
            let end = strings_at + arg.len() + 1;
            put_words(&mut page, ptrs_at + 8 * i, &[BOOT_BASE + strings_at as u64]);
            page[strings_at..end - 1].copy_from_slice(arg.as_bytes());
            strings_at = end;
        }
        Ok(page)
    }
}

fn put_words(page: &mut [u8], at: usize, words: &[u64]) {
    for (i, w) in words.iter().enumerate() {
        page[at + 8 * i..at + 8 * i + 8].copy_from_slice(&w.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_the_abi() {
        let argv = vec!["loopback".to_string(), "02:00:0a:00:00:02".into(), "10.0.0.2".into()];
        let b = BootInfo {
            ncores: 4,
            node: 0,
            mac: node_mac(0),
            ip: node_ip(0),
            argv: &argv,
            dram_base: 0x8000_0000,
            dram_size: 1 << 28,
            sched_timer_cycles: 16_000,
            rtc_cycles: 3_200,
        };
        let p = b.encode().unwrap();
        let word = |i: usize| u64::from_le_bytes(p[8 * i..8 * i + 8].try_into().unwrap());
        assert_eq!(&p[0..8], b"NANOPUBI");
        assert_eq!((word(1), word(2), word(5), word(6), word(10)), (2, 4, 0x0a00_0002, 3, 16_000));
        assert_eq!(word(11), 3_200, "the argv pointers do not overwrite the last header word");
        let argv0 = (word(word(7) as usize / 8 - BOOT_BASE as usize / 8)) as usize - BOOT_BASE as usize;
        assert_eq!(&p[argv0..argv0 + 9], b"loopback\0");
        assert_eq!(ip_text(node_ip(1)), "10.0.0.3");
        assert_eq!(mac_text(node_mac(0)), "02:00:0a:00:00:02");
    }

    #[test]
    fn oversized_argv_is_an_error() {
        let argv = vec!["x".repeat(5000)];
        let b = BootInfo {
            ncores: 1,
            node: 0,
            mac: 0,
            ip: 0,
            argv: &argv,
            dram_base: 0,
            dram_size: 0,
            sched_timer_cycles: 0,
            rtc_cycles: 3_200,
        };
        assert!(b.encode().unwrap_err().contains("args"));
    }
}
