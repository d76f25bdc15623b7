//! The crawl's side of the plugins' `http` capability and of the stages
//! that fetch without the crawl's scheduler (the collector, the queries):
//! [`PoliteHttp`] is the network layer's polite path
//! ([`spinneret_net::Network`]) with the run's avoid rules, lent to plugins
//! whose grants name hosts. During a crawl it stands on the crawl's own
//! sites ([`PoliteHttp::beside`]): a plugin's request waits its site's turn
//! like the crawl's, and reads the site's robots.txt the crawl read.

use super::CrawlSettings;
use crate::policy::rules::PrefixRules;
use spinneret_net::network::{Ask, AvoidRule, NetError, Network, NetworkSettings};
use spinneret_net::sites::{GateSettings, Sites};
use spinneret_plugin_host::capabilities::{HostHttp, HttpAnswer};
use std::sync::Arc;
use std::time::Instant;
use url::Url;

/// The run's network, for callers without a scheduler of their own.
pub struct PoliteHttp {
    network: Arc<Network>,
    handle: tokio::runtime::Handle,
    per_site: usize,
    concurrency: usize,
}

/// The network settings of a crawl's settings.
pub fn network_settings(settings: &CrawlSettings) -> NetworkSettings {
    NetworkSettings {
        robot_name: settings.robot_name.clone(),
        robots_mode: settings.robots_rules,
        gates: GateSettings {
            per_site_connections: settings.per_site_connections.max(1),
            per_site_delay: settings.per_site_delay,
            max_crawl_delay: settings.max_crawl_delay,
        },
        retries: settings.retries,
        max_body: settings.fetch.max_body,
        max_retry_after: settings.max_retry_after,
        concurrency: settings.concurrency.max(1),
    }
}

impl PoliteHttp {
    /// The polite path of a crawl with these settings, on `handle`, with
    /// sites of its own.
    pub fn new(
        settings: &CrawlSettings,
        handle: tokio::runtime::Handle,
    ) -> Result<PoliteHttp, crate::CrawlError> {
        let sites = Sites::new(network_settings(settings).gates);
        PoliteHttp::beside(settings, handle, sites)
    }

    /// The polite path of a crawl with these settings, on `handle`, on the
    /// crawl's `sites`.
    pub fn beside(
        settings: &CrawlSettings,
        handle: tokio::runtime::Handle,
        sites: Arc<Sites>,
    ) -> Result<PoliteHttp, crate::CrawlError> {
        let (rules, _) =
            crate::policy::load_rules(&settings.rule_files, std::time::SystemTime::now())?;
        let rules: Arc<PrefixRules> = Arc::new(rules);
        let avoid: AvoidRule = Arc::new(move |u: &Url| crate::redirects::avoided_by(&rules, u));
        // A plugin's requests never carry the user's `[[request]]` headers,
        // credentials and cookies: those are for the crawl's own requests.
        let fetch = crate::fetch::FetchSettings {
            requests: Vec::new(),
            cookies: None,
            ..settings.fetch.clone()
        };
        let network = Network::beside(&fetch, network_settings(settings), Some(avoid), sites)?;
        Ok(PoliteHttp {
            network: Arc::new(network),
            handle,
            per_site: settings.per_site_connections.max(1),
            concurrency: settings.concurrency.max(1),
        })
    }

    /// The network itself, for async callers.
    pub fn network(&self) -> &Arc<Network> {
        &self.network
    }

    /// The runtime it fetches on.
    pub fn handle(&self) -> &tokio::runtime::Handle {
        &self.handle
    }

    /// GET `ask` politely from a thread that is not the runtime's (see
    /// [`Network::get`]).
    pub fn fetch(&self, ask: &Ask) -> Result<crate::fetch::FetchResponse, NetError> {
        self.handle.block_on(self.network.get(ask))
    }

    /// How many requests a caller running several at once may have in
    /// flight to one site (the settings' `per_site_connections`).
    pub fn per_site_connections(&self) -> usize {
        self.per_site
    }

    /// How many requests a caller may have in flight in all (the
    /// settings' `concurrency`).
    pub fn concurrency(&self) -> usize {
        self.concurrency
    }

    /// The headers every request of this fetcher carries besides those of
    /// the HTTP layer: `User-Agent` and `From` (when set).
    pub fn identity_headers(&self) -> Vec<(String, String)> {
        self.network.identity_headers()
    }
}

impl HostHttp for PoliteHttp {
    fn get(&self, url: &Url, deadline: Instant) -> Result<HttpAnswer, String> {
        let ask = Ask {
            deadline: Some(deadline),
            ..Ask::get(url.clone())
        };
        let resp = self.fetch(&ask).map_err(|e| e.to_string())?;
        let body = resp.body.unwrap_or_default();
        Ok(HttpAnswer {
            status: resp.status,
            content_type: resp.headers.content_type,
            location: resp.headers.location,
            truncated: body.truncated,
            body: body.bytes.into(),
        })
    }
}
