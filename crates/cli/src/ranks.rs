//! One simulation across MPI ranks (docs/parallel.md, "Across MPI ranks"): `nanopu sort`
//! or `nanopu run CLUSTER.toml` started by `mpirun -np N` joins the other ranks, and
//! every partitioned run of the process is spread over them (`nanopu_cluster::engine::
//! ranks`). Rank 0 alone prints and writes files. MPI itself is behind the `mpi` feature,
//! so that a build without Open MPI or MPICH installed still works.

use nanopu_cluster::engine::ranks;

/// Whether this process reports: rank 0, or the only process.
pub fn root() -> bool {
    ranks::current().is_none_or(|r| r.rank() == 0)
}

/// Rank 0's `yes`, on every rank (collective across ranks: every rank calls it); `yes`
/// itself in one process.
pub fn from_root(yes: bool) -> bool {
    ranks::current().map_or(yes, |r| r.all_gather(&[u64::from(yes)])[0] == 1)
}

/// The launcher's variables: Open MPI's, then MPICH's (and Intel MPI's).
const SIZE_VARS: [&str; 2] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"];

/// How many processes the MPI launcher started, if it started this one.
fn launched() -> Option<String> {
    SIZE_VARS.iter().find_map(|v| std::env::var(v).ok())
}

/// Join the other ranks if an MPI launcher started this process; what it returns must live
/// until the process ends (dropping it ends MPI).
pub fn start() -> Result<Option<Box<dyn std::any::Any>>, String> {
    let Some(size) = launched().filter(|s| s != "1") else { return Ok(None) };
    join(size)
}

#[cfg(not(feature = "mpi"))]
fn join(size: String) -> Result<Option<Box<dyn std::any::Any>>, String> {
    Err(format!(
        "started by an MPI launcher as one of {size} processes, but this nanopu was built without MPI: \
         build it with `--features nanopu-cli/mpi` (docs/parallel.md)"
    ))
}

#[cfg(feature = "mpi")]
fn join(_size: String) -> Result<Option<Box<dyn std::any::Any>>, String> {
    use mpi::traits::Communicator;
    // Only the coordinating thread calls MPI; the helper threads never do.
    let (universe, _) =
        mpi::initialize_with_threading(mpi::Threading::Funneled).ok_or("MPI was already initialized")?;
    let world = universe.world();
    let me = World { rank: world.rank() as usize, size: world.size() as usize };
    ranks::install(Box::new(me))?;
    Ok(Some(Box::new(universe)))
}

/// MPI's world communicator, as the engine's ranks.
#[cfg(feature = "mpi")]
struct World {
    rank: usize,
    size: usize,
}

#[cfg(feature = "mpi")]
impl ranks::Ranks for World {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn all_gather(&self, mine: &[u64]) -> Vec<u64> {
        use mpi::traits::CommunicatorCollectives;
        let mut all = vec![0u64; mine.len() * self.size];
        mpi::topology::SimpleCommunicator::world().all_gather_into(mine, &mut all[..]);
        all
    }

    fn all_to_all(&self, out: &[Vec<u64>], lens: &[usize]) -> Vec<Vec<u64>> {
        use mpi::datatype::{Partition, PartitionMut};
        use mpi::traits::CommunicatorCollectives;
        let counts: Vec<mpi::Count> = out.iter().map(|v| count(v.len())).collect();
        let theirs: Vec<mpi::Count> = lens.iter().map(|&n| count(n)).collect();
        let send = out.concat();
        let mut got = vec![0u64; lens.iter().sum()];
        let (sent_at, got_at) = (offsets(&counts), offsets(&theirs));
        let sending = Partition::new(&send[..], &counts[..], &sent_at[..]);
        let mut receiving = PartitionMut::new(&mut got[..], &theirs[..], &got_at[..]);
        mpi::topology::SimpleCommunicator::world().all_to_all_varcount_into(&sending, &mut receiving);
        let mut rest = &got[..];
        lens.iter()
            .map(|&n| {
                let (v, tail) = rest.split_at(n);
                rest = tail;
                v.to_vec()
            })
            .collect()
    }
}

/// A buffer's length as MPI counts it (at most 2^31 - 1 words, 16 GiB, per rank and window).
#[cfg(feature = "mpi")]
fn count(n: usize) -> mpi::Count {
    mpi::Count::try_from(n).expect("less than 16 GiB for one rank in one exchange")
}

/// Where each buffer starts when they are laid end to end.
#[cfg(feature = "mpi")]
fn offsets(counts: &[mpi::Count]) -> Vec<mpi::Count> {
    counts.iter().scan(0, |at, &c| Some(std::mem::replace(at, *at + c))).collect()
}
