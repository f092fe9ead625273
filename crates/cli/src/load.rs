//! `nanopu load CONFIG.toml`: sweep the offered load on a server node and tabulate latency.

use clap::Args;
use nanopu_cluster::load_config::LoadFile;
use nanopu_cluster::loadgen::{ClassResult, LoadResult, LoadSpec};
use serde_json::{json, Value};
use std::fmt::Write as _;
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
    /// Print the table as JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Override the configuration's offered loads, million requests per second (a,b,c).
    #[arg(long, value_delimiter = ',')]
    rates: Vec<f64>,
    /// Override the configuration's number of requests per load.
    #[arg(long)]
    requests: Option<usize>,
}

const COLUMNS: &str = "offered_mrps,class,measured,replied,achieved_mrps,median_ns,p99_ns,p999_ns";

pub fn main(a: LoadArgs) -> Result<ExitCode, String> {
    let (mut file, base) = LoadFile::load(&a.config)?;
    if !a.rates.is_empty() {
        file.load.rates_mrps = a.rates.clone();
    }
    file.load.requests = a.requests.unwrap_or(file.load.requests);
    let cfg = file.node_config()?;
    let elf_path = base.join(&file.server.elf);
    let elf = std::fs::read(&elf_path).map_err(|e| format!("server.elf: {}: {e}", elf_path.display()))?;
    let (mut rows, mut records) = (Vec::new(), String::new());
    for spec in file.specs()? {
        let started = Instant::now();
        let r = spec.run(&elf, cfg.clone()).map_err(|e| e.to_string())?;
        eprintln!(
            "{:>8.3} Mrps offered: {} ({:.1} s)",
            spec.rate_mrps,
            r.outcome.name(),
            started.elapsed().as_secs_f64()
        );
        if r.unexpected > 0 {
            return Err(format!("{} messages from the server matched no request", r.unexpected));
        }
        rows.extend(results(&spec, &r).into_iter().map(|c| (spec.rate_mrps, c)));
        append_records(&mut records, &spec, &r);
    }
    write_outputs(&a, &rows, &records)
}

/// The figures of every class and of all requests together.
fn results(spec: &LoadSpec, r: &LoadResult) -> Vec<ClassResult> {
    let mut v = vec![r.class_result("all", None, spec.warmup)];
    if spec.classes.len() > 1 {
        v.extend(spec.classes.iter().enumerate().map(|(i, c)| r.class_result(&c.name, Some(i), spec.warmup)));
    }
    v
}

fn append_records(out: &mut String, spec: &LoadSpec, r: &LoadResult) {
    for (i, q) in r.requests.iter().enumerate() {
        let replied = q.replied.map_or(String::new(), |t| format!("{:.3}", t.as_ns_f64()));
        let class = &spec.classes[q.class].name;
        let sent = q.sent.as_ns_f64();
        let _ = writeln!(
            out,
            "{},{i},{class},{},{},{sent:.3},{replied}",
            spec.rate_mrps, q.context, q.service_cycles
        );
    }
}

fn csv_row((rate, c): &(f64, ClassResult)) -> String {
    let l = &c.latency;
    format!(
        "{rate},{},{},{},{:.4},{},{},{}",
        c.class,
        c.measured,
        c.replied,
        c.achieved_mrps,
        ns(l.median),
        ns(l.p99),
        ns(l.p999)
    )
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

fn write_outputs(a: &LoadArgs, rows: &[(f64, ClassResult)], records: &str) -> Result<ExitCode, String> {
    let table: Vec<String> = rows.iter().map(csv_row).collect();
    let csv = format!("{COLUMNS}\n{}\n", table.join("\n"));
    if let Some(p) = &a.out {
        std::fs::write(p, &csv).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    if let Some(p) = &a.records {
        let head = "offered_mrps,request,class,context,service_cycles,sent_ns,replied_ns\n";
        std::fs::write(p, format!("{head}{records}")).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    if a.json {
        let v: Vec<Value> = rows.iter().map(json_row).collect();
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
    } else {
        print!("{}", csv.replace(',', "\t"));
    }
    Ok(ExitCode::SUCCESS)
}
