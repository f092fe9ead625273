//! The RDMA NIC's parameters: unit, default and provenance of each (docs/models/rdma-nic.md
//! "Parameters"; *estimate* where nothing public gives the figure).

/// The RDMA NIC's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RdmaParams {
    /// Base of the register block. Default 0x1002_0000: beside IceNIC's 0x1001_6000 block,
    /// in the same device region (our choice; nothing else lives there).
    pub base: u64,
    /// Size of the register block, bytes: 4 KiB (one page, as a doorbell page is).
    pub size: u64,
    /// Queue pairs. Default 64 (*estimate*: a small slice of the 2^24 QP numbers the BTH
    /// carries; enough for the experiments' 1 to 16 QPs).
    pub qps: usize,
    /// Work requests a send or receive queue holds. Default 1,024 (*estimate*: a common
    /// `max_send_wr`; ConnectX devices allow up to 32,768).
    pub queue_depth: usize,
    /// Completions the completion queue holds. Default 8,192 (*estimate*).
    pub cq_depth: usize,
    /// Memory regions. Default 16 (*estimate*).
    pub mrs: usize,
    /// Path MTU: payload bytes per packet. Default 4,096, the largest InfiniBand MTU and
    /// what RoCEv2 uses on 9,000-byte Ethernet ([IBA] PMTU; docs/models/rdma-nic.md).
    pub mtu: usize,
    /// The port's link rate, bits per second: the MAC sends no faster (the cluster sets it
    /// from `[link] rate_gbps`). Default 200 Gb/s.
    pub link_bps: u64,
    /// The node clock, Hz, to turn serialization times into cycles. Default 3.2 GHz.
    pub clock_hz: u64,
    /// DMA bytes per cycle, each direction: 9 (28.8 GB/s at 3.2 GHz): PCIe 4.0 x16's
    /// 31.5 GB/s less TLP headers at a 256-byte max payload (256 / (256 + 24); PCIe 4.0
    /// base spec rates; Neugebauer et al., "Understanding PCIe performance for end host
    /// networking", SIGCOMM'18, section 2).
    pub dma_bytes_per_cycle: u64,
    /// DMA reads the transmit side keeps in flight, packets. Default 16 (*estimate*: enough
    /// to hide a memory latency at line rate; PCIe allows 256 outstanding read tags).
    pub dma_reads: usize,
    /// Cycles from a packet's payload in the NIC to its first bit on the wire (header
    /// build, ICRC). Default 64 (20 ns, *estimate*).
    pub tx_pipe_cycles: u64,
    /// Cycles from a packet's last bit to its transport processing (parse, QP look-up,
    /// PSN check). Default 64 (20 ns, *estimate*).
    pub rx_pipe_cycles: u64,
    /// Bytes the receive buffer holds while their DMA writes are under way; a packet that
    /// finds it full is dropped. Default 256 KiB (*estimate*).
    pub rx_buffer_bytes: usize,
    /// Packets a responder accepts before it sends a coalesced ACK (besides one for every
    /// packet with the AckReq bit). Default 8 (*estimate*; [IBA] lets a responder
    /// coalesce ACKs).
    pub ack_coalesce: u32,
    /// Unacknowledged packets a queue pair may have in flight. Default 512 (*estimate*:
    /// about 4 bandwidth-delay products at 200 Gb/s and a few microseconds of RTT; RoCE
    /// NICs bound it only by the PSN space, 2^23, [IBA] ch. 9).
    pub max_inflight: u32,
    /// The local ACK timeout's exponent: the timeout is 4.096 us x 2^exp ([IBA];
    /// Linux `rdma_set_ack_timeout`, drivers/infiniband/core/cma.c). Default 5 (131 us: *estimate*, chosen
    /// short so that a lost tail is repaired in a run of milliseconds; drivers default
    /// to 14 to 16, 67 to 268 ms).
    pub ack_timeout_exp: u32,
    /// Retries (local ACK timeouts and NAK-sequence errors) a QP makes without forward
    /// progress before it fails its work request. Default 7, the largest `retry_cnt`
    /// ([IBA] ch. 9; docs/models/rdma-nic.md "Retry counting").
    pub retry_cnt: u32,
    /// Wait after an RNR NAK, cycles. Default 32,000 (10 us, *estimate*; [IBA]'s
    /// smallest non-zero RNR timer is 0.01 ms).
    pub rnr_cycles: u64,
}

impl Default for RdmaParams {
    fn default() -> Self {
        RdmaParams {
            base: 0x1002_0000,
            size: 0x1000,
            qps: 64,
            queue_depth: 1024,
            cq_depth: 8192,
            mrs: 16,
            mtu: 4096,
            link_bps: 200_000_000_000,
            clock_hz: 3_200_000_000,
            dma_bytes_per_cycle: 9,
            dma_reads: 16,
            tx_pipe_cycles: 64,
            rx_pipe_cycles: 64,
            rx_buffer_bytes: 256 << 10,
            ack_coalesce: 8,
            max_inflight: 512,
            ack_timeout_exp: 5,
            retry_cnt: 7,
            rnr_cycles: 32_000,
        }
    }
}

impl RdmaParams {
    /// Cycles to serialize `bytes` on the link, rounded up.
    pub fn wire_cycles(&self, bytes: usize) -> u64 {
        let bits = bytes as u128 * 8 * self.clock_hz as u128;
        bits.div_ceil(self.link_bps.max(1) as u128) as u64
    }

    /// Cycles the DMA engine streams `bytes`, rounded up.
    pub fn dma_cycles(&self, bytes: usize) -> u64 {
        (bytes as u64).div_ceil(self.dma_bytes_per_cycle.max(1))
    }

    /// The local ACK timeout, cycles: 4.096 us x 2^exp.
    pub fn ack_timeout_cycles(&self) -> u64 {
        let ns = 4096u128 << self.ack_timeout_exp;
        (ns * self.clock_hz as u128 / 1_000_000_000) as u64
    }

    /// Every field in range; the error names it.
    pub fn validate(&self) -> Result<(), String> {
        let ok = |c: bool, f: &str, why: &str| if c { Ok(()) } else { Err(format!("rdma.{f}: {why}")) };
        ok(
            [256, 512, 1024, 2048, 4096].contains(&self.mtu),
            "mtu",
            "must be 256, 512, 1024, 2048 or 4096 (IB PMTU)",
        )?;
        ok(self.qps >= 1 && self.qps <= 256, "qps", "must be 1..=256")?;
        ok(
            self.queue_depth >= 1 && self.cq_depth >= 1,
            "queue_depth",
            "queues must hold at least one entry",
        )?;
        ok(self.link_bps > 0 && self.clock_hz > 0, "link_bps", "rates must be positive")?;
        ok(self.dma_bytes_per_cycle > 0 && self.dma_reads > 0, "dma", "DMA must move bytes")?;
        ok(self.ack_timeout_exp <= 31, "ack_timeout_exp", "is a 5-bit field (0..=31)")?;
        ok(self.retry_cnt <= 7, "retry_cnt", "is a 3-bit field (0..=7)")?;
        ok(self.max_inflight >= 1 && self.max_inflight < 1 << 23, "max_inflight", "must be 1..2^23")?;
        ok(self.rx_buffer_bytes >= self.mtu + 64, "rx_buffer_bytes", "must hold a full packet")
    }
}

#[cfg(test)]
mod tests {
    use super::RdmaParams;

    #[test]
    fn conversions() {
        let p = RdmaParams::default();
        // 4,096 us x 32 = 131.072 us = 419,430 cycles at 3.2 GHz.
        assert_eq!(p.ack_timeout_cycles(), 419_430);
        // 1,000 bytes at 200 Gb/s: 40 ns, 128 cycles.
        assert_eq!(p.wire_cycles(1000), 128);
        assert_eq!(p.dma_cycles(4096), 456);
        assert!(p.validate().is_ok());
        assert!(RdmaParams { mtu: 1500, ..p }.validate().unwrap_err().starts_with("rdma.mtu"));
    }
}
