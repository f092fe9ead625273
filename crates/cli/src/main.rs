//! The `nanopu` command: run nanoPU programs on simulated nodes, and the microbenchmarks.
//!
//! - `nanopu run PROGRAM.elf`: one node, every core running the program; prints a summary
//!   (or `--json`), exits non-zero if the program failed or the simulator stopped it.
//! - `nanopu load CONFIG.toml`: the load generator's sweep (`nanopu_harness::loadgen`).
//! - `nanopu raft CONFIG.toml`: Raft replicas under load and faults (`nanopu_harness::clients::raft`).
//! - `nanopu chain CONFIG.toml`: chain replication under load (`nanopu_harness::clients::chain`).
//! - `nanopu sort`: a validated NanoSort, MilliSort, MergeMin or local-sort run.
//! - `nanopu bench NAME`: the microbenchmarks of `bench.rs`, printing JSON.
//! - `nanopu app NAME`: the paper's applications, checked against the host (`app.rs`).
//! - `nanopu schema KIND` / `--markdown`: the configuration files' JSON Schemas and reference
//!   page (docs/config.md).

mod chain;
mod load;
mod raft;
mod schema;

use nanopu_cli::{app, bench, ranks, run, sort};

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "nanopu", version, about = "nanoPU full-system simulator")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a RISC-V ELF program on a simulated nanoPU node.
    Run(run::RunArgs),
    /// Run a microbenchmark and print its figures.
    Bench(bench::BenchArgs),
    /// Sort (or find the minimum) across simulated cores and validate the result.
    Sort(sort::SortArgs),
    /// Sweep an open-loop request load on a server node; tabulate throughput and latency.
    Load(load::LoadArgs),
    /// Raft replicas under an open-loop client (and faults): latency, elections, safety checks.
    Raft(raft::RaftArgs),
    /// Print a configuration file's JSON Schema, or the reference page of every key.
    Schema(schema::SchemaArgs),
    /// Run one of the paper's applications (NN inference, Othello, N-body), checked.
    App(app::AppArgs),
    /// Chain replication under an open-loop key-value load; latency per request type and the
    /// reconfiguration timeline after a crash.
    Chain(chain::ChainArgs),
}

/// Ctrl-C, or SIGTERM (what `timeout`, batch schedulers and Ray send), asks the running
/// simulation to stop and report what it has, its files written and marked incomplete; a
/// second signal quits at once.
fn on_interrupt() {
    if nanopu_cluster::engine::stop::stop_requested() {
        std::process::exit(130);
    }
    eprintln!("\nnanopu: interrupted; stopping the simulation (interrupt again to quit at once)");
    nanopu_cluster::engine::stop::request_stop();
}

// The simulator allocates and frees many small objects (messages, packets, event payloads)
// from several threads; mimalloc's per-thread free lists cost less than the system
// allocator's (docs/profile.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How long mimalloc keeps a freed 64 KiB page of its arena before giving it back to the
/// system, in milliseconds (its default: 1,000, `purge_delay` in mimalloc 3.3's
/// src/options.c, which libmimalloc-sys 0.1.49 builds). A run frees and allocates all the
/// time (messages, packets, queues that drain); pages freed in the last second still
/// counted in the resident set at its peak. At once: 2.6% less peak on the 16,384-core
/// sort, for about 1.4% more CPU, system time (the kernel zeroes a page given back when it
/// is next touched; docs/profile.md "Where a 4-core node's memory goes"). The environment's
/// `MIMALLOC_PURGE_DELAY` still wins.
const PURGE_DELAY_MS: i64 = 0;

// mimalloc's option setter, from the library the `mimalloc` crate links (mimalloc.h).
extern "C" {
    fn mi_option_set_default(option: std::ffi::c_int, value: std::ffi::c_long);
    #[cfg(test)]
    fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
}

/// `mi_option_purge_delay` in mimalloc.h's `mi_option_e` (the same in mimalloc 2 and 3),
/// which the `libmimalloc-sys` crate does not name.
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// mimalloc's options that differ from its defaults. `mi_option_set_default` leaves an
/// option the environment set (`MIMALLOC_PURGE_DELAY`) as it is. mimalloc reads the purge
/// delay each time it frees a page, so setting it here, after the runtime's first
/// allocations, is in time.
fn allocator_options() {
    // SAFETY: sets an integer in mimalloc's option table; no memory of ours is involved.
    unsafe { mi_option_set_default(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS as _) };
}

/// No transparent huge pages for this process. mimalloc asks for them, and the kernel then
/// zeroes 2 MiB at the first touch of any byte in it: the network benchmark zeroed 580 MB to
/// use 231 MB. Without them the 4,096-core NanoSort is about 4% faster and needs 11% less
/// memory (docs/profile.md). The flag is checked when a page is first touched, so setting
/// it here, after the allocator reserved its arena, is in time.
fn no_huge_pages() {
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and touches no memory of ours.
    unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
}

/// A closed stdout (`nanopu load ... --json | head`) ends the process quietly, as it ends
/// `cat` or any other Unix filter: killed by SIGPIPE, which the shell reports as status 141
/// (128 + 13). Rust starts programs with SIGPIPE ignored, so a write to a closed pipe
/// returns EPIPE instead and `println!` panics on it. Restoring the default action here
/// covers every printing path of every subcommand at once, including modules that print
/// with `println!` directly, where a writer wrapper would have to be threaded through each
/// of them; and a 141 stays distinguishable from our own exit codes for `pipefail` scripts.
/// Files written with `--out`, `--trace` and the like are not pipes and are unaffected.
fn default_sigpipe() {
    // SAFETY: sets one signal's disposition to the default; no memory of ours is involved.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
}

fn main() -> ExitCode {
    allocator_options();
    no_huge_pages();
    default_sigpipe();
    let cli = Cli::parse();
    let _ = ctrlc::set_handler(on_interrupt);
    if let Err(e) = nanopu_cluster::engine::env_threads() {
        eprintln!("nanopu: error: {e}");
        return ExitCode::from(2);
    }
    // Kept until the end of `main`: dropping it ends MPI.
    let _mpi = match ranks::start().and_then(|m| across_ranks(&cli.cmd).map(|_| m)) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("nanopu: error: {e}");
            return ExitCode::from(2);
        }
    };
    let result = match cli.cmd {
        Cmd::Run(a) => run::main(a),
        Cmd::Bench(a) => bench::main(a),
        Cmd::Load(a) => load::main(a),
        Cmd::Chain(a) => chain::main(a),
        Cmd::Sort(a) => sort::main(a),
        Cmd::Raft(a) => raft::main(a),
        Cmd::Schema(a) => schema::main(a),
        Cmd::App(a) => app::main(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // Every rank has the same error (a rank's own names it): rank 0 reports it.
            if ranks::root() {
                eprintln!("nanopu: error: {e}");
            }
            ExitCode::from(2)
        }
    }
}

/// Across MPI ranks, `nanopu sort` and `nanopu run CLUSTER.toml` gather their results from
/// every rank; the other commands do not (yet).
fn across_ranks(cmd: &Cmd) -> Result<(), String> {
    match (nanopu_cluster::engine::ranks::current(), cmd) {
        (None, _) | (_, Cmd::Sort(_)) => Ok(()),
        (Some(_), Cmd::Run(a)) if a.program.extension().is_some_and(|e| e == "toml") => Ok(()),
        (Some(r), _) => Err(format!(
            "only `nanopu sort` and `nanopu run CLUSTER.toml` run across MPI ranks so far ({} ranks; docs/parallel.md)",
            r.size()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Option 15 is the purge delay: mimalloc's default for it (1,000 ms in mimalloc 3)
    /// until `allocator_options` sets ours.
    #[test]
    fn the_purge_delay_is_set() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        // SAFETY: reads an integer from mimalloc's option table.
        let get = || unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) } as i64;
        assert_eq!(get(), 1000);
        allocator_options();
        assert_eq!(get(), PURGE_DELAY_MS);
    }
}
