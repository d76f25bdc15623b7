//! A task's view of a run: the URLs it reached (its documents, the targets
//! of their references, and its top) with its role for each, and its
//! documents' references (what `spinneret results` shows of a task; the
//! report stage reads all tasks at once, in `run_view`).

use super::{RESULT_COLUMNS, Store, StoreError, result_from_row};
use crate::db::params;
use spinneret_core::document::RefKind;
use spinneret_core::model::{Category, CheckResult};
use std::collections::HashMap;

impl Store {
    /// The URLs task `task` reached in `run`, in URL order, each with its
    /// URL id and the task's role for it (`document`, `leaf`, `avoided` or
    /// `not_checked`).
    pub fn task_results(
        &self,
        run: i64,
        task: i64,
    ) -> Result<Vec<(i64, CheckResult, &'static str)>, StoreError> {
        // Computed here rather than in one SQL statement: SQLite cannot index
        // a CTE over json_each, and the statement took minutes on 20k pages.
        let mut roles: HashMap<i64, &'static str> = HashMap::new();
        let docs = self.conn.query_vec(
            "SELECT url_id FROM task_documents WHERE run_id = ?1 AND task_id = ?2",
            params![run, task],
            |r| r.get::<_, i64>(0),
        )?;
        for id in docs {
            roles.insert(id, "document");
        }
        let docs: Vec<i64> = roles.keys().copied().collect();
        for doc in docs {
            for (target, _, _) in self.link_ids(doc)? {
                roles.entry(target).or_insert("leaf");
            }
        }
        if let Some(top) = self.task_top_id(task)? {
            roles.entry(top).or_insert("leaf");
        }
        let sql = format!(
            "SELECT {RESULT_COLUMNS} FROM results r
             JOIN urls u ON u.id = r.url_id LEFT JOIN urls ref ON ref.id = r.referrer_id
             WHERE r.run_id = ?1 AND r.url_id = ?2"
        );
        let mut out = Vec::with_capacity(roles.len());
        for (id, role) in roles {
            let result = self
                .conn
                .query_opt(&sql, params![run, id], |r| result_from_row(r, 0))?;
            let Some(result) = result else {
                continue;
            };
            let role = match (result.category, role) {
                (Category::Avoided, "leaf") => "avoided",
                (Category::NotChecked, "leaf") => "not_checked",
                (_, role) => role,
            };
            out.push((id, result, role));
        }
        out.sort_unstable_by(|a, b| a.1.url.cmp(&b.1.url));
        Ok(out)
    }

    /// The stored references of the document with URL id `doc`, as
    /// (target, kind, anchor text).
    pub fn document_links_by_id(
        &self,
        doc: i64,
    ) -> Result<Vec<(String, RefKind, String)>, StoreError> {
        let links = self.link_ids(doc)?;
        let mut targets: Vec<i64> = links.iter().map(|(t, _, _)| *t).collect();
        targets.sort_unstable();
        targets.dedup();
        let urls = self.urls_by_id(&targets)?;
        links
            .into_iter()
            .map(|(target, kind, text)| {
                // A document may refer to one URL twice (a link and an image).
                let target = urls.get(&target).cloned().ok_or_else(|| {
                    StoreError::Io(format!(
                        "the stored references of document #{doc} name URL #{target}, which the store lacks"
                    ))
                })?;
                let kind = RefKind::from_name(&kind).unwrap_or(RefKind::Link);
                Ok((target, kind, text))
            })
            .collect()
    }
}
