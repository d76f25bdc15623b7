//! Value types of the configuration that validate themselves while they are
//! deserialised, so that a bad value is reported at its own line and column.

use serde::{Deserialize, Deserializer, de};
use std::fmt;
use std::time::Duration;

/// A duration written as a human string (`"500ms"`, `"2s"`, `"7d"`) or as whole seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HumanDuration(pub Duration);

impl<'de> Deserialize<'de> for HumanDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = HumanDuration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a duration such as \"500ms\", \"30s\", \"6h\" or \"7d\", or whole seconds",
                )
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                u64::try_from(v)
                    .map(|s| HumanDuration(Duration::from_secs(s)))
                    .map_err(|_| E::custom("a duration cannot be negative"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                humantime::parse_duration(v.trim()).map(HumanDuration).map_err(|e| {
                    E::custom(format!(
                        "`{v}` is not a duration ({e}); write e.g. \"500ms\", \"30s\", \"6h\" or \"7d\""
                    ))
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// A byte size written as an integer or a string with a unit (`"10MiB"`, `"500KiB"`, `"2MB"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteSize(pub u64);

impl ByteSize {
    /// Parse `"10MiB"`, `"512 KiB"`, `"2MB"`, `"1024"`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let (num, unit) = s.split_at(split);
        let n: u64 = num
            .parse()
            .map_err(|_| format!("`{s}` is not a size; write e.g. 10MiB, 500KiB or 1048576"))?;
        let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kb" => 1_000,
            "kib" => 1 << 10,
            "m" | "mb" => 1_000_000,
            "mib" => 1 << 20,
            "g" | "gb" => 1_000_000_000,
            "gib" => 1 << 30,
            other => {
                return Err(format!(
                    "unknown size unit `{other}` in `{s}`; use B, KB, KiB, MB, MiB, GB or GiB"
                ));
            }
        };
        n.checked_mul(mult)
            .map(ByteSize)
            .ok_or_else(|| format!("`{s}` is too large"))
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = ByteSize;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as \"10MiB\" or a number of bytes")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                u64::try_from(v)
                    .map(ByteSize)
                    .map_err(|_| E::custom("a size cannot be negative"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                ByteSize::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A duration that must lie in `MIN_MS..=MAX_MS` milliseconds: a timeout
/// of zero or a delay of a million days is refused where it is written,
/// rather than making a crawl hang.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DurationIn<const MIN_MS: u64, const MAX_MS: u64>(pub Duration);

impl<const MIN_MS: u64, const MAX_MS: u64> DurationIn<MIN_MS, MAX_MS> {
    /// `v`, when it is in range.
    pub fn check(v: Duration) -> Result<Self, String> {
        let (min, max) = (Duration::from_millis(MIN_MS), Duration::from_millis(MAX_MS));
        if v < min || v > max {
            return Err(format!(
                "{} is out of range; expected from {} to {}",
                humantime::format_duration(v),
                humantime::format_duration(min),
                humantime::format_duration(max)
            ));
        }
        Ok(DurationIn(v))
    }

    /// A duration as written on a command line ("2s", "500ms", or whole
    /// seconds, "5", as a configuration takes them and lychee's and
    /// LinkChecker's `--timeout`), in range.
    pub fn parse(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if let Ok(secs) = t.parse::<u64>() {
            return Self::check(Duration::from_secs(secs));
        }
        let v = humantime::parse_duration(t).map_err(|e| {
            format!("`{s}` is not a duration ({e}); write e.g. \"2s\", \"500ms\" or whole seconds")
        })?;
        Self::check(v)
    }
}

impl<'de, const MIN_MS: u64, const MAX_MS: u64> Deserialize<'de> for DurationIn<MIN_MS, MAX_MS> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let HumanDuration(v) = HumanDuration::deserialize(d)?;
        Self::check(v).map_err(de::Error::custom)
    }
}

/// A byte size that must lie in `MIN..=MAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeIn<const MIN: u64, const MAX: u64>(pub u64);

impl<const MIN: u64, const MAX: u64> SizeIn<MIN, MAX> {
    /// `v` bytes, when it is in range.
    pub fn check(v: u64) -> Result<Self, String> {
        if !(MIN..=MAX).contains(&v) {
            return Err(format!(
                "{v} bytes is out of range; expected from {} to {}",
                human_size(MIN),
                human_size(MAX)
            ));
        }
        Ok(SizeIn(v))
    }

    /// A size as written on a command line ("50MiB", "1048576"), in range.
    pub fn parse(s: &str) -> Result<Self, String> {
        Self::check(ByteSize::parse(s)?.0)
    }
}

impl<'de, const MIN: u64, const MAX: u64> Deserialize<'de> for SizeIn<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let ByteSize(v) = ByteSize::deserialize(d)?;
        Self::check(v).map_err(de::Error::custom)
    }
}

/// A size in the largest binary unit that divides it: `10MiB`, `1500B`.
pub fn human_size(n: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if n >= 1 << shift && n.is_multiple_of(1 << shift) {
            return format!("{}{unit}", n >> shift);
        }
    }
    format!("{n}B")
}

/// Milliseconds in a second, a minute, an hour and a day, for the bounds.
pub mod ms {
    /// One second.
    pub const SECOND: u64 = 1000;
    /// One minute.
    pub const MINUTE: u64 = 60 * SECOND;
    /// One hour.
    pub const HOUR: u64 = 60 * MINUTE;
    /// One day.
    pub const DAY: u64 = 24 * HOUR;
}

/// A whole number that must lie in `MIN..=MAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounded<const MIN: u64, const MAX: u64>(pub u64);

impl<const MIN: u64, const MAX: u64> Bounded<MIN, MAX> {
    /// `v`, when it is in range.
    pub fn check(v: i64) -> Result<Self, String> {
        if v < MIN as i64 || v as u64 > MAX {
            return Err(format!(
                "{v} is out of range; expected a whole number from {MIN} to {MAX}"
            ));
        }
        Ok(Bounded(v as u64))
    }

    /// A number as written on a command line, in range.
    pub fn parse(s: &str) -> Result<Self, String> {
        let v = s
            .trim()
            .parse::<i64>()
            .map_err(|_| format!("`{s}` is not a whole number"))?;
        Self::check(v)
    }
}

impl<'de, const MIN: u64, const MAX: u64> Deserialize<'de> for Bounded<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::check(i64::deserialize(d)?).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command line takes what a configuration does: a duration with
    /// its unit, or whole seconds.
    #[test]
    fn a_command_lines_duration_is_a_unit_or_whole_seconds() {
        type Delay = DurationIn<0, { ms::HOUR }>;
        assert_eq!(Delay::parse("5").unwrap().0, Duration::from_secs(5));
        assert_eq!(
            Delay::parse(" 250ms ").unwrap().0,
            Duration::from_millis(250)
        );
        assert_eq!(
            Delay::parse("7200").unwrap_err(),
            "2h is out of range; expected from 0s to 1h"
        );
        assert!(
            Delay::parse("soon")
                .unwrap_err()
                .contains("or whole seconds")
        );
    }

    #[test]
    fn bounded_durations_and_sizes() {
        let d = |s: &str| toml::from_str::<toml::Table>(&format!("v = {s}")).unwrap()["v"].clone();
        let ok: DurationIn<100, { ms::HOUR }> = d("\"2s\"").try_into().unwrap();
        assert_eq!(ok.0, Duration::from_secs(2));
        for bad in ["\"0s\"", "\"99999999999999d\"", "\"2h\""] {
            let e = d(bad)
                .try_into::<DurationIn<100, { ms::HOUR }>>()
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("is out of range; expected from 100ms to 1h"),
                "{bad}: {e}"
            );
        }
        let e = d("\"0B\"")
            .try_into::<SizeIn<1024, { 1 << 30 }>>()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("0 bytes is out of range; expected from 1KiB to 1GiB"),
            "{e}"
        );
    }

    #[test]
    fn sizes_with_units() {
        assert_eq!(ByteSize::parse("10MiB").unwrap().0, 10 << 20);
        assert_eq!(ByteSize::parse("500 KiB").unwrap().0, 500 << 10);
        assert_eq!(ByteSize::parse("2MB").unwrap().0, 2_000_000);
        assert_eq!(ByteSize::parse("1024").unwrap().0, 1024);
        assert!(ByteSize::parse("ten").is_err());
        assert!(
            ByteSize::parse("5 parsecs")
                .unwrap_err()
                .contains("unknown size unit")
        );
    }
}
