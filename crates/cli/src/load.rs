//! `nanopu load CONFIG.toml`: sweep the offered load on a server node and tabulate latency.

use clap::Args;
use nanopu_cluster::load_config::LoadFile;
use nanopu_cluster::loadgen::{check_rate, ClassResult, LoadResult, LoadSpec, MAX_REQUESTS};
use nanopu_cluster::NodeConfig;
use nanopu_sim::Time;
use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct LoadArgs {
    /// Load configuration (.toml): the server node and the load to sweep.
    pub config: PathBuf,
    /// Write the results table (one row per offered load and class) as CSV.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write every request (class, context, service cycles, send and reply time) as CSV.
    #[arg(long)]
    records: Option<PathBuf>,
    /// Write what the server's cores spent per reply at each offered load, from the
    /// simulator's counters after load.start_us (instructions, busy cycles, D-cache and
    /// LLC misses), as CSV.
    #[arg(long)]
    cost: Option<PathBuf>,
    /// Print the table as JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Override the configuration's offered loads, million requests per second (a,b,c).
    #[arg(long, value_delimiter = ',')]
    rates: Vec<f64>,
    /// Override the configuration's number of requests per load.
    #[arg(long)]
    requests: Option<usize>,
    /// Override the configuration's number of unmeasured requests at the start of each load.
    #[arg(long)]
    warmup: Option<usize>,
    /// Override how long after the last send a run waits for the last replies, us.
    #[arg(long)]
    drain_us: Option<f64>,
}

const COLUMNS: &str = "offered_mrps,class,measured,replied,achieved_mrps,median_ns,p99_ns,p999_ns";

impl LoadArgs {
    /// Refuse values no run can use, naming the flag, before anything is read or simulated.
    fn check(&self) -> Result<(), String> {
        self.rates.iter().try_for_each(|&r| check_rate(r, "--rates"))?;
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

    /// The configuration with the flags' overrides, its values checked.
    fn config(&self) -> Result<(LoadFile, PathBuf), String> {
        let (mut file, base) = LoadFile::load(&self.config)?;
        let l = &mut file.load;
        if !self.rates.is_empty() {
            l.rates_mrps = self.rates.clone();
        }
        l.requests = self.requests.unwrap_or(l.requests);
        l.warmup = self.warmup.unwrap_or(l.warmup);
        l.drain_us = self.drain_us.unwrap_or(l.drain_us);
        // The parser turns drain_us into a Time without a check (a negative value would
        // become 0): checked here until it does.
        Time::checked_from_us_f64(l.drain_us, "load.drain_us")?;
        Ok((file, base))
    }
}

pub fn main(a: LoadArgs) -> Result<ExitCode, String> {
    a.check()?;
    let (file, base) = a.config()?;
    let cfg = file.node_config()?;
    let specs = file.specs()?;
    let elf_path = base.join(&file.server.elf);
    let elf = std::fs::read(&elf_path).map_err(|e| format!("server.elf: {}: {e}", elf_path.display()))?;
    let out = create(a.out.as_ref())?;
    let mut records = Records { file: create(a.records.as_ref())?.map(|(p, f)| (p, BufWriter::new(f))) };
    records.write("offered_mrps,request,class,context,service_cycles,sent_ns,replied_ns\n")?;
    let mut cost = create(a.cost.as_ref())?;
    let mut cost_csv = String::from(COST_COLUMNS);
    let mut rows = Vec::new();
    for spec in &specs {
        let r = run_point(spec, &elf, &cfg)?;
        rows.extend(results(spec, &r).into_iter().map(|c| (spec.rate_mrps, c)));
        records.append(spec, &r)?;
        cost_csv += &cost_row(spec, &r);
    }
    records.finish()?;
    if let Some((p, f)) = &mut cost {
        f.write_all(cost_csv.as_bytes()).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    write_outputs(&a, out, &rows)
}

/// One offered load: its run, or why its figures would mean nothing (the server failed,
/// or some requests never got any reply).
fn run_point(spec: &LoadSpec, elf: &[u8], cfg: &NodeConfig) -> Result<LoadResult, String> {
    let at = |why: String| format!("offered load {} Mrps: {why}", spec.rate_mrps);
    let started = Instant::now();
    let r = spec.run(elf, cfg.clone()).map_err(|e| at(e.to_string()))?;
    let wall = started.elapsed().as_secs_f64();
    eprintln!("{:>8.3} Mrps offered: {} ({wall:.1} s)", spec.rate_mrps, r.outcome.name());
    if r.startup > 0 {
        eprintln!(
            "         {} start-up message(s) from the server before the first request (not counted)",
            r.startup
        );
    }
    if let Some(e) = &r.kv {
        let (what, ops) = match (&spec.rdma, &spec.setalg) {
            (Some(_), _) => ("RDMA", r.rdma_ops.len()),
            (None, Some(_)) => ("set algebra", r.setalg_ops.len()),
            (None, None) => ("key-value", r.kv_ops.len()),
        };
        let checked = ops - e.lost;
        let unjudged = match e.unchecked {
            0 => String::new(),
            n => format!(" ({n} whose data another order of requests in flight together may explain)"),
        };
        eprintln!(
            "         {what} check: {checked} replies checked{unjudged}, {} wrong, {} lost",
            e.wrong, e.lost
        );
    }
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
    match problems.is_empty() {
        true => Ok(r),
        false => Err(at(problems.join("; "))),
    }
}

const COST_COLUMNS: &str =
    "offered_mrps,replied,instructions_per_reply,busy_cycles_per_reply,dcache_misses_per_reply,llc_misses_per_reply\n";

/// The `--cost` line of one offered load: the server's counters per reply.
fn cost_row(spec: &LoadSpec, r: &LoadResult) -> String {
    let replied = r.requests.iter().filter(|q| q.replied.is_some()).count();
    let [i, c, d, l] = r.cost.per(replied);
    format!("{},{replied},{i:.1},{c:.1},{d:.2},{l:.2}\n", spec.rate_mrps)
}

/// Create an output file before the runs, so that a bad path costs no simulation.
fn create(p: Option<&PathBuf>) -> Result<Option<(&PathBuf, File)>, String> {
    p.map(|p| File::create(p).map(|f| (p, f)).map_err(|e| format!("{}: {e}", p.display()))).transpose()
}

/// The `--records` file, written a load at a time so that no run's requests are kept
/// after it.
struct Records<'a> {
    file: Option<(&'a PathBuf, BufWriter<File>)>,
}

impl Records<'_> {
    fn write(&mut self, text: &str) -> Result<(), String> {
        let Some((p, w)) = &mut self.file else { return Ok(()) };
        w.write_all(text.as_bytes()).map_err(|e| format!("{}: {e}", p.display()))
    }

    fn append(&mut self, spec: &LoadSpec, r: &LoadResult) -> Result<(), String> {
        if self.file.is_some() {
            self.write(&records_csv(spec, r))?;
        }
        Ok(())
    }

    fn finish(self) -> Result<(), String> {
        let Some((p, mut w)) = self.file else { return Ok(()) };
        w.flush().map_err(|e| format!("{}: {e}", p.display()))
    }
}

/// The figures of every class and of all requests together.
fn results(spec: &LoadSpec, r: &LoadResult) -> Vec<ClassResult> {
    let mut v = vec![r.class_result("all", None, spec.warmup)];
    if spec.classes.len() > 1 {
        v.extend(spec.classes.iter().enumerate().map(|(i, c)| r.class_result(&c.name, Some(i), spec.warmup)));
    }
    v
}

/// Every request of one run as CSV lines.
fn records_csv(spec: &LoadSpec, r: &LoadResult) -> String {
    let rows = r.requests.iter().enumerate().map(|(i, q)| {
        let replied = q.replied.map_or(String::new(), |t| format!("{:.3}", t.as_ns_f64()));
        let class = spec.classes[q.class].name.clone();
        let sent = format!("{:.3}", q.sent.as_ns_f64());
        let (rate, context, service) = (spec.rate_mrps, q.context, q.service_cycles);
        vec![rate.to_string(), i.to_string(), class, context.to_string(), service.to_string(), sent, replied]
    });
    csv_lines(rows)
}

/// Lines of CSV through a real writer: a field holding a comma, a quote or a line break
/// (a class name may) is quoted as RFC 4180 says.
fn csv_lines(rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
    rows.into_iter().for_each(|r| w.write_record(&r).expect("writes to memory"));
    String::from_utf8(w.into_inner().expect("writes to memory")).expect("UTF-8 fields")
}

/// One row of the results table: the offered load, the class and its figures.
fn fields((rate, c): &(f64, ClassResult)) -> Vec<String> {
    let l = &c.latency;
    let counts = [c.measured, c.replied].map(|n| n.to_string());
    let head = [rate.to_string(), c.class.clone()];
    let tail = [format!("{:.4}", c.achieved_mrps), ns(l.median), ns(l.p99), ns(l.p999)];
    head.into_iter().chain(counts).chain(tail).collect()
}

/// A latency in ns, or "inf" when the quantile falls on requests that got no reply.
fn ns(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "inf".into()
    }
}

fn json_row((rate, c): &(f64, ClassResult)) -> Value {
    let l = &c.latency;
    let f = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
    json!({ "offered_mrps": rate, "class": c.class, "measured": c.measured, "replied": c.replied,
        "achieved_mrps": c.achieved_mrps, "median_ns": f(l.median), "p99_ns": f(l.p99), "p999_ns": f(l.p999) })
}

/// The table to the `--out` file (created before the runs) and to stdout.
fn write_outputs(
    a: &LoadArgs,
    out: Option<(&PathBuf, File)>,
    rows: &[(f64, ClassResult)],
) -> Result<ExitCode, String> {
    let header = COLUMNS.split(',').map(String::from).collect::<Vec<_>>();
    let table: Vec<Vec<String>> = std::iter::once(header).chain(rows.iter().map(fields)).collect();
    if let Some((p, mut f)) = out {
        f.write_all(csv_lines(table.clone()).as_bytes()).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    if a.json {
        let v: Vec<Value> = rows.iter().map(json_row).collect();
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
    } else {
        table.iter().for_each(|r| println!("{}", r.join("\t")));
    }
    Ok(ExitCode::SUCCESS)
}
