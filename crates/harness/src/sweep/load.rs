//! A load sweep (`nanopu load CONFIG.toml`, `nanopu.load` in Python): a load file with the
//! caller's overrides, one run per offered load, what each run tells on stderr and why its
//! figures would not stand. The command line and the Python package are front ends over
//! this one implementation; `sweep::table` shapes the results.

use crate::config::load::LoadFile;
use crate::loadgen::{check_rate, LoadResult, LoadSpec, MAX_REQUESTS};
use nanopu_cluster::{NodeConfig, Outcome};
use nanopu_sim::Time;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What a front end may change in a load file: the command line's flags (`--rates`,
/// `--requests`, `--warmup`, `--drain-us`) and the Python API's seed.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub rates_mrps: Vec<f64>,
    pub requests: Option<usize>,
    pub warmup: Option<usize>,
    pub drain_us: Option<f64>,
    pub seed: Option<u64>,
}

impl Overrides {
    /// Refuse values no run can use, naming the flag, before anything is read or simulated.
    pub fn check(&self) -> Result<(), String> {
        self.rates_mrps.iter().try_for_each(|&r| check_rate(r, "--rates"))?;
        if let Some(us) = self.drain_us {
            Time::checked_from_us_f64(us, "--drain-us")?;
        }
        match self.requests {
            Some(n) if n == 0 || n > MAX_REQUESTS => {
                Err(format!("--requests: {n} is not within 1..={MAX_REQUESTS}"))
            }
            _ => Ok(()),
        }
    }

    /// The file with the overrides, its values checked.
    pub fn apply(&self, file: &mut LoadFile) -> Result<(), String> {
        let l = &mut file.load;
        if !self.rates_mrps.is_empty() {
            l.rates_mrps = self.rates_mrps.clone();
        }
        l.requests = self.requests.unwrap_or(l.requests);
        l.warmup = self.warmup.unwrap_or(l.warmup);
        l.drain_us = self.drain_us.unwrap_or(l.drain_us);
        l.seed = self.seed.unwrap_or(l.seed);
        // The parser turns drain_us into a Time without a check (a negative value would
        // become 0): checked here until it does.
        Time::checked_from_us_f64(l.drain_us, "load.drain_us")?;
        Ok(())
    }
}

/// A load file ready to run: the server's configuration and program, one spec per load.
pub struct Sweep {
    pub file: LoadFile,
    pub cfg: NodeConfig,
    pub specs: Vec<LoadSpec>,
    elf: Vec<u8>,
}

impl Sweep {
    /// The file read from `path` (the server's ELF relative to its directory), overridden.
    pub fn load(path: &Path, o: &Overrides) -> Result<Sweep, String> {
        o.check()?;
        let (file, base) = LoadFile::load(path)?;
        Sweep::new(file, &base, o)
    }

    /// A file already parsed; the server's ELF relative to `base`.
    pub fn new(mut file: LoadFile, base: &Path, o: &Overrides) -> Result<Sweep, String> {
        o.check()?;
        o.apply(&mut file)?;
        let cfg = file.node_config()?;
        let specs = file.specs()?;
        let elf_path: PathBuf = base.join(&file.server.elf);
        let elf = std::fs::read(&elf_path).map_err(|e| format!("server.elf: {}: {e}", elf_path.display()))?;
        Ok(Sweep { file, cfg, specs, elf })
    }

    /// Every load in turn, each handed to `each` as it ends (so that no run's requests are
    /// kept after it); stops at the first load whose figures would not stand. `tell`: each
    /// run's `report` on stderr as it ends. A run stopped by Ctrl-C, SIGTERM or a wall-clock
    /// limit is handed to `each` with what it measured (its outcome says so) and ends the
    /// sweep: the stop is returned, no later load is started.
    pub fn run(
        &self,
        tell: bool,
        mut each: impl FnMut(&LoadSpec, &LoadResult) -> Result<(), String>,
    ) -> Result<Option<Outcome>, String> {
        for spec in &self.specs {
            let r = self.point(spec, tell)?;
            each(spec, &r)?;
            if r.outcome.stopped() {
                return Ok(Some(r.outcome));
            }
        }
        Ok(None)
    }

    /// One offered load: its run, or why its figures would mean nothing (the server failed,
    /// or some requests never got any reply). A stopped run is kept as far as it went: its
    /// unanswered requests are the stop's, not the server's.
    fn point(&self, spec: &LoadSpec, tell: bool) -> Result<LoadResult, String> {
        let at = |why: String| format!("offered load {} Mrps: {why}", spec.rate_mrps);
        let started = Instant::now();
        let r = spec.run(&self.elf, self.cfg.clone()).map_err(|e| at(e.to_string()))?;
        if tell {
            eprint!("{}", report(spec, &r, started.elapsed().as_secs_f64()));
        }
        let problems = problems(spec, &r);
        match problems.is_empty() || r.outcome.stopped() {
            true => Ok(r),
            false => Err(at(problems.join("; "))),
        }
    }
}

/// Why a run's figures do not stand, messages that matched no request first.
fn problems(spec: &LoadSpec, r: &LoadResult) -> Vec<String> {
    let mut problems = r.problems(spec);
    if r.unexpected > 0 {
        problems.insert(
            0,
            format!(
                "{} messages from the server matched no request (start-up messages count as such \
                 only before the first request: load.start_us delays it)",
                r.unexpected
            ),
        );
    }
    problems
}

/// What a run did, in lines for stderr: its end, start-up messages, the replies' check.
pub fn report(spec: &LoadSpec, r: &LoadResult, wall: f64) -> String {
    let mut t = format!("{:>8.3} Mrps offered: {} ({wall:.1} s)\n", spec.rate_mrps, r.outcome.name());
    if r.startup > 0 {
        t += &format!(
            "         {} start-up message(s) from the server before the first request (not counted)\n",
            r.startup
        );
    }
    if let Some(e) = &r.kv {
        let checked = check_count(spec, r) - e.lost;
        let unjudged = match e.unchecked {
            0 => String::new(),
            n => format!(" ({n} whose data another order of requests in flight together may explain)"),
        };
        t += &format!(
            "         {} check: {checked} replies checked{unjudged}, {} wrong, {} lost\n",
            check_name(spec),
            e.wrong,
            e.lost
        );
    }
    t
}

/// The name of a checked workload's check.
pub fn check_name(spec: &LoadSpec) -> &'static str {
    match (&spec.rdma, &spec.setalg) {
        (Some(_), _) => "RDMA",
        (None, Some(_)) => "set algebra",
        (None, None) => "key-value",
    }
}

/// Requests a checked workload checks (sent ones, answered or lost).
pub fn check_count(spec: &LoadSpec, r: &LoadResult) -> usize {
    match (&spec.rdma, &spec.setalg) {
        (Some(_), _) => r.rdma_ops.len(),
        (None, Some(_)) => r.setalg_ops.len(),
        (None, None) => r.kv_ops.len(),
    }
}
