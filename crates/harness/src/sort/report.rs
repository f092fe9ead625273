//! What a sort run reports: total time, per-stage compute and idle time over all cores,
//! messages and bytes, final skew (its Perfetto trace: `crate::trace`).

use super::harness::{stage_name, SorterOutput, Stage};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One stage over all cores that ran it, in ns.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StageSummary {
    pub stage: String,
    pub cores: usize,
    pub compute_mean_ns: f64,
    pub compute_max_ns: f64,
    pub idle_mean_ns: f64,
    pub idle_max_ns: f64,
}

/// The figures of one sort run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SortFigures {
    /// From the first stage's start on any core to the last stage's end on any core: the
    /// programs' own timed span (their set-up before the first stage is outside it).
    pub total_ns: f64,
    /// When that span starts: the earliest first-stage start, ns from the benchmark's start.
    pub timer_start_ns: f64,
    /// From the benchmark's start (time 0: every record already in its sorter's memory,
    /// every core started at its program's entry) to the last stage's end on any core, as
    /// the GraySort benchmark times end to end: `timer_start_ns + total_ns`.
    pub end_to_end_ns: f64,
    pub stages: Vec<StageSummary>,
    pub msgs_sent: u64,
    pub bytes_sent: u64,
    /// Largest output run over the mean output run.
    pub skew: f64,
}

/// The sort time over several seeds' runs, ns.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SeedSummary {
    pub seeds: usize,
    pub mean_ns: f64,
    /// Sample standard deviation (0 for one seed).
    pub sd_ns: f64,
    pub max_ns: f64,
}

impl SeedSummary {
    /// The summary of these times; None without any, so that a mean (or a verdict) is
    /// never reported for runs that did not happen.
    pub fn of(times: &[f64]) -> Option<SeedSummary> {
        let max = times.iter().copied().reduce(f64::max)?;
        let n = times.len() as f64;
        let mean = times.iter().sum::<f64>() / n;
        let var = times.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        Some(SeedSummary { seeds: times.len(), mean_ns: mean, sd_ns: var.sqrt(), max_ns: max })
    }
}

fn ns(cycles: u64, hz: u64) -> f64 {
    cycles as f64 * 1e9 / hz as f64
}

/// Summarise the sorters' logs (`hz`: the cores' clock).
pub fn figures(outputs: &[SorterOutput], hz: u64) -> SortFigures {
    let all = || outputs.iter().flat_map(|o| o.stages.iter());
    let first = all().map(|s| s.start).min().unwrap_or(0);
    let last = all().map(|s| s.end).max().unwrap_or(0);
    let sizes: Vec<usize> = outputs.iter().map(|o| o.records.keys.len()).collect();
    let mean = sizes.iter().sum::<usize>() as f64 / sizes.len().max(1) as f64;
    let max = sizes.iter().copied().max().unwrap_or(0) as f64;
    SortFigures {
        total_ns: ns(last.saturating_sub(first), hz),
        timer_start_ns: ns(first, hz),
        end_to_end_ns: ns(last, hz),
        stages: stage_summaries(outputs, hz),
        msgs_sent: outputs.iter().map(|o| o.msgs_sent).sum(),
        bytes_sent: outputs.iter().map(|o| o.bytes_sent).sum(),
        skew: if mean > 0.0 { max / mean } else { 0.0 },
    }
}

fn stage_summaries(outputs: &[SorterOutput], hz: u64) -> Vec<StageSummary> {
    let mut by_id: BTreeMap<u64, Vec<&Stage>> = BTreeMap::new();
    outputs.iter().flat_map(|o| o.stages.iter()).for_each(|s| by_id.entry(s.id).or_default().push(s));
    by_id.iter().map(|(&id, v)| summarize_stage(id, v, hz)).collect()
}

fn summarize_stage(id: u64, v: &[&Stage], hz: u64) -> StageSummary {
    let compute: Vec<f64> =
        v.iter().map(|s| ns(s.end.saturating_sub(s.start).saturating_sub(s.idle), hz)).collect();
    let idle: Vec<f64> = v.iter().map(|s| ns(s.idle, hz)).collect();
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len().max(1) as f64;
    let max = |x: &[f64]| x.iter().copied().fold(0.0, f64::max);
    StageSummary {
        stage: stage_name(id),
        cores: v.len(),
        compute_mean_ns: mean(&compute),
        compute_max_ns: max(&compute),
        idle_mean_ns: mean(&idle),
        idle_max_ns: max(&idle),
    }
}

/// Every sorter's stages as CSV: sorter, node, core, stage, start and end (ns from the
/// run's start), compute and idle time (ns).
pub fn stages_csv(outputs: &[SorterOutput], cores_per_node: usize, hz: u64) -> String {
    let mut s = String::from("sorter,node,core,stage,start_ns,end_ns,compute_ns,idle_ns\n");
    for (sorter, o) in outputs.iter().enumerate() {
        for st in &o.stages {
            let compute = st.end.saturating_sub(st.start).saturating_sub(st.idle);
            let _ = writeln!(
                s,
                "{sorter},{},{},{},{:.1},{:.1},{:.1},{:.1}",
                sorter / cores_per_node,
                sorter % cores_per_node,
                stage_name(st.id),
                ns(st.start, hz),
                ns(st.end, hz),
                ns(compute, hz),
                ns(st.idle, hz)
            );
        }
    }
    s
}

/// The per-stage table as text.
pub fn stage_table(f: &SortFigures) -> String {
    let mut s = format!(
        "{:<14} {:>7} {:>14} {:>14} {:>12} {:>12}\n",
        "stage", "cores", "compute mean", "compute max", "idle mean", "idle max"
    );
    for st in &f.stages {
        let _ = writeln!(
            s,
            "{:<14} {:>7} {:>11.1} ns {:>11.1} ns {:>9.1} ns {:>9.1} ns",
            st.stage, st.cores, st.compute_mean_ns, st.compute_max_ns, st.idle_mean_ns, st.idle_max_ns
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sort::input::Records;

    fn out(keys: usize, stages: Vec<Stage>) -> SorterOutput {
        SorterOutput {
            done: true,
            records: Records { keys: vec![0; keys], values: vec![] },
            stages,
            ..Default::default()
        }
    }

    /// Set-up before the first stage is outside the sort time and inside the end-to-end time.
    #[test]
    fn end_to_end_counts_from_the_benchmark_start() {
        let o = vec![out(1, vec![Stage { id: 1, start: 640, end: 3840, idle: 0 }])];
        let f = figures(&o, 3_200_000_000);
        assert_eq!((f.total_ns, f.timer_start_ns, f.end_to_end_ns), (1000.0, 200.0, 1200.0));
    }

    #[test]
    fn figures_split_compute_and_idle() {
        let st = |id, start, end, idle| Stage { id, start, end, idle };
        let o = vec![
            out(2, vec![st(1, 0, 3200, 1600)]),
            out(6, vec![st(1, 320, 6400, 0), st(32, 6400, 9600, 320)]),
        ];
        let f = figures(&o, 3_200_000_000);
        assert_eq!(f.total_ns, 3000.0);
        assert_eq!((f.timer_start_ns, f.end_to_end_ns), (0.0, 3000.0));
        assert_eq!(f.skew, 1.5);
        assert_eq!(f.stages[0].stage, "shuffle");
        assert_eq!((f.stages[0].compute_mean_ns, f.stages[0].idle_max_ns), ((500.0 + 1900.0) / 2.0, 500.0));
    }
}
