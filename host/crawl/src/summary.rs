//! Per-task counts at the end of a crawl, and their table for the terminal.

use super::classify::Role;
use serde::Serialize;
use spinneret_core::model::Category;

/// What one task found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TaskSummary {
    /// The task's name.
    pub name: String,
    /// Documents of the infostructure (fetched, HTML, in scope).
    pub documents: u64,
    /// Unique references made by those documents.
    pub references: u64,
    /// URLs reached that work.
    pub ok: u64,
    /// URLs reached that are broken (invalid references included).
    pub broken: u64,
    /// URLs reached that redirect.
    pub moved: u64,
    /// URLs reached whose server refused the robot (401, 403, 429).
    pub blocked: u64,
    /// URLs not requested because robots.txt or an avoid rule forbids it.
    pub avoided: u64,
    /// URLs tested with HEAD only.
    pub leafed: u64,
    /// References not checked (other schemes, forms).
    pub not_checked: u64,
    /// The bounds the task reached (`max_depth`, `max_documents`), each
    /// with the least (in URL order) of the documents it turned into
    /// leaves, so that a run says the same each time.
    pub bounds_hit: Vec<String>,
}

impl TaskSummary {
    /// Count one URL the task reached, by its role and category.
    pub fn count(&mut self, role: Role, category: Category) {
        match role {
            Role::Document => self.documents += 1,
            Role::Leaf => self.leafed += 1,
            Role::Unrequested => {}
        }
        match category {
            Category::Ok => self.ok += 1,
            Category::Moved => self.moved += 1,
            Category::Broken => self.broken += 1,
            Category::Blocked => self.blocked += 1,
            Category::Avoided => self.avoided += 1,
            Category::NotChecked => self.not_checked += 1,
        }
    }
}

/// The summary table, one row per task.
pub fn print_summary(tasks: &[TaskSummary]) -> String {
    let mut out = String::new();
    let width = tasks.iter().map(|t| t.name.len()).max().unwrap_or(4).max(4);
    out.push_str(&format!(
        "{:<width$}  {:>9} {:>10} {:>7} {:>6} {:>7} {:>7} {:>7} {:>11}\n",
        "task",
        "documents",
        "references",
        "broken",
        "moved",
        "blocked",
        "avoided",
        "leafed",
        "not checked"
    ));
    for t in tasks {
        out.push_str(&format!(
            "{:<width$}  {:>9} {:>10} {:>7} {:>6} {:>7} {:>7} {:>7} {:>11}\n",
            t.name,
            t.documents,
            t.references,
            t.broken,
            t.moved,
            t.blocked,
            t.avoided,
            t.leafed,
            t.not_checked
        ));
    }
    for t in tasks {
        for hit in &t.bounds_hit {
            out.push_str(&format!("{}: {hit}\n", t.name));
        }
    }
    out
}
