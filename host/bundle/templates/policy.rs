//! {name}: a spinneret policy. It tests URLs with the configured file
//! extensions as leaves (HEAD only) instead of traversing them, and avoids
//! URLs on the configured hosts.
//!
//! Configuration: `leaf_extensions` (a list, e.g. [".php"]), `avoid_hosts`
//! (a list of host names).

use spinneret_sdk::policy::*;
use spinneret_sdk::urls;

/// The policy's settings.
pub struct Plugin {
    leaf_extensions: Vec<String>,
    avoid_hosts: Vec<String>,
}

/// A list-of-strings setting, lowercased (none when absent).
fn strings(config: &serde_json::Value, key: &str) -> Result<Vec<String>, String> {
    let list = spinneret_sdk::settings::strings("{name}", config, key)?;
    Ok(list.iter().map(|s| s.to_lowercase()).collect())
}

impl Policy for Plugin {
    fn configure(config: serde_json::Value) -> Result<Self, String> {
        Ok(Plugin {
            leaf_extensions: strings(&config, "leaf_extensions")?,
            avoid_hosts: strings(&config, "avoid_hosts")?,
        })
    }

    /// It judges the URL alone, never the task, referrer or depth: the host
    /// then asks once per URL for the whole run. Return the parts you read
    /// (e.g. `ContextUse::DEPTH`) if `decide` looks at the context.
    fn context_use(&self) -> ContextUse {
        ContextUse::empty()
    }

    fn decide(&mut self, candidate: &Candidate, _context: &Context) -> Decision {
        let target = candidate.target.as_str();
        if let Some(host) = urls::host(target)
            && self.avoid_hosts.contains(&host)
        {
            return Decision::Avoid(format!("{host} is not maintained here"));
        }
        let path = urls::Url::parse(target).map(|u| u.path().to_lowercase()).unwrap_or_default();
        match self.leaf_extensions.iter().find(|e| path.ends_with(e.as_str())) {
            Some(e) => Decision::Leaf(format!("{e} pages are tested, not traversed")),
            None => Decision::NoObjection,
        }
    }
}

spinneret_sdk::export_policy!(Plugin);

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_sdk::testing::fixtures;

    #[test]
    fn leaves_and_avoids() {
        let mut p = Plugin::configure(serde_json::json!({
            "leaf_extensions": [".php"],
            "avoid_hosts": ["ads.example"]
        }))
        .unwrap();
        let cx = fixtures::context(1);
        let mut decide = |url| p.decide(&fixtures::candidate(url), &cx);
        assert!(matches!(decide("http://a.example/x.PHP"), Decision::Leaf(_)));
        assert!(matches!(decide("http://ads.example/"), Decision::Avoid(_)));
        assert!(matches!(decide("http://a.example/x.html"), Decision::NoObjection));
        assert_eq!(p.context_use(), ContextUse::empty());
    }
}
