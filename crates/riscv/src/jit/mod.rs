//! Translated traces (`Engine::Jit`): host code, made by Cranelift, for the ops the fast
//! engine's quiet loop runs (`fast.rs`, `quiet_steps`), with the same architectural state,
//! cycles and counters as the fast engine and the interpreter.
//!
//! - What a trace is (`trace.rs`): the ops reached from an entry op of a program's
//!   pre-decoded code along the next op, every branch's and `jal`'s target and the return
//!   from a call, within the entry's page, up to 256 of them, stopping at ops another trace
//!   holds, of the kinds the quiet loop runs inline: the integer ALU, the mul/div unit's,
//!   conditional branches, `jal`, `jalr`, loads and stores. A trace can be entered at any
//!   of its ops. Only the program's own code is translated (every node shares it, as
//!   it shares the decoded ops); a page a node wrote (`NodeMem::code_over`) runs as before.
//! - What the host code does (`emit.rs`): an ALU op is its operation on the register file
//!   in the `Core`; the cycle is counted in a host register (and the ops run from it, at
//!   the exit); a conditional branch runs the predictor itself (`BranchPred::branch_inline`,
//!   with what depends on the pc alone computed when translating), and so does a `jal`
//!   that links nothing (its BTB entry); a call's `jal` and `jalr` call the predictor
//!   (`helpers.rs`: the return stack), and a `jalr` to a return site of the trace goes on
//!   there; word loads and stores run `load_quick`'s and `store_quick`'s common case in the
//!   trace (`quick_access`: the TLB, the line of the core's last data access or one the L1
//!   knows it holds, the repeat note), and the rest call the helpers, which run the quick
//!   paths or, where the access cannot trap or reach a device (`Core::plain_access`), the
//!   access with its timing (a TLB fill, an L1 miss), after which the trace goes on or ends
//!   the run as `Run::settle_access` would; entering another line is `enter_line` with no
//!   miss (`cross`, its line's known slot a constant). A
//!   trace runs only while every pending result is ready and the horizon is out of the
//!   line's reach (the quiet loop's terms); the waits it takes itself are the next op's
//!   for a word load's result (the default latency: the checked issue's one cycle) and,
//!   after a multiply or divide (run by a helper), the checked issue of the ALU ops that
//!   follow while its result is pending (`emit/muldiv.rs`). It hands back to the fast
//!   engine at an op it does not have (what `exec_rare` runs), at an access to a device
//!   (before it, nothing changed), where the quiet loop would leave, or at a jump out.
//! - When (`Traces`): an op is translated as an entry at its `translate_after`th arrival
//!   (100 by default), so a program's cold code costs no compile; then every op of its
//!   trace is an entry. Each pre-decoded op has a word saying which (shared by every core
//!   running the program, on any host thread: translating changes no simulated result, so
//!   the order in which threads get there does not matter). Traces are made for one set
//!   of the timing parameters they depend on (`Shape`: the first core's); a core with
//!   others runs without them.
//!
//! `tests/engines.rs` runs it in lockstep with the interpreter, as it runs the fast engine,
//! with traces made at the first arrival.

mod emit;
mod helpers;
mod trace;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::op::Op;
use crate::program::CodeRegion;

pub(crate) use trace::{Exit, Io, Shape, TraceFn};

/// Arrivals at an op before its trace is made (`translate_after`): a round number chosen
/// so that code run a few times costs no compile, not tuned.
static AFTER: AtomicU64 = AtomicU64::new(100);
/// An op that makes no trace (too short to gain, or Cranelift refused it).
const NONE: u64 = u64::MAX;
/// The bit that marks a word holding a trace (its address in the low 48 bits, the op's
/// index in the trace above).
const TRACE: u64 = 1 << 63;

/// Make traces at the `n`th arrival at an op (at least 1) from now on, in every program:
/// for tests, which run programs too short to reach the default 100.
pub fn translate_after(n: u64) {
    AFTER.store(n.max(1), Ordering::Relaxed);
}

/// The translated traces of a program's pre-decoded code: a word per op of each region
/// (an arrival count, `NONE`, or a trace and the op's index in it), and the compiler.
pub(crate) struct Traces {
    regions: Vec<Region>,
    compiler: Mutex<Option<emit::Compiler>>,
    /// The timing parameters the traces are made for (`Shape::of`, packed): the first
    /// core's; a core with others runs without traces.
    shape: AtomicU64,
}

/// One of the program's code regions (`CodeRegion`): where its ops are, the pc of the
/// first, and a word per op.
struct Region {
    ops: *const Op,
    n: usize,
    base: u64,
    words: Box<[AtomicU64]>,
}

// SAFETY: the raw pointers are the program's own decoded ops, which never move or change
// after loading; the words are atomics and the compiler is behind a mutex.
unsafe impl Send for Traces {}
// SAFETY: as for `Send`: nothing is written but through the atomics and the mutex.
unsafe impl Sync for Traces {}

impl Traces {
    pub(crate) fn new(code: &[CodeRegion]) -> Traces {
        let region = |r: &CodeRegion| Region {
            ops: r.ops.as_ptr(),
            n: r.ops.len(),
            base: r.base,
            words: (0..r.ops.len()).map(|_| AtomicU64::new(0)).collect(),
        };
        Traces {
            regions: code.iter().map(region).collect(),
            compiler: Mutex::new(None),
            shape: AtomicU64::new(u64::MAX),
        }
    }

    /// Whether the traces are made for cores of `shape` (`Shape::of`): the first core to ask
    /// sets it.
    #[inline(always)]
    pub(crate) fn claim(&self, shape: u64) -> bool {
        match self.shape.load(Ordering::Relaxed) {
            u64::MAX => {
                let first =
                    self.shape.compare_exchange(u64::MAX, shape, Ordering::Relaxed, Ordering::Relaxed);
                first.is_ok() || first == Err(shape)
            }
            s => s == shape,
        }
    }

    /// The trace to enter at op `at`, for a core of the traces' shape (`claim`), and the
    /// op's index in it: made at the op's `translate_after`th arrival; `None` before, for
    /// an op outside the program's code, or where no trace gains.
    #[inline(always)]
    pub(crate) fn at(&self, at: *const Op) -> Option<(TraceFn, u64)> {
        let (r, i) = self.find(at)?;
        let word = &self.regions[r].words[i];
        match word.load(Ordering::Acquire) {
            NONE => None,
            w if w & TRACE != 0 => Some(trace_fn(w)),
            w if w + 1 < AFTER.load(Ordering::Relaxed) => {
                word.store(w + 1, Ordering::Relaxed);
                None
            }
            _ => self.translate(r, i),
        }
    }

    /// The region holding op `at`, and the op's index in it.
    #[inline(always)]
    fn find(&self, at: *const Op) -> Option<(usize, usize)> {
        self.regions.iter().enumerate().find_map(|(r, region)| {
            let i = (at as usize).wrapping_sub(region.ops as usize) / std::mem::size_of::<Op>();
            (i < region.n).then_some((r, i))
        })
    }

    /// Make the trace entered at op `i` of region `r` (unless another thread did since:
    /// its word says so) and make each of its ops an entry to it.
    #[cold]
    #[inline(never)]
    fn translate(&self, r: usize, i: usize) -> Option<(TraceFn, u64)> {
        let shape = self.shape.load(Ordering::Relaxed);
        let mut compiler = self.compiler.lock().unwrap_or_else(|e| e.into_inner());
        let region = &self.regions[r];
        match region.words[i].load(Ordering::Acquire) {
            NONE => return None,
            w if w & TRACE != 0 => return Some(trace_fn(w)),
            _ => {}
        }
        // SAFETY: the region's ops, `n` of them from `ops` (`new`), never changed.
        let ops = unsafe { std::slice::from_raw_parts(region.ops, region.n) };
        let held = |j: usize| region.words[j].load(Ordering::Relaxed) & TRACE != 0;
        let t = trace::Trace::new(ops, i, region.base, trace::Shape::unpack(shape), held);
        if compiler.is_none() {
            *compiler = emit::Compiler::new();
        }
        let f = t.as_ref().zip(compiler.as_mut()).and_then(|(t, c)| c.compile(t));
        let (Some(t), Some(f)) = (t, f) else {
            region.words[i].store(NONE, Ordering::Release);
            return None;
        };
        for (k, it) in t.items.iter().enumerate() {
            let w = f as usize as u64 | (k as u64) << 48 | TRACE;
            region.words[(i as i64 + it.off) as usize].store(w, Ordering::Release);
        }
        Some((f, 0))
    }
}

/// A trace's word: its address and the op's index in it (`translate`).
fn trace_fn(w: u64) -> (TraceFn, u64) {
    debug_assert!(w & TRACE != 0 && w != NONE);
    let f = (w & ((1 << 48) - 1)) as usize;
    // SAFETY: only `translate` stores a word with `TRACE` set, from a finished trace's
    // address (48 bits on the hosts Cranelift supports) and the op's index.
    (unsafe { std::mem::transmute::<usize, TraceFn>(f) }, (w & !TRACE) >> 48)
}

/// The compiler is used from whichever host thread makes a trace, under the mutex:
/// Cranelift's module must be movable between threads, which the `unsafe impl`s above do
/// not check. This does, at compile time.
#[allow(dead_code)]
fn the_compiler_may_move_between_threads() {
    fn send<T: Send>() {}
    send::<emit::Compiler>();
}
