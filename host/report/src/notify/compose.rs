//! One plain-text message per task: what needs the owner's attention.

use spinneret_config::TaskConfig;
use spinneret_store::{FindingRow, Mail};
use std::fmt::Write;
use url::Url;

/// The kinds mailed, in order, with their headings (as in the index).
const SECTIONS: [(&str, &str); 6] = [
    ("broken", "Broken links"),
    ("blocked", "Blocked links (the server refused the robot)"),
    (
        crate::fragments::BROKEN_FRAGMENT_KIND,
        "Broken fragments (the page is there, the place the link names is not)",
    ),
    ("moved", "Moved documents"),
    ("recently-modified", "Recently modified documents"),
    ("expiring", "Expiring documents"),
];

/// Where the task's index is read: its `index_url`, else its file.
fn index_url(task: &TaskConfig) -> String {
    match &task.index.url {
        Some(u) => u.to_string(),
        None => Url::from_file_path(task.index_path())
            .map(|u| u.to_string())
            .unwrap_or_else(|_| task.index_path().display().to_string()),
    }
}

/// The message for `task` from its findings (in stored order, which gives
/// each its index anchor `#fN`), or `None` when the owner asked for
/// nothing this run found, or has no address.
pub fn compose(task: &TaskConfig, started_at: i64, findings: &[FindingRow]) -> Option<Mail> {
    let recipient = task.email.clone()?;
    if !task.notify.any() {
        return None;
    }
    let index = index_url(task);
    let mut body = String::new();
    let mut counts = Vec::new();
    let started = httpdate::fmt_http_date(
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(started_at.max(0) as u64),
    );
    for (kind, heading) in SECTIONS {
        if !task.notify.wants(kind) {
            continue;
        }
        let items: Vec<(usize, &FindingRow)> = findings
            .iter()
            .enumerate()
            .filter(|(_, f)| f.kind == kind)
            .map(|(i, f)| (i + 1, f))
            .collect();
        if items.is_empty() {
            continue;
        }
        counts.push(format!("{} {}", items.len(), kind.replace('-', " ")));
        let _ = writeln!(body, "{heading} ({})\n", items.len());
        for (n, f) in items {
            let _ = writeln!(body, "  {}\n    {}", f.url, f.message);
            if let Some(r) = &f.referrer {
                let _ = writeln!(body, "    referred to from {r}");
            }
            let _ = writeln!(body, "    index entry: {index}#f{n}\n");
        }
    }
    if counts.is_empty() {
        return None;
    }
    let intro = format!(
        "spinneret checked the {} task `{}` from {} in the run that started {started}.\n\
         These items need your attention.\n\n",
        task.kind.as_str(),
        task.name,
        task.top
    );
    let outro = format!(
        "The whole maintenance index: {index}\n\n-- \nspinneret {}, a web maintenance robot\n",
        env!("CARGO_PKG_VERSION")
    );
    Some(Mail {
        task: task.name.clone(),
        recipient,
        subject: format!("spinneret: {}: {}", task.name, counts.join(", ")),
        body: format!("{intro}{body}{outro}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_config::{IndexSettings, Notify, TaskKind};

    fn finding(kind: &str, url: &str, referrer: Option<&str>, message: &str) -> FindingRow {
        FindingRow {
            task: "ICS".into(),
            kind: kind.into(),
            url: url.into(),
            referrer: referrer.map(str::to_string),
            message: message.into(),
            severity: "error".into(),
            source: "maintenance".into(),
        }
    }

    fn task(notify: Notify) -> TaskConfig {
        TaskConfig {
            name: "ICS".into(),
            kind: TaskKind::Site,
            top: Url::parse("http://www.ics.example/").unwrap(),
            more_tops: Vec::new(),
            email: Some("www@ics.example".into()),
            output: "/srv/MOM".into(),
            exclude: Vec::new(),
            patterns: Default::default(),
            changed_days: 7,
            expiring_days: 2,
            default_plugins: true,
            index: IndexSettings {
                file: Some("ICS.html".into()),
                url: Some(Url::parse("http://www.ics.example/Admin/ICS.html").unwrap()),
                title: None,
            },
            notify,
            schedule: None,
            bounds: Default::default(),
        }
    }

    #[test]
    fn a_message_lists_what_the_owner_asked_for_with_index_links() {
        let findings = [
            finding(
                "content-changed",
                "http://www.ics.example/",
                None,
                "content changed",
            ),
            finding(
                "broken",
                "http://www.ics.example/gone",
                Some("http://www.ics.example/"),
                "broken: HTTP 404 Not Found; new since the previous run",
            ),
            finding(
                "moved",
                "http://www.ics.example/old",
                Some("http://www.ics.example/"),
                "moved to http://www.ics.example/new",
            ),
        ];
        let notify = Notify {
            broken: true,
            ..Notify::default()
        };
        let mail = compose(&task(notify), 0, &findings).unwrap();
        assert_eq!(mail.recipient, "www@ics.example");
        assert_eq!(mail.subject, "spinneret: ICS: 1 broken");
        assert_eq!(
            mail.body.replace(env!("CARGO_PKG_VERSION"), "VERSION"),
            "spinneret checked the site task `ICS` from http://www.ics.example/ in the run that started Thu, 01 Jan 1970 00:00:00 GMT.\n\
These items need your attention.\n\n\
Broken links (1)\n\n  http://www.ics.example/gone\n    broken: HTTP 404 Not Found; new since the previous run\n    referred to from http://www.ics.example/\n    index entry: http://www.ics.example/Admin/ICS.html#f2\n\n\
The whole maintenance index: http://www.ics.example/Admin/ICS.html\n\n-- \nspinneret VERSION, a web maintenance robot\n"
        );
        let all = Notify {
            broken: true,
            moved: true,
            changed: true,
            expired: true,
        };
        let mail = compose(&task(all), 0, &findings).unwrap();
        assert_eq!(mail.subject, "spinneret: ICS: 1 broken, 1 moved");
        assert!(
            mail.body
                .contains("index entry: http://www.ics.example/Admin/ICS.html#f3")
        );
    }

    #[test]
    fn nothing_to_say_sends_nothing() {
        let findings = [finding("moved", "http://a/", None, "moved")];
        let broken_only = Notify {
            broken: true,
            ..Notify::default()
        };
        assert_eq!(compose(&task(broken_only), 0, &findings), None);
        assert_eq!(compose(&task(Notify::default()), 0, &findings), None);
        let mut no_address = task(Notify {
            moved: true,
            ..Notify::default()
        });
        no_address.email = None;
        assert_eq!(compose(&no_address, 0, &findings), None);
    }
}
