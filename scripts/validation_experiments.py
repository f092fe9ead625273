"""The experiments' figures that scripts/validation reads from their results (it measures
nothing here): each reader takes one figure from a CSV an experiment's `run` wrote, and
fails naming the file when the row it needs is missing. The papers' and the prototype's
figures these are set beside are in scripts/validation_rows.py with their sources."""
import csv
import os
import statistics
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# The prototype's notebooks subtract one 140-cycle link (43.75 ns at 3.2 GHz) from every
# response time before their statistics (l-nic/firesim, `deploy/MICA-Eval.ipynb` and
# `deploy/Set-Intersection-Eval.ipynb` at commit 2e9c9b03, `process_resp_time`:
# `resp_df['resp_time'] -= link_latency`, `link_latency = 140`); ours is taken the same way
# where it is set beside those figures.
NOTEBOOK_LINK_NS = 140 / 3.2


def rows(*path):
    """Every row of a results CSV, as dicts."""
    full = os.path.join(ROOT, "experiments", *path)
    with open(full) as f:
        return list(csv.DictReader(f)), full


def one(path, what, **match):
    """The single row of a CSV whose columns have the given values."""
    found, full = rows(*path)
    hits = [r for r in found if all(r[k] == v for k, v in match.items())]
    if len(hits) != 1:
        sys.exit(f"{full}: no single row {match} for {what}: rerun the experiment")
    return hits[0]


def chain_write():
    """Our write at the nanoPU paper's chain setup, unloaded (0.05 Mrps): mean and p99, ns."""
    mean = one(("chain", "results", "paper-mean.csv"), "the unloaded mean", offered_mrps="0.05", **{"class": "set"})
    tail = one(("chain", "results", "paper.csv"), "the unloaded p99", offered_mrps="0.05", **{"class": "set"})
    return float(mean["mean_ns"]), float(tail["p99_ns"])


def load_p99(experiment, name, rate):
    """p99 (ns) of all requests at one offered load of a `nanopu load` sweep."""
    return float(one((experiment, "results", name + ".csv"), f"p99 at {rate} Mrps", offered_mrps=rate,
                     **{"class": "all"})["p99_ns"])


def raft_prototype():
    """Our replicated write at the prototype's Raft setup (0.32 Mrps, seed 1): p99, ns. The
    file has no column naming the configuration: experiments/raft/prototype.py writes its runs
    in the order of its RUNS, `prototype.toml` at 0.32 Mrps first."""
    found, full = rows("raft", "results", "prototype.csv")
    if not found or (found[0]["replicas"], found[0]["seed"], found[0]["offered_mrps"]) != ("3", "1", "0.32"):
        sys.exit(f"{full}: its first row is not prototype.toml at 0.32 Mrps: rerun experiments/raft/prototype.py")
    return float(found[0]["set_p99_ns"])


def datacenter_seeds():
    """experiments/nanosort-datacenter: the seeds its results.csv holds, in order."""
    found, _ = rows("nanosort-datacenter", "results.csv")
    return [int(r["seed"]) for r in found]


def datacenter_spread():
    """experiments/nanosort-datacenter: how its seeds' sort times follow their final skew (the
    largest final bucket over the mean one): the correlation, the least-squares slope (us per
    unit of skew), and the standard deviations of skew and of sort time (us)."""
    found, full = rows("nanosort-datacenter", "results.csv")
    if len(found) < 3:
        sys.exit(f"{full}: fewer than 3 seeds: rerun the experiment")
    t = [float(r["total_us"]) for r in found]
    s = [float(r["skew"]) for r in found]
    slope = statistics.linear_regression(s, t).slope
    return statistics.correlation(s, t), slope, statistics.stdev(s), statistics.stdev(t)


def nanosort_buckets():
    """experiments/nanosort-buckets: sort time (us) for each number of buckets (fan-in equal)."""
    found, _ = rows("nanosort-buckets", "results.csv")
    return {int(r["buckets"]): float(r["total_ns"]) / 1000 for r in found}


def nanosort_buckets_fan_in_fixed():
    """experiments/nanosort-fanin: buckets -> (mean sort time, standard deviation, seeds), us,
    with the median trees' fan-in fixed at 16."""
    found, _ = rows("nanosort-fanin", "results.csv")
    return {int(r["buckets"]): (float(r["total_mean_ns"]) / 1000, float(r["total_sd_ns"] or 0) / 1000, int(r["seeds"]))
            for r in found if r["fan_in"] == "16"}


def mergemin_sweet_spot():
    """The incast at which experiments/mergemin's merge tree answers soonest."""
    found, _ = rows("mergemin", "results.csv")
    return int(min(found, key=lambda r: float(r["total_ns"]))["incast"])


def bounded_worst():
    """Over experiments/bounded-processing's sweep: the longest latency (ns) of a well-behaved
    request that waited only behind the other thread, and the paper's bound (ns) it is held to."""
    found, full = rows("bounded-processing", "results", "bound.csv")
    if not found:
        sys.exit(f"{full}: empty: rerun experiments/bounded-processing/run")
    return max(float(r["alone_max_ns"]) for r in found), float(found[0]["bound_ns"])


def thread_scheduling():
    """p99 (ns) of the priority-0 context, timer-driven over NIC-driven, at the sweep's lowest
    and highest load: (load, ratio) of each."""
    nic, _ = rows("thread-scheduling", "results", "nic.csv")
    timer, _ = rows("thread-scheduling", "results", "timer.csv")
    p99 = {(r["offered_mrps"]): float(r["p99_ns"]) for r in nic if r["class"] == "high"}
    ratios = [(float(r["offered_mrps"]), float(r["p99_ns"]) / p99[r["offered_mrps"]])
              for r in timer if r["class"] == "high" and r["offered_mrps"] in p99]
    return ratios[0], ratios[-1]


# The artifact's plots (experiments/nic-compare/artifact.csv) read their rates as Gb/s of
# packets with 64 bytes of headers each, as experiments/nic-compare/plot converts them.
def artifact(quantity, nic, size):
    """The artifact's figure for one point of experiments/nic-compare: latency in ns (the
    latency module's), loopback and stream in Mrps."""
    art = one(("nic-compare", "artifact.csv"), "the artifact's point", quantity=quantity, nic=nic,
              payload_bytes=str(size))
    value = float(art["value"])
    return value if quantity == "latency" else value * 1e3 / ((size + 64) * 8)


def artifact_programs():
    """experiments/nic-compare/artifact-programs' runs: the artifact's rate programs measured
    the tester's way, {(quantity, nic, IceNIC sizes, payload): (ours, Gb/s or ns, or None; ratio; span
    ns; the artifact's plot)}."""
    found, _ = rows("nic-compare", "results", "artifact-programs.csv")
    num = lambda s: float(s) if s else None  # noqa: E731 (a run that never finished has none)
    return {(r["quantity"], r["nic"], r["nic_sizes"], int(r["payload_bytes"])):
            (num(r["value"]), num(r["ratio"]), num(r["span_ns"]), num(r["artifact"])) for r in found}
