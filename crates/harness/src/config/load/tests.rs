//! The load file's parsing and checks: defaults, errors that name their key, what each
//! workload section gives, what an IceNIC server takes.

use super::*;
use crate::loadgen::Service;
use crate::workload::kv::Keys;
use crate::workload::setalg::Popularity;
use nanopu_cluster::config::check;
use nanopu_cluster::config::NicKind;
use nanopu_nic::params::CoreSelection;

const MIN: &str = "[server]\nelf = \"s.elf\"\n[load]\nrates_mrps = [1.0]\nrequests = 10\n\
    [[load.class]]\nname = \"a\"\nfraction = 1.0\nservice_ns = 500.0\ncontexts = [0]\n";

#[test]
fn minimal_config_has_defaults() {
    let f: LoadFile = toml::from_str(MIN).unwrap();
    let cfg = f.node_config().unwrap();
    assert_eq!(
        (cfg.nic.cores, cfg.nic.core_selection, cfg.nic.sched_timer_cycles),
        (4, CoreSelection::Jbsq, 0)
    );
    let s = f.specs().unwrap();
    assert_eq!(
        (s[0].arrivals, s[0].classes[0].service),
        (Arrivals::Exponential, Service::Fixed { ns: 500.0 })
    );
}

#[test]
fn errors_name_the_field() {
    let bad = |from: &str, to: &str| {
        let f: LoadFile = toml::from_str(&MIN.replace(from, to)).unwrap();
        f.node_config().and_then(|_| f.specs()).unwrap_err()
    };
    assert!(
        bad("elf = \"s.elf\"", "elf = \"s.elf\"\ncore_selection = \"rr\"").contains("server.core_selection")
    );
    assert!(bad("fraction = 1.0", "fraction = 0.5").contains("fractions add up"));
    assert!(bad("requests = 10", "requests = 10\narrivals = \"poisson\"").contains("load.arrivals"));
    let e = toml::from_str::<LoadFile>(&MIN.replace("requests", "requsts")).unwrap_err().to_string();
    assert!(e.contains("requsts"), "{e}");
}

/// The error for `MIN` with `from` replaced by `to`; it must start with `key`.
fn refused(from: &str, to: &str, key: &str) -> String {
    let e = LoadFile::parse(&MIN.replace(from, to)).err().unwrap_or_else(|| panic!("accepted {to}"));
    assert!(e.starts_with(&format!("{key}: ")), "{to}: {e}");
    e
}

#[test]
fn the_default_limit_fits_simulated_time() {
    // `u64::MAX / 2` cycles overflowed `Time` when the run began.
    let f = LoadFile::parse(MIN).unwrap();
    let cfg = f.node_config().unwrap();
    assert!(cfg.max_cycles <= check::max_cycles(cfg.timing.clock_hz));
    assert!(nanopu_sim::Clock::from_hz(cfg.timing.clock_hz)
        .unwrap()
        .period()
        .as_fs()
        .checked_mul(cfg.max_cycles)
        .is_some());
}

#[test]
fn times_are_checked_not_clamped() {
    let e = refused("requests = 10", "requests = 10\ndrain_us = -1.0", "load.drain_us");
    assert!(e.contains("-1 us"), "{e}");
    refused("requests = 10", "requests = 10\ndrain_us = 1e30", "load.drain_us");
    refused("requests = 10", "requests = 10\ndrain_us = nan", "load.drain_us");
    refused("service_ns = 500.0", "service_ns = 1e30", "load.class \"a\": service_ns");
    refused("service_ns = 500.0", "service_ns = 500.0\nmax_ns = -1.0", "load.class \"a\": max_ns");
    refused("fraction = 1.0", "fraction = nan", "load.class \"a\": fraction");
    let server = |extra: &str| ("elf = \"s.elf\"".to_string(), format!("elf = \"s.elf\"\n{extra}"));
    for (extra, key) in [
        ("sched_timer_us = -5.0", "server.sched_timer_us"),
        ("sched_timer_us = 1e-9", "server.sched_timer_us"),
        ("mac_ns = -1.0", "server.mac_ns"),
        ("mac_ns = 1e30", "server.mac_ns"),
        ("link_ns = -1.0", "server.link_ns"),
        ("link_ns = 1e30", "server.link_ns"),
        ("link_ns = nan", "server.link_ns"),
        ("msg_cycles = 9223372036854775807", "server.msg_cycles"),
        ("idle_cycles = 9223372036854775807", "server.idle_cycles"),
        ("cores = 0", "server.cores"),
        ("jbsq_n = 0", "server.jbsq_n"),
    ] {
        let (from, to) = server(extra);
        refused(&from, &to, key);
    }
}

#[test]
fn rates_and_requests_are_bounded() {
    for r in ["0.0", "-1.0", "nan", "inf", "1e300"] {
        refused("rates_mrps = [1.0]", &format!("rates_mrps = [{r}]"), "load.rates_mrps");
    }
    let e = refused("rates_mrps = [1.0]", "rates_mrps = [1e-9]", "load.rates_mrps");
    assert!(e.contains("one-hour"), "{e}");
    let l = LoadFile::parse(MIN).unwrap().load;
    let e = LoadSection { requests: 1 << 40, ..l.clone() }.check(Some(8 << 30)).unwrap_err();
    assert!(e.starts_with("load.requests: ") && e.contains("an estimate"), "{e}");
    assert!(LoadSection { requests: 20_000, ..l }.check(Some(8 << 30)).is_ok());
}

#[test]
fn a_kv_section_gives_the_classes_and_the_server_arguments() {
    let kv = MIN.split("[[load.class]]").next().unwrap().to_string()
        + "[load.kv]\nitems_per_core = 100\nsteering = \"static\"\nvalue_bytes = [8, 64]\n";
    let f = LoadFile::parse(&kv).unwrap();
    assert_eq!(f.node_config().unwrap().args, ["static", "100", "1", "8", "64"]);
    let s = f.specs().unwrap();
    let names: Vec<&str> = s[0].classes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!((names, s[0].classes[1].fraction), (vec!["get", "set"], 1.0 - 0.95));
    assert_eq!(s[0].kv.as_ref().unwrap().keys, Keys::Zipf { theta: 0.99 });
    assert_eq!(s[0].classes[0].contexts, [0, 1, 2, 3]);
    let bad = |from: &str, to: &str| LoadFile::parse(&kv.replace(from, to)).unwrap_err();
    assert!(bad("[8, 64]", "[8, 1024]").starts_with("load.kv.value_bytes"));
    assert!(bad("\"static\"", "\"rss\"").starts_with("load.kv.steering"));
    assert!(bad("elf = \"s.elf\"", "elf = \"s.elf\"\nargs = [\"jbsq\"]").starts_with("server.args"));
    assert!(LoadFile::parse(&(MIN.to_string() + "[load.kv]\n")).unwrap_err().starts_with("load.class"));
}

#[test]
fn an_rdma_section_gives_one_class_per_operation_and_the_seed() {
    let rdma = MIN.split("[[load.class]]").next().unwrap().to_string()
        + "[load.rdma]\nread = 0.5\nwrite = 0.5\ncas = 0.0\nfaa = 0.0\nindirect_read = 0.0\n";
    let f = LoadFile::parse(&rdma).unwrap();
    let cfg = f.node_config().unwrap();
    assert_eq!((cfg.program_name.as_str(), cfg.args.clone()), ("rdma", vec!["1".to_string()]));
    let s = f.specs().unwrap();
    let names: Vec<&str> = s[0].classes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["read", "write", "cas", "faa", "indirect_read"]);
    assert_eq!(s[0].rdma.as_ref().unwrap().read_words, [8, 8]);
    let bad = |from: &str, to: &str| LoadFile::parse(&rdma.replace(from, to)).unwrap_err();
    assert!(bad("read = 0.5", "read = 0.6").contains("add up"));
    assert!(bad("read = 0.5", "read = 0.5\nread_words = [1, 65]").starts_with("load.rdma.read_words"));
    assert!(LoadFile::parse(&(MIN.to_string() + "[load.rdma]\n")).unwrap_err().starts_with("load.rdma"));
}

#[test]
fn a_setalg_section_gives_the_query_sizes_and_the_corpus() {
    let q = MIN.split("[[load.class]]").next().unwrap().to_string()
        + "[load.setalg]\ndocuments = 100\nquery_words = [0.5, 0.5, 0.0, 0.0]\n";
    let f = LoadFile::parse(&q).unwrap();
    let cfg = f.node_config().unwrap();
    assert_eq!(
        (cfg.program_name.as_str(), cfg.args.clone()),
        ("setalg", ["1", "100", "4096", "16"].map(String::from).to_vec())
    );
    let s = f.specs().unwrap();
    let names: Vec<&str> = s[0].classes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["1-word", "2-word", "3-word", "4-word"]);
    assert_eq!(s[0].setalg.as_ref().unwrap().popularity, Popularity::Zipf { theta: 0.99 });
    let bad = |from: &str, to: &str| LoadFile::parse(&q.replace(from, to)).unwrap_err();
    assert!(bad("documents = 100", "documents = 0").starts_with("load.setalg.documents"));
    assert!(bad("documents = 100", "vocabulary = 99999").starts_with("load.setalg.vocabulary"));
    assert!(bad("documents = 100", "words_per_document = 0").starts_with("load.setalg.words_per_document"));
    assert!(bad("[0.5, 0.5, 0.0, 0.0]", "[0.5, 0.6, 0.0, 0.0]").starts_with("load.setalg.query_words"));
    assert!(bad("documents = 100", "popularity = \"hot\"").starts_with("load.setalg.popularity"));
    assert!(bad("documents = 100", "theta = 1.5").starts_with("load.setalg.theta"));
    assert!(bad("documents = 100", "words = 3").contains("unknown field `words`"));
    assert!(bad("elf = \"s.elf\"", "elf = \"s.elf\"\nargs = [\"1\"]").starts_with("server.args"));
    assert!(LoadFile::parse(&(MIN.to_string() + "[load.setalg]\n")).unwrap_err().starts_with("load.setalg"));
}

#[test]
fn an_icenic_server_takes_the_kv_workload_on_one_core_and_refuses_the_rest() {
    let base = MIN.split("[[load.class]]").next().unwrap();
    let kv = base.replace("elf = \"s.elf\"", "elf = \"s.elf\"\nnic = \"icenic\"\ncores = 1")
        + "[load.kv]\nitems_per_core = 100\nsteering = \"static\"\n";
    let cfg = LoadFile::parse(&kv).unwrap().node_config().unwrap();
    assert_eq!((cfg.nic_kind, cfg.program_name.as_str()), (NicKind::IceNic, "mica_ice"));
    assert_eq!(cfg.args, ["static", "100", "1", "512", "512"]);
    let bad = |from: &str, to: &str| LoadFile::parse(&kv.replace(from, to)).unwrap_err();
    assert!(bad("cores = 1", "cores = 4").starts_with("server.cores"));
    assert!(bad("\"static\"", "\"jbsq\"").starts_with("load.kv.steering"));
    assert!(bad("cores = 1", "cores = 1\njbsq_n = 2").starts_with("server.jbsq_n"));
    assert!(bad("cores = 1", "cores = 1\ncore_selection = \"rss\"").starts_with("server.core_selection"));
    assert!(bad("\"icenic\"", "\"zeronic\"").starts_with("server.nic"));
    let classes = base.replace("elf = \"s.elf\"", "elf = \"s.elf\"\nnic = \"icenic\"\ncores = 1")
        + &MIN[MIN.find("[[load.class]]").unwrap()..];
    let e = LoadFile::parse(&classes).unwrap_err();
    assert!(e.starts_with("load: an IceNIC server takes only the checked workloads"), "{e}");
    let nanopu = LoadFile::parse(&kv.replace("\"icenic\"", "\"nanopu\"")).unwrap();
    assert_eq!(nanopu.node_config().unwrap().program_name, "mica");
}

#[test]
fn an_icenic_server_takes_rdma_and_set_algebra_on_one_core_with_their_icenic_builds() {
    let ice = MIN
        .split("[[load.class]]")
        .next()
        .unwrap()
        .replace("elf = \"s.elf\"", "elf = \"s.elf\"\nnic = \"icenic\"\ncores = 1");
    for (section, program) in [("[load.rdma]\n", "rdma_ice"), ("[load.setalg]\n", "setalg_ice")] {
        let f = ice.clone() + section;
        let cfg = LoadFile::parse(&f).unwrap().node_config().unwrap();
        assert_eq!((cfg.nic_kind, cfg.program_name.as_str()), (NicKind::IceNic, program));
        let bad = |from: &str, to: &str| LoadFile::parse(&f.replace(from, to)).unwrap_err();
        assert!(bad("cores = 1", "cores = 4").starts_with("server.cores: an IceNIC server runs on one core"));
        let e = bad("cores = 1", "cores = 1\njbsq_n = 2");
        assert!(e.starts_with("server.jbsq_n: the nanoPU NIC's core selection (JBSQ"), "{e}");
    }
}

#[test]
fn timer_period_is_in_cycles() {
    let f: LoadFile =
        toml::from_str(&MIN.replace("elf = \"s.elf\"", "elf = \"s.elf\"\nsched_timer_us = 5.0")).unwrap();
    assert_eq!(f.node_config().unwrap().nic.sched_timer_cycles, 16_000);
}

#[test]
fn two_classes_of_one_name_are_refused_naming_it() {
    let half = MIN.replace("fraction = 1.0", "fraction = 0.5");
    let class = half[half.find("[[load.class]]").unwrap()..].to_string();
    let e = LoadFile::parse(&format!("{half}{class}")).unwrap_err();
    assert!(e.starts_with("load.class \"a\": the name is given to two classes"), "{e}");
    assert!(LoadFile::parse(&format!("{half}{}", class.replace("\"a\"", "\"b\""))).is_ok());
}

#[test]
fn jbsq_bound_with_rss_selection_is_refused() {
    let f = MIN.replace("elf = \"s.elf\"", "elf = \"s.elf\"\ncore_selection = \"rss\"\njbsq_n = 7");
    let e = LoadFile::parse(&f).and_then(|f| f.node_config()).unwrap_err();
    assert!(
        e.starts_with("server.jbsq_n: JBSQ's bound does not apply when server.core_selection is rss"),
        "{e}"
    );
}

#[test]
fn link_ns_is_the_host_links_propagation_delay() {
    let at = |text: &str| LoadFile::parse(text).unwrap().node_config().unwrap().port.propagation_fs;
    assert_eq!(at(MIN), 0);
    assert_eq!(at(&MIN.replace("elf = \"s.elf\"", "elf = \"s.elf\"\nlink_ns = 43.75")), 43_750_000);
}

#[test]
fn the_prototype_format_runs_the_given_program_with_its_fixed_mix() {
    let kv =
        MIN.split("[[load.class]]").next().unwrap().replace("elf = \"s.elf\"", "elf = \"d/proto.riscv\"")
            + "[load.kv]\nformat = \"prototype\"\nget_fraction = 0.5\nkeys = \"uniform\"\n";
    let f = LoadFile::parse(&kv).unwrap();
    let cfg = f.node_config().unwrap();
    assert_eq!((cfg.program_name.as_str(), cfg.args.len()), ("proto.riscv", 0), "the program's own argv");
    let spec = f.specs().unwrap()[0].kv.clone().unwrap();
    let sets: Vec<bool> = (0..4).map(|i| spec.is_set(i, 0.99)).collect();
    assert_eq!(sets, [true, false, true, false], "SET on even message ids, whatever the draw");
    let bad = |from: &str, to: &str| LoadFile::parse(&kv.replace(from, to)).unwrap_err();
    assert!(bad("get_fraction = 0.5", "get_fraction = 0.95").starts_with("load.kv.get_fraction"));
    assert!(bad("\"uniform\"", "\"zipf\"").starts_with("load.kv.keys"));
    assert!(bad("keys", "steering = \"static\"\nkeys").starts_with("load.kv.steering"));
    assert!(bad("keys", "value_bytes = [8, 512]\nkeys").starts_with("load.kv.value_bytes"));
    assert!(bad("\"prototype\"", "\"proto\"").contains("load.kv.format: \"proto\""));
    let e = bad("[load]\n", "[load]\nreply_at = \"middle\"\n");
    assert!(e.contains("load.reply_at: \"middle\""), "{e}");
}
