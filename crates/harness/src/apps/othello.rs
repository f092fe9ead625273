//! Othello (docs/apps/paper-apps.md): the host side of `sw/apps/othello.c`. The same rules
//! as `sw/apps/othello.h` (legal moves, flips, evaluation, negamax with passes), a sequential
//! search of the tree the cluster searches, and the driver of a distributed search.

use super::hostnet::HostNet;
use super::star_cluster;
use nanopu_cluster::config::NicKind;
use nanopu_cluster::node::boot::node_ip;
use nanopu_cluster::TestHost;
use nanopu_sim::Time;
use std::path::Path;

/// The "move" of a side with no legal move (othello.h `OTH_PASS`).
pub const PASS: u64 = 64;
const INF: i64 = 1 << 40;
const NOT_A: u64 = 0xfefe_fefe_fefe_fefe;
const NOT_H: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const CORNERS: u64 = 0x8100_0000_0000_0081;

/// A board: the discs of the side to move and of its opponent (bit r*8+c, bit 0 = a1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Board {
    pub p: u64,
    pub o: u64,
}

fn shift(b: u64, d: usize) -> u64 {
    match d {
        0 => b << 8,
        1 => b >> 8,
        2 => (b << 1) & NOT_A,
        3 => (b >> 1) & NOT_H,
        4 => (b << 9) & NOT_A,
        5 => (b << 7) & NOT_H,
        6 => (b >> 7) & NOT_A,
        _ => (b >> 9) & NOT_H,
    }
}

fn count(b: u64) -> i64 {
    b.count_ones() as i64
}

impl Board {
    /// The opening position, black (the side to move) on d5 and e4.
    pub fn start() -> Board {
        Board { p: (1 << 35) | (1 << 28), o: (1 << 27) | (1 << 36) }
    }

    /// Legal moves of the side to move, one bit each.
    pub fn moves(self) -> u64 {
        let empty = !(self.p | self.o);
        (0..8).fold(0, |m, d| {
            let x = (0..5).fold(shift(self.p, d) & self.o, |x, _| x | (shift(x, d) & self.o));
            m | (shift(x, d) & empty)
        })
    }

    fn flips(self, sq: u64) -> u64 {
        (0..8).fold(0, |f, d| {
            let (mut x, mut b) = (0, shift(1 << sq, d));
            while b & self.o != 0 {
                x |= b;
                b = shift(b, d);
            }
            if b & self.p != 0 {
                f | x
            } else {
                f
            }
        })
    }

    /// The board after playing `sq` (or PASS), the other side to move.
    pub fn play(self, sq: u64) -> Board {
        if sq == PASS {
            return Board { p: self.o, o: self.p };
        }
        let f = self.flips(sq);
        Board { p: self.o & !f, o: self.p | f | (1 << sq) }
    }

    fn swapped(self) -> Board {
        Board { p: self.o, o: self.p }
    }

    /// Heuristic value for the side to move: corners, mobility, discs (othello.h).
    pub fn eval(self) -> i64 {
        let corners = count(self.p & CORNERS) - count(self.o & CORNERS);
        let mobility = count(self.moves()) - count(self.swapped().moves());
        16 * corners + 2 * mobility + (count(self.p) - count(self.o))
    }

    fn finished(self) -> bool {
        self.moves() == 0 && self.swapped().moves() == 0
    }

    /// Negamax to `depth` plies, as othello.h's `oth_value`.
    pub fn value(self, depth: u64) -> i64 {
        self.search(depth).0
    }

    /// Negamax value and best move (the lowest square of the best; PASS if none).
    pub fn search(self, depth: u64) -> (i64, u64) {
        let m = self.moves();
        if depth == 0 {
            return (self.eval(), PASS);
        }
        if m == 0 {
            if self.finished() {
                return (1000 * (count(self.p) - count(self.o)), PASS);
            }
            return (-self.swapped().value(depth - 1), PASS);
        }
        squares(m).fold((-INF, PASS), |(best, at), sq| {
            let v = -self.play(sq).value(depth - 1);
            if v > best {
                (v, sq)
            } else {
                (best, at)
            }
        })
    }

    /// The position after `plies` moves chosen from the legal ones by a seeded hash.
    pub fn opening(seed: u64, plies: u64) -> Board {
        (0..plies).fold(Board::start(), |b, i| {
            let moves: Vec<u64> = squares(b.moves()).collect();
            if moves.is_empty() {
                return b.play(PASS);
            }
            b.play(moves[(super::nn::mix(seed ^ i) % moves.len() as u64) as usize])
        })
    }

    /// Boards in the tree of a `depth`-ply search (the work a search does).
    pub fn tree_size(self, depth: u64) -> u64 {
        if depth == 0 || self.finished() {
            return 1;
        }
        let m = self.moves();
        let kids: Vec<Board> =
            if m == 0 { vec![self.swapped()] } else { squares(m).map(|s| self.play(s)).collect() };
        1 + kids.iter().map(|k| k.tree_size(depth - 1)).sum::<u64>()
    }
}

/// The set bits of `m`, lowest first.
fn squares(m: u64) -> impl Iterator<Item = u64> {
    (0..64).filter(move |s| m & (1 << s) != 0)
}

/// A distributed search: the cluster, the position, the depth and how deep workers search
/// on their own.
#[derive(Clone, Debug)]
pub struct SearchSpec {
    pub nodes: u32,
    pub cores: usize,
    pub board: Board,
    pub depth: u64,
    pub local_depth: u64,
}

/// The cluster's answer: value and best move, the search's latency (root MAP sent to its
/// REDUCE back at the host), and how many messages the cores sent.
#[derive(Clone, Debug)]
pub struct SearchRun {
    pub value: i64,
    pub best: u64,
    pub latency_ns: f64,
    pub messages: u64,
}

/// Run othello at `elf` (othello.elf, or othello_ice.elf on IceNIC nodes of one core): the
/// host maps the root board to worker 0 at 2 us or, on IceNIC, once every worker has
/// posted its receive ring (`HostNet::ready_at`), and waits for its reduce.
pub fn run_search(spec: &SearchSpec, elf: &Path, nic: NicKind) -> Result<SearchRun, String> {
    run_search_from(spec, elf, nic, Time::from_us(2))
}

/// `run_search` with the root board sent no earlier than `not_before`.
pub fn run_search_from(
    spec: &SearchSpec,
    elf: &Path,
    nic: NicKind,
    not_before: Time,
) -> Result<SearchRun, String> {
    super::nn::one_core_on_icenic(nic, spec.cores)?;
    let args = vec![spec.nodes.to_string(), spec.local_depth.to_string()];
    let (net, mut sim) = (HostNet(nic), star_cluster(spec.nodes, spec.cores, nic, elf, &args, 100_000.0)?);
    let root = [0, spec.board.p, spec.board.o, spec.depth, 0, PASS];
    let start = net.ready_at(&mut sim, not_before)?;
    net.send_at(&mut sim, start, TestHost::message(0, node_ip(0), 0, &root));
    net.stop_after(&mut sim, 1);
    net.run(&mut sim)?;
    let received = net.received(&sim)?;
    let r = received.first().ok_or("no reduce message came back")?;
    let latency_ns = (r.time - net.sent(&sim)[0].time).as_ns_f64();
    let messages = net.sent_by_nodes(&sim);
    Ok(SearchRun { value: r.msg.words[2] as i64, best: r.msg.words[4], latency_ns, messages })
}
