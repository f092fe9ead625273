"""One case per program of tests-lnic/: what the prototype's tester sends and asserts.

The tester (software/net-app-tester/net-app-tester.py at nanoPU-artifact-v1.0) sends
scapy packets from 10.0.0.1 and sniffs what comes back; here the same messages are
`--send` messages (64-bit words, as the program reads them) and its assertions are
checks on what the host received. Its messages go back to back (`sendp`); here they are
GAP_NS apart, and start at START_NS, after the program has registered its contexts (the
tester waits for the boot message, or sleeps). Programs the tester has no test for are
checked on what they print or return themselves (`tester=None`).
"""
import random
import re

from checks import all_of, at_least, exited_zero, no_errors, prints, replies_of
from runner import DEFAULT, LATENCY, Case, Send

START_NS = 100_000.0
GAP_NS = 200.0
IP_10_2_2_2, IP_10_3_3_3 = 0x0A020202, 0x0A030303
# The tester draws its payloads and orders at random, unseeded; here from a fixed seed, so
# that a run of the suite sends the same bytes every time (as a simulation of ours repeats).
RNG = random.Random(1)


def spaced(messages, ctx=0, src=LATENCY, start=START_NS, gap=GAP_NS):
    """Sends of `messages` (word lists) one gap apart; ctx may be a list, one per message."""
    ctxs = ctx if isinstance(ctx, list) else [ctx] * len(messages)
    return [Send(start + i * gap, c, words, src) for i, (c, words) in enumerate(zip(ctxs, messages))]


def sized(first, total_bytes):
    """A message of total_bytes starting with the words `first`, zero-padded."""
    return first + [0] * (total_bytes // 8 - len(first))


# --- Loopback, stream, service time, throughput --------------------------------------

def loopback_latency():
    # test_latency_basic_* (1,024 bytes), then test_latency_*'s lengths, one reply each.
    lengths = [1024, 16, 32, 64, 128, 256, 512, 1024]
    return spaced([[0] * (n // 8) for n in lengths], gap=20_000)


def one_reply_each(r):
    got = [m["len"] for m in r.replies()]
    want = [len(s.words) * 8 for s in r.sends]
    return None if got == want else f"replies of {got} bytes to sends of {want}"


def config_then(n, data):
    """The tester's Config message (type 0, num_msgs, timestamp) and n data messages."""
    return spaced([[0, n, 0]] + [list(data) for _ in range(n)])


def throughput_sends():
    rx = spaced([[0, 100, 0]] + [sized([2], 1024) for _ in range(100)])
    tx = [Send(START_NS + 100_000, 0, [1, 100, 1024, 0])]
    return rx + tx


def throughput_check(r):
    split = START_NS + 100_000
    done = [m for m in r.replies() if m["time_ns"] < split]
    data = [m for m in r.replies() if m["time_ns"] >= split]
    if len(done) != 1:
        return f"test_rx_throughput: {len(done)} DONE messages, the tester waits for 1"
    if len(data) != 100 or any(m["len"] != 1024 for m in data):
        return f"test_tx_throughput: {len(data)} messages (of 1,024 bytes: {sum(m['len'] == 1024 for m in data)}), 100 asserted"
    return None


# --- Dot product, NN inference, N-body, Othello --------------------------------------

def dot_product_sends():
    data = []
    for _ in range(30):
        words = [RNG.randint(0, 1999) for _ in range(50)]
        data.append([1, 50] + words + [0])
    return spaced([[0, 30, 0]] + data)


def dot_product_check(r):
    replies = r.replies()
    if len(replies) != 30:
        return f"{len(replies)} replies, the tester waits for 30"
    for i, (send, reply) in enumerate(zip(r.sends[1:], replies)):
        want = sum(x * x for x in send.words[2:-1])
        if reply["words"][1] != want:
            return f"reply {i}: result {reply['words'][1]}, expected {want}"
    return None


def nn_sends():
    edges = 3
    weights = [[1, i, 1, 0] for i in range(edges)]
    data = [[2, i, i + 1, 0] for i in range(edges)]
    return spaced([[0, edges, 0]] + weights + data)


def nn_check(r):
    replies = r.replies()
    if len(replies) != 1:
        return f"{len(replies)} replies, the tester asserts 1"
    kind, index, value = replies[0]["words"][:3]
    return None if (kind, index, value) == (2, 0, 6) else f"reply (type, index, data) = ({kind}, {index}, {value}), expected (2, 0, 6)"


def nbody_check(r):
    replies = r.replies()
    if len(replies) != 3:
        return f"{len(replies)} replies, the tester waits for 3"
    return None if replies[-1]["words"][0] == 2 else f"last reply of type {replies[-1]['words'][0]}, not a TraversalResp (2)"


OTHELLO_PARENT, OTHELLO_PTR = 10, 0x1234


def othello_sends():
    # test_internal_node_basic: a Map of board 3 (fanout 3), max depth 2, depth 1.
    return spaced([[0, 3, 2, 1, OTHELLO_PARENT, OTHELLO_PTR, 0]])


def othello_reply(r):
    """The tester answers each Map that came back with a Reduce of minimax value 1."""
    if len(r.sends) > 1 or not r.replies():
        return []
    start = max(m["time_ns"] for m in r.replies()) + 5_000
    maps = [m["words"] for m in r.replies() if m["words"][0] == 0]
    return spaced([[1, w[4], w[5], 1, 0] for w in maps], start=start)


def othello_check(r):
    reduce_from = r.sends[1].at_ns if len(r.sends) > 1 else float("inf")
    maps = [m["words"] for m in r.replies() if m["time_ns"] < reduce_from]
    if len(maps) != 3 or any(w[0] != 0 or w[3] != 2 for w in maps):
        return f"{len(maps)} Map replies of depth 2 expected 3: {[w[:4] for w in maps]}"
    reduces = [m["words"] for m in r.replies() if m["time_ns"] >= reduce_from]
    want = [1, OTHELLO_PARENT, OTHELLO_PTR, 1]
    if len(reduces) != 1 or reduces[0][:4] != want:
        return f"Reduce replies {[w[:4] for w in reduces]}, expected one {want}"
    return None


# --- Scheduler and load balance (DummyApp: the first word is a service time) --------

def scheduler_sends():
    # test_scheduler: 30 messages to context 0 and 30 to context 1, shuffled, 80-byte packets.
    ctxs = [0] * 30 + [1] * 30
    RNG.shuffle(ctxs)
    return spaced([[1600, 0] for _ in ctxs], ctx=ctxs, gap=5_000)


def load_balance_sends():
    # test_load_balance: 50 messages to context 0, 128-byte packets, mixed service times.
    messages = []
    for _ in range(50):
        RNG.randint(0, 0)
        messages.append(sized([RNG.choice([500, 500, 500, 3000])], 64))
    return spaced(messages, gap=3_000)


def contexts_in(allowed):
    def check(r):
        bad = [m["src_context"] for m in r.replies() if m["src_context"] not in allowed]
        return f"replies from contexts {sorted(set(bad))}" if bad else None
    return check


# --- INT and postcards ---------------------------------------------------------------

def hh_sends():
    # test_detection_latency: two reports of one flow, 500 ns apart, 1,500-byte packets.
    flags = [1 | 2, 1]
    return spaced([[IP_10_2_2_2 << 32 | IP_10_3_3_3, 0, flags[i], i * 500, 1500, 0x0A010100, 0]
                   for i in range(2)])


def path_latency_sends():
    # test_path_latency: 50 reports of 4 hops of 100, then one of 4 hops of 10,000.
    report = lambda flags, hop: [IP_10_2_2_2 << 32 | IP_10_3_3_3, 0, flags, 4] + [hop] * 4 + [0]
    normal = spaced([report(1 | 2 if i == 0 else 1, 100) for i in range(50)])
    return normal + spaced([report(1, 10_000)], start=START_NS + 100_000)


def kinds(*want):
    """The replies' first words (message types), in order."""
    def check(r):
        got = [m["words"][0] for m in r.replies()]
        return None if sorted(got) == sorted(want) else f"replies of types {got}, expected {list(want)}"
    return check


def postcard_opt_sends():
    # test_collector: 20 packets' postcards, 3 hops each, one 3-packet message per packet.
    return spaced([[i, 0, 1, 0, 0, 0, 0, 0] * 3 for i in range(20)])


def postcard_sw_sends():
    # The same postcards, each its own 64-byte message, as the software collector reads them.
    return spaced([[i, 0, 1, 0, 0, 0, 0, 0] for i in range(20) for _ in range(3)])


def postcards_check(r):
    agg = r.replies(dst_context=0x1111)
    done = r.replies(dst_context=LATENCY)
    if len(agg) != 20 or any(m["words"][2] != 3 for m in agg):
        return f"{len(agg)} aggregated postcards (total_qtime 3: {sum(m['words'][2] == 3 for m in agg)}), 20 asserted"
    return None if len(done) == 1 else f"{len(done)} DONE messages, the tester waits for 1"


CACHE_TEXT = ("abcdefghhqshxxkuceshaixlnicpdvtgvmoapbvejqoomaabnkxuqpuhepdxxvtgprwalyldpicvepcfsu"
              "cpjmkqwetciufesjsykkcnjhwiqrctmdvigrgqrtytfqylebjkocvgcvtbseoyjbhdoacizwxtieicadsdf"
              "hyiogyvkrjvdxwvcaytuqyanpxbsslincyqchbjuycdfzpuvymbnlsocghirctzhjplfaouojkjjkgelrev"
              "zpbbmrgivvmohmnvskqqodpkehhcqgxummrfenglgbuifbhfzorervdtvzdxyhecpzvkuqlihzxxbowsfoe"
              "eydrfrihuinzppqnmaxfevamcxdotyjrwjphriabthvmhaniqwnbfgywihhwxwsejcjqdcrpytlcjxzrome"
              "dyfatsjvhqnvaekcfcbtoendzvbxyiupyxgpnlxtfguhxubbowfwsopkcydrfngcuhvthsmgppjnwnynuykw"
              "lqszmlervfdqyqlqdalagr")


def cache_sends():
    # test_cache: the same 520-byte message 8 times, each after the reply to the last.
    data = CACHE_TEXT.encode()[:520]
    words = [int.from_bytes(data[i:i + 8], "big") for i in range(0, 520, 8)]
    return spaced([words] * 8, gap=20_000)


# --- Programs the tester has no test for: their own checks --------------------------

def evaluation_sends():
    # The load generator's protocol: (service time, sent time) pairs; service time 0 ends it.
    return spaced([[100, i] for i in range(8)] + [[0, 0]], src=0, gap=2_000)


def echoes(n, field=0):
    def check(r):
        got = [m["words"][field] for m in r.replies()][:n]
        want = [s.words[field] for s in r.sends][:n]
        return None if got == want else f"echoes {got}, expected {want}"
    return check


MICA_KEY, MICA_HASH, MICA_VALUE = 20_001, 0x9E3779B97F4A7C15, list(range(1, 65))


def mica_sends():
    # This server's format: service time, sent time, type, the key's two words and its
    # hash; a SET (type 2) carries the 64-word value, a GET (type 1) is answered with it.
    # The key is not among the preloaded ones: the hash need not be MICA's cityhash.
    key = [MICA_KEY, 0, MICA_HASH]
    return spaced([[1, 0x77, 2] + key + MICA_VALUE, [1, 0x78, 1] + key], src=DEFAULT,
                  start=8_000_000.0, gap=20_000)


def mica_check(r):
    replies = [m["words"] for m in r.replies(dst_context=DEFAULT)]
    want = [[1, 0x77, 1], [1, 0x78] + MICA_VALUE]
    if replies == want:
        return None
    return f"replies {[w[:4] for w in replies]}..., expected the SET's ACK [1, 0x77, 1] and the GET's value 1..64"


def incast_root(*contexts):
    """The root printed, per context, "&&CSV&&,ctx," and (header, latency, core) of each
    message it took: one from each of the three leaves (10.0.0.3 to 10.0.0.5)."""
    def check(r):
        for ctx in contexts:
            rows = re.findall(rf"^&&CSV&&,{ctx},(.*)$", r.console(0), re.M)
            if not rows:
                return f"no result line for context {ctx}"
            headers = [int(x, 16) for x in rows[0].split(",")[0::3]]
            sources = sorted(h >> 32 for h in headers)
            if sources != [0x0A000003, 0x0A000004, 0x0A000005]:
                return f"context {ctx}: result lists messages from {[ip(s) for s in sources]}, not the 3 leaves"
        return None
    return check


def ip(value):
    return ".".join(str(value >> s & 0xFF) for s in (24, 16, 8, 0))


def sort_starts(nodes, at):
    """The start message each of the nodes' 4 contexts waits for from 10.0.0.1."""
    return lambda: [Send(at, ctx, [0], src=0, node=n) for n in range(nodes) for ctx in range(4)]


def sorted_across(cores, keys):
    """Each core printed "CSV: id,elapsed,min,max,count"; together they hold every key, in order."""
    def check(r):
        rows = sorted(tuple(map(int, m)) for m in re.findall(r"^CSV: (\d+),-?\d+,(\d+),(\d+),(\d+)", r.console(), re.M))
        if len(rows) != cores:
            return f"{len(rows)} of {cores} cores printed their result"
        total = sum(row[3] for row in rows)
        if total != keys:
            return f"{total} keys after sorting, {keys} before"
        ranges = [(lo, hi) for _, lo, hi, n in rows if n]
        bad = [i for i in range(1, len(ranges)) if ranges[i - 1][1] > ranges[i][0]]
        return f"core ranges overlap at {bad[:3]}" if bad else None
    return check


def millisort_counts(cores, keys):
    """Core 0 of each node printed "TimingCSV: id,count,..." for its 4 cores; the counts
    add up to every key (each node checks its own cores' order with an assertion)."""
    def check(r):
        rows = re.findall(r"^TimingCSV: (\d+),(\d+),", r.console(), re.M)
        if len(rows) != cores:
            return f"{len(rows)} of {cores} cores' results printed"
        total = sum(int(count) for _, count in rows)
        return None if total == keys else f"{total} keys after sorting, {keys} before"
    return check


CASES = {
    "hello": Case(all_of(prints("Hello World"), exited_zero(0))),
    "gcd": Case(exited_zero(0)),
    "multiple_cores": Case(all_of(prints("Hello from core 0"), exited_zero(0))),
    "lnic-loopback-latency": Case(one_reply_each, "LoopbackTest.test_latency_basic_lnic, test_latency_lnic",
                                  loopback_latency, until_us=300),
    "lnic-loopback-throughput": Case(replies_of(20), "LoopbackTest.test_throughput_basic_lnic",
                                     lambda: config_then(20, sized([1], 1024))),
    "lnic-stream-throughput": Case(at_least(30), "StreamTest.test_throughput_basic_lnic",
                                   lambda: config_then(30, sized([1], 1024))),
    "lnic-stream-gpr": Case(at_least(30), "StreamTest.test_throughput_basic_lnic",
                            lambda: config_then(30, sized([1], 1024))),
    "lnic-service-time": Case(replies_of(40), "ServiceTimeTest.test_basic",
                              lambda: config_then(40, sized([1, 1000], 1024)), until_us=600),
    "lnic-throughput-gpr": Case(throughput_check, "ThroughputTest.test_rx_throughput, test_tx_throughput",
                                throughput_sends, until_us=400),
    "lnic-dot-product-opt": Case(dot_product_check, "DotProdTest.test_basic_lnic", dot_product_sends),
    "lnic-dot-product-naive": Case(dot_product_check, "DotProdTest.test_basic_lnic", dot_product_sends),
    "lnic-nn-inference-gpr": Case(nn_check, "NNInference.test_basic", nn_sends),
    "lnic-nbody-node-gpr": Case(nbody_check, "NBodyTest.test_basic",
                                lambda: spaced([[0, 50, 50, 3, 0]] + [[1, 0, 0, 0]] * 3)),
    "lnic-othello-gpr": Case(othello_check, "OthelloTest.test_internal_node_basic", othello_sends,
                             reply=othello_reply, until_us=300),
    "lnic-scheduler": Case(all_of(replies_of(60, dst_context=LATENCY), contexts_in({0, 1})),
                           "SchedulerTest.test_scheduler", scheduler_sends, until_us=500),
    "lnic-multi-core": Case(all_of(replies_of(50, dst_context=LATENCY), contexts_in({0})),
                            "LoadBalanceTest.test_load_balance", load_balance_sends, until_us=400),
    "lnic-postcard-agg-opt": Case(postcards_check, "PostcardOptTest.test_collector", postcard_opt_sends),
    "lnic-postcard-agg-sw": Case(postcards_check, None, postcard_sw_sends),
    "lnic-cache-test": Case(one_reply_each, "CacheTest.test_cache", cache_sends, until_us=300),
    "lnic-int-heavy-hitter": Case(kinds(1, 0), "INTHHTest.test_detection_latency", hh_sends),
    "lnic-int-path-latency": Case(kinds(0, 2), "INTPathLatencyTest.test_path_latency", path_latency_sends,
                                  until_us=300),
    "lnic-nic-loopback-gpr": Case(all_of(prints("Test 0: send/recv"), exited_zero(0))),
    "lnic-multi-thread-basic": Case(None, until_us=50),
    "lnic-multi-core-loopback": Case(echoes(8), None, lambda: spaced([[i] for i in range(8)], src=DEFAULT)),
    # Both send to the node's own IP, 10.0.0.2 hard-coded: FireSim programs (l-nic/firesim
    # lnic-dev deploy/workloads/lnic-ping-latency: one node behind a switch, example_1config).
    "lnic-net-loopback": Case(all_of(no_errors(), exited_zero(0, cores=4)), behind_switch=True),
    "lnic-ping-latency": Case(all_of(no_errors(), exited_zero(0, cores=4)), behind_switch=True),
    "lnic-evaluation": Case(all_of(echoes(8, 1), exited_zero(0)), None, evaluation_sends,
                            args=["ONE_CONTEXT_FOUR_CORES", "1", "1"]),
    "lnic-multi-core-mica": Case(mica_check, None, mica_sends, until_us=8_100),
    "lnic-multi-core-chain-rep": Case(prints("Proxy client ready", node=0), nodes=4, until_us=3_000),
    "lnic-send-recv": Case(all_of(no_errors(), exited_zero(0, 1, 2, 3)), nodes=4, max_msg_bytes=4800,
                           until_us=2_000),
    "lnic-multi-core-different-services": Case(all_of(no_errors(), exited_zero(0, 1, 2, 3, cores=4)),
                                               nodes=4, max_msg_bytes=3200, until_us=2_000),
    "lnic-single-core-multi-thread": Case(all_of(no_errors(), exited_zero(0, 1, 2, 3)), nodes=4,
                                          max_msg_bytes=3200, until_us=2_000),
    "lnic-multi-core-multi-thread": Case(all_of(no_errors(), exited_zero(0, cores=4)), nodes=4,
                                         until_us=2_000),
    "lnic-incast": Case(all_of(no_errors(), incast_root(0), exited_zero(0, cores=4)), nodes=4,
                        until_us=2_000),
    "lnic-incast-nolock": Case(all_of(no_errors(), incast_root(0, 1), exited_zero(0, cores=4)), nodes=4,
                               until_us=2_000),
    "lnic-incast-multi-service": Case(all_of(no_errors(), incast_root(0, 1), exited_zero(0, cores=4)),
                                      nodes=4, until_us=2_000),
    "lnic-incast-single-core": Case(all_of(no_errors(), prints("Server complete!", node=0)), nodes=64,
                                    until_us=2_000),
    # The lnic-sort branch.
    "lnic-sort": Case(all_of(no_errors(), sorted_across(64, 64 * 32), exited_zero(*range(16), cores=4)),
                      nodes=16, until_us=3_000, sends=sort_starts(16, 500_000.0)),
    "lnic-millisort": Case(all_of(no_errors(), millisort_counts(32, 32 * 64), exited_zero(*range(8), cores=4)),
                           nodes=8, until_us=3_000, sends=sort_starts(8, 500_000.0)),
    "lnic-rdma-ops": Case(all_of(no_errors(), prints("Client complete!", node=1)), nodes=2, until_us=3_000),
}
