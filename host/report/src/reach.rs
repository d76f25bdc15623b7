//! What each task of a run reached, worked out once for all tasks: for
//! every URL, the tasks that reached it and their role; for every task, its
//! documents' numbers (their places in URL order) and its counts; and for
//! every URL of the run, what a reference to it says ([`UrlSummary`]).

use spinneret_plugin_host::bindings::host::types as wit;
use spinneret_plugin_host::reporter::{Role, Target, TaskCounts, to_wit_category};
use spinneret_store::{Store, StoreError, TaskRow, UrlSummary};
// Keyed by the store's URL ids (not chosen by a remote party): the fast hasher.
use foldhash::{HashMap, HashMapExt};

/// The tasks that reached one URL, with their roles (most URLs have one).
type Members = smallvec::SmallVec<[(u32, Role); 2]>;

/// What one task reached.
#[derive(Default)]
pub struct TaskReach {
    /// Its documents' numbers (1, 2, … in URL order), by URL id.
    pub numbers: HashMap<i64, u32>,
    /// URLs reached.
    pub urls: u64,
    /// References of its documents.
    pub references: u64,
    /// URLs per category and per role.
    by_category: Vec<(wit::Category, u64)>,
    by_role: Vec<(Role, u64)>,
}

impl TaskReach {
    /// Its counts for `begin`, with its findings per kind.
    pub fn counts(&self, findings: Vec<(String, u64)>) -> TaskCounts {
        TaskCounts {
            urls: self.urls,
            documents: self.numbers.len() as u64,
            references: self.references,
            by_category: self.by_category.clone(),
            by_role: self.by_role.clone(),
            findings,
        }
    }

    /// How much work its report is (to share tasks out among workers).
    pub fn weight(&self) -> u64 {
        self.urls + self.references
    }
}

/// What every task of a run reached.
pub struct Reach {
    /// Every URL with a result in the run, by id.
    pub urls: HashMap<i64, UrlSummary>,
    /// The titles of the tasks' documents, by URL id.
    titles: HashMap<i64, Option<Box<str>>>,
    members: HashMap<i64, Members>,
    /// Each task's part, in the order of `tasks` given to [`Reach::read`].
    pub tasks: Vec<TaskReach>,
}

fn bump<K: PartialEq>(counts: &mut Vec<(K, u64)>, key: K) {
    match counts.iter_mut().find(|(k, _)| *k == key) {
        Some((_, n)) => *n += 1,
        None => counts.push((key, 1)),
    }
}

impl Reach {
    /// Work out what each of `tasks` (rows of `run`) reached: its documents,
    /// the targets of their references, and its top.
    pub fn read(store: &Store, run: i64, tasks: &[&TaskRow]) -> Result<Reach, StoreError> {
        let urls = store.run_url_summaries(run)?;
        let index: HashMap<i64, u32> = tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id, i as u32))
            .collect();
        let mut documents: Vec<Vec<i64>> = vec![Vec::new(); tasks.len()];
        for (task, doc) in store.run_task_documents(run)? {
            if let Some(&t) = index.get(&task) {
                documents[t as usize].push(doc);
            }
        }
        let mut reach = Reach {
            urls,
            titles: HashMap::new(),
            members: HashMap::new(),
            tasks: Vec::with_capacity(tasks.len()),
        };
        // Every task's documents first (a document stays one, whatever
        // refers to it), numbered in URL order (a document without a result
        // is not reached).
        for (t, docs) in documents.iter_mut().enumerate() {
            let t = t as u32;
            let mut task = TaskReach::default();
            docs.retain(|d| reach.urls.contains_key(d));
            docs.sort_unstable_by(|a, b| reach.urls[a].url.cmp(&reach.urls[b].url));
            for (i, &doc) in docs.iter().enumerate() {
                task.numbers.insert(doc, i as u32 + 1);
                reach.join(doc, t, Role::Document);
            }
            reach.tasks.push(task);
        }
        // Then what they refer to, and the tasks' tops.
        store.scan_task_documents(run, |task, doc, title, targets| {
            let Some(&t) = index.get(&task) else {
                return;
            };
            if !reach.tasks[t as usize].numbers.contains_key(&doc) {
                return;
            }
            reach.titles.entry(doc).or_insert(title.map(Into::into));
            reach.tasks[t as usize].references += targets.len() as u64;
            for target in targets {
                reach.join(target, t, Role::Leaf);
            }
        })?;
        for (t, row) in tasks.iter().enumerate() {
            if let Some(top) = store.task_top_id(row.id)? {
                reach.join(top, t as u32, Role::Leaf);
            }
        }
        // Count, now that every role is known.
        for (id, members) in &reach.members {
            let category = to_wit_category(reach.urls[id].category);
            for &(t, role) in members {
                let task = &mut reach.tasks[t as usize];
                task.urls += 1;
                bump(&mut task.by_category, category);
                bump(&mut task.by_role, role);
            }
        }
        Ok(reach)
    }

    /// Task `t` reached URL `id` as `role`, unless it had it already (a
    /// document stays one). A URL without a result in the run is not
    /// reached; a leaf not requested takes the role that says why.
    fn join(&mut self, id: i64, t: u32, role: Role) {
        let Some(summary) = self.urls.get(&id) else {
            return;
        };
        let members = self.members.entry(id).or_default();
        if members.iter().any(|(x, _)| *x == t) {
            return;
        }
        let role = match (summary.category, role) {
            (spinneret_core::model::Category::Avoided, Role::Leaf) => Role::Avoided,
            (spinneret_core::model::Category::NotChecked, Role::Leaf) => Role::NotChecked,
            (_, role) => role,
        };
        members.push((t, role));
    }

    /// The URLs that one of the tasks `of` says yes to reached, in URL
    /// order (the order the report stage reads them in).
    pub fn reached_by(&self, of: impl Fn(u32) -> bool) -> Vec<i64> {
        let mut ids: Vec<(&str, i64)> = self
            .members
            .iter()
            .filter(|(_, m)| m.iter().any(|&(t, _)| of(t)))
            .filter_map(|(&id, _)| self.url(id).map(|u| (u, id)))
            .collect();
        ids.sort_unstable();
        ids.into_iter().map(|(_, id)| id).collect()
    }

    /// The tasks that reached URL `id`, with their roles.
    pub fn members(&self, id: i64) -> &[(u32, Role)] {
        self.members.get(&id).map_or(&[], |m| m.as_slice())
    }

    /// What task `t` is told of the target of a reference to URL `id`.
    pub fn target(&self, t: usize, id: i64) -> Target {
        let summary = self.urls.get(&id);
        let document = self.tasks[t].numbers.get(&id).copied();
        let detail = |moved: bool| {
            summary
                .filter(|s| (s.category == spinneret_core::model::Category::Moved) == moved)
                .and_then(|s| s.detail.as_deref().map(str::to_string))
        };
        Target {
            category: summary.map(|s| to_wit_category(s.category)),
            status: summary.and_then(|s| s.status),
            error: detail(false),
            final_url: detail(true),
            last_modified: summary.and_then(|s| s.last_modified.as_deref().map(str::to_string)),
            document,
            title: document
                .and_then(|_| self.titles.get(&id))
                .and_then(|t| t.as_deref().map(str::to_string)),
        }
    }

    /// The ids of those of `urls` the run has a result for.
    pub fn ids_of<'u>(
        &self,
        urls: impl IntoIterator<Item = &'u str>,
    ) -> std::collections::HashMap<&'u str, i64> {
        // Keyed by URLs, which the web chose: the keyed default hasher.
        let wanted: std::collections::HashSet<&str> = urls.into_iter().collect();
        if wanted.is_empty() {
            return std::collections::HashMap::new();
        }
        self.urls
            .iter()
            .filter_map(|(&id, s)| wanted.get(&*s.url).map(|&u| (u, id)))
            .collect()
    }

    /// The URL of id `id`, if the run has a result for it.
    pub fn url(&self, id: i64) -> Option<&str> {
        self.urls.get(&id).map(|s| &*s.url)
    }
}
