//! What the plugins are told about one task: its results with their roles,
//! its documents, and the run and task records.

use crate::config::TaskConfig;
use crate::model::CheckResult;
use crate::plugin::bindings::host::types as wit;
use crate::plugin::reporter::{task_info, to_wit_kind};
use crate::store::{RunResults, Store, StoreError};
use std::collections::HashMap;

/// A task's view of a run, read from the store.
pub struct TaskData {
    /// The task's record for plugins.
    pub info: wit::TaskInfo,
    /// Every URL the task reached, with its role, in URL order.
    pub results: Vec<(CheckResult, Option<String>)>,
    /// The task's documents, in URL order.
    pub documents: Vec<wit::Document>,
    /// What the run before saw of each URL of `results` (same order).
    pub previous: Vec<Option<CheckResult>>,
}

/// What the runs before saw of URLs, read once for all tasks (the tasks of
/// a run share many URLs: on a web of cross-linked sites, each URL is
/// reached by several tasks).
pub type PreviousResults = HashMap<String, Option<CheckResult>>;

/// Read what task `task_id` of `run` reached, taking the run's results from
/// `known` (read once for all tasks).
pub fn load(
    store: &Store,
    run: i64,
    task_id: i64,
    task: &TaskConfig,
    known: &RunResults,
    seen_before: &mut PreviousResults,
) -> Result<TaskData, StoreError> {
    let reached = store.task_results(run, task_id, Some(known))?;
    let mut documents = Vec::new();
    for (id, r, role) in &reached {
        if *role != "document" {
            continue;
        }
        let Some(doc) = store.document_by_id(*id)? else {
            continue;
        };
        let references = store
            .document_links_by_id(*id, Some(known))?
            .into_iter()
            .map(|(target, kind, text)| wit::Reference {
                target,
                kind: to_wit_kind(kind),
                anchor_text: text,
            })
            .collect();
        documents.push(wit::Document {
            url: r.url.clone(),
            title: doc.title,
            owner: doc.owner,
            expires: doc.expires,
            parse_errors: doc.parse_errors,
            references,
        });
    }
    let results: Vec<(CheckResult, Option<String>)> = reached
        .into_iter()
        .map(|(_, r, role)| (r, Some(role.to_string())))
        .collect();
    let previous = results
        .iter()
        .map(|(r, _)| match seen_before.get(&r.url) {
            Some(p) => Ok(p.clone()),
            None => {
                let p = store.previous_result(&r.url, run)?;
                seen_before.insert(r.url.clone(), p.clone());
                Ok(p)
            }
        })
        .collect::<Result<_, StoreError>>()?;
    Ok(TaskData {
        info: task_info(task),
        results,
        documents,
        previous,
    })
}
