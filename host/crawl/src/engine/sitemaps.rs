//! The pages the sitemaps of the tops' sites list, traversed as further
//! tops of the `site` and `tree` tasks that hold them
//! (`CrawlOptions::sitemaps`): read once per site, beside the crawl, on
//! the network layer's polite path over the crawl's own sites (the
//! robots.txt the crawl reads, the site's turn).

use super::*;
use crate::sitemaps::{SitemapPages, discover};
use spinneret_core::model::TaskKind;
use spinneret_net::network::{AvoidRule, Network};

impl Engine<'_> {
    /// Start reading the sitemaps of the sites of the `site` and `tree`
    /// tasks' http and https tops, once a run, if it asks for them.
    pub(super) fn start_sitemaps(&mut self) {
        if !std::mem::take(&mut self.sitemaps_wanted) {
            return;
        }
        let mut by_site: Vec<(Url, Vec<usize>)> = Vec::new();
        for (t, task) in self.tasks.iter().enumerate() {
            let top = &self.frontier.get(task.top).url;
            if !matches!(task.scope.kind(), TaskKind::Site | TaskKind::Tree)
                || !matches!(top.scheme(), "http" | "https")
            {
                continue;
            }
            let key = urls::site_key(top);
            match by_site.iter_mut().find(|(u, _)| urls::site_key(u) == key) {
                Some((_, tasks)) => tasks.push(t),
                None => by_site.push((top.clone(), vec![t])),
            }
        }
        if by_site.is_empty() {
            return;
        }
        let network = match self.sitemap_network() {
            Ok(n) => Arc::new(n),
            Err(e) => {
                tracing::warn!("the sitemaps are not read: {e}");
                return;
            }
        };
        let max_body = self.settings.fetch.max_body;
        for (top, tasks) in by_site {
            let network = network.clone();
            // Sent when dropped: a reading that panics still ends.
            let mut reply = worker::Reply::new(
                self.tx.clone(),
                Completion::Sitemaps {
                    tasks,
                    found: Box::default(),
                },
            );
            self.in_flight += 1;
            tokio::spawn(async move {
                let read = discover(&network, &top, max_body).await;
                if let Completion::Sitemaps { found, .. } = reply.completion() {
                    **found = read;
                }
            });
        }
    }

    /// The polite path the sitemaps are read on: the crawl's sites, its
    /// request settings and its avoid rules.
    fn sitemap_network(&self) -> Result<Network, CrawlError> {
        let (rules, _) = crate::policy::load_rules(&self.settings.rule_files, SystemTime::now())?;
        let rules = Arc::new(rules);
        let avoid: AvoidRule = Arc::new(move |u: &Url| crate::redirects::avoided_by(&rules, u));
        Ok(Network::beside(
            &self.settings.fetch,
            crate::plugin_http::network_settings(&self.settings),
            Some(avoid),
            self.sites.shared().clone(),
        )?)
    }

    /// The sitemaps of `tasks`' site listed `found`: each page a task's
    /// scope holds becomes a further top of it, reached now.
    pub(super) fn sitemaps_found(&mut self, tasks: &[usize], found: SitemapPages) {
        self.requests += found.requests;
        for note in &found.notes {
            tracing::warn!("{note}");
        }
        for &t in tasks {
            let mut new = Vec::new();
            for page in &found.pages {
                if !self.tasks[t].scope.may_contain(page) {
                    continue;
                }
                let u = self.intern(page.clone());
                if !self.tasks[t].is_top(u) {
                    new.push(u);
                }
            }
            if !new.is_empty() {
                tracing::info!(
                    "{}: {} listed in its site's sitemaps {} checked too",
                    self.stats[t].name,
                    match new.len() {
                        1 => "1 page".to_string(),
                        n => format!("{n} pages"),
                    },
                    if new.len() == 1 { "is" } else { "are" }
                );
            }
            let task = &mut self.tasks[t];
            task.more_tops.extend(&new);
            task.more_tops.sort_unstable();
            task.more_tops.dedup();
            for u in new {
                self.reach(t, u, RefKind::Anchor, None);
            }
        }
    }
}
