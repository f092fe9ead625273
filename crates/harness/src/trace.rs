//! A cluster run as a Perfetto trace (Chrome trace-event JSON; opens in ui.perfetto.dev and
//! chrome://tracing): one process per node, named with its address, one thread per core;
//! for a sort, one slice per stage with its idle time; a counter of the messages in the
//! network; and, if asked, one flow arrow per message delivery from the sending core to
//! the receiving one (a 4,096-core NanoSort delivers about 600,000 messages: some 140 MB).
//!
//! A flow ends on the thread of the message's destination context, and starts on that of
//! its source context: in a sort, sorter s runs on node s / C, core s % C, and uses context
//! s % C (docs/sort-harness.md), so the contexts name the cores; in another program they
//! name the cores if the program gives each core its own context.

use crate::sort::harness::stage_name;
use crate::sort::harness::SorterOutput;
use nanopu_cluster::node::boot::ip_text;
use nanopu_cluster::report::records::MessageRecord;

/// Node n's address, 10.0.0.(2 + n) (docs/abi.md).
const FIRST_IP: u32 = 0x0a00_0002;
/// Samples of the in-flight counter over the run, at most.
const COUNTER_BINS: usize = 2000;

/// What the trace is drawn from.
pub struct TraceInput<'a> {
    pub nodes: usize,
    /// The sorters' outputs (their stages), or none outside a sort.
    pub outputs: &'a [SorterOutput],
    pub cores_per_node: usize,
    pub hz: u64,
    pub messages: &'a [MessageRecord],
    /// Draw a flow arrow per message delivery.
    pub flows: bool,
    /// The run's problems (`report::judge`): the trace's `otherData` says whether it is
    /// complete and lists them (`report::marks`).
    pub problems: &'a [String],
}

/// The trace as JSON text.
pub fn trace_json(t: &TraceInput) -> String {
    let mut events = Vec::new();
    names(t, &mut events);
    stages(t, &mut events);
    in_flight(t.messages, t.nodes, &mut events);
    if t.flows {
        flows(t.messages, t.outputs.is_empty(), &mut events);
    }
    let meta = nanopu_cluster::report::marks::trace_metadata(t.problems);
    format!(
        "{{\"displayTimeUnit\":\"ns\",\"otherData\":{meta},\"traceEvents\":[\n{}\n]}}\n",
        events.join(",\n")
    )
}

/// Microseconds (the format's unit) of a time in femtoseconds.
fn us_fs(fs: u64) -> f64 {
    fs as f64 / 1e9
}

/// Track names: "node N (10.0.0.X)" for each node, "core C" for each of its cores.
fn names(t: &TraceInput, out: &mut Vec<String>) {
    for n in 0..t.nodes {
        let name = format!("node {n} ({})", ip_text(FIRST_IP + n as u32));
        out.push(format!(
            "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{n},\"args\":{{\"name\":\"{name}\"}}}}"
        ));
        out.push(format!(
            "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{n},\"args\":{{\"sort_index\":{n}}}}}"
        ));
        for c in 0..t.cores_per_node {
            let core = format!("{{\"name\":\"core {c}\"}}");
            out.push(format!(
                "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{n},\"tid\":{c},\"args\":{core}}}"
            ));
        }
    }
}

/// One slice per stage of every sorter, with its idle time.
fn stages(t: &TraceInput, out: &mut Vec<String>) {
    let us = |c: u64| c as f64 * 1e6 / t.hz as f64;
    for (sorter, o) in t.outputs.iter().enumerate() {
        let (pid, tid) = (sorter / t.cores_per_node, sorter % t.cores_per_node);
        for st in &o.stages {
            let (ts, dur, idle_ns) = (us(st.start), us(st.end.saturating_sub(st.start)), us(st.idle) * 1e3);
            out.push(format!(
                "{{\"name\":\"{}\",\"ph\":\"X\",\"pid\":{pid},\"tid\":{tid},\"ts\":{ts:.4},\"dur\":{dur:.4},\"args\":{{\"idle_ns\":{idle_ns:.1}}}}}",
                stage_name(st.id)
            ));
        }
    }
}

/// The messages sent but not yet delivered (or never delivered), on a "network" track of
/// its own: the largest count within each of up to [`COUNTER_BINS`] equal spans of the run,
/// at the span's start.
fn in_flight(messages: &[MessageRecord], pid: usize, out: &mut Vec<String>) {
    let Some(end) = messages.iter().map(|m| m.delivered.unwrap_or(m.sent).0).max() else { return };
    let mut steps: Vec<(u64, i64)> = messages.iter().map(|m| (m.sent.0, 1)).collect();
    steps.extend(messages.iter().filter_map(|m| m.delivered).map(|d| (d.0, -1)));
    steps.sort_unstable();
    let bin = (end / COUNTER_BINS as u64).max(1);
    let name = "{\"name\":\"network\"}";
    out.push(format!("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{pid},\"args\":{name}}}"));
    for (at, max) in binned_max(&steps, bin) {
        let ts = us_fs(at);
        out.push(format!("{{\"name\":\"messages in flight\",\"ph\":\"C\",\"pid\":{pid},\"ts\":{ts:.4},\"args\":{{\"messages\":{max}}}}}"));
    }
}

/// The running sum of `steps` (time-ordered) as the largest value reached within each span
/// of `bin` femtoseconds that holds a step, at the span's start; where the sum ends a span
/// lower and no step follows in the next span, the value it ended with, from the next span.
fn binned_max(steps: &[(u64, i64)], bin: u64) -> Vec<(u64, i64)> {
    let (mut out, mut now) = (Vec::<(u64, i64)>::new(), 0);
    for &(t, d) in steps {
        let start = t / bin * bin;
        if out.last().is_none_or(|l| l.0 < start) {
            match out.last() {
                Some(&(s, max)) if max != now && s + bin < start => out.push((s + bin, now)),
                _ => {}
            }
            out.push((start, now));
        }
        now += d;
        let last = out.last_mut().expect("pushed");
        last.1 = last.1.max(now);
    }
    out
}

/// A flow arrow per delivered message, from its sender's core when it was sent to its
/// receiver's core when it was delivered. An arrow is drawn between slices; where there are
/// no stage slices (`anchor`), a "send" and a "deliver" slice of 1 ns carry it.
fn flows(messages: &[MessageRecord], anchor: bool, out: &mut Vec<String>) {
    let node = |ip: u32| ip.wrapping_sub(FIRST_IP);
    for (id, m) in messages.iter().enumerate() {
        let Some(d) = m.delivered else { continue };
        let (sp, st, dp, dt) = (node(m.src_ip), m.src_context, node(m.dst_ip), m.dst_context);
        let sent = us_fs(m.sent.0);
        if anchor {
            out.push(format!(
                "{{\"name\":\"send\",\"ph\":\"X\",\"pid\":{sp},\"tid\":{st},\"ts\":{sent:.4},\"dur\":0.001}}"
            ));
            let at = us_fs(d.0);
            out.push(format!("{{\"name\":\"deliver\",\"ph\":\"X\",\"pid\":{dp},\"tid\":{dt},\"ts\":{at:.4},\"dur\":0.001}}"));
        }
        out.push(format!("{{\"name\":\"message\",\"cat\":\"message\",\"ph\":\"s\",\"id\":{id},\"pid\":{sp},\"tid\":{st},\"ts\":{sent:.4}}}"));
        let (at, bytes) = (us_fs(d.0), m.len);
        out.push(format!("{{\"name\":\"message\",\"cat\":\"message\",\"ph\":\"f\",\"bp\":\"e\",\"id\":{id},\"pid\":{dp},\"tid\":{dt},\"ts\":{at:.4},\"args\":{{\"bytes\":{bytes}}}}}"));
    }
}

#[cfg(test)]
mod tests {
    use super::{binned_max, trace_json, TraceInput};
    use crate::sort::harness::{SorterOutput, Stage};

    #[test]
    fn a_stage_is_a_slice_on_its_sorters_node_and_core() {
        let out = |stages| SorterOutput { done: true, stages, ..Default::default() };
        let st = |id, start, end, idle| Stage { id, start, end, idle };
        let o = vec![out(vec![st(1, 0, 3200, 1600)]), out(vec![st(32, 6400, 9600, 320)])];
        let t = trace_json(&TraceInput {
            nodes: 2,
            outputs: &o,
            cores_per_node: 1,
            hz: 3_200_000_000,
            messages: &[],
            flows: true,
            problems: &[],
        });
        assert!(
            t.contains(
                "{\"name\":\"fetch values\",\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":2.0000,\"dur\":1.0000"
            ),
            "{t}"
        );
        assert!(t.contains("\"args\":{\"name\":\"node 1 (10.0.0.3)\"}"), "{t}");
    }

    #[test]
    fn the_counter_keeps_the_largest_value_of_each_span() {
        // +1 at 0, 1, 2; -1 at 3; +1 at 12; -1 at 13, 14: spans of 10.
        let steps = [(0, 1), (1, 1), (2, 1), (3, -1), (12, 1), (13, -1), (14, -1)];
        assert_eq!(binned_max(&steps, 10), [(0, 3), (10, 3)]);
    }

    #[test]
    fn after_a_quiet_span_the_counter_shows_what_the_last_busy_one_ended_with() {
        let steps = [(0, 1), (1, -1), (35, 1)];
        assert_eq!(binned_max(&steps, 10), [(0, 1), (10, 0), (30, 1)]);
    }
}
