//! IceNIC's send-path rate limiter: the token bucket every frame passes between the DMA
//! reader and the wire (icenet `RateLimiter`, `Limiter.scala`, l-nic/icenet 512c87e;
//! `IceNicSendPath` puts it last). docs/models/icenic.md "Send path".
//!
//! Each cycle a flit may leave if the bucket holds a token (`ok_to_send = tokens > 0`); a
//! free-running counter adds `inc` tokens every `period + 1` cycles, and the bucket holds at
//! most `size`. Its settings are inputs of the NIC: the Verilator harness of the nanoPU
//! artifact ties them to inc 1, period 1, size 8 (icenet `SimNetwork.v`): from a full
//! bucket 16 flits at once (its 8 tokens and those added meanwhile), then one every other
//! cycle. A limiter given a token a cycle never holds a frame back.

/// The limiter's settings (`RateLimiterSettings`): `inc` tokens every `period + 1` cycles,
/// at most `size` held; each 0 to 255 (8-bit fields, `RLIMIT_MAX_*` = 256).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    pub inc: u64,
    pub period: u64,
    pub size: u64,
}

impl RateLimit {
    /// A token every cycle: a flit every cycle, the datapath's own rate (the default).
    pub const FULL: RateLimit = RateLimit { inc: 1, period: 0, size: 1 };

    /// The settings the nanoPU artifact's Verilator harness gives its IceNIC:
    /// `assign net_rlimit_inc = 1; net_rlimit_period = 1; net_rlimit_size = 8;` (icenet
    /// `src/main/resources/vsrc/SimNetwork.v`, l-nic/icenet 512c87e; `connectSimNetwork`
    /// wires them to the NIC, which `IceNICSimNetworkRocketConfig` of l-nic/chipyard
    /// 1fe1357 uses).
    pub const SIM_NETWORK: RateLimit = RateLimit { inc: 1, period: 1, size: 8 };

    /// `INC/PERIOD/SIZE`, each 0 to 255, with `inc` and `size` at least 1 (else no flit
    /// would ever leave).
    pub fn parse(s: &str) -> Result<RateLimit, String> {
        let bad = || format!("{s}: expected INC/PERIOD/SIZE, each 0 to 255, INC and SIZE at least 1");
        let v: Vec<u64> =
            s.split('/').map(|f| f.trim().parse().map_err(|_| bad())).collect::<Result<_, _>>()?;
        match v[..] {
            [inc, period, size] if (1..256).contains(&inc) && period < 256 && (1..256).contains(&size) => {
                Ok(RateLimit { inc, period, size })
            }
            _ => Err(bad()),
        }
    }

    /// Does it ever hold a flit back? Not with a token or more every cycle.
    pub fn limits(&self) -> bool {
        self.inc <= self.period
    }

    /// Is cycle `c` one where the counter adds tokens (`counter === 0`, every `period + 1`
    /// cycles from reset)?
    fn triggers(&self, c: u64) -> bool {
        c.is_multiple_of(self.period + 1)
    }

    /// The tokens after cycle `c`, from `tokens` during it and whether a flit left.
    fn next(&self, tokens: u64, fired: bool, c: u64) -> u64 {
        match (self.triggers(c), fired) {
            (true, true) => (tokens + self.inc - 1).min(self.size),
            (true, false) => (tokens + self.inc).min(self.size),
            (false, true) => tokens - 1,
            (false, false) => tokens,
        }
    }

    /// Trigger cycles in `[from, to)`.
    fn triggers_between(&self, from: u64, to: u64) -> u64 {
        let m = self.period + 1;
        to.div_ceil(m) - from.div_ceil(m)
    }
}

/// The limiter between frames: frames pass it in order, one flit a cycle at most.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limiter {
    /// The first cycle after the last frame's last flit left.
    free: u64,
    /// Tokens in the bucket at `free` (none at reset).
    tokens: u64,
}

impl Limiter {
    /// A frame whose `flits` reach the limiter one a cycle from cycle `first`: the cycle
    /// after its last flit leaves. (At most one leaves a cycle, so once the frame has
    /// started, its next flit is always there.)
    pub fn pass(&mut self, s: &RateLimit, first: u64, flits: u64) -> u64 {
        let mut c = first.max(self.free);
        let idle = s.triggers_between(self.free, c);
        let mut tokens = (self.tokens + idle * s.inc).min(s.size);
        let mut left = flits;
        while left > 0 {
            let fired = tokens > 0;
            tokens = s.next(tokens, fired, c);
            left -= fired as u64;
            c += 1;
        }
        (self.free, self.tokens) = (c, tokens);
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_rate_passes_a_flit_a_cycle_after_the_first_token() {
        let mut l = Limiter::default();
        assert!(!RateLimit::FULL.limits());
        assert_eq!(l.pass(&RateLimit::FULL, 10, 16), 26);
        assert_eq!(l.pass(&RateLimit::FULL, 26, 4), 30);
    }

    #[test]
    fn the_harness_settings_burst_sixteen_then_half_rate() {
        let s = RateLimit::SIM_NETWORK;
        assert!(s.limits());
        let mut l = Limiter::default();
        // Idle long enough to fill the bucket: a flit a cycle while its 8 tokens (and the
        // one added every other cycle) last, 16 flits, then one every 2 cycles.
        let end = l.pass(&s, 1000, 136);
        assert_eq!(end - 1000, 16 + 2 * 120);
        // Back to back: the bucket is empty, so every flit waits for its token.
        let end2 = l.pass(&s, end, 16);
        assert_eq!(end2 - end, 2 * 16);
    }

    #[test]
    fn settings_parse_and_refuse() {
        assert_eq!(RateLimit::parse("1/1/8"), Ok(RateLimit::SIM_NETWORK));
        for bad in ["1/1", "0/1/8", "1/256/8", "1/1/0", "a/b/c", "1/1/8/2"] {
            assert!(RateLimit::parse(bad).is_err(), "{bad}");
        }
    }
}
