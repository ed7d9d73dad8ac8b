//! CIDR host patterns of ACLs (KIP-1274, Kafka 4.4's `CidrUtils`): which host patterns are
//! ranges, their syntax check at CreateAcls, and whether a client address falls in one when
//! the authorizer matches hosts.
//!
//! ```text
//!   pattern ─ no '/' ─▶ a literal host (never a range)
//!           ─ has ':' ─▶ IPv6 "address/prefix" (prefix 0-128, checked first)
//!           ─ else    ─▶ IPv4 "a.b.c.d/n" (octets 0-255, n 0-32)
//! ```
//!
//! The syntax and the refusal texts are those of the commons-net `SubnetUtils` /
//! `SubnetUtils6` that Kafka 4.4.0 shades (checked by running them on each case tested here).

// `core::net`: address parsing only, no I/O (this layer stays sans-IO).
use core::net::Ipv6Addr;

/// Whether `pattern` is written as a range (Kafka calls it CIDR when it holds a `/`).
pub fn is_cidr(pattern: &str) -> bool {
    pattern.contains('/')
}

/// `CidrUtils.validate`: why `pattern` is not a valid range (the text after "Invalid CIDR
/// notation '…': ").
pub fn validate(pattern: &str) -> Result<(), String> {
    if pattern.contains(':') {
        ipv6_range(pattern).map(|_| ())
    } else {
        ipv4_range(pattern).map(|_| ())
    }
}

/// `CidrUtils.isInRange(address, pattern)`: whether the client `address` (as Java prints it)
/// is in the range `pattern`; false for a literal host, an invalid range or an address of the
/// other family. Both ends of a range are in it.
pub fn is_in_range(address: &str, pattern: &str) -> bool {
    if !is_cidr(pattern) {
        return false;
    }
    if pattern.contains(':') {
        let (Ok((network, prefix)), Ok(addr)) = (ipv6_range(pattern), ipv6_address(address)) else {
            return false;
        };
        let mask = if prefix == 0 {
            0
        } else {
            u128::MAX << (128 - prefix)
        };
        u128::from(addr) & mask == u128::from(network) & mask
    } else {
        let (Ok((network, bits)), Some(addr)) = (ipv4_range(pattern), ipv4_address(address)) else {
            return false;
        };
        let mask = if bits == 0 {
            0
        } else {
            u32::MAX << (32 - bits)
        };
        addr & mask == network & mask
    }
}

/// Java's `Integer.parseInt` of a decimal text (sign allowed).
fn java_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i32>().ok().map(i64::from)
}

/// `SubnetUtils6(cidr)`: the address and prefix of `address/prefix`, split at the first `/`.
fn ipv6_range(pattern: &str) -> Result<(Ipv6Addr, u32), String> {
    let (address, prefix) = pattern.split_once('/').unwrap_or((pattern, ""));
    let Some(prefix) = java_int(prefix) else {
        return Err(format!(
            "Could not parse [{pattern}] - invalid prefix length"
        ));
    };
    if !(0..=128).contains(&prefix) {
        return Err(format!(
            "Could not parse [{pattern}] - prefix length must be between 0 and 128"
        ));
    }
    let addr = ipv6_address(address)?;
    Ok((addr, prefix as u32))
}

/// Java's `InetAddress.getByName` of an IPv6 literal: brackets and a `%scope` allowed; an
/// IPv4-mapped address is an IPv4 address to Java.
fn ipv6_address(text: &str) -> Result<Ipv6Addr, String> {
    let bare = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(text);
    let bare = bare.split_once('%').map_or(bare, |(a, _)| a);
    match bare.parse::<Ipv6Addr>() {
        Ok(a) if a.to_ipv4_mapped().is_some() => {
            Err(format!("Could not parse [{text}] - not an IPv6 address"))
        }
        Ok(a) => Ok(a),
        Err(_) => Err(format!("Could not parse [{text}]")),
    }
}

/// The four octets of `a.b.c.d` (one to three digits each), unchecked.
fn octets(text: &str) -> Option<[i64; 4]> {
    let parts: Vec<&str> = text.split('.').collect();
    let [a, b, c, d] = parts.as_slice() else {
        return None;
    };
    let one = |p: &str| -> Option<i64> {
        if (1..=3).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()) {
            p.parse().ok()
        } else {
            None
        }
    };
    Some([one(a)?, one(b)?, one(c)?, one(d)?])
}

fn in_range(value: i64, max: i64) -> Result<i64, String> {
    if (0..=max).contains(&value) {
        Ok(value)
    } else {
        Err(format!("Value [{value}] not in range [0,{max}]"))
    }
}

/// `SubnetUtils(cidr)`: `a.b.c.d/n` with one or two digits of `n`, the octets checked
/// before `n`.
fn ipv4_range(pattern: &str) -> Result<(u32, u32), String> {
    let parse_error = || format!("Could not parse [{pattern}]");
    let (address, bits) = pattern.split_once('/').ok_or_else(parse_error)?;
    if !(1..=2).contains(&bits.len()) || !bits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(parse_error());
    }
    let o = octets(address).ok_or_else(parse_error)?;
    let mut addr: u32 = 0;
    for octet in o {
        addr = (addr << 8) | in_range(octet, 255)? as u32;
    }
    let bits = in_range(bits.parse().map_err(|_| parse_error())?, 32)?;
    Ok((addr, bits as u32))
}

/// A client address `a.b.c.d`, as `SubnetUtils.SubnetInfo.isInRange` reads it.
fn ipv4_address(text: &str) -> Option<u32> {
    let o = octets(text)?;
    o.iter().try_fold(0u32, |acc, &octet| {
        (0..=255)
            .contains(&octet)
            .then_some((acc << 8) | octet as u32)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `CidrUtils.validate` of Kafka 4.4.0 on each pattern (the refusals it printed).
    #[test]
    fn cidr_syntax_as_kafka_4_4() {
        for ok in [
            "10.0.0.0/8",
            "10.0.0.0/32",
            "10.0.0.0/0",
            "010.0.0.0/8",
            "2001:db8::/32",
            "2001:db8::/128",
            "2001:db8::/0",
            "2001:db8::/+32",
            "::1/128",
            "::1.2.3.4/120",
            "fe80::1%eth0/64",
            "[2001:db8::]/32",
        ] {
            assert_eq!(validate(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("10.0.0.0/33", "Value [33] not in range [0,32]"),
            ("256.0.0.0/8", "Value [256] not in range [0,255]"),
            ("256.0.0.0/33", "Value [256] not in range [0,255]"),
            ("10.0.0/8", "Could not parse [10.0.0/8]"),
            ("10.0.0.0/", "Could not parse [10.0.0.0/]"),
            ("/8", "Could not parse [/8]"),
            ("10.0.0.0/008", "Could not parse [10.0.0.0/008]"),
            ("10.0.0.0/8/9", "Could not parse [10.0.0.0/8/9]"),
            ("10.0.0.0/-1", "Could not parse [10.0.0.0/-1]"),
            ("10.0.0.0/+8", "Could not parse [10.0.0.0/+8]"),
            ("1.2.3.4/1a", "Could not parse [1.2.3.4/1a]"),
            (
                "2001:db8::/129",
                "Could not parse [2001:db8::/129] - prefix length must be between 0 and 128",
            ),
            (
                "2001:db8::/-1",
                "Could not parse [2001:db8::/-1] - prefix length must be between 0 and 128",
            ),
            (
                "2001:zz8::/129",
                "Could not parse [2001:zz8::/129] - prefix length must be between 0 and 128",
            ),
            (
                "2001:db8::/",
                "Could not parse [2001:db8::/] - invalid prefix length",
            ),
            (
                "2001:db8::/32/1",
                "Could not parse [2001:db8::/32/1] - invalid prefix length",
            ),
            ("2001:zz8::/32", "Could not parse [2001:zz8::]"),
            ("a:b/8", "Could not parse [a:b]"),
            (
                "::ffff:10.0.0.0/104",
                "Could not parse [::ffff:10.0.0.0] - not an IPv6 address",
            ),
        ] {
            assert_eq!(validate(bad), Err(why.to_string()), "{bad}");
        }
    }

    /// `CidrUtils.isInRange` of Kafka 4.4.0 (client address as `getHostAddress` prints it).
    #[test]
    fn cidr_matching_as_kafka_4_4() {
        for (address, pattern, want) in [
            ("10.1.2.3", "10.0.0.0/8", true),
            ("11.1.2.3", "10.0.0.0/8", false),
            ("10.0.0.0", "10.0.0.0/8", true),
            ("10.255.255.255", "10.0.0.0/8", true),
            ("10.0.0.1", "10.0.0.1/32", true),
            ("10.0.0.2", "10.0.0.1/32", false),
            ("1.2.3.4", "0.0.0.0/0", true),
            ("10.0.0.5", "10.0.0.7/30", true),
            ("2001:db8:0:0:0:0:0:1", "2001:db8::/32", true),
            ("2001:db9:0:0:0:0:0:1", "2001:db8::/32", false),
            ("2001:db8:0:0:0:0:0:1", "2001:DB8::/32", true),
            ("10.0.0.1", "2001:db8::/32", false),
            ("10.0.0.1", "2001:db8::/0", false),
            ("2001:db8:0:0:0:0:0:1", "10.0.0.0/8", false),
            ("0:0:0:0:0:0:0:1", "::1/128", true),
            ("0:0:0:0:0:0:0:1", "::1.2.3.4/0", true),
            ("2001:db8:0:0:0:0:0:1", "::/0", true),
            ("10.0.0.1", "10.0.0.1", false),
            ("10.0.0.1", "10.0.0.0/33", false),
            ("2001:db8:0:0:0:0:0:1", "2001:db8::/129", false),
        ] {
            assert_eq!(
                is_in_range(address, pattern),
                want,
                "{address} in {pattern}"
            );
        }
    }
}
