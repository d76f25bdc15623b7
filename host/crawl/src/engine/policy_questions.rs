//! The engine's questions to the policy plugins: whether a task's
//! candidate stays a document, becomes a leaf or is avoided. A task's top is
//! asked at once; a document's references and a redirect's target are asked
//! in one batch at the end of the turn, and each answer settles the URLs
//! that waited for it. The answers are kept by `Verdicts`.

use super::*;

impl Engine<'_> {
    /// Policy plugins may make the host's decision more restrictive: a
    /// document candidate a leaf, or any request avoided. Asked once per
    /// task and URL (once per URL when they judge URLs alone): the
    /// references of a document in one batch at the end of the turn
    /// ([`Engine::ask_policies_for_links`]) and a redirect's target likewise
    /// ([`Engine::ask_policies_for_redirect`]); a task's top here, off the
    /// reactor (`block_in_place`).
    pub(super) fn ask_policies(
        &mut self,
        t: usize,
        u: UrlIdx,
        kind: RefKind,
        referrer: Option<UrlIdx>,
        decision: Decision,
    ) -> Decision {
        if !self.has_policies() || !matches!(decision, Decision::Traverse | Decision::Leaf(_)) {
            return decision;
        }
        let depth = referrer.map_or(0, |r| self.verdicts.depth_below(t, r));
        let verdict = match self.policies_asked(t, u) {
            true => self.verdicts.objection(t, u),
            false => {
                let hooks = self.plugins.hooks().cloned().expect("policies are hooks");
                let target = self.frontier.get(u).url.to_string();
                let from = referrer.map(|r| self.frontier.get(r).url.to_string());
                let info = self.tasks[t].info.clone();
                let v = off_reactor(|| {
                    let candidates = vec![(u, target, kind)];
                    hooks.decide(info, from, depth, candidates).pop().flatten()
                });
                self.note_verdict(t, u, v.clone());
                v
            }
        };
        with_objection(verdict, decision)
    }

    /// A document candidate of task `t` beyond the task's bounds (deeper
    /// than `max_depth`, or past `max_documents`) is a leaf, with the bound
    /// as its reason; within them it counts, and its depth is kept.
    pub(super) fn bounded(
        &mut self,
        t: usize,
        u: UrlIdx,
        referrer: Option<UrlIdx>,
        decision: Decision,
    ) -> Decision {
        if decision != Decision::Traverse || self.verdicts.counted(t, u) {
            return decision;
        }
        let depth = referrer.map_or(0, |r| self.verdicts.depth_of(t, r) + 1);
        let url = self.frontier.get(u).url.as_str();
        let Beyond { bound, first } = match self.tasks[t].traversal.admit(depth, url) {
            Ok(()) => {
                self.verdicts.count(t, u, depth);
                return decision;
            }
            Err(beyond) => beyond,
        };
        // Said once as it happens; the run's summary names the least
        // document the bound turned into a leaf (`Traversal::bounds_hit`).
        if first {
            tracing::warn!(
                "task {}: reached its {bound} at {url}; documents beyond it are tested as leaves, not traversed",
                self.tasks[t].info.name
            );
        }
        Decision::Leaf(format!("beyond the task's {bound}"))
    }

    /// Whether the crawl has policy plugins.
    pub(super) fn has_policies(&self) -> bool {
        self.plugins.has_policies()
    }

    /// Keep the policies' verdict on `u` for task `t` (unless one was kept
    /// meanwhile: it stands).
    pub(super) fn note_verdict(&mut self, t: usize, u: UrlIdx, verdict: Option<Decision>) {
        let asked = &mut self.frontier.get_mut(u).policy_asked;
        self.verdicts.note(asked, t, u, verdict);
    }

    /// Whether the policies were asked about `u` for task `t`.
    pub(super) fn policies_asked(&self, t: usize, u: UrlIdx) -> bool {
        self.verdicts.asked(&self.frontier.get(u).policy_asked, t)
    }

    /// Before task `t` follows the references of document `d`: ask the
    /// policies about those it has not asked about yet, all at once, at the
    /// end of the turn ([`Engine::send_plugin_questions`]). Returns whether it did: the
    /// references are then followed when the verdicts come back
    /// ([`Completion::Policies`]), and [`Engine::ask_policies`] finds them.
    pub(super) fn ask_policies_for_links(
        &mut self,
        t: usize,
        d: UrlIdx,
        links: &[(UrlIdx, RefKind)],
    ) -> bool {
        let depth = self.verdicts.depth_below(t, d);
        self.ask_policies_later(t, d, depth, links, AfterVerdicts::Expand(d))
    }

    /// Before task `t` follows the moved URL `from` to its final URL
    /// `target`: ask the policies about it at the end of the turn, as
    /// [`Engine::ask_policies_for_links`] does. Returns whether it did.
    pub(super) fn ask_policies_for_redirect(
        &mut self,
        t: usize,
        from: UrlIdx,
        target: UrlIdx,
    ) -> bool {
        let depth = self.verdicts.depth_below(t, from);
        let then = AfterVerdicts::FollowRedirect { from, target };
        self.ask_policies_later(t, from, depth, &[(target, RefKind::Anchor)], then)
    }

    /// Ask the policies about those of `links` (found in `referrer` by task
    /// `t`, at `depth`) not asked about yet and that the host would request,
    /// in one call at the end of the turn; `then` is done when the verdicts
    /// are back. Returns whether there was anything to ask.
    pub(super) fn ask_policies_later(
        &mut self,
        t: usize,
        referrer: UrlIdx,
        depth: u32,
        links: &[(UrlIdx, RefKind)],
        then: AfterVerdicts,
    ) -> bool {
        if !self.has_policies() {
            return false;
        }
        let mut seen = HashSet::new();
        let mut asks = Vec::new();
        let from = &self.frontier.get(referrer).url;
        for &(u, kind) in links {
            let e = self.frontier.get(u);
            if self.policies_asked(t, u) || !seen.insert(u) {
                continue;
            }
            // Asked only where the host would request it (as in ask_policies).
            if matches!(
                decide(&self.tasks[t].scope, &self.rules, &e.url, kind, Some(from)),
                Decision::Traverse | Decision::Leaf(_)
            ) {
                asks.push((u, e.url.as_str().to_string(), kind));
            }
        }
        if asks.is_empty() {
            return false;
        }
        self.plugins.ask(PolicyAsk {
            task: t,
            info: self.tasks[t].info.clone(),
            referrer: self.frontier.get(referrer).url.as_str().to_string(),
            depth,
            asks,
            then,
        });
        true
    }
}
