"""`nanopu.run_cluster`: a cluster from a file or a dict (docs/python.md)."""

import pandas.testing as pdt
import pytest

import nanopu

# experiments/incast/ndp-trim.toml's keys: 80 nodes each send node 0 one 1 KiB message.
def incast(apps, **over):
    config = {
        "seed": 1,
        "max_us": 2000.0,
        "transport": "ndp",
        "topology": {"kind": "star", "nodes": 81},
        "link": {"rate_gbps": 200.0, "propagation_ns": 43.75},
        "switch": {"bands": 2, "band_bytes": [65536, 80512], "trim": True},
        "node": {"cores": 4},
        "program": [{"nodes": "all", "elf": str(apps / "incast.elf"), "args": ["80", "1024"]}],
    }
    config.update(over)
    return config


def test_a_dict_runs_as_its_file(apps, root):
    from_file = nanopu.run_cluster(root / "experiments" / "incast" / "ndp-trim.toml")
    from_dict = nanopu.run_cluster(incast(apps))
    pdt.assert_frame_equal(from_file.totals, from_dict.totals)
    pdt.assert_frame_equal(from_file.messages, from_dict.messages)


def test_message_records(apps):
    r = nanopu.run_cluster(incast(apps))
    m = r.messages
    assert len(m) == 80 == r.totals["messages_delivered"][0]
    assert (m["dst"] == "10.0.0.2").all() and (m["bytes"] == 1024).all()
    assert (m["delivered_ns"] > m["sent_ns"]).all()
    assert m["src"].nunique() == 80
    # The port to node 0 carried the 80 messages' packets, trimmed ones included.
    to_node0 = r.ports[r.ports["leads_to"] == "node 0"]
    assert to_node0["packets"].sum() >= 80


def test_trimming_shows_in_the_counters(apps):
    r = nanopu.run_cluster(incast(apps))
    t = r.totals
    assert t["fabric.trims"][0] > 0
    assert t["transport.trimmed_received"][0] == t["fabric.trims"][0]
    no_trim = nanopu.run_cluster(incast(apps, switch={"bands": 2, "band_bytes": [65536, 80512], "trim": False}))
    assert no_trim.totals["fabric.trims"][0] == 0


def test_same_seed_same_frames_whatever_the_threads(apps):
    a = nanopu.run_cluster(incast(apps), threads=1)
    b = nanopu.run_cluster(incast(apps), threads=2)
    pdt.assert_frame_equal(a.messages, b.messages)
    pdt.assert_frame_equal(a.ports, b.ports)


def test_bad_keys_are_errors(apps):
    with pytest.raises(nanopu.NanopuError, match="unknown field `colour`"):
        nanopu.run_cluster(incast(apps, colour="blue"))
    with pytest.raises(nanopu.NanopuError, match="drop_prob"):
        nanopu.run_cluster(incast(apps, link={"drop_prob": 1.5}))
    with pytest.raises(nanopu.NanopuError, match="pcap-at"):
        nanopu.run_cluster(incast(apps), pcap_at="nowhere")


def test_dict_and_keyword_errors_name_the_key(apps):
    """A dict configuration's bad value names its dotted key; threads are 1 or more."""
    with pytest.raises(nanopu.NanopuError, match=r"topology.nodes: invalid value"):
        nanopu.run_cluster(incast(apps, topology={"kind": "star", "nodes": 2**40}))
    with pytest.raises(nanopu.NanopuError, match=r"max_us: nan is not a number"):
        nanopu.run_cluster(incast(apps, max_us=float("nan")))
    with pytest.raises(nanopu.NanopuError, match=r"seed: .*expected u64"):
        nanopu.run_cluster(incast(apps, seed=2**64))
    with pytest.raises(nanopu.NanopuError, match=r"threads: .*1 or more"):
        nanopu.run_cluster(incast(apps), threads=0)
    with pytest.raises(nanopu.NanopuError, match=r"threads: -3 is not within"):
        nanopu.run_cluster(incast(apps), threads=-3)


def test_strings_are_not_taken_as_lists(apps):
    with pytest.raises(nanopu.NanopuError, match=r"words: a list of values, not the string '12'"):
        nanopu.send(1000, 0, "12")
    with pytest.raises(nanopu.NanopuError, match=r"sends: a list of values, not the string"):
        nanopu.run(apps / "stream.elf", sends="2000:0:1")
