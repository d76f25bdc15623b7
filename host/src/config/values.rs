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

/// A whole number that must lie in `MIN..=MAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounded<const MIN: u64, const MAX: u64>(pub u64);

impl<'de, const MIN: u64, const MAX: u64> Deserialize<'de> for Bounded<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = i64::deserialize(d)?;
        if v < MIN as i64 || v as u64 > MAX {
            return Err(de::Error::custom(format!(
                "{v} is out of range; expected a whole number from {MIN} to {MAX}"
            )));
        }
        Ok(Bounded(v as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
