//! `--crash NODE@US` and `--partition NODES@FROM-TO` of `nanopu run` on a cluster: faults
//! added to the run's configuration as `[[faults]]` entries would be (docs/faults.md).

use nanopu_cluster::config::cluster::{ordered_range, ClusterFile, FaultFile};

/// The fault flags given, each with its text (for errors).
#[derive(Clone, Debug, Default)]
pub struct FaultFlags {
    pub crashes: Vec<String>,
    pub partitions: Vec<String>,
}

impl FaultFlags {
    pub fn any(&self) -> bool {
        !self.crashes.is_empty() || !self.partitions.is_empty()
    }

    /// Add every fault to `file`, checked as its own entries are; errors name the flag.
    pub fn apply(&self, file: &mut ClusterFile) -> Result<(), String> {
        for s in &self.crashes {
            file.add_fault(crash(s)?).map_err(|e| format!("--crash {s}: {e}"))?;
        }
        for s in &self.partitions {
            file.add_fault(partition(s)?).map_err(|e| format!("--partition {s}: {e}"))?;
        }
        Ok(())
    }
}

/// `NODE@US`: node NODE crashes at US microseconds.
pub fn crash(s: &str) -> Result<FaultFile, String> {
    let bad = |why: &str| format!("--crash {s}: {why} (expected NODE@US, e.g. 2@50)");
    let (node, at) = s.split_once('@').ok_or_else(|| bad("no '@'"))?;
    let node = node.trim().parse().map_err(|_| bad("NODE is not a node number"))?;
    let at = at.trim().parse().map_err(|_| bad("US is not a number"))?;
    Ok(FaultFile::crash(node, at))
}

/// `NODES@FROM-TO`: the nodes (a comma-separated list of N and A-B, "host" for the test
/// host) are cut off from the others from FROM to TO microseconds.
pub fn partition(s: &str) -> Result<FaultFile, String> {
    let bad = |why: &str| format!("--partition {s}: {why} (expected NODES@FROM-TO, e.g. 0,1,4-6@20-80)");
    let (list, times) = s.split_once('@').ok_or_else(|| bad("no '@'"))?;
    let (from, to) = times.split_once('-').ok_or_else(|| bad("no '-' between FROM and TO"))?;
    let from = from.trim().parse().map_err(|_| bad("FROM is not a number"))?;
    let to = to.trim().parse().map_err(|_| bad("TO is not a number"))?;
    let (mut nodes, mut host) = (Vec::new(), false);
    for item in list.split(',').map(str::trim) {
        match item {
            "host" => host = true,
            _ => {
                let range = node_range(item).map_err(|e| bad(&e))?;
                nodes.extend(range.ok_or_else(|| bad(&format!("'{item}' is not N, A-B or host")))?)
            }
        }
    }
    let p = FaultFile::partition(&nodes, from, to);
    Ok(if host { p.with_host() } else { p })
}

/// "N" or "A-B" (inclusive), at most the largest topology's nodes; None if not a node or
/// range, an error naming a reversed range.
fn node_range(item: &str) -> Result<Option<std::ops::RangeInclusive<u32>>, String> {
    let num = |x: &str| {
        x.trim().parse::<u32>().ok().filter(|&n| n < nanopu_net::fabric::Topology::MAX_NODES as u32)
    };
    match item.split_once('-') {
        Some((a, b)) => match (num(a), num(b)) {
            (Some(a), Some(b)) => ordered_range(a, b, item).map(Some),
            _ => Ok(None),
        },
        None => Ok(num(item).map(|n| n..=n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_become_fault_entries() {
        assert_eq!(crash("2@50").unwrap(), FaultFile::crash(2, 50.0));
        assert_eq!(partition("0,1@20-80").unwrap(), FaultFile::partition(&[0, 1], 20.0, 80.0));
        let p = partition("4-6, host, 0@0.5-1e3").unwrap();
        assert_eq!(p, FaultFile::partition(&[4, 5, 6, 0], 0.5, 1000.0).with_host());
    }

    #[test]
    fn malformed_flags_say_what_is_expected() {
        for (s, why) in [("2", "no '@'"), ("x@5", "NODE"), ("2@soon", "US")] {
            let e = crash(s).unwrap_err();
            assert!(e.contains(why) && e.contains("NODE@US"), "{s}: {e}");
        }
        for (s, why) in [
            ("3-0@1-20", "\"3-0\" is a reversed range"),
            ("0,1@20", "'-'"),
            ("0,x@1-2", "'x'"),
            ("0@a-2", "FROM"),
            ("0@1-b", "TO"),
        ] {
            let e = partition(s).unwrap_err();
            assert!(e.contains(why) && e.contains("NODES@FROM-TO"), "{s}: {e}");
        }
    }
}
