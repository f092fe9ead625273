//! The validator: global order across sorters, record count, and the checksum of the
//! multiset of records (like the sort benchmark's valsort). A run fails loudly if any check
//! fails.

use super::harness::SorterOutput;
use super::input::{Checksum, InputDigest, Records};

/// The validator's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub records_in: u64,
    pub records_out: u64,
    /// Every problem found; empty means the sort is valid.
    pub problems: Vec<String>,
}

impl Verdict {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Check the outputs (in sorter order) against the inputs.
pub fn validate(inputs: &[Records], outputs: &[SorterOutput]) -> Verdict {
    validate_digest(&InputDigest::of(inputs), outputs)
}

/// `validate` against the digest of the inputs.
pub fn validate_digest(inputs: &InputDigest, outputs: &[SorterOutput]) -> Verdict {
    let mut problems = Vec::new();
    let want = inputs.checksum;
    let mut got = Checksum::default();
    let mut prev: Option<(usize, u64)> = None;
    for (s, o) in outputs.iter().enumerate() {
        check_sorter(s, o, &mut prev, &mut problems);
        got.merge(Checksum::of(&o.records));
    }
    if got.count != want.count {
        problems.push(format!("record count: {} in, {} out", want.count, got.count));
    } else if got != want {
        problems.push(
            "checksum: the output records are not the input records (lost, duplicated or altered)".into(),
        );
    }
    problems.truncate(20);
    Verdict { records_in: want.count, records_out: got.count, problems }
}

/// MergeMin's check: every worker finished and the root (sorter 0) holds the minimum of
/// all inputs in its `result`.
pub fn validate_min(inputs: &[Records], outputs: &[SorterOutput]) -> Verdict {
    validate_min_digest(&InputDigest::of(inputs), outputs)
}

/// `validate_min` against the digest of the inputs.
pub fn validate_min_digest(inputs: &InputDigest, outputs: &[SorterOutput]) -> Verdict {
    let mut problems: Vec<String> = outputs
        .iter()
        .enumerate()
        .filter(|(_, o)| !o.done)
        .map(|(s, _)| format!("worker {s}: did not report done"))
        .collect();
    let want = inputs.min_key;
    let got = outputs.first().map(|o| o.result);
    if want.is_some() && got != want {
        problems.push(format!(
            "minimum: the root has {:#018x}, the inputs' minimum is {:#018x}",
            got.unwrap_or(0),
            want.unwrap_or(0)
        ));
    }
    problems.truncate(20);
    let n = inputs.checksum.count;
    Verdict { records_in: n, records_out: n, problems }
}

fn check_sorter(s: usize, o: &SorterOutput, prev: &mut Option<(usize, u64)>, problems: &mut Vec<String>) {
    if let Some(e) = &o.error {
        problems.push(format!("sorter {s}: {e}"));
    }
    if !o.done {
        problems.push(format!("sorter {s}: did not report its output done"));
    }
    for (i, &k) in o.records.keys.iter().enumerate() {
        if let Some((ps, pk)) = *prev {
            if k < pk {
                problems.push(format!(
                    "order: sorter {s} record {i} key {k:#018x} < {pk:#018x} before it (sorter {ps})"
                ));
                break;
            }
        }
        *prev = Some((s, k));
    }
}

#[cfg(test)]
mod tests {
    use super::super::input::{generate, Distribution, VALUE_WORDS};
    use super::*;

    /// Sort all inputs and split them into `parts` runs: what a correct program leaves.
    fn sorted_outputs(inputs: &[Records], parts: usize) -> Vec<SorterOutput> {
        let mut recs: Vec<(u64, Vec<u64>)> = inputs
            .iter()
            .flat_map(|r| {
                r.keys
                    .iter()
                    .enumerate()
                    .map(|(i, &k)| (k, r.values[i * VALUE_WORDS..(i + 1) * VALUE_WORDS].to_vec()))
            })
            .collect();
        recs.sort();
        let per = recs.len().div_ceil(parts);
        recs.chunks(per)
            .map(|c| SorterOutput {
                done: true,
                records: Records {
                    keys: c.iter().map(|r| r.0).collect(),
                    values: c.iter().flat_map(|r| r.1.clone()).collect(),
                },
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn a_correct_sort_passes_and_every_fault_is_caught() {
        let inputs: Vec<Records> = (0..4).map(|s| generate(9, s, 8, Distribution::Uniform)).collect();
        let good = sorted_outputs(&inputs, 4);
        assert!(validate(&inputs, &good).ok());
        let mut swapped = good.clone();
        swapped[1].records.keys.swap(0, 1);
        assert!(validate(&inputs, &swapped).problems.iter().any(|p| p.starts_with("order")));
        let mut lost = good.clone();
        lost[2].records.keys.pop();
        let n = lost[2].records.keys.len();
        lost[2].records.values.truncate(n * VALUE_WORDS);
        assert!(validate(&inputs, &lost).problems.iter().any(|p| p.starts_with("record count")));
        let mut altered = good.clone();
        altered[3].records.values[5] ^= 1;
        assert!(validate(&inputs, &altered).problems.iter().any(|p| p.starts_with("checksum")));
        let mut unfinished = good;
        unfinished[0].done = false;
        assert!(!validate(&inputs, &unfinished).ok());
    }
}
