//! `collect` on the crawl's engine and network layer: one robots.txt fetch
//! per site, Crawl-delay, fetch hooks, the address rule on every hop, the
//! requisites cap, and a failed run that keeps the last good copy.
