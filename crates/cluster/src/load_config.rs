//! Load-generator configuration files (TOML) for `nanopu load`: the server node and the
//! load to sweep. Unknown keys are errors; every value is checked and an error names it.
//!
//! ```toml
//! [server]
//! elf = "../../sw/build/apps/service.elf"
//! args = ["jbsq"]
//! cores = 4
//! core_selection = "jbsq"   # or "rss"
//! jbsq_n = 2
//! sched_timer_us = 0.0      # > 0: the timer-driven scheduler baseline with this period
//! msg_cycles = 3000         # lmsgcycles at reset; 0 turns the processing bound off
//! idle_cycles = 3000        # lidlecycles at reset
//! [load]
//! seed = 1
//! rates_mrps = [1.0, 2.0, 4.0]
//! requests = 20000
//! warmup = 1000
//! arrivals = "exponential"  # or "fixed"
//! drain_us = 1000.0
//! [[load.class]]
//! name = "short"
//! fraction = 0.995
//! service = "fixed"         # or "exponential" (mean service_ns, clipped at max_ns)
//! service_ns = 500.0
//! contexts = [0]
//! ```

use crate::loadgen::{Arrivals, Class, LoadSpec, Service};
use crate::NodeConfig;
use nanopu_nic::params::CoreSelection;
use nanopu_sim::Time;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct LoadFile {
    pub server: ServerFile,
    pub load: LoadSection,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ServerFile {
    pub elf: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default = "four")]
    pub cores: usize,
    #[serde(default = "jbsq")]
    pub core_selection: String,
    pub jbsq_n: Option<u32>,
    #[serde(default)]
    pub sched_timer_us: f64,
    pub msg_cycles: Option<u64>,
    pub idle_cycles: Option<u64>,
    /// Ethernet MAC and serial I/O latency each way, ns (default 0).
    #[serde(default)]
    pub mac_ns: f64,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct LoadSection {
    #[serde(default = "one")]
    pub seed: u64,
    pub rates_mrps: Vec<f64>,
    pub requests: usize,
    #[serde(default)]
    pub warmup: usize,
    #[serde(default = "exponential")]
    pub arrivals: String,
    #[serde(default = "thousand")]
    pub drain_us: f64,
    pub class: Vec<ClassFile>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ClassFile {
    pub name: String,
    pub fraction: f64,
    #[serde(default = "fixed")]
    pub service: String,
    pub service_ns: f64,
    pub max_ns: Option<f64>,
    pub contexts: Vec<u16>,
}

fn four() -> usize {
    4
}
fn one() -> u64 {
    1
}
fn thousand() -> f64 {
    1000.0
}
fn jbsq() -> String {
    "jbsq".into()
}
fn exponential() -> String {
    "exponential".into()
}
fn fixed() -> String {
    "fixed".into()
}

impl LoadFile {
    /// Read a config; the ELF path in it is relative to the directory it is in.
    pub fn load(path: &Path) -> Result<(LoadFile, PathBuf), String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let cfg: LoadFile = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let base = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        Ok((cfg, base))
    }

    /// The server node's configuration.
    pub fn node_config(&self) -> Result<NodeConfig, String> {
        let s = &self.server;
        let mut cfg = NodeConfig::default();
        cfg.nic.cores = s.cores;
        cfg.nic.core_selection =
            CoreSelection::parse(&s.core_selection).map_err(|e| format!("server.{e}"))?;
        cfg.nic.jbsq_n = s.jbsq_n.unwrap_or(cfg.nic.jbsq_n);
        cfg.nic.msg_cycles = s.msg_cycles.unwrap_or(cfg.nic.msg_cycles);
        cfg.nic.idle_cycles = s.idle_cycles.unwrap_or(cfg.nic.idle_cycles);
        if !(s.sched_timer_us >= 0.0 && s.mac_ns >= 0.0) {
            return Err("server.sched_timer_us and server.mac_ns must not be negative".into());
        }
        cfg.nic.sched_timer_cycles = (s.sched_timer_us * cfg.timing.clock_hz as f64 / 1e6).round() as u64;
        cfg.port.mac_fs = Time::from_ns_f64(s.mac_ns).0;
        cfg.program_name = "service".into();
        cfg.args = s.args.clone();
        cfg.max_cycles = u64::MAX / 2;
        cfg.validate().map_err(|e| format!("server: {e}"))?;
        Ok(cfg)
    }

    /// One load spec per offered rate.
    pub fn specs(&self) -> Result<Vec<LoadSpec>, String> {
        let l = &self.load;
        if l.rates_mrps.is_empty() {
            return Err("load.rates_mrps: at least one rate is needed".into());
        }
        let arrivals = match l.arrivals.as_str() {
            "fixed" => Arrivals::Fixed,
            "exponential" => Arrivals::Exponential,
            a => return Err(format!("load.arrivals: \"{a}\" is not \"fixed\" or \"exponential\"")),
        };
        let classes = l.class.iter().map(ClassFile::to_class).collect::<Result<Vec<_>, _>>()?;
        let spec = |rate_mrps| LoadSpec {
            seed: l.seed,
            rate_mrps,
            requests: l.requests,
            warmup: l.warmup,
            arrivals,
            classes: classes.clone(),
            drain: Time::from_ns_f64(l.drain_us * 1e3),
        };
        let specs: Vec<LoadSpec> = l.rates_mrps.iter().map(|&r| spec(r)).collect();
        specs.iter().try_for_each(LoadSpec::validate)?;
        Ok(specs)
    }
}

impl ClassFile {
    fn to_class(&self) -> Result<Class, String> {
        let service = match self.service.as_str() {
            "fixed" => Service::Fixed { ns: self.service_ns },
            "exponential" => Service::Exponential {
                mean_ns: self.service_ns,
                max_ns: self.max_ns.unwrap_or(f64::INFINITY),
            },
            s => {
                return Err(format!(
                    "load.class \"{}\": service \"{s}\" is not \"fixed\" or \"exponential\"",
                    self.name
                ))
            }
        };
        Ok(Class {
            name: self.name.clone(),
            fraction: self.fraction,
            service,
            contexts: self.contexts.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(bad("elf = \"s.elf\"", "elf = \"s.elf\"\ncore_selection = \"rr\"")
            .contains("server.core selection"));
        assert!(bad("fraction = 1.0", "fraction = 0.5").contains("fractions add up"));
        assert!(bad("requests = 10", "requests = 10\narrivals = \"poisson\"").contains("load.arrivals"));
        let e = toml::from_str::<LoadFile>(&MIN.replace("requests", "requsts")).unwrap_err().to_string();
        assert!(e.contains("requsts"), "{e}");
    }

    #[test]
    fn timer_period_is_in_cycles() {
        let f: LoadFile =
            toml::from_str(&MIN.replace("elf = \"s.elf\"", "elf = \"s.elf\"\nsched_timer_us = 5.0")).unwrap();
        assert_eq!(f.node_config().unwrap().nic.sched_timer_cycles, 16_000);
    }
}
