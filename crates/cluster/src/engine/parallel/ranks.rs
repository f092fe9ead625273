//! The processes of a run spread over MPI ranks, as the engine sees them (docs/parallel.md,
//! "Across MPI ranks").
//!
//! The engine needs only two collectives of every rank: gathering a few numbers from each
//! (the window's survey and its end) and sending each rank its own buffer (the packets that
//! crossed). The command line implements them with MPI (`nanopu_cli::mpi`); the engine
//! never names MPI, so the library builds without it. A process is one rank, so the ranks
//! are installed once per process, before any run.

use std::ops::Range;
use std::sync::OnceLock;

/// The ranks of this run. Every method is collective: every rank calls it, in the same
/// order, or the run waits forever.
pub trait Ranks: Send + Sync {
    /// This process's rank, 0 to `size() - 1`.
    fn rank(&self) -> usize;
    /// How many ranks take part.
    fn size(&self) -> usize;
    /// Every rank's `mine` (the same length on every rank), in rank order, one after another.
    fn all_gather(&self, mine: &[u64]) -> Vec<u64>;
    /// Send `out[r]` to rank r; what every rank sent this one, in rank order, rank r's
    /// `lens[r]` words (known from an earlier gather: `send` gathers them first).
    fn all_to_all(&self, out: &[Vec<u64>], lens: &[usize]) -> Vec<Vec<u64>>;
}

/// Send `out[r]` to rank r, gathering first how much each rank sends each other.
pub fn send(ranks: &dyn Ranks, out: &[Vec<u64>]) -> Vec<Vec<u64>> {
    let all = ranks.all_gather(&out.iter().map(|v| v.len() as u64).collect::<Vec<_>>());
    let lens: Vec<usize> = all.chunks(ranks.size()).map(|row| row[ranks.rank()] as usize).collect();
    ranks.all_to_all(out, &lens)
}

/// Send `mine` to rank 0 (collective): there every rank's words, in rank order; elsewhere
/// nothing (empty buffers).
pub fn to_root(ranks: &dyn Ranks, mine: Vec<u64>) -> Vec<Vec<u64>> {
    let mut out = vec![Vec::new(); ranks.size()];
    out[0] = mine;
    send(ranks, &out)
}

static RANKS: OnceLock<Box<dyn Ranks>> = OnceLock::new();

/// Run every partitioned simulation of this process across `ranks` (once per process).
pub fn install(ranks: Box<dyn Ranks>) -> Result<(), String> {
    RANKS.set(ranks).map_err(|_| "the MPI ranks were already installed".to_string())
}

/// The ranks runs are spread over, if there are several.
pub fn current() -> Option<&'static dyn Ranks> {
    RANKS.get().map(|r| &**r).filter(|r| r.size() > 1)
}

/// The partitions rank `rank` of `size` advances: a contiguous block, the first
/// `parts % size` ranks one more than the others, so that every rank's nodes follow its
/// predecessor's and gathering in rank order is gathering in node order.
pub fn owned(parts: usize, size: usize, rank: usize) -> Result<Range<usize>, String> {
    if parts < size {
        return Err(format!(
            "{size} MPI ranks, but the cluster has only {parts} partition(s) (one per leaf): run at most {parts} rank(s)"
        ));
    }
    let (each, extra) = (parts / size, parts % size);
    let start = rank * each + rank.min(extra);
    Ok(start..start + each + usize::from(rank < extra))
}

/// The rank that advances partition `p`.
pub(crate) fn owner(parts: usize, size: usize, p: usize) -> usize {
    (0..size)
        .find(|&r| owned(parts, size, r).is_ok_and(|o| o.contains(&p)))
        .expect("every partition has a rank")
}

/// A text as words: its length in bytes, then its bytes, 8 to a word.
pub fn text_words(s: &str) -> Vec<u64> {
    let mut v = vec![s.len() as u64];
    v.extend(s.as_bytes().chunks(8).map(|c| {
        let mut b = [0u8; 8];
        b[..c.len()].copy_from_slice(c);
        u64::from_le_bytes(b)
    }));
    v
}

/// The text `text_words` made.
pub fn words_text(w: &[u64]) -> String {
    let len = w.first().map_or(0, |&n| n as usize);
    let bytes: Vec<u8> = w.iter().skip(1).flat_map(|x| x.to_le_bytes()).take(len).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_take_contiguous_blocks_that_cover_every_partition_once() {
        let blocks: Vec<_> = (0..3).map(|r| owned(8, 3, r).unwrap()).collect();
        assert_eq!(blocks, vec![0..3, 3..6, 6..8]);
        assert_eq!((0..8).map(|p| owner(8, 3, p)).collect::<Vec<_>>(), vec![0, 0, 0, 1, 1, 1, 2, 2]);
    }

    #[test]
    fn a_text_survives_the_words() {
        for s in ["", "rank 1: node 3, illegal instruction", "é"] {
            assert_eq!(words_text(&text_words(s)), s);
        }
    }

    #[test]
    fn more_ranks_than_partitions_is_refused_naming_both() {
        let e = owned(2, 4, 0).unwrap_err();
        assert!(e.contains("4 MPI ranks") && e.contains("only 2 partition(s)"), "{e}");
    }
}
