//! A change detector that traps (panics) when it compares a URL containing
//! one of its `trap_on` texts, and otherwise finds each URL it compares
//! `seen`: the host must record the failure against that URL alone and keep
//! every other URL's findings, though it hands URLs over in batches. Each
//! finding's message says what it was handed: `compared`, or for a
//! document, `document with N references`; with `references = false` it
//! declares it does not need the references (they must come empty).

use spinneret_sdk::detector::*;

/// The detector.
pub struct TrapsOn {
    trap_on: Vec<String>,
    references: bool,
}

impl Detector for TrapsOn {
    fn configure(config: serde_json::Value) -> Result<Self, String> {
        let trap_on = spinneret_sdk::settings::strings("traps", &config, "trap_on")?;
        let references = config["references"].as_bool().unwrap_or(true);
        Ok(TrapsOn {
            trap_on,
            references,
        })
    }

    fn needs(&self) -> Needs {
        match self.references {
            true => Needs::REFERENCES,
            false => Needs::empty(),
        }
    }

    fn compare(
        &mut self,
        _task: &TaskInfo,
        _now: i64,
        _previous: Option<&Snapshot>,
        current: &Snapshot,
    ) -> Vec<Finding> {
        let url = &current.outcome.url;
        if self.trap_on.iter().any(|t| url.contains(t.as_str())) {
            panic!("this detector traps on {url} on purpose");
        }
        vec![Finding {
            kind: "seen".into(),
            url: url.clone(),
            referrer: None,
            message: match &current.document {
                Some(d) => format!("document with {} references", d.references.len()),
                None => "compared".into(),
            },
            severity: Severity::Info,
            source: String::new(),
        }]
    }
}

spinneret_sdk::export_detector!(TrapsOn);
