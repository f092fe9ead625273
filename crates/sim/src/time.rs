//! Simulated time: femtoseconds in a `u64` (about 5 hours of simulated time).

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in (or span of) simulated time, in femtoseconds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

const FS_PER_PS: u64 = 1_000;
const FS_PER_NS: u64 = 1_000_000;
const FS_PER_US: u64 = 1_000_000_000;
pub const FS_PER_S: u64 = 1_000_000_000_000_000;

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub const fn from_fs(fs: u64) -> Time {
        Time(fs)
    }
    pub const fn from_ps(ps: u64) -> Time {
        Time(ps * FS_PER_PS)
    }
    pub const fn from_ns(ns: u64) -> Time {
        Time(ns * FS_PER_NS)
    }
    pub const fn from_us(us: u64) -> Time {
        Time(us * FS_PER_US)
    }
    /// From a possibly fractional number of nanoseconds, rounded to the nearest fs.
    pub fn from_ns_f64(ns: f64) -> Time {
        Time((ns * FS_PER_NS as f64).round() as u64)
    }
    pub const fn as_fs(self) -> u64 {
        self.0
    }
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / FS_PER_NS as f64
    }
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / FS_PER_US as f64
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / FS_PER_S as f64
    }
    pub fn saturating_sub(self, other: Time) -> Time {
        Time(self.0.saturating_sub(other.0))
    }
    /// `self + rhs`, or `None` past [`Time::MAX`] (the `+` operator would overflow).
    pub fn checked_add(self, rhs: Time) -> Option<Time> {
        self.0.checked_add(rhs.0).map(Time)
    }
    /// `self + rhs`, or an error naming `what` past [`Time::MAX`].
    pub fn checked_add_named(self, rhs: Time, what: &str) -> Result<Time, String> {
        self.checked_add(rhs)
            .ok_or_else(|| format!("{what}: {self} + {rhs} is past the limit of simulated time, about 5.1 h"))
    }
    /// From a number of nanoseconds given by a user (config key or flag `what`): refuses
    /// NaN, negative, infinite and anything past [`Time::MAX`] (about 1.8e13 ns, 5.1 h),
    /// where `as u64` would saturate or wrap silently. Rounded to the nearest fs.
    pub fn checked_from_ns_f64(ns: f64, what: &str) -> Result<Time, String> {
        checked_scaled(ns, FS_PER_NS, "ns", what)
    }
    /// As [`Time::checked_from_ns_f64`], from microseconds (limit about 1.8e10 us).
    pub fn checked_from_us_f64(us: f64, what: &str) -> Result<Time, String> {
        checked_scaled(us, FS_PER_US, "us", what)
    }
}

/// `v` as error messages show it: exponent notation when the digits would be many.
pub fn show(v: f64) -> String {
    if v.is_finite() && v != 0.0 && !(1e-4..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// `v` units of `fs_per_unit` femtoseconds, checked; `unit` and `what` name it in errors.
fn checked_scaled(v: f64, fs_per_unit: u64, unit: &str, what: &str) -> Result<Time, String> {
    if v.is_nan() || v < 0.0 {
        return Err(format!("{what}: {} {unit} is not a time (must be 0 or more)", show(v)));
    }
    let fs = (v * fs_per_unit as f64).round();
    // u64::MAX as f64 rounds up to 2^64, so `>=` refuses exactly what `as u64` would clamp.
    if !fs.is_finite() || fs >= u64::MAX as f64 {
        let max = u64::MAX / fs_per_unit;
        return Err(format!(
            "{what}: {} {unit} is past the limit of {max} {unit}, about 5.1 h of simulated time \
             (u64 femtoseconds)",
            show(v)
        ));
    }
    Ok(Time(fs as u64))
}

impl Add for Time {
    type Output = Time;
    fn add(self, rhs: Time) -> Time {
        Time(self.0 + rhs.0)
    }
}

impl AddAssign for Time {
    fn add_assign(&mut self, rhs: Time) {
        self.0 += rhs.0;
    }
}

impl Sub for Time {
    type Output = Time;
    fn sub(self, rhs: Time) -> Time {
        Time(self.0 - rhs.0)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3} ns", self.as_ns_f64())
    }
}

/// A clock domain: converts between its cycles and [`Time`] exactly.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Clock {
    period_fs: u64,
}

impl Clock {
    /// A clock of `hz`; the period must be a whole number of femtoseconds.
    pub fn from_hz(hz: u64) -> Result<Clock, String> {
        if hz == 0 || !FS_PER_S.is_multiple_of(hz) {
            return Err(format!("clock of {hz} Hz has no whole-femtosecond period"));
        }
        Ok(Clock { period_fs: FS_PER_S / hz })
    }
    /// Cycles per second.
    pub const fn hz(self) -> u64 {
        FS_PER_S / self.period_fs
    }
    pub const fn period(self) -> Time {
        Time(self.period_fs)
    }
    pub const fn time_of(self, cycles: u64) -> Time {
        Time(cycles * self.period_fs)
    }
    /// The last whole cycle at or before `t`.
    pub const fn cycle_floor(self, t: Time) -> u64 {
        t.0 / self.period_fs
    }
    /// The first whole cycle at or after `t`.
    pub const fn cycle_ceil(self, t: Time) -> u64 {
        t.0.div_ceil(self.period_fs)
    }
}

/// Serialization time of `bytes` on a link of `bits_per_sec`, rounded up to a femtosecond
/// (`Time::MAX` if it does not fit). Above 2,305 bytes, bits times femtoseconds per second
/// pass `u64` (a whole message on the test host's link): those take 128-bit arithmetic.
pub fn serialization(bytes: u64, bits_per_sec: u64) -> Time {
    match bytes.checked_mul(8 * FS_PER_S) {
        Some(fs_bits) => Time(fs_bits.div_ceil(bits_per_sec)),
        None => {
            let fs = (bytes as u128 * (8 * FS_PER_S) as u128).div_ceil(bits_per_sec as u128);
            Time(u64::try_from(fs).unwrap_or(u64::MAX))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_clock_is_exact() {
        let c = Clock::from_hz(3_200_000_000).unwrap();
        assert_eq!(c.period(), Time::from_fs(312_500));
        assert_eq!(c.time_of(140), Time::from_ps(43_750));
        assert_eq!(c.cycle_ceil(Time::from_fs(312_501)), 2);
        assert_eq!(c.cycle_floor(Time::from_fs(312_501)), 1);
    }

    #[test]
    fn rejects_inexact_clock() {
        assert!(Clock::from_hz(3).is_err());
    }

    #[test]
    fn checked_from_ns_accepts_ordinary_values() {
        assert_eq!(Time::checked_from_ns_f64(43.75, "k"), Ok(Time::from_ps(43_750)));
        assert_eq!(Time::checked_from_ns_f64(0.0, "k"), Ok(Time::ZERO));
        assert_eq!(Time::checked_from_us_f64(1.5, "k"), Ok(Time::from_ns(1500)));
        assert_eq!(Time::checked_from_ns_f64(1.8e13, "k"), Ok(Time::from_ns(18_000_000_000_000)));
    }

    #[test]
    fn checked_from_ns_refuses_what_does_not_fit() {
        for v in [f64::NAN, -1.0, -0.001, f64::INFINITY, f64::NEG_INFINITY, 1.85e13, 1e30] {
            let e = Time::checked_from_ns_f64(v, "link.propagation_ns").unwrap_err();
            assert!(e.starts_with("link.propagation_ns: "), "{e}");
            assert!(e.contains(&show(v)), "{e}");
        }
        let e = Time::checked_from_ns_f64(1e30, "x").unwrap_err();
        assert!(e.contains("1e30 ns") && e.contains("18446744073709 ns"), "{e}");
    }

    #[test]
    fn checked_from_us_refuses_what_does_not_fit() {
        assert!(Time::checked_from_us_f64(1.8e10, "k").is_ok());
        for v in [f64::NAN, -5.0, f64::INFINITY, 1.85e10, 1e30] {
            let e = Time::checked_from_us_f64(v, "faults.down_at_us").unwrap_err();
            assert!(e.starts_with("faults.down_at_us: ") && e.contains(" us "), "{e}");
        }
    }

    #[test]
    fn checked_add_refuses_overflow() {
        assert_eq!(Time(1).checked_add(Time(2)), Some(Time(3)));
        assert_eq!(Time::MAX.checked_add(Time(1)), None);
        let e = Time::MAX.checked_add_named(Time(1), "max_us").unwrap_err();
        assert!(e.starts_with("max_us: "), "{e}");
    }

    #[test]
    fn serialization_at_200g() {
        assert_eq!(serialization(1, 200_000_000_000), Time::from_fs(40_000));
        assert_eq!(serialization(1088, 200_000_000_000), Time::from_ps(43_520));
    }

    #[test]
    fn serialization_of_a_whole_message_does_not_overflow() {
        // 65,535 bytes and 64 headers: bits x fs/s is 5.6e20, past u64.
        assert_eq!(serialization(69_631, 200_000_000_000), Time::from_fs(69_631 * 40_000));
        assert_eq!(serialization(u64::MAX / 8, 1), Time::MAX);
    }
}
