//! Who a client of a server of ours is, as its limits count them.

/// Who `ip` is, as `serve` counts clients (connections, posts, wrong
/// passwords): an IPv4 address (an IPv4-mapped IPv6 one as that), or an
/// IPv6 address's /64 (one machine is given a whole /64 to pick
/// addresses from: counting each apart would let it go without bound).
pub fn client_of(ip: std::net::IpAddr) -> std::net::IpAddr {
    match ip {
        std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.into(),
            None => {
                let s = v6.segments();
                std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0).into()
            }
        },
        v4 => v4,
    }
}
