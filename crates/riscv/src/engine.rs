//! Which engine executes a core's instructions: the reference interpreter
//! (`Core::run_block`, `fetch` and `exec` per instruction), the fast engine (`fast.rs`), or
//! the fast engine with translated traces (`jit/`); all give the same architectural state,
//! cycles and counters (docs/profile.md "Core engines"; `tests/engines.rs` compares them).

use std::str::FromStr;

/// Which engine executes a core's instructions (`--engine`, `[node] engine`). Both give
/// the same architectural state, cycles and counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// The reference interpreter: one fetch and one `exec` per instruction.
    Interp,
    /// Runs of ops within an I-cache line, with the pc and cycle in host registers
    /// (`fast.rs`); the default, as it takes fewer host instructions on every run measured
    /// (docs/profile.md "Core engines").
    #[default]
    Fast,
    /// The fast engine, with the hot runs of plain ops it meets while no register waits
    /// translated to host code (`jit/`): the same results again.
    Jit,
}

impl Engine {
    pub const NAMES: [&'static str; 3] = ["interp", "fast", "jit"];

    pub fn name(self) -> &'static str {
        match self {
            Engine::Interp => "interp",
            Engine::Fast => "fast",
            Engine::Jit => "jit",
        }
    }

    /// `name` parsed, or the default engine where no name is given (a flag or key left out).
    pub fn named_or_default(name: Option<&str>) -> Result<Engine, String> {
        name.map_or(Ok(Engine::default()), str::parse)
    }
}

impl FromStr for Engine {
    type Err = String;

    fn from_str(s: &str) -> Result<Engine, String> {
        match s {
            "interp" => Ok(Engine::Interp),
            "fast" => Ok(Engine::Fast),
            "jit" => Ok(Engine::Jit),
            _ => Err(format!("engine: '{s}' is not one of {}", Engine::NAMES.join(", "))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Engine;

    #[test]
    fn engines_parse_by_name_and_the_default_is_the_fast_engine() {
        for e in [Engine::Interp, Engine::Fast, Engine::Jit] {
            assert_eq!(e.name().parse::<Engine>(), Ok(e));
            assert_eq!(Engine::named_or_default(Some(e.name())), Ok(e));
        }
        assert_eq!(Engine::default(), Engine::Fast);
        assert_eq!(Engine::named_or_default(None), Ok(Engine::Fast));
        let err = "spike".parse::<Engine>().unwrap_err();
        assert!(err.contains("'spike'") && err.contains("interp, fast, jit"), "{err}");
    }
}
