//! The configuration reference (docs/config.md) is what `nanopu schema --markdown` prints,
//! and every key of every kind of file is described there.

use nanopu_harness::schema::{reference, schema, ConfigKind};
use serde_json::Value;
use std::path::Path;

#[test]
fn the_reference_page_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/config.md");
    let page = std::fs::read_to_string(&path).expect("docs/config.md");
    assert!(
        page == reference(),
        "docs/config.md is stale: regenerate it with `nanopu schema --markdown > docs/config.md`"
    );
}

/// Every property of every object in `v`, with its path, lacking a description.
fn undescribed(v: &Value, path: &str, out: &mut Vec<String>) {
    if let Some(props) = v["properties"].as_object() {
        for (k, p) in props {
            if p["description"].as_str().is_none_or(str::is_empty) {
                out.push(format!("{path}{k}"));
            }
        }
    }
    if let Some(defs) = v["$defs"].as_object() {
        defs.iter().for_each(|(name, d)| undescribed(d, &format!("{name}."), out));
    }
}

#[test]
fn every_key_has_a_description() {
    for (name, kind) in ConfigKind::ALL {
        let mut missing = Vec::new();
        undescribed(&schema(kind), "", &mut missing);
        assert!(missing.is_empty(), "{name} keys without a doc comment: {missing:?}");
    }
}

#[test]
fn unknown_keys_are_refused_by_the_schema_as_by_the_parser() {
    let s = schema(ConfigKind::Cluster);
    assert_eq!(s["additionalProperties"], false);
    assert_eq!(s["$defs"]["TopologyFile"]["additionalProperties"], false);
    assert!(s["required"].as_array().unwrap().contains(&"topology".into()));
}

// ---- The schemas refuse what the checks refuse (reliability2 item 31) ----------------------

use nanopu_cluster::config::cluster::ClusterFile;
use nanopu_harness::clients::raft::config::RaftFile;
use nanopu_harness::config::chain::ChainFile;
use nanopu_harness::config::load::LoadFile;

/// A minimal valid file of each kind, which each case changes.
fn base(kind: ConfigKind) -> &'static str {
    match kind {
        ConfigKind::Cluster => {
            "[topology]\nkind = \"star\"\nnodes = 2\n[[program]]\nnodes = \"all\"\nelf = \"x.elf\"\n"
        }
        ConfigKind::Load => {
            "[server]\nelf = \"x.elf\"\n[load]\nrates_mrps = [1.0]\nrequests = 100\n[[load.class]]\n\
             name = \"a\"\nfraction = 1.0\nservice_ns = 100.0\ncontexts = [0]\n"
        }
        ConfigKind::Raft => "",
        ConfigKind::Chain => {
            "[chain]\nelf = \"chain.elf\"\n[load]\nrates_mrps = [1.0]\nrequests = 100\n[load.kv]\n"
        }
    }
}

/// `doc` with the value at dotted `path` ("link.rate_gbps", "program.0.abi") set to the TOML
/// value `value`; tables on the way are made.
fn set(doc: &mut toml::Value, path: &str, value: &str) {
    let v = toml::from_str::<toml::Table>(&format!("v = {value}")).expect("a TOML value")["v"].clone();
    let (last, parents) = path.rsplit_once('.').map_or((path, None), |(p, l)| (l, Some(p)));
    let mut at = doc;
    for k in parents.into_iter().flat_map(|p| p.split('.')) {
        at = match k.parse::<usize>() {
            Ok(i) => &mut at.as_array_mut().expect("an array")[i],
            Err(_) => at.as_table_mut().expect("a table").entry(k).or_insert(toml::Table::new().into()),
        };
    }
    match last.parse::<usize>() {
        Ok(i) => at.as_array_mut().expect("an array")[i] = v,
        Err(_) => drop(at.as_table_mut().expect("a table").insert(last.into(), v)),
    }
}

/// The file `edits` make of the base of `kind`, as TOML text.
fn file(kind: ConfigKind, edits: &[(&str, &str)]) -> String {
    let mut doc: toml::Value = toml::from_str(base(kind)).expect("the base parses");
    edits.iter().for_each(|(path, value)| set(&mut doc, path, value));
    toml::to_string(&doc).expect("TOML")
}

/// What the simulator says of `text`: the check every front end runs on a file.
fn simulator(kind: ConfigKind, text: &str) -> Result<(), String> {
    match kind {
        ConfigKind::Cluster => ClusterFile::parse(text).map(|_| ()),
        ConfigKind::Load => LoadFile::parse(text).map(|_| ()),
        ConfigKind::Chain => ChainFile::parse(text).map(|_| ()),
        ConfigKind::Raft => {
            let f: RaftFile = toml::from_str(text).map_err(|e| e.to_string())?;
            f.to_spec(Path::new("."), "f.toml").map(|_| ())
        }
    }
}

/// What a JSON Schema validator says of `text` under the kind's schema.
fn schema_says(kind: ConfigKind, text: &str) -> Result<(), String> {
    let doc: Value = toml::from_str(text).expect("TOML as JSON");
    let v = jsonschema::validator_for(&schema(kind)).expect("the schema is valid");
    v.validate(&doc).map_err(|e| e.to_string())
}

/// Refused by both, the simulator naming `key`.
fn refused_by_both(kind: ConfigKind, edits: &[(&str, &str)], key: &str) {
    let text = file(kind, edits);
    let e = simulator(kind, &text).expect_err(&format!("the simulator took {edits:?}"));
    assert!(e.contains(key), "{edits:?}: the error names {key}: {e}");
    assert!(schema_says(kind, &text).is_err(), "{:?} schema took {edits:?}", kind.name());
}

/// Accepted by both (a boundary value).
fn accepted_by_both(kind: ConfigKind, edits: &[(&str, &str)]) {
    let text = file(kind, edits);
    simulator(kind, &text).unwrap_or_else(|e| panic!("the simulator refused {edits:?}: {e}"));
    schema_says(kind, &text).unwrap_or_else(|e| panic!("the {} schema refused {edits:?}: {e}", kind.name()));
}

#[test]
fn the_bases_are_valid() {
    ConfigKind::ALL.iter().for_each(|&(_, kind)| accepted_by_both(kind, &[]));
}

type Case = (&'static str, &'static str, &'static str);

/// (path, bad value, the key the simulator's error names), cluster files.
const CLUSTER_BAD: &[Case] = &[
    ("link.rate_gbps", "0.0", "link.rate_gbps"),
    ("link.rate_gbps", "100000.5", "link.rate_gbps"),
    ("link.propagation_ns", "-1.0", "link.propagation_ns"),
    ("link.propagation_ns", "3.7e12", "link.propagation_ns"),
    ("link.drop_prob", "1.0", "link.drop_prob"),
    ("node.cores", "65", "node.cores"),
    ("node.cores", "0", "node.cores"),
    ("transport", "\"tcp\"", "transport"),
    ("max_us", "-1.0", "max_us"),
    ("max_us", "0.0", "max_us"),
    ("max_us", "3.7e9", "max_us"),
    ("topology.kind", "\"ring\"", "topology.kind"),
    ("topology.nodes", "0", "topology.nodes"),
    ("topology.nodes", "1048577", "topology.nodes"),
    ("switch.bands", "0", "switch.bands"),
    ("switch.bands", "9", "switch.bands"),
    ("switch.band_bytes", "[71, 72]", "switch.band_bytes"),
    ("switch.band_bytes", "[72, 268435457]", "switch.band_bytes"),
    ("switch.latency_ns", "-1.0", "switch.latency_ns"),
    ("switch.uplink", "\"random\"", "switch.uplink"),
    ("switch.mcast_timeout_us", "3.7e9", "switch.mcast_timeout_us"),
    ("node.exit", "\"core\"", "node.exit"),
    ("node.max_cycles", "5", "node.max_cycles"),
    ("node.core_selection", "\"rr\"", "node.core_selection"),
    ("node.jbsq_n", "0", "node.jbsq_n"),
    ("node.msg_cycles", "11520000000001", "node.msg_cycles"),
    ("node.idle_cycles", "11520000000001", "node.idle_cycles"),
    ("node.sched_timer_us", "0.01", "node.sched_timer_us"),
    ("node.sched_timer_us", "3.7e9", "node.sched_timer_us"),
    ("node.max_msg_bytes", "7", "node.max_msg_bytes"),
    ("node.max_msg_bytes", "65536", "node.max_msg_bytes"),
    ("node.tx_queue_bytes", "15", "node.tx_queue_bytes"),
    ("transport_params.rtt_pkts", "0", "transport_params.rtt_pkts"),
    ("transport_params.rtt_pkts", "65", "transport_params.rtt_pkts"),
    ("transport_params.rto_us", "3.7e9", "transport_params.rto_us"),
    ("transport_params.rtt_bytes", "1023", "transport_params.rtt_bytes"),
    ("transport_params.rtt_bytes", "65537", "transport_params.rtt_bytes"),
    ("transport_params.overcommit", "0", "transport_params.overcommit"),
    ("transport_params.tail_fraction", "1.5", "transport_params.tail_fraction"),
    ("transport_params.tail_delay_us", "-1.0", "transport_params.tail_delay_us"),
    ("program.0.abi", "\"x86\"", "program.abi"),
    ("program.0.nic", "\"e1000\"", "program.nic"),
    ("program.0.pcie_ns", "-1.0", "program.pcie_ns"),
    ("faults", "[{link = \"node:0\", drop_prob = 1.0}]", "faults.drop_prob"),
    ("faults", "[{link = \"node:0\", down_at_us = -1.0}]", "faults.down_at_us"),
    ("faults", "[{kind = \"crash\", node = 1, at_us = 3.7e9}]", "faults.at_us"),
    ("faults", "[{kind = \"flood\", node = 1}]", "faults.kind"),
    ("faults", "[{kind = \"partition\", nodes = [1], from_us = -1.0, to_us = 5.0}]", "faults.from_us"),
];

/// Values at the ends of the cluster files' ranges, each given alone.
const CLUSTER_GOOD: &[(&str, &str)] = &[
    ("link.rate_gbps", "0.001"),
    ("link.rate_gbps", "100000.0"),
    ("link.propagation_ns", "0.0"),
    ("link.drop_prob", "0.999"),
    ("node.cores", "1"),
    ("node.cores", "64"),
    ("transport", "\"homa\""),
    ("max_us", "3.6e9"),
    ("topology.nodes", "1048576"),
    ("switch.bands", "1"),
    ("switch.band_bytes", "[72, 268435456]"),
    ("switch.uplink", "\"hash\""),
    ("node.exit", "\"hart\""),
    ("node.core_selection", "\"rss\""),
    ("node.jbsq_n", "4294967295"),
    ("node.msg_cycles", "11520000000000"),
    ("node.sched_timer_us", "0.05"),
    ("node.sched_timer_us", "0.0"),
    ("node.sched_timer_us", "3.6e9"),
    ("node.max_msg_bytes", "8"),
    ("node.tx_queue_bytes", "4294967295"),
    ("transport_params.rtt_pkts", "64"),
    ("transport_params.rtt_bytes", "65536"),
    ("transport_params.tail_fraction", "1.0"),
    ("program.0.abi", "\"plain\""),
    ("program.0.nic", "\"icenic\""),
    ("faults", "[{kind = \"crash\", node = 1, at_us = 0.0}]"),
];

#[test]
fn cluster_files_refused_by_the_check_are_refused_by_the_schema() {
    for (path, value, key) in CLUSTER_BAD {
        refused_by_both(ConfigKind::Cluster, &[(path, value)], key);
    }
    let leaf_spine = "{kind = \"leaf-spine\", nodes_per_leaf = 1, leaves = 1, spines = 1048576}";
    refused_by_both(
        ConfigKind::Cluster,
        &[("topology", leaf_spine)],
        "topology.nodes_per_leaf + topology.spines",
    );
    for (path, value) in CLUSTER_GOOD {
        accepted_by_both(ConfigKind::Cluster, &[(path, value)]);
    }
    accepted_by_both(ConfigKind::Cluster, &[("switch.bands", "8"), ("transport", "\"homa\"")]);
    accepted_by_both(
        ConfigKind::Cluster,
        &[("transport_params.tail_fraction", "1.0"), ("transport_params.tail_delay_us", "3.6e9")],
    );
}

const LOAD_BAD: &[Case] = &[
    ("server.cores", "0", "server.cores"),
    ("server.cores", "65", "server.cores"),
    ("server.nic", "\"e1000\"", "server.nic"),
    ("server.mac_ns", "-1.0", "server.mac_ns"),
    ("server.link_ns", "-1.0", "server.link_ns"),
    ("server.link_ns", "3.7e12", "server.link_ns"),
    ("server.jbsq_n", "0", "server.jbsq_n"),
    ("server.core_selection", "\"x\"", "server.core_selection"),
    ("load.rates_mrps", "[0.0]", "load.rates_mrps"),
    ("load.rates_mrps", "[1e10]", "load.rates_mrps"),
    ("load.rates_mrps", "[]", "load.rates_mrps"),
    ("load.requests", "0", "load.requests"),
    ("load.arrivals", "\"bursty\"", "load.arrivals"),
    ("load.drain_us", "-1.0", "load.drain_us"),
    ("load.start_us", "3.7e9", "load.start_us"),
    ("load.reply_at", "\"middle\"", "load.reply_at"),
    ("load.class.0.fraction", "1.5", "fraction"),
    ("load.class.0.service", "\"pareto\"", "service"),
    ("load.class.0.service_ns", "-1.0", "service_ns"),
    ("load.class.0.max_ns", "3.7e12", "max_ns"),
    ("load.class.0.contexts", "[]", "contexts"),
];

/// A checked workload instead of the classes: `[load.kv]`, `[load.rdma]` or `[load.setalg]`
/// given as `table`.
fn workload(section: &'static str, table: &'static str) -> [(&'static str, &'static str); 2] {
    [("load.class", "[]"), (section, table)]
}

const WORKLOAD_BAD: &[Case] = &[
    ("load.kv", "{items_per_core = 0}", "load.kv.items_per_core"),
    ("load.kv", "{items_per_core = 16385}", "load.kv.items_per_core"),
    ("load.kv", "{get_fraction = 1.5}", "load.kv.get_fraction"),
    ("load.kv", "{keys = \"hot\"}", "load.kv.keys"),
    ("load.kv", "{theta = 1.0}", "load.kv.theta"),
    ("load.kv", "{keys = \"uniform\", theta = 0.0}", "load.kv.theta"),
    ("load.kv", "{value_bytes = [12, 16]}", "load.kv.value_bytes"),
    ("load.kv", "{value_bytes = [8, 520]}", "load.kv.value_bytes"),
    ("load.kv", "{steering = \"rss\"}", "load.kv.steering"),
    ("load.kv", "{format = \"erpc\"}", "load.kv.format"),
    ("load.rdma", "{read = 1.2, write = 0.0, cas = 0.0, faa = 0.0, indirect_read = -0.2}", "load.rdma"),
    ("load.rdma", "{read_words = [0, 8]}", "load.rdma.read_words"),
    ("load.rdma", "{write_words = [8, 65]}", "load.rdma.write_words"),
    ("load.setalg", "{documents = 0}", "load.setalg.documents"),
    ("load.setalg", "{documents = 65537, words_per_document = 1}", "load.setalg.documents"),
    ("load.setalg", "{vocabulary = 3}", "load.setalg.vocabulary"),
    ("load.setalg", "{vocabulary = 16385}", "load.setalg.vocabulary"),
    ("load.setalg", "{words_per_document = 65}", "load.setalg.words_per_document"),
    ("load.setalg", "{query_words = [1.5, -0.5, 0.0, 0.0]}", "load.setalg.query_words"),
    ("load.setalg", "{popularity = \"flat\"}", "load.setalg.popularity"),
    ("load.setalg", "{theta = 0.0}", "load.setalg.theta"),
];

const WORKLOAD_GOOD: &[(&str, &str)] = &[
    ("load.kv", "{items_per_core = 16384, value_bytes = [8, 512], theta = 0.5, get_fraction = 1.0}"),
    ("load.kv", "{items_per_core = 1, keys = \"uniform\", steering = \"static\"}"),
    ("load.rdma", "{read_words = [1, 64], write_words = [64, 64]}"),
    ("load.rdma", "{read = 1.0, write = 0.0, cas = 0.0, faa = 0.0, indirect_read = 0.0}"),
    ("load.setalg", "{documents = 4096, words_per_document = 64, vocabulary = 4}"),
    ("load.setalg", "{documents = 65536, words_per_document = 4, vocabulary = 16384}"),
];

#[test]
fn load_files_refused_by_the_check_are_refused_by_the_schema() {
    for (path, value, key) in LOAD_BAD {
        refused_by_both(ConfigKind::Load, &[(path, value)], key);
    }
    for (section, table, key) in WORKLOAD_BAD {
        refused_by_both(ConfigKind::Load, &workload(section, table), key);
    }
    for (section, table) in WORKLOAD_GOOD {
        accepted_by_both(ConfigKind::Load, &workload(section, table));
    }
    let good = [("server.cores", "64"), ("server.mac_ns", "3.6e12"), ("load.rates_mrps", "[1e-3, 1e9]")];
    accepted_by_both(ConfigKind::Load, &good);
    accepted_by_both(
        ConfigKind::Load,
        &[("load.start_us", "3.6e9"), ("load.drain_us", "0.0"), ("load.arrivals", "\"fixed\"")],
    );
    accepted_by_both(
        ConfigKind::Load,
        &[("load.class.0.service", "\"exponential\""), ("load.class.0.max_ns", "3.6e12")],
    );
}

const RAFT_BAD: &[Case] = &[
    ("raft.replicas", "2", "raft.replicas"),
    ("raft.replicas", "8", "raft.replicas"),
    ("raft.election_min_us", "0.0", "raft.election_min_us"),
    ("raft.election_min_us", "0.0009", "raft.election_min_us"),
    ("raft.election_max_us", "1.1e6", "raft.election_max_us"),
    ("raft.heartbeat_us", "0.0", "raft.heartbeat_us"),
    ("raft.batch", "0", "raft.batch"),
    ("raft.batch", "42", "raft.batch"),
    ("raft.payload", "\"bytes\"", "raft.payload"),
    ("network.link_ns", "-1.0", "network.link_ns"),
    ("network.switch_ns", "1e30", "network.switch_ns"),
    ("client.arrivals", "\"bursty\"", "client.arrivals"),
    ("client.rate_mrps", "0.0", "client.rate_mrps"),
    ("client.rate_mrps", "101.0", "client.rate_mrps"),
    ("client.requests", "0", "client.requests"),
    ("client.requests", "50001", "client.requests"),
    ("client.get_fraction", "1.5", "client.get_fraction"),
    ("client.keys", "0", "client.keys"),
    ("client.keys", "4097", "client.keys"),
    ("client.start_us", "-1.0", "client.start_us"),
    ("client.retry_us", "0.0", "client.retry_us"),
    ("client.backoff_us", "-1.0", "client.backoff_us"),
    ("client.drain_us", "1.1e6", "client.drain_us"),
    ("nic", "\"e1000\"", "nic"),
    ("faults", "[{kind = \"flood\", node = 0}]", "faults[0].kind"),
    ("faults", "[{kind = \"crash\", node = 7, at_us = 1.0}]", "faults[0].node"),
    ("faults", "[{kind = \"crash\", node = \"follower\", at_us = 1.0}]", "faults[0].node"),
    ("faults", "[{kind = \"crash\", node = 0, at_us = -1.0}]", "faults[0].at_us"),
];

#[test]
fn raft_files_refused_by_the_check_are_refused_by_the_schema() {
    for (path, value, key) in RAFT_BAD {
        refused_by_both(ConfigKind::Raft, &[(path, value)], key);
    }
    accepted_by_both(
        ConfigKind::Raft,
        &[("raft.replicas", "7"), ("raft.batch", "41"), ("raft.heartbeat_us", "0.001")],
    );
    accepted_by_both(
        ConfigKind::Raft,
        &[
            ("raft.replicas", "3"),
            ("raft.election_max_us", "1e6"),
            ("nic", "\"icenic\""),
            ("raft.batch", "29"),
        ],
    );
    let client = [("client.rate_mrps", "100.0"), ("client.requests", "50000"), ("client.keys", "4096")];
    accepted_by_both(ConfigKind::Raft, &client);
    let more = [("client.get_fraction", "1.0"), ("client.retry_us", "0.001"), ("client.start_us", "1e6")];
    accepted_by_both(ConfigKind::Raft, &more);
    accepted_by_both(ConfigKind::Raft, &[("faults", "[{kind = \"crash\", node = \"leader\", at_us = 1e6}]")]);
    let prototype =
        [("raft.payload", "\"prototype\""), ("raft.batch", "17"), ("client.arrivals", "\"fixed\"")];
    accepted_by_both(ConfigKind::Raft, &prototype);
    accepted_by_both(ConfigKind::Raft, &[("network.link_ns", "3.6e12"), ("network.switch_ns", "0.0")]);
}

/// What the schema cannot say of a Raft file: the prototype's payload fits 17 entries in an
/// AppendEntries, and runs only on nanoPU nodes (raft_kv.elf).
#[test]
fn the_prototypes_payload_limits_the_batch_and_the_nic() {
    let refused = |edits: &[(&str, &str)], key: &str| {
        let e = simulator(ConfigKind::Raft, &file(ConfigKind::Raft, edits)).expect_err("refused");
        assert!(e.contains(key), "{edits:?}: {e}");
    };
    refused(&[("raft.payload", "\"prototype\""), ("raft.batch", "18")], "raft.batch");
    refused(
        &[("raft.payload", "\"prototype\""), ("raft.batch", "17"), ("nic", "\"icenic\"")],
        "raft.payload",
    );
}

const CHAIN_BAD: &[Case] = &[
    ("chain.replicas", "0", "chain.replicas"),
    ("chain.replicas", "9", "chain.replicas"),
    ("chain.ping_us", "0", "chain.ping_us"),
    ("chain.ping_us", "1000001", "chain.ping_us"),
    ("chain.timeout_us", "3.7e9", "chain.timeout_us"),
    ("chain.poll_us", "0.0009", "chain.poll_us"),
    ("chain.poll_us", "1000.1", "chain.poll_us"),
    ("chain.nic", "\"e1000\"", "chain.nic"),
    ("faults", "[{kind = \"link\", link = \"node:1\", drop_prob = 0.5}]", "faults.kind"),
    ("faults", "[{node = 2, at_us = 5.0}]", "faults.kind"),
    ("faults", "[{kind = \"crash\", node = 0, at_us = 5.0}]", "faults.node"),
    ("load.kv.items_per_core", "0", "load.kv.items_per_core"),
    ("load.kv.steering", "\"static\"", "load.kv.steering"),
    ("load.rdma", "{}", "load.rdma"),
    ("load.setalg", "{}", "load.setalg"),
    ("load.class", "[{name = \"a\", fraction = 1.0, service_ns = 1.0, contexts = [0]}]", "load.class"),
];

#[test]
fn chain_files_refused_by_the_check_are_refused_by_the_schema() {
    for (path, value, key) in CHAIN_BAD {
        refused_by_both(ConfigKind::Chain, &[(path, value)], key);
    }
    let edge = [("chain.replicas", "8"), ("chain.ping_us", "1"), ("chain.poll_us", "0.001")];
    accepted_by_both(ConfigKind::Chain, &edge);
    let crash = [
        ("chain.replicas", "1"),
        ("chain.poll_us", "1000.0"),
        ("faults", "[{kind = \"crash\", node = 1, at_us = 5.0}]"),
    ];
    accepted_by_both(ConfigKind::Chain, &crash);
}
