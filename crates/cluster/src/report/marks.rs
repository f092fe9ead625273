//! How a file written by a run says that the run was incomplete (docs/reliability.md,
//! "Marked files"), the one place every subcommand takes it from: a reader of the file
//! alone, without the summary, must not take partial figures for whole ones.
//!
//! - CSV: one trailing line `# incomplete: PROBLEM` per problem (pandas reads it with
//!   `comment="#"`); none when the run is complete.
//! - A JSON trace (Trace Event Format, object form): its `otherData` object carries
//!   `complete` and `problems`, always (Perfetto shows it as the trace's metadata).
//! - A capture (pcap or pcapng, which have no comment field every reader shows): a sidecar
//!   text file `FILE.incomplete` listing the problems, one per line; a complete run
//!   removes a stale one left by an earlier run, so its absence means complete.

use std::path::{Path, PathBuf};

/// The lines a CSV file ends with: `# incomplete: PROBLEM` for each problem.
pub fn csv_trailer(problems: &[String]) -> String {
    problems.iter().map(|p| format!("# incomplete: {}\n", one_line(p))).collect()
}

/// A Trace Event Format file's `otherData`: `{"complete": ..., "problems": [...]}`.
pub fn trace_metadata(problems: &[String]) -> serde_json::Value {
    serde_json::json!({ "complete": problems.is_empty(), "problems": problems })
}

/// Where the sidecar of the capture file `path` goes: `path` with `.incomplete` added.
pub fn sidecar_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".incomplete");
    PathBuf::from(s)
}

/// Write the sidecar of the capture file `path` listing `problems`, or remove a stale one
/// when there are none.
pub fn capture_sidecar(path: &Path, problems: &[String]) -> std::io::Result<()> {
    let side = sidecar_path(path);
    if problems.is_empty() {
        return match std::fs::remove_file(&side) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    let text: String = problems.iter().map(|p| one_line(p) + "\n").collect();
    std::fs::write(side, text)
}

/// A problem on one line (a line break would end the mark early).
fn one_line(p: &str) -> String {
    let p = p.strip_prefix("incomplete: ").unwrap_or(p);
    p.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_complete_run_leaves_no_mark_and_an_incomplete_one_a_line_per_problem() {
        assert_eq!(csv_trailer(&[]), "");
        let p = vec!["incomplete: stopped at the limit".to_string(), "two\nlines".into()];
        assert_eq!(csv_trailer(&p), "# incomplete: stopped at the limit\n# incomplete: two lines\n");
        assert_eq!(trace_metadata(&p)["complete"], false);
        assert_eq!(sidecar_path(Path::new("a/x.pcap")), Path::new("a/x.pcap.incomplete"));
    }
}
