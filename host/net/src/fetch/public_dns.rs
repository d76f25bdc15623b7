//! The resolver of a fetcher that may reach only public addresses: a name
//! is looked up as usual, and the addresses of this machine or its network
//! ([`spinneret_core::urls::local_ip`]) are dropped; a name with no other
//! address is refused, saying so. Because the check is made on the
//! addresses the connection will use, a name that resolves to a public
//! address when a page is read and to a local one when its link is
//! followed (DNS rebinding) is refused too. Names given fixed addresses
//! (`--resolve`, `[resolve]`) are the user's own word and are not asked.

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::SocketAddr;

/// A resolver that gives only public addresses.
#[derive(Clone, Copy, Debug, Default)]
pub struct PublicOnly;

/// The address rule's refusal of `host` (which resolves to `address`,
/// when a name's lookup found it): what it is, and how the operator
/// allows it.
pub fn refusal(host: &str, address: Option<std::net::IpAddr>) -> String {
    let what = match address {
        Some(ip) => format!("{host} resolves to {ip}, "),
        None => format!("{host} is "),
    };
    format!(
        "not requested: {what}on this machine or its network, which a page from elsewhere may not reach (to check it, name it as a top, or its host in `internal_hosts`)"
    )
}

/// The address rule refused a name: every address it resolves to is of
/// this machine or its network. The resolver's error, found again in the
/// HTTP layer's error chain ([`local_address`]).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct LocalAddress(pub String);

/// The address rule's refusal inside `e`'s chain, if that is what failed.
pub fn local_address<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a LocalAddress> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(local) = err.downcast_ref::<LocalAddress>() {
            return Some(local);
        }
        cur = err.source();
    }
    None
}

/// Keep the public addresses of `name`'s `found` ones: an error naming
/// the first local one when none is public.
pub fn public_addresses(
    name: &str,
    found: Vec<SocketAddr>,
) -> Result<Vec<SocketAddr>, LocalAddress> {
    let (local, public): (Vec<SocketAddr>, Vec<SocketAddr>) = found
        .into_iter()
        .partition(|a| spinneret_core::urls::local_ip(a.ip()));
    match (public.is_empty(), local.first()) {
        (true, Some(l)) => Err(LocalAddress(refusal(name, Some(l.ip())))),
        _ => Ok(public),
    }
}

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let name = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            let public = public_addresses(&name, found)?;
            Ok(Box::new(public.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fetcher of `public_only` GETting `url`: the answer's status, or
    /// the error.
    fn get(public_only: bool, url: &str) -> Result<u16, String> {
        use crate::fetch::{BodyWanted, FetchRequest, FetchSettings, Fetcher, Method};
        let fetcher = Fetcher::new(&FetchSettings {
            user_agent: "spinneret-test".into(),
            from: None,
            accept: "*/*".into(),
            connect_timeout: std::time::Duration::from_secs(5),
            timeout: std::time::Duration::from_secs(5),
            idle_per_site: 1,
            resolve: Default::default(),
            max_body: 1024,
            public_only,
            requests: Vec::new(),
            root_dir: None,
            cookies: None,
            internal_hosts: Vec::new(),
            trust: Default::default(),
            offline: false,
            local_names: Default::default(),
        })
        .unwrap();
        let req = FetchRequest {
            url: url::Url::parse(url).unwrap(),
            method: Method::Get,
            referrer: None,
            validators: None,
            body: BodyWanted::Always(1024),
            extra_headers: Vec::new(),
            keep_headers: false,
            public_only: false,
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(fetcher.fetch(&req, 1024))
            .map(|r| r.status)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_public_only_fetcher_refuses_a_name_of_this_machine() {
        use std::io::{Read, Write};
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for mut conn in server.incoming().flatten() {
                let mut buf = [0u8; 1024];
                let _ = conn.read(&mut buf);
                let _ = conn.write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
            }
        });
        let url = format!("http://localhost:{port}/");
        assert_eq!(get(false, &url), Ok(204));
        let refused = get(true, &url).unwrap_err();
        assert!(refused == super::refusal("localhost", None), "{refused}");
    }

    #[test]
    fn local_addresses_are_dropped_and_a_name_with_no_other_is_refused() {
        let a = |s: &str| s.parse::<SocketAddr>().unwrap();
        assert_eq!(
            public_addresses(
                "mixed.example",
                vec![a("127.0.0.1:0"), a("93.184.215.14:0")]
            )
            .unwrap(),
            vec![a("93.184.215.14:0")]
        );
        assert_eq!(
            public_addresses("rebind.example", vec![a("[::ffff:10.0.0.7]:0")])
                .unwrap_err()
                .to_string(),
            "not requested: rebind.example resolves to ::ffff:10.0.0.7, on this machine or its network, which a page from elsewhere may not reach (to check it, name it as a top, or its host in `internal_hosts`)"
        );
    }
}
