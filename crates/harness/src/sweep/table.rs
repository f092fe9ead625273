//! The results of a load sweep (`sweep::load`) as `nanopu load` writes them: the table (one
//! row per offered load and class, CSV, text or JSON), every request (`--records`), the
//! server's cost per reply (`--cost`) and, for the Python package, what each run's check
//! found. CSV goes through a real writer: a field holding a comma, a quote or a line break
//! (a class name may) is quoted as RFC 4180 says.

use crate::config::load::LoadSection;
use crate::loadgen::{ClassResult, LoadResult, LoadSpec};
use crate::sweep::load::{check_count, check_name, point_problems};
use serde_json::{json, Value};

/// One row of the table: the offered load and a class's (or all requests') figures.
pub type Row = (f64, ClassResult);

pub const COLUMNS: &str = "offered_mrps,class,measured,replied,achieved_mrps,median_ns,p99_ns,p999_ns";
pub const RECORD_COLUMNS: &str = "offered_mrps,request,class,context,service_cycles,sent_ns,replied_ns\n";
pub const COST_COLUMNS: &str =
    "offered_mrps,replied,instructions_per_reply,busy_cycles_per_reply,dcache_misses_per_reply,llc_misses_per_reply\n";

/// The figures of all requests together and, when there are several, of every class.
pub fn rows(spec: &LoadSpec, r: &LoadResult) -> Vec<Row> {
    let mut v = vec![r.class_result("all", None, spec.warmup)];
    if spec.classes.len() > 1 {
        v.extend(spec.classes.iter().enumerate().map(|(i, c)| r.class_result(&c.name, Some(i), spec.warmup)));
    }
    v.into_iter().map(|c| (spec.rate_mrps, c)).collect()
}

/// The table as CSV (`--out`), its header first.
pub fn table_csv(rows: &[Row]) -> String {
    csv_lines(table(rows))
}

/// The table as text: tab-separated, its header first (what `nanopu load` prints).
pub fn table_text(rows: &[Row]) -> String {
    table(rows).iter().map(|r| r.join("\t") + "\n").collect()
}

/// The table as JSON (`nanopu load --json`): an unanswered quantile is null.
pub fn table_json(rows: &[Row]) -> Value {
    Value::Array(rows.iter().map(json_row).collect())
}

fn table(rows: &[Row]) -> Vec<Vec<String>> {
    let header = COLUMNS.split(',').map(String::from).collect::<Vec<_>>();
    std::iter::once(header).chain(rows.iter().map(fields)).collect()
}

/// One row's fields: the offered load, the class and its figures.
fn fields((rate, c): &Row) -> Vec<String> {
    let l = &c.latency;
    let counts = [c.measured, c.replied].map(|n| n.to_string());
    let head = [rate.to_string(), c.class.clone()];
    let tail = [format!("{:.4}", c.achieved_mrps), ns(l.median), ns(l.p99), ns(l.p999)];
    head.into_iter().chain(counts).chain(tail).collect()
}

/// A latency in ns, or "inf" when the quantile falls on requests that got no reply.
pub fn ns(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "inf".into()
    }
}

fn json_row((rate, c): &Row) -> Value {
    let l = &c.latency;
    let f = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
    json!({ "offered_mrps": rate, "class": c.class, "measured": c.measured, "replied": c.replied,
        "achieved_mrps": c.achieved_mrps, "median_ns": f(l.median), "p99_ns": f(l.p99), "p999_ns": f(l.p999) })
}

/// Every request of one run as CSV lines (`--records`, after `RECORD_COLUMNS`).
pub fn records_csv(spec: &LoadSpec, r: &LoadResult) -> String {
    let rows = r.requests.iter().enumerate().map(|(i, q)| {
        let replied = q.replied.map_or(String::new(), |t| format!("{:.3}", t.as_ns_f64()));
        let class = spec.classes[q.class].name.clone();
        let sent = format!("{:.3}", q.sent.as_ns_f64());
        let (rate, context, service) = (spec.rate_mrps, q.context, q.service_cycles);
        vec![rate.to_string(), i.to_string(), class, context.to_string(), service.to_string(), sent, replied]
    });
    csv_lines(rows)
}

/// The `--cost` line of one offered load: the server's counters per reply.
pub fn cost_row(spec: &LoadSpec, r: &LoadResult) -> String {
    let replied = r.requests.iter().filter(|q| q.replied.is_some()).count();
    let [i, c, d, l] = r.cost.per(replied);
    format!("{},{replied},{i:.1},{c:.1},{d:.2},{l:.2}\n", spec.rate_mrps)
}

/// How one run ended, whether its figures stand and why not (`sweep::load::point_problems`),
/// and what its check found (what `nanopu load` tells on stderr), as JSON: the check is
/// null for a workload that checks nothing.
pub fn point_json(spec: &LoadSpec, r: &LoadResult) -> Value {
    let check = r.kv.as_ref().map(|e| {
        json!({ "check": check_name(spec), "checked": check_count(spec, r) - e.lost,
            "unjudged": e.unchecked, "wrong": e.wrong, "lost": e.lost })
    });
    let problems = point_problems(spec, r);
    json!({ "offered_mrps": spec.rate_mrps, "outcome": r.outcome.name(), "complete": problems.is_empty(),
        "problems": problems, "startup_messages": r.startup, "unexpected_messages": r.unexpected, "check": check })
}

/// A whole sweep as one JSON document (`nanopu load --json`, the Python package's summary):
/// whether it is complete (every load run and its figures standing) and why not, the
/// settings run, the table's rows and each load's `point_json`.
pub fn sweep_json(l: &LoadSection, rows: &[Row], points: &[Value], problems: &[String]) -> Value {
    json!({ "complete": problems.is_empty(), "problems": problems, "seed": l.seed,
        "rates_mrps": l.rates_mrps, "requests": l.requests, "warmup": l.warmup,
        "rows": table_json(rows), "points": points })
}

/// Lines of CSV through a real writer.
pub fn csv_lines(rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
    rows.into_iter().for_each(|r| w.write_record(&r).expect("writes to memory"));
    String::from_utf8(w.into_inner().expect("writes to memory")).expect("UTF-8 fields")
}

/// A whole sweep's results gathered in memory (the Python package's): the table's rows,
/// each run's cost line and report, and every request if asked.
#[derive(Default)]
pub struct Gathered {
    pub rows: Vec<Row>,
    pub cost_csv: String,
    pub records_csv: Option<String>,
    pub points: Vec<Value>,
}

impl Gathered {
    /// Gather into `records_csv` too when `records`.
    pub fn new(records: bool) -> Gathered {
        let records_csv = records.then(|| RECORD_COLUMNS.to_string());
        Gathered { cost_csv: COST_COLUMNS.into(), records_csv, ..Gathered::default() }
    }

    pub fn add(&mut self, spec: &LoadSpec, r: &LoadResult) {
        self.rows.extend(rows(spec, r));
        self.cost_csv += &cost_row(spec, r);
        if let Some(t) = &mut self.records_csv {
            *t += &records_csv(spec, r);
        }
        self.points.push(point_json(spec, r));
    }
}
