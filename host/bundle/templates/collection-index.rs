//! {name}: a spinneret collection index. It lists a WebSnatcher run's
//! pages, each linked to its local copy, under a heading of its own.
//!
//! Configuration: `heading` (the page's heading).

use spinneret_sdk::collection_index::*;
use spinneret_sdk::html::escape;
use spinneret_sdk::urls::relative_path;

/// The index's settings.
pub struct Plugin {
    heading: String,
}

impl CollectionIndex for Plugin {
    fn configure(config: serde_json::Value) -> Result<Self, String> {
        let heading = match config.get("heading") {
            None => "My collection".to_string(),
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => return Err(format!("{name}: `heading` must be a string, not {other}")),
        };
        Ok(Plugin { heading })
    }

    fn write_index(
        &mut self,
        run: &Collection,
        pages: &[MainPage],
        _gone: &[GonePage],
        paths: &[String],
        out: &mut dyn Output,
    ) -> Result<(), String> {
        // Each copy's links are relative to where it is written.
        for at in paths {
            let mut html = format!(
                "<!DOCTYPE html>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<h1>{}</h1>\n<p>{} pages from {}</p>\n<ul>\n",
                escape(&self.heading),
                escape(&self.heading),
                pages.len(),
                escape(&run.profile)
            );
            for p in pages {
                let title = escape(p.title.as_deref().unwrap_or(&p.url));
                match &p.local {
                    Some(local) => html.push_str(&format!(
                        "<li><a href=\"{}\">{title}</a> ({})</li>\n",
                        escape(&relative_path(at, local)),
                        p.change.as_str()
                    )),
                    None => html.push_str(&format!("<li>{title} (not retrieved)</li>\n")),
                }
            }
            html.push_str("</ul>\n");
            // Appended files replace the old index only when this succeeds.
            out.append(at, html.as_bytes())?;
        }
        Ok(())
    }
}

spinneret_sdk::export_collection_index!(Plugin);

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_sdk::testing::MemoryOutput;

    #[test]
    fn lists_the_pages_linked_from_each_copy() {
        let mut plugin = Plugin::configure(serde_json::json!({"heading": "Reading"})).unwrap();
        let run = Collection {
            id: 3,
            profile: "p.toml".into(),
            started_at: 0,
            warc: None,
            interests: vec![],
            host_version: "0.1.0".into(),
        };
        let page = MainPage {
            category: "URLs".into(),
            url: "https://a.example/".into(),
            title: Some("A & B".into()),
            local: Some("runs/0003/URLs/a.example/index.html".into()),
            bytes: 10,
            found_by: vec![],
            change: Change::New,
            findings: vec![],
            problem: None,
        };
        let mut out = MemoryOutput::default();
        let paths = ["index.html".to_string(), "runs/0003/index.html".to_string()];
        plugin.write_index(&run, &[page], &[], &paths, &mut out).unwrap();
        out.commit();
        assert!(out.text("index.html").unwrap().contains(
            "<li><a href=\"runs/0003/URLs/a.example/index.html\">A &amp; B</a> (new)</li>"
        ));
        assert!(out.text("runs/0003/index.html").unwrap().contains("href=\"URLs/a.example/index.html\""));
    }
}
