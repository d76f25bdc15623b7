//! {name}: a spinneret reporter. It counts the URLs of each task by
//! category and writes `{file}.txt` into the task's output directory.
//!
//! Configuration: `heading` (the first line of the file).

use spinneret_sdk::reporter::*;
use std::collections::BTreeMap;

/// The reporter's settings and one task's counts.
pub struct Plugin {
    heading: String,
    task: String,
    counts: BTreeMap<String, u64>,
}

impl Reporter for Plugin {
    fn configure(config: serde_json::Value) -> Result<Self, String> {
        let heading = match config.get("heading") {
            None => "URLs by category".to_string(),
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => return Err(format!("{name}: `heading` must be a string, not {other}")),
        };
        Ok(Plugin { heading, task: String::new(), counts: BTreeMap::new() })
    }

    fn begin(
        &mut self,
        _run: RunInfo,
        task: TaskInfo,
        _counts: TaskCounts,
        _out: &mut dyn Output,
    ) -> Result<(), String> {
        self.task = task.name;
        self.counts.clear();
        Ok(())
    }

    // Each call may write as it goes (`out.append`); this one only counts.
    fn on_result(&mut self, outcome: CheckResult, _role: Role, _out: &mut dyn Output) -> Result<(), String> {
        let category = match outcome.category {
            Category::Ok => "ok",
            Category::Moved => "moved",
            Category::Broken => "broken",
            Category::Blocked => "blocked",
            Category::Avoided => "avoided",
            Category::NotChecked => "not checked",
        };
        *self.counts.entry(category.to_string()).or_default() += 1;
        Ok(())
    }

    fn finish(&mut self, out: &mut dyn Output) -> Result<(), String> {
        let mut text = format!("{} ({})\n", self.heading, self.task);
        for (category, n) in &self.counts {
            text.push_str(&format!("{category}: {n}\n"));
        }
        out.write("{file}.txt", text.as_bytes())
    }
}

spinneret_sdk::export_reporter!(Plugin);

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_sdk::testing::{ReporterHarness, fixtures};

    #[test]
    fn counts_urls_by_category() {
        let mut h = ReporterHarness::<Plugin>::new(r#"{"heading": "Links"}"#).unwrap();
        h.run_task(
            fixtures::run(0),
            fixtures::task("T", "http://a.example/"),
            vec![
                (fixtures::result("http://a.example/", Category::Ok), Role::Document),
                (fixtures::result("http://a.example/x", Category::Broken), Role::Leaf),
                (fixtures::result("http://a.example/y", Category::Broken), Role::Leaf),
            ],
            vec![],
            vec![],
        )
        .unwrap();
        assert_eq!(h.output.text("{file}.txt").unwrap(), "Links (T)\nbroken: 2\nok: 1\n");
    }
}
