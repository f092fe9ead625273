//! A setting's range or set of values, declared once and read twice: by the check that
//! refuses a value outside it (its error naming the key as the user wrote it) and by the
//! files' JSON Schemas, as `#[schemars(transform = BOUND.schema())]` on the key's field. So an
//! editor or any JSON Schema validator refuses what the simulator refuses (docs/config.md);
//! only the limits that depend on other keys (a timeout's round-trip floor, a time within
//! `max_us`, requests more than the warm-up) are the checks' alone.

use nanopu_sim::time::show;
use schemars::transform::Transform;
use schemars::Schema;
use serde_json::Value;

/// A number a key may give: its text in errors and its JSON value in schemas.
pub trait Num: Copy + PartialOrd + Into<Value> {
    fn shown(self) -> String;
}

macro_rules! whole {
    ($($t:ty),*) => {$(impl Num for $t { fn shown(self) -> String { self.to_string() } })*};
}
whole!(u8, u16, u32, u64, usize);

impl Num for f64 {
    /// Large and small values in exponent notation, as times are shown.
    fn shown(self) -> String {
        show(self)
    }
}

/// A numeric range; either end may be open (`min < v`, `v < max`). NaN is outside.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds<T> {
    pub min: T,
    pub max: T,
    pub min_open: bool,
    pub max_open: bool,
}

impl<T: Num> Bounds<T> {
    /// `min <= v <= max`.
    pub const fn closed(min: T, max: T) -> Self {
        Bounds { min, max, min_open: false, max_open: false }
    }

    /// `min < v <= max` ("more than 0 and at most ...").
    pub const fn above(min: T, max: T) -> Self {
        Bounds { min, max, min_open: true, max_open: false }
    }

    /// `min <= v < max` (a loss probability: less than 1).
    pub const fn below(min: T, max: T) -> Self {
        Bounds { min, max, min_open: false, max_open: true }
    }

    /// `min < v < max` (a Zipf skew).
    pub const fn open(min: T, max: T) -> Self {
        Bounds { min, max, min_open: true, max_open: true }
    }

    /// A copy to transform a schema with, `#[schemars(transform = X.schema())]` (a const
    /// cannot be borrowed mutably, as a transform is).
    pub const fn schema(self) -> Self {
        self
    }

    pub fn contains(&self, v: T) -> bool {
        let low = if self.min_open { v > self.min } else { v >= self.min };
        let high = if self.max_open { v < self.max } else { v <= self.max };
        low && high
    }

    /// `v` if it is in range, else an error naming `key` (`unit` follows the numbers).
    pub fn check(&self, v: T, key: &str, unit: &str) -> Result<T, String> {
        match self.contains(v) {
            true => Ok(v),
            false => Err(format!("{key}: {}{unit} is not {}", v.shown(), self.describe(unit))),
        }
    }

    /// The range in words: "within 1..=64", "more than 0 Mrps and at most 1e9 Mrps".
    pub fn describe(&self, unit: &str) -> String {
        let (lo, hi) = (self.min.shown(), self.max.shown());
        match (self.min_open, self.max_open) {
            (false, false) => format!("within {lo}..={hi}{unit}"),
            (true, false) => format!("more than {lo}{unit} and at most {hi}{unit}"),
            (false, true) => format!("at least {lo}{unit} and less than {hi}{unit}"),
            (true, true) => format!("more than {lo}{unit} and less than {hi}{unit}"),
        }
    }
}

impl<T: Num> Transform for Bounds<T> {
    /// The schema's `minimum`/`exclusiveMinimum` and `maximum`/`exclusiveMaximum`, replacing
    /// what the number's type gave (an unsigned integer's `minimum: 0`).
    fn transform(&mut self, s: &mut Schema) {
        ["minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"].iter().for_each(|k| {
            s.remove(*k);
        });
        let lo = if self.min_open { "exclusiveMinimum" } else { "minimum" };
        let hi = if self.max_open { "exclusiveMaximum" } else { "maximum" };
        s.insert(lo.into(), self.min.into());
        s.insert(hi.into(), self.max.into());
    }
}

/// The names a string key may take; an error lists them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OneOf(pub &'static [&'static str]);

impl OneOf {
    /// A copy to transform a schema with, as [`Bounds::schema`].
    pub const fn schema(self) -> Self {
        self
    }

    /// `v` if it is one of the names, else an error naming `key` and listing them.
    pub fn check<'a>(&self, v: &'a str, key: &str) -> Result<&'a str, String> {
        match self.0.contains(&v) {
            true => Ok(v),
            false => Err(format!("{key}: \"{v}\" is not {}", self.listed())),
        }
    }

    /// Where `v` is in the list (parsers map it to their own values), else the error of
    /// [`OneOf::check`].
    pub fn position(&self, v: &str, key: &str) -> Result<usize, String> {
        self.check(v, key)?;
        Ok(self.0.iter().position(|n| *n == v).expect("checked"))
    }

    /// "\"a\" or \"b\"", "\"a\", \"b\" or \"c\".
    pub fn listed(&self) -> String {
        let quoted: Vec<String> = self.0.iter().map(|n| format!("\"{n}\"")).collect();
        match quoted.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

impl Transform for OneOf {
    /// The schema's `enum`; null too where the key's type allows it (an absent key).
    fn transform(&mut self, s: &mut Schema) {
        let nullable = match s.get("type") {
            Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
            _ => false,
        };
        let mut names: Vec<Value> = self.0.iter().map(|n| Value::from(*n)).collect();
        if nullable {
            names.push(Value::Null);
        }
        s.insert("enum".into(), Value::Array(names));
    }
}

/// A bound on every element of an array key (`rates_mrps`, `band_bytes`, `value_bytes`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Each<B>(pub B);

impl<B: Transform> Transform for Each<B> {
    fn transform(&mut self, s: &mut Schema) {
        if let Some(items) = s.get_mut("items").and_then(|v| <&mut Schema>::try_from(v).ok()) {
            self.0.transform(items);
        }
    }
}

/// A key that is always refused (its check says what to write instead): the schema accepts
/// no value for it (`not: {}`), keeping its type for the reference page.
pub fn refused(s: &mut Schema) {
    s.insert("not".into(), Value::Object(Default::default()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_check_and_describe_their_ends() {
        let rate = Bounds::above(0.0, 1e9);
        assert_eq!(
            rate.check(-1.0, "load.rates_mrps", " Mrps").unwrap_err(),
            "load.rates_mrps: -1 Mrps is not more than 0 Mrps and at most 1000000000 Mrps"
        );
        assert!(rate.check(f64::NAN, "k", "").is_err() && rate.check(1e9, "k", "").is_ok());
        assert_eq!(
            Bounds::closed(1u32, 64).check(65, "node.cores", "").unwrap_err(),
            "node.cores: 65 is not within 1..=64"
        );
        assert!(!Bounds::below(0.0, 1.0).contains(1.0) && !Bounds::open(0.0, 1.0).contains(0.0));
    }

    #[test]
    fn names_are_listed_in_errors_and_schemas() {
        let mut t = OneOf(&["link", "crash", "partition"]);
        assert_eq!(
            t.check("tcp", "faults.kind").unwrap_err(),
            "faults.kind: \"tcp\" is not \"link\", \"crash\" or \"partition\""
        );
        let mut s = Schema::try_from(serde_json::json!({"type": ["string", "null"]})).unwrap();
        t.transform(&mut s);
        assert_eq!(s.get("enum").unwrap().as_array().unwrap().len(), 4, "null for an absent key");
    }
}
