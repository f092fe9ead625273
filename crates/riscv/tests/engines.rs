//! Differential test of the core engines (`nanopu_riscv::engine`): the same program on the
//! reference interpreter and on the fast engine, and on the interpreter and the fast engine
//! with translated traces (`Engine::Jit`, traces made at an op's first arrival), driven through the same sequence of
//! `Core::run` calls with run limits drawn at random (mostly a few to a few hundred cycles,
//! now and then tens of thousands), compared after every run: the whole core state
//! (`Core::state_digest`: registers, pc, cycle, counters, CSRs, scoreboards, branch
//! predictor, L1 caches), the node's L2 (`NodeMem::timing_digest`), the exit and the
//! console output. Programs: every C program of `sw/build` (`make -C sw`) on one core with
//! no NIC; random programs from the generator below (also on a core that changes engine
//! between runs, and on cores of timing parameters drawn at random); a nanoPU program on a NIC that always has a word; and two cores of one
//! node sharing memory, driven as crates/cluster drives them. The cluster runs are
//! compared in crates/harness/tests/engines.rs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use nanopu_riscv::asm::{self, reg::*};
use nanopu_riscv::{
    Access, Core, Engine, Exit, MemParams, NoNic, NodeMem, Platform, Program, StallKind, TimingParams,
};

/// xorshift64: the test's only source of randomness, seeded per program (reproducible).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One core on its own node, running `elf` with `engine`.
struct Side {
    core: Core,
    mem: NodeMem,
    exit: Option<Exit>,
}

impl Side {
    fn new(elf: &[u8], engine: Engine) -> Side {
        // The prototype's memory system in full (the default): both engines
        // reach it through the same load/store path, and this checks they agree with it on.
        Side::timed(elf, engine, &TimingParams::default().prototype_memory())
    }

    /// `new` with the core's timing parameters `timing`.
    fn timed(elf: &[u8], engine: Engine, timing: &TimingParams) -> Side {
        let program = Arc::new(Program::load(elf).expect("a valid ELF"));
        let mem = NodeMem::new(program.clone(), 1, &MemParams::default(), timing).expect("fits");
        let mut core = Core::new(0, &program, timing);
        core.set_engine(engine);
        Side { core, mem, exit: None }
    }

    /// One run up to `until`, as `testing::run_with` drives a core (wfi sleeps until the
    /// timer); returns what the driver saw.
    fn step(&mut self, until: u64) -> Exit {
        self.step_on(&mut NoNic, until)
    }

    /// `step` with `plat` for the node's NIC.
    fn step_on(&mut self, plat: &mut impl Platform, until: u64) -> Exit {
        let e = self.core.run(&mut self.mem, plat, until);
        if e == Exit::Wfi {
            let wake = self.core.timer_deadline(&self.mem).unwrap_or(until).min(until);
            self.core.advance_to(wake, StallKind::Wfi);
        }
        if matches!(e, Exit::Halted(_) | Exit::Error(_) | Exit::Blocked(_)) {
            self.exit = Some(e.clone());
        }
        e
    }

    fn digest(&self) -> (u64, u64) {
        (self.core.state_digest(), self.mem.timing_digest())
    }
}

/// A run limit: mostly short (checkpoints every few blocks), sometimes long.
fn budget(rng: &mut Rng) -> u64 {
    match rng.below(10) {
        0 => 1 + rng.below(50_000),
        1..=3 => 1 + rng.below(8),
        _ => 1 + rng.below(400),
    }
}

/// The engines compared with the interpreter. Traces are made at an op's first arrival,
/// so that the tests' short programs run in them.
fn engines() -> [Engine; 2] {
    nanopu_riscv::translate_after(1);
    [Engine::Fast, Engine::Jit]
}

/// Run `elf` on the interpreter and each other engine in lockstep up to `max_cycles`;
/// panics at the first difference, naming the engine and the checkpoint. Returns
/// (checkpoints, instructions) of the last.
fn compare(name: &str, elf: &[u8], max_cycles: u64, seed: u64) -> (u64, u64) {
    compare_switching(name, elf, max_cycles, seed, false)
}

/// `compare`; with `switch`, the second side runs each run on an engine drawn at random.
fn compare_switching(name: &str, elf: &[u8], max_cycles: u64, seed: u64, switch: bool) -> (u64, u64) {
    let mut last = (0, 0);
    for e in engines() {
        last = compare_with(e, &format!("{name} ({e:?})"), elf, max_cycles, seed, switch);
    }
    last
}

fn compare_with(
    second: Engine,
    name: &str,
    elf: &[u8],
    max_cycles: u64,
    seed: u64,
    switch: bool,
) -> (u64, u64) {
    let timing = TimingParams::default().prototype_memory();
    compare_timed(second, name, elf, (max_cycles, seed), switch, &timing)
}

/// `compare_with` for cores of `timing`: up to `max_cycles`, under run limits drawn from a
/// generator seeded with `seed`.
fn compare_timed(
    second: Engine,
    name: &str,
    elf: &[u8],
    (max_cycles, seed): (u64, u64),
    switch: bool,
    timing: &TimingParams,
) -> (u64, u64) {
    let (mut a, mut b) = (Side::timed(elf, Engine::Interp, timing), Side::timed(elf, second, timing));
    let mut rng = Rng(seed | 1);
    let mut checkpoints = 0;
    while a.exit.is_none() && a.core.cycle() < max_cycles {
        if switch {
            b.core.set_engine(if rng.below(2) == 0 { Engine::Interp } else { second });
        }
        let until = a.core.cycle() + budget(&mut rng);
        let (ea, eb) = (a.step(until), b.step(until));
        checkpoints += 1;
        let at = format!(
            "{name}: checkpoint {checkpoints}, interp pc {:#x} cycle {}",
            a.core.pc(),
            a.core.cycle()
        );
        assert_eq!(ea, eb, "{}: exits differ", at);
        assert_eq!(a.core.stats(), b.core.stats(), "{}: counters differ", at);
        assert_eq!((a.core.pc(), a.core.cycle()), (b.core.pc(), b.core.cycle()), "{}", at);
        assert_eq!(a.digest(), b.digest(), "{}: state differs", at);
        assert_eq!(a.core.take_console(), b.core.take_console(), "{}: console differs", at);
    }
    (checkpoints, a.core.stats().instret)
}

fn sw_build() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sw/build")
}

/// Every program of sw/build (apps and tests) for up to 3 M cycles each: most exit or
/// block on the NIC (absent here) well before; compute.elf is cut short.
#[test]
fn every_sw_program_runs_the_same_on_both_engines() {
    let mut elfs = Vec::new();
    for dir in ["apps", "tests"] {
        let d = sw_build().join(dir);
        let list = std::fs::read_dir(&d)
            .unwrap_or_else(|e| panic!("{}: {e}; build them with `make -C sw`", d.display()));
        elfs.extend(list.map(|f| f.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "elf")));
    }
    elfs.sort();
    assert!(elfs.len() > 50, "sw/build holds {} programs; build them with `make -C sw`", elfs.len());
    let (mut checks, mut insns) = (0, 0);
    for (i, p) in elfs.iter().enumerate() {
        let elf = std::fs::read(p).unwrap();
        if Program::load(&elf).is_err() {
            continue; // refused by the loader on both engines alike
        }
        let (c, n) = compare(&p.display().to_string(), &elf, 3_000_000, 0x9e37_79b9 + i as u64);
        (checks, insns) = (checks + c, insns + n);
    }
    println!("{} programs, {checks} checkpoints, {insns} instructions", elfs.len());
    assert!(insns > 10_000_000, "only {insns} instructions compared");
}

// ---- random programs -------------------------------------------------------------------

/// Data the random programs load and store around (s0 = x8), away from the code below
/// 0x8000_7000 and the HTIF mailbox at 0x8000_f000.
const DATA: u64 = 0x8000_8000;
/// Registers a random instruction may write: not s0 (the data base), s1 (loop count) nor
/// s2 (the body's address, for the programs that store to their code).
fn dest(rng: &mut Rng) -> u32 {
    loop {
        let r = rng.below(32) as u32;
        if r != 8 && r != 9 && r != 18 {
            return r;
        }
    }
}

/// One random instruction at index `at` of a body of `len` (forward branches stay inside).
fn random_insn(rng: &mut Rng, at: usize, len: usize) -> u32 {
    let (rd, rs1, rs2) = (dest(rng), rng.below(32) as u32, rng.below(32) as u32);
    let imm = rng.below(4096) as i32 - 2048;
    let ahead = |rng: &mut Rng| 4 * (1 + rng.below((len - at) as u64)) as i32;
    match rng.below(16) {
        0..=3 => {
            const F: [(u32, u32); 18] = [
                (0, 0),
                (0x20, 0),
                (0, 1),
                (0, 2),
                (0, 3),
                (0, 4),
                (0, 5),
                (0x20, 5),
                (0, 6),
                (0, 7),
                (1, 0),
                (1, 1),
                (1, 2),
                (1, 3),
                (1, 4),
                (1, 5),
                (1, 6),
                (1, 7),
            ];
            let (f7, f3) = F[rng.below(18) as usize];
            asm::r(f7, rs2, rs1, f3, rd, if rng.below(3) == 0 { 0x3b } else { 0x33 })
        }
        4..=6 => {
            let f3 = rng.below(8) as u32;
            let imm =
                if f3 == 1 || f3 == 5 { (rng.below(64) as i32) | ((rng.below(2) as i32) << 10) } else { imm };
            asm::i(imm, rs1, f3, rd, if f3 < 2 && rng.below(3) == 0 { 0x1b } else { 0x13 })
        }
        7 => asm::lui(rd, rng.next() as u32 & 0xfffff),
        8 => asm::auipc(rd, rng.below(16) as u32),
        9 | 10 => asm::i(imm, 8, [0, 1, 2, 3, 4, 5, 6][rng.below(7) as usize], rd, 0x03),
        11 => asm::s(imm, rs2, 8, rng.below(4) as u32),
        12 | 13 => asm::b(ahead(rng), rs2, rs1, [0, 1, 4, 5, 6, 7][rng.below(6) as usize]),
        14 => asm::jal(rd, ahead(rng)),
        _ => match rng.below(6) {
            0 => asm::csrrs(rd, [0xb00, 0xb02, 0xc00, 0xc02][rng.below(4) as usize], 0),
            1 => 0x0000_100f,                                  // fence.i
            2 => asm::ECALL,                                   // to the handler, which skips it
            3 => 0xffff_ffff,                                  // illegal: likewise
            4 => asm::amo(rng.below(2) as u32, 3, rd, 8, rs2), // amoadd.d / amoswap.d at s0
            _ => asm::i(imm, 8, 3, rd, 0x03),
        },
    }
}

/// With `smc`, now and then a store of a register's value over an instruction of the body
/// (s2 holds its address) or a `fence.i`: self-modifying code, which the fast engine's
/// blocks must follow exactly as the interpreter's fetch does (the new instruction seen
/// after `fence.i`, or when the page is fetched again after another store to it).
fn body_insn(rng: &mut Rng, at: usize, len: usize, smc: bool) -> u32 {
    if !smc || rng.below(8) != 0 {
        return random_insn(rng, at, len);
    }
    match rng.below(3) {
        0 => 0x0000_100f,                                                           // fence.i
        _ => asm::s(4 * rng.below(len as u64) as i32, rng.below(32) as u32, 18, 2), // sw rs2, k(s2)
    }
}

/// A random program: a trap handler that skips the trapping instruction, the data base in
/// s0, then `iters` passes over a random body, then exit with a0.
fn random_program(rng: &mut Rng, len: usize, iters: i32, smc: bool) -> Vec<u32> {
    random_program_of(rng, len, iters, |rng, at, len| body_insn(rng, at, len, smc))
}

/// `random_program` with the body's words from `body` (index, length).
fn random_program_of(
    rng: &mut Rng,
    len: usize,
    iters: i32,
    mut body: impl FnMut(&mut Rng, usize, usize) -> u32,
) -> Vec<u32> {
    let mut c = vec![asm::jal(ZERO, 20)];
    // handler (at TEXT + 4): mepc += 4; mret
    c.extend([asm::csrrs(T0, 0x341, 0), asm::addi(T0, T0, 4), asm::csrrw(ZERO, 0x341, T0), asm::MRET]);
    c.extend([asm::auipc(T0, 0), asm::addi(T0, T0, -20), asm::csrrw(ZERO, 0x305, T0)]); // mtvec
    c.extend(asm::la_dram(8, DATA));
    c.push(asm::addi(9, ZERO, iters));
    c.extend([asm::auipc(18, 0), asm::addi(18, 18, 8)]); // s2 = the body
    let top = c.len();
    c.extend((0..len).map(|at| body(rng, at, len)));
    c.push(asm::addi(9, 9, -1));
    c.push(asm::bne(9, ZERO, -4 * (c.len() - top) as i32));
    c.extend(asm::exit_with(A0));
    c
}

/// `count` programs (`what`, numbered), program `n` made by `make` from the generator
/// seeded with `seed`, each compared on both engines under run limits drawn after it; more
/// than `min_insns` instructions compared in all.
fn compare_programs(
    what: &str,
    count: usize,
    seed: u64,
    min_insns: u64,
    mut make: impl FnMut(&mut Rng, usize) -> Vec<u32>,
) {
    let mut rng = Rng(seed);
    let (mut checks, mut insns) = (0, 0);
    for n in 0..count {
        let elf = asm::elf_image(&make(&mut rng, n), false);
        let (c, i) = compare(&format!("{what} {n}"), &elf, 2_000_000, rng.next());
        (checks, insns) = (checks + c, insns + i);
    }
    println!("{count} {what}s, {checks} checkpoints, {insns} instructions");
    assert!(insns > min_insns, "only {insns} instructions compared");
}

#[test]
fn random_programs_run_the_same_on_both_engines() {
    compare_programs("random program", 300, 0x5eed_1234_abcd_0001, 300_000, |rng, _| {
        let len = 8 + rng.below(400) as usize;
        let iters = 1 + rng.below(40) as i32;
        random_program(rng, len, iters, false)
    });
}

/// Timing parameters drawn from values around the prototype's: the ones the translated
/// traces are made for (`Shape`: the I-cache line, the predictor's tables, the mispredict
/// penalty, the load latencies) and the memory system's latencies, so that the engines
/// meet what the default timing never shows them (a 1- or 3-cycle word load, a 2-cycle
/// sub-word one, no mispredict penalty).
fn random_timing(rng: &mut Rng) -> TimingParams {
    let mut pick = |values: &[u64]| values[rng.below(values.len() as u64) as usize];
    let t = TimingParams::default().prototype_memory();
    TimingParams {
        line_bytes: pick(&[32, 64, 128]),
        load_latency: pick(&[1, 2, 3]),
        load_latency_subword: pick(&[1, 2, 3, 4]),
        l2_latency: pick(&[4, 14, 30]),
        misaligned_penalty: pick(&[0, 5]),
        mispredict_penalty: pick(&[0, 1, 3, 7]),
        bht_entries: pick(&[64, 512, 2048]) as usize,
        btb_entries: pick(&[8, 32, 64]) as usize,
        ..t
    }
}

/// Random, recursive and load-use programs, each on cores of timing parameters drawn at
/// random (`random_timing`), in lockstep on every engine.
#[test]
fn random_timings_run_the_same_on_both_engines() {
    let mut rng = Rng(0x5eed_1234_abcd_0009);
    let (mut checks, mut insns) = (0, 0);
    for n in 0..240 {
        let timing = random_timing(&mut rng);
        let (size, iters) = (rng.below(300), 1 + rng.below(30) as i32);
        let code = match n % 3 {
            0 => random_program(&mut rng, 8 + size as usize, iters, false),
            1 => recursive_program(&mut rng, 1 + size as i32 % 8, size as usize % 12, iters),
            _ => load_use_program(&mut rng),
        };
        let elf = asm::elf_image(&code, false);
        let seed = rng.next();
        for e in engines() {
            let name = format!("program {n} ({e:?}) on {timing:?}");
            let (c, i) = compare_timed(e, &name, &elf, (2_000_000, seed), false, &timing);
            (checks, insns) = (checks + c, insns + i);
        }
    }
    println!("240 programs on random timings, {checks} checkpoints, {insns} instructions");
    assert!(insns > 500_000, "only {insns} instructions compared");
}

/// Recursive calls and returns (`jal`, `jalr`: a translated trace goes on at a return to
/// one of its calls, or leaves), under run limits that put the horizon anywhere.
#[test]
fn calls_and_returns_run_the_same_on_both_engines() {
    compare_programs("recursive program", 400, 0x5eed_1234_abcd_0007, 1_000_000, |rng, _| {
        let (depth, filler, iters) =
            (1 + rng.below(12) as i32, rng.below(40) as usize, 1 + rng.below(30) as i32);
        recursive_program(rng, depth, filler, iters)
    });
}

/// `iters` times, a call of a function that calls itself `depth` deep (its return address
/// on a stack in DATA), with `filler` random ALU ops in its body (so that it spans I-cache
/// lines); each call by `jal`, or by `jalr` through a register (an indirect call), at random.
fn recursive_program(rng: &mut Rng, depth: i32, filler: usize, iters: i32) -> Vec<u32> {
    let mut c = asm::la_dram(SP, DATA + 0x800);
    c.push(asm::addi(9, ZERO, iters));
    let top = c.len();
    c.push(asm::addi(A0, ZERO, depth));
    let outer_call = c.len();
    c.push(0); // the call of f (patched below)
    c.push(asm::addi(9, 9, -1));
    c.push(asm::bne(9, ZERO, -4 * (c.len() - top) as i32));
    c.extend(asm::exit_with(A1));
    let f = c.len();
    c.push(0); // beq a0, zero, ret (patched below)
    c.extend([asm::addi(SP, SP, -16), asm::sd(RA, SP, 0), asm::addi(A0, A0, -1)]);
    c.extend((0..filler).map(|_| asm::add(A1 + rng.below(3) as u32, A1 + rng.below(3) as u32, A0)));
    let inner_call = c.len();
    c.push(0); // the call of f (patched below)
    c.extend([asm::ld(RA, SP, 0), asm::addi(SP, SP, 16)]);
    let ret = c.len();
    c.push(asm::i(0, RA, 0, ZERO, 0x67)); // jalr zero, 0(ra)
    c[f] = asm::beq(A0, ZERO, 4 * (ret - f) as i32);
    for at in [outer_call, inner_call] {
        c[at] = asm::jal(RA, 4 * (f as i32 - at as i32));
    }
    if rng.below(2) == 0 {
        // The inner call through t0: auipc t0, 0; addi t0, t0, f - here; jalr ra, 0(t0).
        let at = inner_call;
        c.splice(
            at..=at,
            [asm::auipc(T0, 0), asm::addi(T0, T0, 4 * (f as i32 - at as i32)), asm::i(0, T0, 0, RA, 0x67)],
        );
        c[f] = asm::beq(A0, ZERO, 4 * (ret + 2 - f) as i32);
    }
    c
}

/// Random programs on the interpreter against a core that changes engine between runs at
/// random (`Core::set_engine`): what one engine leaves, the other takes up (the fast
/// engine's scoreboard bound, kept across its runs, is not the interpreter's).
#[test]
fn switching_engines_between_runs_changes_nothing() {
    let mut rng = Rng(0x5eed_1234_abcd_0003);
    let mut insns = 0;
    for n in 0..100 {
        let len = 8 + rng.below(400) as usize;
        let iters = 1 + rng.below(40) as i32;
        let elf = asm::elf_image(&random_program(&mut rng, len, iters, false), false);
        insns += compare_switching(&format!("random program {n}"), &elf, 2_000_000, rng.next(), true).1;
    }
    assert!(insns > 100_000, "only {insns} instructions compared");
}

/// Random programs that overwrite their own instructions (`body_insn`), with and without
/// `fence.i`: the fast engine's block cache against the interpreter's decoded pages.
#[test]
fn self_modifying_programs_run_the_same_on_both_engines() {
    compare_programs("self-modifying program", 200, 0x5eed_1234_abcd_0002, 200_000, |rng, _| {
        let len = 8 + rng.below(400) as usize;
        let iters = 1 + rng.below(40) as i32;
        random_program(rng, len, iters, true)
    });
}

/// Two random compressed instructions (RVC, unprivileged spec chapter 16) in one word, so
/// that the body's 4-byte branch offsets stay whole: ALU ops on any register `dest`
/// allows, loads and stores at s0 (x8, RVC register 0), and `c.beqz`/`c.bnez` by 2 (taken
/// or not, the next instruction: the predictor learns either). The fast engine's arms
/// are expanded per op length (`by_code!`), which the other random programs, all 4-byte,
/// do not reach for the 2-byte ops.
fn compressed_pair(rng: &mut Rng) -> u32 {
    let half = |rng: &mut Rng| -> u32 {
        let (rd, rs2) = (dest(rng), 1 + rng.below(31) as u32);
        let (imm, p) = (1 + rng.below(31) as u32, 2 + rng.below(6) as u32); // p: a0..a5
        let (lo5, hi1) = (imm & 31, (imm >> 5) & 1);
        match rng.below(10) {
            0 if rd != 0 => hi1 << 12 | rd << 7 | lo5 << 2 | 0b01, // c.addi
            1 if rd != 0 => 0b010 << 13 | hi1 << 12 | rd << 7 | lo5 << 2 | 0b01, // c.li
            2 if rd != 0 => hi1 << 12 | rd << 7 | lo5 << 2 | 0b10, // c.slli
            3 if rd != 0 => 0b1000 << 12 | rd << 7 | rs2 << 2 | 0b10, // c.mv
            4 if rd != 0 => 0b1001 << 12 | rd << 7 | rs2 << 2 | 0b10, // c.add
            5 => 0b100111 << 10 | p << 7 | (rng.below(2) as u32) << 5 | p << 2 | 0b01, // c.subw/c.addw
            6 => 0b011 << 13 | (imm & 7) << 10 | (imm >> 3 & 3) << 5 | p << 2, // c.ld p, off(s0)
            7 => 0b111 << 13 | (imm & 7) << 10 | (imm >> 3 & 3) << 5 | p << 2, // c.sd p, off(s0)
            8 => (6 + rng.below(2) as u32) << 13 | p << 7 | 1 << 3 | 0b01, // c.beqz/c.bnez p, 2
            _ => 0b010 << 13 | 1 << 12 | 1 << 7 | 0b01,            // c.li ra, -32
        }
    };
    half(rng) | half(rng) << 16
}

/// Random programs with compressed instructions: every third word of the body two of
/// them (`compressed_pair`).
#[test]
fn random_compressed_programs_run_the_same_on_both_engines() {
    compare_programs("random compressed program", 200, 0x5eed_1234_abcd_0004, 200_000, |rng, _| {
        let len = 8 + rng.below(400) as usize;
        let iters = 1 + rng.below(40) as i32;
        random_program_of(rng, len, iters, |rng, at, len| match rng.below(3) {
            0 => compressed_pair(rng),
            _ => random_insn(rng, at, len),
        })
    });
}

/// A load at s0 of any width, aligned (so mostly one the fast engine runs inline,
/// `load_quick`), into `rd`.
fn aligned_load(rng: &mut Rng, rd: u32) -> u32 {
    let f3 = [0, 1, 2, 3, 4, 5, 6][rng.below(7) as usize];
    asm::i((rng.below(64) << (f3 & 3)) as i32, 8, f3, rd, 0x03)
}

/// An op that reads `loaded` as its first or second source, or one that reads neither it
/// nor writes a source of its own from a load: compressed (`c.add`, `c.mv`: a 2-byte op
/// after the load) or not.
fn load_user(rng: &mut Rng, loaded: u32, rd: u32) -> u32 {
    let other = 10 + rng.below(4) as u32;
    match rng.below(6) {
        0 => asm::add(rd, loaded, other),
        1 => asm::add(rd, other, loaded),
        2 => asm::sd(loaded, 8, 8 * rng.below(64) as i32),
        3 => asm::bne(loaded, other, 4),
        4 => 0b1001 << 12 | rd << 7 | loaded << 2 | 0b10 | (0b1000 << 12 | rd << 7 | other << 2 | 0b10) << 16,
        _ => asm::add(rd, other, other),
    }
}

/// Random programs dense in loads (`aligned_load`) each followed at once by an op that
/// uses the result or not (`load_user`), on four registers, with `c.ld` pairs too: the
/// fast engine's quiet loop goes on after a load that hit when the next op does not read
/// it (`fast.rs`, `Run::quiet_after_load`), which must give the interpreter's stalls,
/// under run limits that cut the body anywhere.
#[test]
fn loads_used_at_once_run_the_same_on_both_engines() {
    compare_programs("load-use program", 200, 0x5eed_1234_abcd_0005, 200_000, |rng, _| load_use_program(rng));
}

/// A random program dense in loads each followed at once by an op that uses the result or
/// not (`loads_used_at_once_run_the_same_on_both_engines`).
fn load_use_program(rng: &mut Rng) -> Vec<u32> {
    let len = 8 + rng.below(300) as usize;
    let iters = 1 + rng.below(40) as i32;
    let mut loaded = 10;
    random_program_of(rng, len, iters, |rng, at, len| {
        let rd = 10 + rng.below(4) as u32;
        match rng.below(8) {
            0..=2 => {
                loaded = rd;
                aligned_load(rng, rd)
            }
            3..=5 => load_user(rng, loaded, rd),
            // c.ld a0..a3, off(s0); c.add a0..a3 with the result or another.
            6 => {
                let (p, q, off) = (2 + rng.below(4) as u32, 10 + rng.below(4) as u32, rng.below(32) as u32);
                let use_it = if rng.below(2) == 0 { 8 + p } else { q };
                let ld = 0b011 << 13 | (off & 7) << 10 | (off >> 3 & 3) << 5 | p << 2;
                ld | (0b1001 << 12 | q << 7 | use_it << 2 | 0b10) << 16
            }
            _ => random_insn(rng, at, len),
        }
    })
}

/// `c.nop`: a 2-byte instruction.
const C_NOP: u32 = 0x0001;

/// A loop of `iters` passes over `len` random instructions with no branch or jump
/// (`random_insn`'s others, and aligned loads), each after a `c.nop` one time in three, so
/// that 4-byte instructions start at either half of a word and some straddle an I-cache
/// line's end; in `random_program_of`'s frame. With `at_page_end`, the loop starts less
/// than 160 bytes before the end of the code's first page (`nop`s run once before it),
/// so that its passes cross the page boundary, some with a straddling instruction.
fn straddling_program(rng: &mut Rng, len: usize, iters: i32, at_page_end: bool) -> Vec<u32> {
    let words = random_program_of(rng, 0, iters, |_, _, _| unreachable!());
    let top = words.len() - 2 - asm::exit_with(A0).len();
    let mut c = words[..top].to_vec();
    if at_page_end {
        c.resize(1024 - 1 - rng.below(40) as usize, asm::addi(ZERO, ZERO, 0));
    }
    let mut halves = Vec::new();
    for at in 0..len {
        if rng.below(3) == 0 {
            halves.push(C_NOP);
        }
        let insn = loop {
            let w = match rng.below(4) {
                0 => {
                    let rd = 10 + rng.below(4) as u32;
                    aligned_load(rng, rd)
                }
                _ => random_insn(rng, at, len),
            };
            if !matches!(w & 0x7f, 0x63 | 0x6f) {
                break w;
            }
        };
        halves.extend([insn & 0xffff, insn >> 16]);
    }
    let back = 2 * halves.len() as i32 + 4;
    for insn in [asm::addi(9, 9, -1), asm::bne(9, ZERO, -back)] {
        halves.extend([insn & 0xffff, insn >> 16]);
    }
    if halves.len() % 2 == 1 {
        halves.push(C_NOP);
    }
    c.extend(halves.chunks(2).map(|h| h[0] | h[1] << 16));
    c.extend(&words[top + 2..]);
    c
}

/// `straddling_program`s, a third of them up to 8 KiB long, half of them across the
/// first page's end: a run going on into the next line
/// (`fast.rs`, `Core::next_line_of_run`) after a 4-byte op that straddles the line's end
/// (the run's end is then one slot short of a line), or the page's (the run must not go
/// on into another page).
#[test]
fn straddling_instructions_run_the_same_on_both_engines() {
    compare_programs("straddling program", 120, 0x5eed_1234_abcd_0006, 100_000, |rng, n| {
        let len = 8 + rng.below(if n % 3 == 0 { 1600 } else { 100 }) as usize;
        let iters = 1 + rng.below(40) as i32;
        straddling_program(rng, len, iters, n % 2 == 1)
    });
}

// ---- cores sharing memory ----------------------------------------------------------------

/// Rounds of the flag hand-over in `flag_program`.
const ROUNDS: i32 = 12;

/// Two harts on one node: hart 0 (`flag_writer`) and hart 1 (`flag_reader`) hand a flag
/// back and forth `ROUNDS` times, then both exit. Each poll loop branches back into its
/// own I-cache line: the loop a run carries on in, which an access that moves the horizon
/// (a core found polling yields, `core/coherence.rs`) must end.
fn flag_program() -> Vec<u32> {
    let mut c = vec![asm::csrrs(A1, 0xf14, ZERO)];
    c.extend(asm::la_dram(8, DATA));
    let to_reader = c.len();
    c.push(0); // bne a1, zero, reader (patched below)
    flag_writer(&mut c);
    let reader = c.len();
    c[to_reader] = asm::bne(A1, ZERO, 4 * (reader - to_reader) as i32);
    flag_reader(&mut c);
    c
}

/// Hart 0: work a while (stores and loads on two lines of its own), write the round's
/// number to the flag, poll for the acknowledgement with an atomic add of 0 (which
/// `exec_rare` runs); then exit 0.
fn flag_writer(c: &mut Vec<u32>) {
    const T3: u32 = 28;
    const T4: u32 = 29;
    c.push(asm::addi(9, ZERO, ROUNDS));
    let round = c.len();
    c.push(asm::addi(T1, ZERO, 40));
    let work = c.len();
    c.extend([asm::sd(T1, 8, 128), asm::ld(T3, 8, 192), asm::add(T4, T4, T3), asm::addi(T1, T1, -1)]);
    c.push(asm::bne(T1, ZERO, -4 * (c.len() - work) as i32));
    c.extend([asm::sd(9, 8, 0), asm::addi(A3, 8, 64)]); // flag = round
    c.push(asm::amo(0, 3, T2, A3, ZERO)); // amoadd.d t2, zero, (a3)
    c.push(asm::bne(T2, 9, -4));
    c.push(asm::addi(9, 9, -1));
    c.push(asm::bne(9, ZERO, -4 * (c.len() - round) as i32));
    c.push(asm::addi(A0, ZERO, 0));
    c.extend(asm::exit_with(A0));
}

/// Hart 1: poll the flag, in odd rounds with loads, in even ones with a store to its line
/// and a load (the store is then the access that finds the core polling: the 16th in a
/// row, `POLL_ACCESSES`, counted from the first), work a little, acknowledge on another
/// line; then exit 0.
fn flag_reader(c: &mut Vec<u32>) {
    const T3: u32 = 28;
    const T4: u32 = 29;
    c.push(asm::addi(9, ZERO, ROUNDS));
    let poll = c.len();
    c.extend([asm::i(1, 9, 7, T3, 0x13), asm::beq(T3, ZERO, 16)]); // andi t3, s1, 1
    c.extend([asm::ld(T2, 8, 0), asm::bne(T2, 9, -4), asm::jal(ZERO, 16)]);
    c.extend([asm::sd(T2, 8, 8), asm::ld(T2, 8, 0), asm::bne(T2, 9, -8)]);
    c.push(asm::addi(T1, ZERO, 25));
    c.extend([asm::add(T4, T4, T2), asm::addi(T1, T1, -1), asm::bne(T1, ZERO, -8)]);
    c.push(asm::sd(9, 8, 64)); // acknowledge
    c.push(asm::addi(9, 9, -1));
    c.push(asm::bne(9, ZERO, -4 * (c.len() - poll) as i32));
    c.push(asm::addi(A0, ZERO, 0));
    c.extend(asm::exit_with(A0));
}

/// The cores of one node on one engine, driven as crates/cluster's dispatch drives them
/// (`engine/cores.rs`): the core furthest behind runs next, at most a window past the
/// other (just up to it while it polls, `Core::polls`), with sharing on while the other
/// has yet to exit; after each run its stores leave the other's L1 D-cache and enter the
/// node's store table (`Node::publish_stores`).
struct Node {
    cores: Vec<Core>,
    mem: NodeMem,
    exits: Vec<Option<Exit>>,
    last: usize,
}

/// How far past the other core a core runs while it does not poll (the cluster's
/// `SHARING_WINDOW`, crates/cluster/src/engine/cores.rs).
const WINDOW: u64 = 256;

impl Node {
    fn new(elf: &[u8], n: usize, engine: Engine) -> Node {
        let program = Arc::new(Program::load(elf).expect("a valid ELF"));
        let timing = TimingParams::default().prototype_memory();
        let mem = NodeMem::new(program.clone(), n, &MemParams::default(), &timing).expect("fits");
        let cores = (0..n)
            .map(|h| {
                let mut core = Core::new(h, &program, &timing);
                core.set_engine(engine);
                core
            })
            .collect();
        Node { cores, mem, exits: vec![None; n], last: usize::MAX }
    }

    /// The core to run next (furthest behind, of those yet to exit), and the earliest
    /// clock of the others.
    fn next(&self) -> Option<(usize, u64)> {
        let live = |i: &usize| self.exits[*i].is_none();
        let c = (0..self.cores.len()).filter(live).min_by_key(|&i| self.cores[i].cycle())?;
        let others =
            (0..self.cores.len()).filter(live).filter(|&i| i != c).map(|i| self.cores[i].cycle()).min();
        Some((c, others.unwrap_or(u64::MAX)))
    }

    /// Run core `c` for at most `budget` cycles, within reach of the others (`others`);
    /// the exit, and whether the core ended its run before the limit.
    fn run(&mut self, c: usize, others: u64, budget: u64) -> (Exit, bool) {
        if std::mem::replace(&mut self.last, c) != c {
            self.cores[c].drop_reservation();
        }
        let core = &mut self.cores[c];
        let step = if others == u64::MAX {
            u64::MAX
        } else if core.polls() {
            others
        } else {
            others + WINDOW
        };
        core.set_sharing(others != u64::MAX, step == others);
        let until = step.min(core.cycle() + budget).max(core.cycle() + 1);
        let e = core.run(&mut self.mem, &mut NoNic, until);
        if matches!(e, Exit::Halted(_) | Exit::Error(_) | Exit::Blocked(_)) {
            self.exits[c] = Some(e.clone());
        }
        self.publish(c);
        let early = e == Exit::Limit && self.cores[c].cycle() < until;
        (e, early)
    }

    fn publish(&mut self, c: usize) {
        let stores = self.cores[c].take_stores();
        for &(line, cycle) in &stores {
            self.mem.record_store(c, line, cycle);
            for i in (0..self.cores.len()).filter(|&i| i != c && self.exits[i].is_none()) {
                self.cores[i].observe_store(line);
            }
        }
        let live = (0..self.cores.len()).filter(|&i| self.exits[i].is_none());
        self.mem.prune_stores(live.map(|i| self.cores[i].cycle()).min().unwrap_or(u64::MAX));
        self.cores[c].clear_noted(stores);
    }
}

/// Two cores sharing memory, one polling a flag the other writes, on both engines in
/// lockstep under random run limits: after every run, each core's state and counters
/// and the node's L2. Catches what single cores cannot: a load, store or atomic that moves
/// the horizon (a polling core's yield) must end the fast engine's run where the
/// interpreter's ends.
#[test]
fn cores_sharing_memory_run_the_same_on_both_engines() {
    let elf = asm::elf_image(&flag_program(), false);
    let (mut checks, mut yields) = (0u64, 0u64);
    for (seed, second) in (1..=20u64).flat_map(|s| engines().map(|e| (s, e))) {
        let (mut a, mut b) = (Node::new(&elf, 2, Engine::Interp), Node::new(&elf, 2, second));
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        while let Some((c, others)) = a.next() {
            assert_eq!(b.next(), Some((c, others)), "seed {seed}: the engines' schedules differ");
            let budget = budget(&mut rng);
            let ((ea, yielded), (eb, _)) = (a.run(c, others, budget), b.run(c, others, budget));
            checks += 1;
            let (ca, cb) = (&a.cores[c], &b.cores[c]);
            let at = format!(
                "{second:?}, seed {seed}: run {checks} of core {c}, interp pc {:#x} cycle {}",
                ca.pc(),
                ca.cycle()
            );
            yields += u64::from(yielded);
            assert_eq!(ea, eb, "{at}: exits differ");
            assert_eq!(ca.stats(), cb.stats(), "{at}: counters differ");
            assert_eq!((ca.pc(), ca.cycle()), (cb.pc(), cb.cycle()), "{at}");
            assert_eq!(ca.state_digest(), cb.state_digest(), "{at}: state differs");
            assert_eq!(a.mem.timing_digest(), b.mem.timing_digest(), "{at}: the L2 differs");
            assert!(checks < 1_000_000, "{at}: the program does not end");
        }
        assert_eq!(a.exits, vec![Some(Exit::Halted(0)); 2], "seed {seed}: both harts exit 0");
    }
    println!("20 runs of the flag program on each engine, {checks} checkpoints, {yields} polling yields");
    assert!(yields > 200, "only {yields} runs ended by a polling core's yield");
}

// ---- nanoPU register instructions ---------------------------------------------------------

/// A NIC that always has a netRX word (the next doubleword of the random programs' data
/// area, an address to load from) and room in netTX.
#[derive(Default)]
struct Stream {
    next: u64,
    sent: Vec<u64>,
}

impl Platform for Stream {
    fn rx_ready(&mut self, _: usize, _: u64, _: u32) -> Access<()> {
        Ok(())
    }
    fn rx_pop(&mut self, _: usize, _: u64) -> u64 {
        self.next += 8;
        DATA + self.next
    }
    fn tx_ready(&mut self, _: usize, _: u64) -> Access<()> {
        Ok(())
    }
    fn tx_push(&mut self, _: usize, _: u64, word: u64) -> Result<(), String> {
        self.sent.push(word);
        Ok(())
    }
    fn csr_read(&mut self, _: usize, _: u64, _: u64, _: u16) -> Access<u64> {
        Ok(0)
    }
    fn csr_write(&mut self, _: usize, _: u64, _: u16, _: u64) -> Access<()> {
        Ok(())
    }
}

/// A nanoPU program whose register instructions (`Kind::Net`, run by `net.rs`) set
/// scoreboard entries: a multiply, a divide and a load that read netRX (the load's address),
/// each result used by the next instruction (which must wait for it on both engines); an
/// add from netRX and a netTX write.
fn net_program() -> Vec<u32> {
    const NETRX: u32 = 30;
    const NETTX: u32 = 31;
    const A6: u32 = 16;
    let mut c = asm::la_dram(8, DATA);
    c.extend([asm::addi(A4, ZERO, 3), asm::addi(9, ZERO, 200)]);
    let top = c.len();
    c.extend([asm::r(1, A4, NETRX, 0, A5, 0x33), asm::add(A6, A5, A5)]); // mul a5, x30, a4
    c.extend([asm::r(1, A4, NETRX, 4, A5, 0x33), asm::add(A6, A6, A5)]); // div a5, x30, a4
    c.extend([asm::i(0, NETRX, 3, A5, 0x03), asm::add(A6, A6, A5)]); // ld a5, 0(x30)
    c.extend([asm::r(0, NETRX, 8, 0, A3, 0x33), asm::sd(A6, 8, 0)]); // add a3, s0, x30
    c.extend([asm::add(NETTX, A6, ZERO), asm::addi(9, 9, -1)]);
    c.push(asm::bne(9, ZERO, -4 * (c.len() - top) as i32));
    c.push(asm::addi(A0, ZERO, 0));
    c.extend(asm::exit_with(A0));
    c
}

#[test]
fn nanopu_register_instructions_run_the_same_on_both_engines() {
    let elf = asm::elf_image(&net_program(), true);
    for (seed, second) in (1..=10u64).flat_map(|s| engines().map(|e| (s, e))) {
        let (mut a, mut b) = (Side::new(&elf, Engine::Interp), Side::new(&elf, second));
        let (mut na, mut nb) = (Stream::default(), Stream::default());
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut runs = 0;
        while a.exit.is_none() {
            let until = a.core.cycle() + budget(&mut rng);
            let (ea, eb) = (a.step_on(&mut na, until), b.step_on(&mut nb, until));
            runs += 1;
            let at = format!(
                "{second:?}, seed {seed}: run {runs}, interp pc {:#x} cycle {}",
                a.core.pc(),
                a.core.cycle()
            );
            assert_eq!(ea, eb, "{at}: exits differ");
            assert_eq!(a.core.stats(), b.core.stats(), "{at}: counters differ");
            assert_eq!((a.core.pc(), a.core.cycle()), (b.core.pc(), b.core.cycle()), "{at}");
            assert_eq!(a.digest(), b.digest(), "{at}: state differs");
            assert_eq!(na.sent, nb.sent, "{at}: netTX differs");
            assert!(runs < 1_000_000, "{at}: the program does not end");
        }
        assert_eq!(a.exit, Some(Exit::Halted(0)), "seed {seed}");
        assert_eq!(na.sent.len(), 200, "seed {seed}: one netTX word a pass");
    }
}
