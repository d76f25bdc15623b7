//! What the run has decided about each (task, URL) beyond the host's own
//! rules: the policy plugins' objections, each traversed document's depth,
//! and the task's bounds (`max_depth`, `max_documents`) that turn a
//! document candidate into a leaf.

use super::TaskBounds;
use super::frontier::UrlIdx;
use super::taskset::TaskSet;
use crate::policy::Decision;
use foldhash::{HashMap, HashMapExt};

/// The policies' verdicts and the documents' depths.
pub(crate) struct Verdicts {
    /// The policies' objection per (task, URL), where they made one.
    objections: HashMap<(u32, UrlIdx), Decision>,
    /// Whether every policy judges URLs alone (no part of their context):
    /// each URL is then asked about once for all tasks, its verdict kept
    /// under task 0.
    per_url: bool,
    /// Each traversed document's depth by task: links from the task's top
    /// at which it was first reached.
    depths: HashMap<(u32, UrlIdx), u32>,
    /// Whether some policy reads depths (declares `depth`).
    track_depths: bool,
}

impl Verdicts {
    /// No verdict yet. `per_url`: the policies judge URLs alone;
    /// `track_depths`: some policy reads depths.
    pub(crate) fn new(per_url: bool, track_depths: bool) -> Self {
        Verdicts {
            objections: HashMap::new(),
            per_url,
            depths: HashMap::new(),
            track_depths,
        }
    }

    /// Where the verdict on `u` for task `t` is kept.
    fn key(&self, t: usize, u: UrlIdx) -> (u32, UrlIdx) {
        match self.per_url {
            true => (0, u),
            false => (t as u32, u),
        }
    }

    /// Whether the policies were asked about `u` for task `t` (for any
    /// task, when they judge URLs alone); `asked` is `u`'s record of it.
    pub(crate) fn asked(&self, asked: &TaskSet, t: usize) -> bool {
        match self.per_url {
            true => !asked.is_empty(),
            false => asked.contains(t),
        }
    }

    /// Keep the policies' verdict on `u` for task `t`, unless one was kept
    /// meanwhile (asked for another reference): it stands.
    pub(crate) fn note(
        &mut self,
        asked: &mut TaskSet,
        t: usize,
        u: UrlIdx,
        verdict: Option<Decision>,
    ) {
        if self.asked(asked, t) {
            return;
        }
        asked.insert(t);
        if let Some(v) = verdict {
            let key = self.key(t, u);
            self.objections.insert(key, v);
        }
    }

    /// The policies' objection to `u` for task `t`, if they made one.
    pub(crate) fn objection(&self, t: usize, u: UrlIdx) -> Option<Decision> {
        self.objections.get(&self.key(t, u)).cloned()
    }

    /// The depth of task `t`'s document `d`: links from the top.
    pub(crate) fn depth_of(&self, t: usize, d: UrlIdx) -> u32 {
        self.depths.get(&(t as u32, d)).copied().unwrap_or(0)
    }

    /// The depth, for task `t`, that policies are told of what document
    /// `d` refers to: one more than `d`'s (0 for every URL when no policy
    /// reads depths, as the WIT says).
    pub(crate) fn depth_below(&self, t: usize, d: UrlIdx) -> u32 {
        match self.track_depths {
            true => self.depth_of(t, d) + 1,
            false => 0,
        }
    }

    /// Whether `u` is counted as a document of task `t` already.
    pub(crate) fn counted(&self, t: usize, u: UrlIdx) -> bool {
        self.depths.contains_key(&(t as u32, u))
    }

    /// Count `u` as a document of task `t`, at `depth`.
    pub(crate) fn count(&mut self, t: usize, u: UrlIdx, depth: u32) {
        self.depths.insert((t as u32, u), depth);
    }
}

/// The host's decision, made more restrictive by the policies' objection:
/// an avoid stands for any request, a leaf for a document candidate.
pub(crate) fn with_objection(objection: Option<Decision>, decision: Decision) -> Decision {
    match (objection, decision) {
        (Some(Decision::Avoid(r)), _) => Decision::Avoid(r),
        (Some(Decision::Leaf(r)), Decision::Traverse) => Decision::Leaf(r),
        (_, d) => d,
    }
}

/// How far a task has traversed, against its bounds.
#[derive(Clone, Debug)]
pub(crate) struct Traversal {
    /// The task's bounds.
    pub bounds: TaskBounds,
    /// Documents counted so far.
    pub traversed: u64,
    /// Once a document beyond `max_depth` was met, the least (in URL
    /// order) of those met: which is met first depends on which pages came
    /// back first, and a run should say the same each time.
    pub too_deep: Option<Box<str>>,
    /// Likewise for the documents past `max_documents`.
    pub too_many: Option<Box<str>>,
}

/// Which bound a document candidate went beyond.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Beyond {
    /// The bound, as the reports name it: `max_depth (3 links from the top)`.
    pub bound: String,
    /// Whether it is the first candidate beyond that bound (said once).
    pub first: bool,
}

impl Traversal {
    /// Bounds with nothing traversed yet.
    pub(crate) fn new(bounds: TaskBounds) -> Self {
        Traversal {
            bounds,
            traversed: 0,
            too_deep: None,
            too_many: None,
        }
    }

    /// A document candidate at `depth`, whose URL is `url`: counted when
    /// within the bounds, else which bound it is beyond.
    pub(crate) fn admit(&mut self, depth: u32, url: &str) -> Result<(), Beyond> {
        if depth > self.bounds.max_depth {
            let first = keep_least(&mut self.too_deep, url);
            let bound = self.depth_bound();
            return Err(Beyond { bound, first });
        }
        if self.traversed >= self.bounds.max_documents {
            let first = keep_least(&mut self.too_many, url);
            let bound = self.documents_bound();
            return Err(Beyond { bound, first });
        }
        self.traversed += 1;
        Ok(())
    }

    /// The bounds reached, each with the least document it turned into a
    /// leaf, as the run's summary says them.
    pub(crate) fn bounds_hit(&self) -> Vec<String> {
        [
            (self.depth_bound(), &self.too_deep),
            (self.documents_bound(), &self.too_many),
        ]
        .into_iter()
        .filter_map(|(bound, least)| {
            let url = least.as_deref()?;
            Some(format!(
                "reached its {bound} at {url}; documents beyond it are tested as leaves, not traversed"
            ))
        })
        .collect()
    }

    /// `max_depth`, as the reports name it.
    fn depth_bound(&self) -> String {
        format!("max_depth ({} links from the top)", self.bounds.max_depth)
    }

    /// `max_documents`, as the reports name it.
    fn documents_bound(&self) -> String {
        format!("max_documents ({})", self.bounds.max_documents)
    }
}

/// Keep `url` in `least` when it is the first or comes before the one
/// kept; whether it is the first.
fn keep_least(least: &mut Option<Box<str>>, url: &str) -> bool {
    match least {
        None => {
            *least = Some(url.into());
            true
        }
        Some(kept) => {
            if url < &**kept {
                *kept = url.into();
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(r: &str) -> Decision {
        Decision::Leaf(r.into())
    }

    fn avoid(r: &str) -> Decision {
        Decision::Avoid(r.into())
    }

    #[test]
    fn an_objection_only_ever_restricts() {
        let not_checked = Decision::NotChecked("mailto".into());
        let table = [
            (None, Decision::Traverse, Decision::Traverse),
            (None, leaf("rule"), leaf("rule")),
            (Some(leaf("plugin")), Decision::Traverse, leaf("plugin")),
            (Some(leaf("plugin")), leaf("rule"), leaf("rule")),
            (Some(avoid("plugin")), Decision::Traverse, avoid("plugin")),
            (Some(avoid("plugin")), leaf("rule"), avoid("plugin")),
            (Some(Decision::Traverse), leaf("rule"), leaf("rule")),
            (Some(leaf("plugin")), not_checked.clone(), not_checked),
        ];
        for (objection, decision, want) in table {
            let case = format!("{objection:?} on {decision:?}");
            assert_eq!(with_objection(objection, decision), want, "{case}");
        }
    }

    #[test]
    fn verdicts_are_kept_per_task_or_per_url() {
        let mut per_task = Verdicts::new(false, false);
        let mut asked = TaskSet::default();
        per_task.note(&mut asked, 1, 9, Some(avoid("no")));
        assert!(per_task.asked(&asked, 1));
        assert!(!per_task.asked(&asked, 0), "task 0 was not asked");
        assert_eq!(per_task.objection(1, 9), Some(avoid("no")));
        assert_eq!(per_task.objection(0, 9), None);
        per_task.note(&mut asked, 1, 9, None);
        assert_eq!(
            per_task.objection(1, 9),
            Some(avoid("no")),
            "the first verdict stands"
        );

        let mut per_url = Verdicts::new(true, false);
        let mut asked = TaskSet::default();
        per_url.note(&mut asked, 2, 9, Some(leaf("deep")));
        assert!(per_url.asked(&asked, 0), "asked once for every task");
        assert_eq!(per_url.objection(0, 9), Some(leaf("deep")));
        assert_eq!(per_url.objection(5, 9), Some(leaf("deep")));
    }

    #[test]
    fn depths_are_told_only_when_a_policy_reads_them() {
        let mut v = Verdicts::new(false, true);
        assert!(!v.counted(0, 4));
        v.count(0, 4, 2);
        assert!(v.counted(0, 4));
        assert_eq!(v.depth_of(0, 4), 2);
        assert_eq!(v.depth_below(0, 4), 3);
        assert_eq!(v.depth_of(1, 4), 0, "another task's depth");
        let mut untracked = Verdicts::new(false, false);
        untracked.count(0, 4, 2);
        assert_eq!(untracked.depth_below(0, 4), 0);
    }

    #[test]
    fn bounds_turn_candidates_into_leaves_and_say_so_once() {
        let mut t = Traversal::new(TaskBounds {
            max_depth: 2,
            max_documents: 3,
        });
        assert_eq!(t.admit(0, "http://a/"), Ok(()));
        assert_eq!(t.admit(2, "http://a/1/2"), Ok(()));
        let deep = |first| Beyond {
            bound: "max_depth (2 links from the top)".into(),
            first,
        };
        assert_eq!(t.admit(3, "http://a/z"), Err(deep(true)));
        assert_eq!(t.admit(7, "http://a/b"), Err(deep(false)));
        assert_eq!(t.admit(4, "http://a/c"), Err(deep(false)));
        assert_eq!(t.admit(1, "http://a/1"), Ok(()));
        let many = |first| Beyond {
            bound: "max_documents (3)".into(),
            first,
        };
        assert_eq!(t.admit(1, "http://a/y"), Err(many(true)));
        assert_eq!(t.admit(0, "http://a/x"), Err(many(false)));
        assert_eq!(t.traversed, 3);
        // Each bound names the least document it turned into a leaf,
        // whichever came first.
        assert_eq!(
            t.bounds_hit(),
            [
                "reached its max_depth (2 links from the top) at http://a/b; documents beyond it are tested as leaves, not traversed",
                "reached its max_documents (3) at http://a/x; documents beyond it are tested as leaves, not traversed",
            ]
        );
    }
}
