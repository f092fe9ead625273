//! Where a core's nanoPU register accesses meet the NIC.
//!
//! Exactness rule (docs/architecture.md): a core runs ahead of global time `g`. An access
//! whose answer depends on arrivals (netRX, `lmsgsrdy`, `ltarget*`) is answered at once if
//! the core's local cycle is below `exact_until`, the earliest cycle at which anything not
//! yet simulated could change it; otherwise the core yields and retries once global time
//! has caught up. CSR writes change NIC state seen by others, so they only happen at global
//! time. netTX writes only schedule future events, so they are accepted at any local time.
//! A core idle in `lnic_wait()` yields so that it can be parked (see `spin`).

use crate::node::nic::{NodeNic, NO_NANOPU_NIC};
use nanopu_nic::icenic::IceAction;
use nanopu_nic::nic::RxState;
use nanopu_nic::rdma::RdmaAction;
use nanopu_nic::{Action, Nic};
use nanopu_riscv::{Access, Platform, Stop};

/// The NIC as one core sees it during one `run` call.
pub struct NodePlatform<'a> {
    /// The node's NIC: the nanoPU NIC's registers (x30/x31, LNIC CSRs) or IceNIC's
    /// (memory-mapped), whichever it has; the other's are absent.
    pub nic: &'a mut NodeNic,
    /// Global time in node cycles when the core was dispatched.
    pub global: u64,
    /// Local cycles below this are exact for arrival-dependent reads.
    pub exact_until: u64,
    /// What the NIC asked the event loop to do: the event loop's vector, kept empty between
    /// dispatches (`Simulation::spare_actions`), so that a dispatch that asks for something
    /// allocates nothing and one that asks for nothing costs nothing.
    pub actions: &'a mut Vec<Action>,
    /// The netRX state behind the last `Blocked` netRX answer.
    pub last_rx: Option<RxState>,
    /// Sorted PCs of `lnic_wait()` spin loops (see `spin`).
    spin_pcs: &'a [u64],
    /// Fewest cycles from a send to another node to an answer from it (`Simulation`'s).
    pub cross_node_cycles: u64,
    /// What the IceNIC asked the event loop to do.
    pub ice_actions: Vec<IceAction>,
    /// What the RDMA NIC asked the event loop to do.
    pub rdma_actions: Vec<RdmaAction>,
}

impl<'a> NodePlatform<'a> {
    pub fn new(
        nic: &'a mut NodeNic,
        global: u64,
        exact_until: u64,
        spin_pcs: &'a [u64],
        actions: &'a mut Vec<Action>,
    ) -> Self {
        NodePlatform {
            nic,
            global,
            exact_until,
            actions,
            last_rx: None,
            spin_pcs,
            cross_node_cycles: u64::MAX,
            ice_actions: Vec::new(),
            rdma_actions: Vec::new(),
        }
    }
    /// The earliest cycle at which a message this core sends at `at` could change what a
    /// core of this node reads: at once if it comes back to this node (loopback, or a
    /// multicast group that may include it), else no sooner than a remote core's answer.
    /// Not yet scheduled when the core reads on, so `exact_until` must account for it (the
    /// run-ahead oracle, tests/run_ahead.rs, found a core polling for its own loopback).
    fn reaches_back(&self, own_ip: u32, at: u64, msg: &nanopu_nic::Message) -> u64 {
        if msg.dst_ip == own_ip || msg.group.is_some() {
            at
        } else {
            at.saturating_add(self.cross_node_cycles)
        }
    }

    fn exact(&self, now: u64) -> bool {
        now <= self.global || now < self.exact_until
    }

    /// Must a device register read at `now` wait for global time? One that takes something
    /// (`pops`: a completion) happens at global time only; one whose value `depends` on
    /// arrivals, once the core is past what is exact.
    fn read_waits(&self, now: u64, pops: bool, depends: bool) -> bool {
        let late = if pops { now > self.global } else { !self.exact(now) };
        late && (pops || depends)
    }

    /// `lmsgsrdy`, the CSR a core polls in `lnic_wait()`: 1 once a word is readable (it
    /// stays readable: only this core pops it, so the answer is settled whatever global
    /// time is); 0 parks a core idle in `lnic_wait()` (the event loop wakes it), and is
    /// otherwise answered only when exact.
    #[inline]
    fn lmsgsrdy(&mut self, hart: usize, now: u64, pc: u64) -> Access<u64> {
        if fault(self.nanopu())?.msgs_ready(hart, now) {
            return Ok(1);
        }
        if self.spin_pcs.binary_search(&pc).is_ok() || !self.exact(now) {
            return Err(Stop::Blocked);
        }
        Ok(0)
    }

    /// The nanoPU NIC, or the fault of a node that has IceNIC instead. Inline, the fault's
    /// text apart: left to the compiler it was a call at every netTX write (`tx_ready`).
    #[inline]
    fn nanopu(&mut self) -> Result<&mut Nic, String> {
        self.nic.nanopu_mut().ok_or_else(no_nanopu)
    }
}

#[cold]
fn no_nanopu() -> String {
    NO_NANOPU_NIC.to_string()
}

fn fault<T>(r: Result<T, String>) -> Access<T> {
    r.map_err(Stop::fault)
}

// The calls a network register instruction makes are inline where the fast engine's
// `exec_net` calls them: with the `fast` profile's 16 code-generation units the compiler's
// own choice changed with unrelated code (an event-queue change outlined these five and
// added 518 M host instructions to `nanopu bench network`'s run with cores, 2026-12-04).
// `rx_word` and `tx_push` stay calls: inlined they cost more (CHANGELOG). `csr_read` is
// inline in the core's path for these CSRs (`exec_platform_csr`: a core's `lmsgsrdy` polls
// and the read half of every LNIC command write): as a call it took 56 host instructions a
// read, inline about 34 (1,024-core sort); `lmsgsrdy` is answered without the match of
// `Nic::csr_read` (`lmsgsrdy` below).
impl Platform for NodePlatform<'_> {
    #[inline]
    fn rx_ready(&mut self, hart: usize, now: u64, need: u32) -> Access<()> {
        let state = fault(self.nanopu().and_then(|n| n.rx_state(hart, now, need as usize)))?;
        if state == RxState::Ready {
            return Ok(());
        }
        self.last_rx = Some(state);
        Err(Stop::Blocked)
    }
    fn rx_word(&mut self, hart: usize, now: u64) -> Access<u64> {
        let Some(nic) = self.nic.nanopu_mut() else { return Err(Stop::fault(NO_NANOPU_NIC)) };
        match fault(nic.rx_read(hart, now))? {
            Ok(word) => Ok(word),
            Err(state) => {
                self.last_rx = Some(state);
                Err(Stop::Blocked)
            }
        }
    }
    #[inline]
    fn rx_pop(&mut self, hart: usize, _now: u64) -> u64 {
        // Only after `rx_ready` answered Ok, which a node without the nanoPU NIC never does.
        self.nic.nanopu_mut().map_or(0, |n| n.rx_pop(hart))
    }
    #[inline]
    fn tx_ready(&mut self, hart: usize, _now: u64) -> Access<()> {
        if fault(self.nanopu())?.tx_room(hart) {
            Ok(())
        } else {
            Err(Stop::Blocked)
        }
    }
    fn tx_push(&mut self, hart: usize, now: u64, word: u64) -> Result<(), String> {
        let before = self.actions.len();
        let nic = self.nic.nanopu_mut().ok_or(NO_NANOPU_NIC)?;
        nic.tx_push(hart, now, word, self.actions)?;
        let ip = nic.ip();
        if let Some(Action::Send { at, msg, .. }) = self.actions.get(before) {
            self.exact_until = self.exact_until.min(self.reaches_back(ip, *at, msg));
        }
        Ok(())
    }
    #[inline]
    fn csr_read(&mut self, hart: usize, now: u64, pc: u64, csr: u16) -> Access<u64> {
        if csr == nanopu_nic::csr::LMSGSRDY {
            return self.lmsgsrdy(hart, now, pc);
        }
        let value = fault(self.nanopu().and_then(|n| n.csr_read(hart, now, csr)))?;
        if Nic::csr_depends_on_arrivals(csr) && !self.exact(now) {
            return Err(Stop::Blocked);
        }
        Ok(value)
    }
    #[inline]
    fn csr_write(&mut self, hart: usize, now: u64, csr: u16, value: u64) -> Access<()> {
        if now > self.global {
            return Err(Stop::Blocked);
        }
        let actions = &mut *self.actions;
        // The error's text only if there is an error: made eagerly, it was an allocation at
        // every CSR write (a sort's cores write one at every message they finish).
        fault(
            self.nic
                .nanopu_mut()
                .ok_or_else(|| NO_NANOPU_NIC.to_string())
                .and_then(|n| n.csr_write(hart, now, csr, value, actions)),
        )
    }
    /// A NIC CSR write can move the interrupt line (an `Update` action): let the event loop
    /// apply it before the core executes another instruction, unless the line cannot move
    /// (the core's only context is the running one; see `CoreIf::line_settled`).
    #[inline]
    fn yield_after_write(&self, hart: usize) -> bool {
        self.nic.nanopu().is_some_and(|n| !n.core(hart).line_settled())
    }
    /// IceNIC registers. Reads that pop a completion change the NIC and happen only at
    /// global time, like writes; other reads of counts are answered when exact.
    fn mmio_read(&mut self, _hart: usize, now: u64, addr: u64, size: usize) -> Access<Option<u64>> {
        if self.nic.rdma().is_some() {
            return self.rdma_read(now, addr, size);
        }
        let Some(ice) = self.nic.ice().filter(|i| i.owns(addr)) else { return Ok(None) };
        if self.read_waits(now, ice.read_pops(addr), ice.depends_on_arrivals(addr)) {
            return Err(Stop::Blocked);
        }
        let ice = self.nic.ice_mut().expect("checked above");
        fault(ice.read(now, addr, size, &mut self.ice_actions)).map(Some)
    }
    fn mmio_write(&mut self, hart: usize, now: u64, addr: u64, size: usize, value: u64) -> Access<bool> {
        if self.nic.rdma().is_some() {
            return self.rdma_write(hart, now, addr, size, value);
        }
        if !self.nic.ice().is_some_and(|i| i.owns(addr)) {
            return Ok(false);
        }
        if now > self.global {
            return Err(Stop::Blocked);
        }
        let out = &mut self.ice_actions;
        // ZeroNIC's registers sit beside its control queue's (docs/models/zeronic.md).
        let r = match self.nic.zero_mut() {
            Some(z) => z.write(now, addr, size, value, out),
            None => self.nic.ice_mut().expect("checked").write(now, addr, size, value, out),
        };
        fault(r).map(|()| true)
    }
}

impl NodePlatform<'_> {
    /// The RDMA NIC's registers, under IceNIC's rules: a read that takes a completion, and
    /// every write, only at global time; a count read when exact (docs/models/rdma-nic.md
    /// "Registers").
    fn rdma_read(&mut self, now: u64, addr: u64, size: usize) -> Access<Option<u64>> {
        let Some(r) = self.nic.rdma().filter(|r| r.owns(addr)) else { return Ok(None) };
        if self.read_waits(now, r.read_pops(addr), r.depends_on_arrivals(addr)) {
            return Err(Stop::Blocked);
        }
        let r = self.nic.rdma_mut().expect("checked above");
        fault(r.read(now, addr, size, &mut self.rdma_actions)).map(Some)
    }

    fn rdma_write(&mut self, hart: usize, now: u64, addr: u64, size: usize, value: u64) -> Access<bool> {
        let Some(r) = self.nic.rdma_mut().filter(|r| r.owns(addr)) else { return Ok(false) };
        if now > self.global {
            return Err(Stop::Blocked);
        }
        fault(r.write(now, hart, addr, size, value, &mut self.rdma_actions)).map(|()| true)
    }
}
