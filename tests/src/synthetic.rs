//! The benchmark's synthetic web: `pages` pages spread over `sites` sites
//! (`s0.bench`, `s1.bench`, …), about 20 references a page, generated on
//! request from the page number so the server holds nothing.
//!
//! Page `i` lives on site `i % sites` at `/p/{i}.html` and refers to:
//! the next page of its site (`i + sites`, so one `site` task per site reaches
//! all of its pages), 13 pseudo-random pages of its own site and 2 on any
//! site (so a task of 1,000 pages reaches about 4,000 URLs), one redirect
//! (`/r/{j}` → `/p/{j}.html`), one broken page (`/missing/{n}.html`), one image,
//! its site's stylesheet (`/style/site.css`, which refers to a background
//! image), and one URL its site's robots.txt disallows (`/private/…`); and, with
//! `leaves` above 0, that many links to leaves of its own (`/l/{i}/{k}`,
//! each a small text file), for tasks of many URLs.
//!
//! The web can be edited ([`Shape::web_with_edition`]): at edition `e` above
//! 0, a tenth of each site's pages (every tenth of its pages) have a title and
//! a first anchor text that name the edition, as a site's pages change
//! between two maintenance runs.

use crate::server::{Route, Site, Web};
use std::fmt::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The shape of a synthetic web.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Pages in all.
    pub pages: u64,
    /// Sites.
    pub sites: u64,
    /// Extra links per page to leaves of its own.
    pub leaves: u64,
}

impl Shape {
    /// The host name of site `s`.
    pub fn host(s: u64) -> String {
        format!("s{s}.bench")
    }

    /// Whether page `i` reads differently at an edition above 0.
    pub fn edited(&self, i: u64) -> bool {
        (i / self.sites).is_multiple_of(10)
    }

    /// The HTML of page `i` (at edition 0).
    pub fn page(&self, i: u64, port: u16) -> String {
        self.page_of_edition(i, port, 0)
    }

    /// The HTML of page `i` at `edition`.
    pub fn page_of_edition(&self, i: u64, port: u16, edition: u64) -> String {
        let n = self.pages;
        let s = self.sites;
        let changes = if edition > 0 && self.edited(i) {
            format!(", edition {edition}")
        } else {
            String::new()
        };
        let mut html = String::with_capacity(2048);
        let _ = write!(
            html,
            "<!DOCTYPE html><html><head><title>Page {i}{changes}</title><link rel=\"stylesheet\" href=\"/style/site.css\"></head><body><h1>Page {i}</h1><ul>"
        );
        let next = (i + s) % n;
        let _ = write!(
            html,
            "<li><a href=\"http://{}:{port}/p/{next}.html\">next {next}{changes}</a></li>",
            Shape::host(next % s)
        );
        // 13 pseudo-random pages of its own site, 2 on any site: a site task
        // reaches its own pages within a few levels and about 4,000 URLs
        // when each site has 1,000 pages.
        let site = i % s;
        let on_site = (n - site).div_ceil(s);
        for k in 0..15u64 {
            let pick = (i / s).wrapping_mul(31) + k * 977 + 1;
            let j = if k < 13 {
                site + s * (pick % on_site)
            } else {
                (i.wrapping_mul(31) + k * 977 + 1) % n
            };
            let _ = write!(
                html,
                "<li><a href=\"http://{}:{port}/p/{j}.html\">page {j}</a></li>",
                Shape::host(j % s)
            );
        }
        let r = (i * 17 + 3) % n;
        let _ = write!(html, "<li><a href=\"/r/{r}\">moved {r}</a></li>");
        let _ = write!(
            html,
            "<li><a href=\"/missing/{}.html\">broken</a></li>",
            i % 500
        );
        let _ = write!(
            html,
            "<li><a href=\"/private/{}.html\">private</a></li>",
            i % 50
        );
        for k in 0..self.leaves {
            let _ = write!(html, "<li><a href=\"/l/{i}/{k}\">leaf {k}</a></li>");
        }
        let _ = write!(
            html,
            "</ul><img src=\"/img/{}.png\" alt=\"figure\">",
            i % 100
        );
        html.push_str("<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p></body></html>");
        html
    }

    /// The web, for a server on `port`.
    pub fn web(&self, port_hint: Arc<std::sync::OnceLock<u16>>) -> Web {
        self.web_with_edition(port_hint, Arc::new(AtomicU64::new(0)))
    }

    /// The web, for a server on `port`, its pages as they read at the
    /// current value of `edition`.
    pub fn web_with_edition(
        &self,
        port_hint: Arc<std::sync::OnceLock<u16>>,
        edition: Arc<AtomicU64>,
    ) -> Web {
        self.web_answering_after(port_hint, edition, std::time::Duration::ZERO)
    }

    /// The web, each of its pages answered after `delay` (a web slow
    /// enough to stop a crawl halfway through).
    pub fn slow_web(
        &self,
        port_hint: Arc<std::sync::OnceLock<u16>>,
        delay: std::time::Duration,
    ) -> Web {
        self.web_answering_after(port_hint, Arc::new(AtomicU64::new(0)), delay)
    }

    fn web_answering_after(
        &self,
        port_hint: Arc<std::sync::OnceLock<u16>>,
        edition: Arc<AtomicU64>,
        delay: std::time::Duration,
    ) -> Web {
        let mut web = Web::new();
        for s in 0..self.sites {
            let shape = *self;
            let port = port_hint.clone();
            let edition = edition.clone();
            let site = Site::new()
                .robots("User-agent: *\nDisallow: /private/\n")
                .generated(Arc::new(move |path: &str| {
                    let port = *port.get()?;
                    if let Some(i) = path
                        .strip_prefix("/p/")
                        .and_then(|p| p.strip_suffix(".html"))
                    {
                        let i: u64 = i.parse().ok()?;
                        return (i < shape.pages && i % shape.sites == s).then(|| {
                            let e = edition.load(Ordering::Relaxed);
                            let page = Route::html(shape.page_of_edition(i, port, e));
                            match delay.is_zero() {
                                true => page,
                                false => Route::Delay(delay, Box::new(page)),
                            }
                        });
                    }
                    if let Some(j) = path.strip_prefix("/r/") {
                        let j: u64 = j.parse().ok()?;
                        let host = Shape::host(j % shape.sites);
                        return Some(Route::redirect(
                            301,
                            &format!("http://{host}:{port}/p/{j}.html"),
                        ));
                    }
                    if path == "/style/site.css" {
                        return Some(Route::file(
                            "text/css",
                            &b"body { font-family: serif; background: url(../img/bg.png) }\n"[..],
                        ));
                    }
                    if path.starts_with("/img/") {
                        return Some(Route::file("image/png", &b"\x89PNG\r\n\x1a\n"[..]));
                    }
                    if path.starts_with("/l/") {
                        return Some(Route::file("text/plain", &b"leaf\n"[..]));
                    }
                    None
                }));
            web = web.site(&Shape::host(s), site);
        }
        web
    }

    /// The tasks of the benchmark: one `site` task per site, from its first
    /// page. With `reports` false the default report plugins are off, so the
    /// figure is the crawl's hot path (fetch, parse, store) alone.
    pub fn tasks_toml(&self, port: u16, reports: bool) -> String {
        (0..self.sites.min(self.pages))
            .map(|s| Shape::task_toml(s, port, reports))
            .collect()
    }

    /// The task of site `s` alone (see [`Shape::tasks_toml`]).
    pub fn task_toml(s: u64, port: u16, reports: bool) -> String {
        format!(
            "[[task]]\nname = \"site{s}\"\nkind = \"site\"\ntop = \"http://{}:{port}/p/{s}.html\"\ndefault_plugins = {reports}\n\n",
            Shape::host(s)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_have_about_twenty_references() {
        let shape = Shape {
            pages: 1000,
            sites: 10,
            leaves: 0,
        };
        let html = shape.page(7, 8080);
        assert_eq!(
            html.matches("href=").count() + html.matches("src=").count(),
            21,
            "16 pages, a redirect, a broken link, a private one, an image, a stylesheet"
        );
        assert!(html.contains("http://s7.bench:8080/p/17.html"));
    }

    /// The scenario: 20,000 pages over 20 sites, each site task
    /// reaching about 4,000 URLs (its 1,000 pages and what they refer to).
    #[test]
    fn a_site_task_of_a_thousand_pages_reaches_about_four_thousand_urls() {
        let shape = Shape {
            pages: 20_000,
            sites: 20,
            leaves: 0,
        };
        for site in [0u64, 7] {
            let mut urls = std::collections::HashSet::new();
            for i in (site..shape.pages).step_by(20) {
                let html = shape.page(i, 80);
                for part in html.split(['"']).skip(1).step_by(2) {
                    if part.starts_with("http://") || part.starts_with('/') {
                        urls.insert(if part.starts_with('/') {
                            format!("http://{}:80{part}", Shape::host(site))
                        } else {
                            part.to_string()
                        });
                    }
                }
            }
            let own = urls
                .iter()
                .filter(|u| u.starts_with(&format!("http://{}:80/p/", Shape::host(site))))
                .count();
            assert_eq!(own, 1000, "site {site} refers to all of its pages");
            assert!(
                (3500..4500).contains(&urls.len()),
                "site {site} reaches {} URLs",
                urls.len()
            );
        }
    }
}
