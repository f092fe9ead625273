//! The RDMA NIC's registers (docs/models/rdma-nic.md "Registers"): posting work requests,
//! connecting queue pairs, registering memory, taking completions.

use super::qp::{RecvWr, Wr};
use super::{Cqe, Mr, RdmaAction, RdmaNic};

/// Register offsets from [`super::RdmaParams::base`]; sw/include/rdmanic.h has the same.
pub mod reg {
    /// Write 64: the work request's id (the low 32 bits come back in its completion).
    pub const WQE_ID: u64 = 0x00;
    /// Write 64: the local buffer's address.
    pub const WQE_LADDR: u64 = 0x08;
    /// Write 64: the remote address (RDMA WRITE).
    pub const WQE_RADDR: u64 = 0x10;
    /// Write 64, the doorbell: bits 31:0 length, 47:32 remote key, 55:48 operation
    /// ([`super::wr_op`]), 63:56 QP. Posts the work request the hart's three words began.
    pub const DOORBELL: u64 = 0x18;
    /// Read 64: the oldest completion, taken (bit 63 set), or 0 when none waits.
    pub const CQ_POP: u64 = 0x20;
    /// Read 32: the byte count of the completion taken last.
    pub const CQ_LEN: u64 = 0x28;
    /// Read 32: completions waiting.
    pub const CQ_COUNT: u64 = 0x30;
    /// Write 64: connect QP bits 7:0 to remote QP bits 15:8 at the node of IPv4 address
    /// bits 63:32; both ends start at PSN 0.
    pub const QP_CONNECT: u64 = 0x38;
    /// Write 64: a memory region's base; then its length; then its key, which registers it.
    pub const MR_BASE: u64 = 0x40;
    pub const MR_LEN: u64 = 0x48;
    pub const MR_REG: u64 = 0x50;
    /// Read/write 1 bit: 1 raises the interrupt line (hart 0's machine external interrupt)
    /// while a completion waits.
    pub const INTMASK: u64 = 0x58;
    /// Read 48 bits: the node's MAC address.
    pub const MACADDR: u64 = 0x60;
}

/// Work request operations (the doorbell's bits 55:48) and completion opcodes.
pub mod wr_op {
    pub const SEND: u8 = 0;
    pub const WRITE: u8 = 1;
    pub const RECV: u8 = 3;
}

/// Completion status (the CQE's bits 62:56; names after `ibv_wc_status`).
pub mod status {
    pub const SUCCESS: u8 = 0;
    /// The responder refused a remote key or address (NAK remote access error).
    pub const REM_ACCESS_ERR: u8 = 1;
    /// The local ACK timer expired more than `retry_cnt` times.
    pub const RETRY_EXC_ERR: u8 = 2;
    /// Flushed: an earlier work request of the QP failed.
    pub const WR_FLUSH_ERR: u8 = 3;
    /// The responder found the request invalid (NAK invalid request: a SEND longer than
    /// its receive buffer).
    pub const REM_INV_REQ_ERR: u8 = 4;
}

impl RdmaNic {
    /// Is `addr` in the register block?
    pub fn owns(&self, addr: u64) -> bool {
        addr.wrapping_sub(self.p.base) < self.p.size
    }

    /// Does reading the register at `addr` change the NIC (take a completion)?
    pub fn read_pops(&self, addr: u64) -> bool {
        addr - self.p.base == reg::CQ_POP
    }

    /// Does the register's value depend on what the network or the DMA engines did?
    pub fn depends_on_arrivals(&self, addr: u64) -> bool {
        matches!(addr - self.p.base, reg::CQ_POP | reg::CQ_COUNT)
    }

    /// A load of `size` bytes at `addr` at cycle `now`.
    pub fn read(
        &mut self,
        now: u64,
        addr: u64,
        size: usize,
        out: &mut Vec<RdmaAction>,
    ) -> Result<u64, String> {
        self.fatal_error()?;
        let off = addr - self.p.base;
        let v = match (off, size) {
            (reg::CQ_POP, 8) => self.pop(now, out),
            (reg::CQ_LEN, 4 | 8) => self.last_len as u64,
            (reg::CQ_COUNT, 4 | 8) => self.cq.len() as u64,
            (reg::INTMASK, _) => self.armed as u64,
            (reg::MACADDR, 8) => self.mac,
            _ => return Err(format!("RDMA NIC: no readable {size}-byte register at offset {off:#x}")),
        };
        Ok(v)
    }

    /// A store of `value` (`size` bytes) by hart `hart` at `addr` at cycle `now`.
    pub fn write(
        &mut self,
        now: u64,
        hart: usize,
        addr: u64,
        size: usize,
        value: u64,
        out: &mut Vec<RdmaAction>,
    ) -> Result<(), String> {
        self.fatal_error()?;
        let off = addr - self.p.base;
        if size != 8 {
            return Err(format!("RDMA NIC: register {off:#x} takes 8-byte stores, not {size}"));
        }
        match off {
            reg::WQE_ID | reg::WQE_LADDR | reg::WQE_RADDR => {
                self.stage(hart)[(off / 8) as usize] = value;
                Ok(())
            }
            reg::DOORBELL => self.doorbell(now, hart, value, out),
            reg::QP_CONNECT => self.connect(value),
            reg::MR_BASE | reg::MR_LEN => {
                self.mr_staged[((off - reg::MR_BASE) / 8) as usize] = value;
                Ok(())
            }
            reg::MR_REG => self.register_mr(value as u32),
            reg::INTMASK => {
                self.armed = value & 1 != 0;
                out.push(RdmaAction::Update { at: now });
                Ok(())
            }
            _ => Err(format!("RDMA NIC: no writable register at offset {off:#x}")),
        }
    }

    fn fatal_error(&self) -> Result<(), String> {
        self.fatal.clone().map_or(Ok(()), Err)
    }

    fn stage(&mut self, hart: usize) -> &mut [u64; 3] {
        if self.staged.len() <= hart {
            self.staged.resize(hart + 1, [0; 3]);
        }
        &mut self.staged[hart]
    }

    fn pop(&mut self, now: u64, out: &mut Vec<RdmaAction>) -> u64 {
        let Some(c) = self.cq.pop_front() else { return 0 };
        self.last_len = c.len;
        out.push(RdmaAction::Update { at: now });
        c.word()
    }

    /// Post the work request hart `hart` staged: checked, then onto its QP's queue.
    fn doorbell(&mut self, now: u64, hart: usize, v: u64, out: &mut Vec<RdmaAction>) -> Result<(), String> {
        let [id, laddr, raddr] = *self.stage(hart);
        let (len, rkey, op, q) = (v as u32, (v >> 32) as u16 as u32, (v >> 48) as u8, (v >> 56) as usize);
        let qp =
            self.qps.get(q).ok_or_else(|| format!("RDMA NIC: QP {q} does not exist ({} QPs)", self.p.qps))?;
        if qp.remote.is_none() {
            return Err(format!("RDMA NIC: work request on QP {q}, which is not connected"));
        }
        if !self.registered(None, laddr, len as u64) {
            return Err(format!(
                "RDMA NIC: work request on QP {q}: local buffer {laddr:#x}+{len} lies in no registered memory region"
            ));
        }
        let depth = self.p.queue_depth;
        let full = |what: &str| format!("RDMA NIC: {what} queue of QP {q} full ({depth} work requests)");
        match op {
            wr_op::RECV if self.qps[q].rq.len() == depth => return Err(full("receive")),
            wr_op::RECV => self.qps[q].rq.push_back(RecvWr { wr_id: id, addr: laddr, len }),
            wr_op::SEND | wr_op::WRITE if self.qps[q].sq.len() == depth => return Err(full("send")),
            wr_op::SEND | wr_op::WRITE => {
                let wr = Wr { wr_id: id, op, laddr, raddr, len, rkey, first_psn: 0, npkts: 0 };
                self.qps[q].post(wr, self.p.mtu);
            }
            _ => return Err(format!("RDMA NIC: work request operation {op} (SEND 0, WRITE 1, RECV 3)")),
        }
        self.counters.wrs_posted += 1;
        self.pump(now, out);
        Ok(())
    }

    fn connect(&mut self, v: u64) -> Result<(), String> {
        let (q, rq, ip) = ((v & 0xff) as usize, ((v >> 8) & 0xff) as u32, (v >> 32) as u32);
        let qps = self.p.qps;
        let qp = self.qps.get_mut(q).ok_or_else(|| format!("RDMA NIC: QP {q} does not exist ({qps} QPs)"))?;
        *qp = super::qp::Qp::default();
        qp.remote = Some((ip, rq));
        Ok(())
    }

    fn register_mr(&mut self, key: u32) -> Result<(), String> {
        let [base, len] = self.mr_staged;
        if self.mrs.len() == self.p.mrs {
            return Err(format!("RDMA NIC: memory region table full ({} regions)", self.p.mrs));
        }
        self.mrs.retain(|m| m.key != key);
        self.mrs.push(Mr { key, base, len });
        Ok(())
    }

    /// A completion of QP `qp`'s work request.
    pub(super) fn cqe(qp: usize, wr_id: u64, op: u8, status: u8, len: u32) -> Cqe {
        Cqe { wr_id: wr_id as u32, qp: qp as u16, op, status, len }
    }
}
