//! A [`Config`] written as the TOML configuration (`spinneret convert`):
//! what an instruction file says, in the keys of the configuration reference (`docs/configuration.md`).
//! Settings left at their defaults are not written.

use super::{Config, MailSettings, Password, PluginSource, Settings};
use std::fmt::Write;
use std::path::Path;
use std::time::Duration;

fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn path(p: &Path) -> String {
    q(&p.display().to_string())
}

fn paths(ps: &[std::path::PathBuf]) -> String {
    let items: Vec<String> = ps.iter().map(|p| path(p)).collect();
    format!("[{}]", items.join(", "))
}

/// A duration as the shortest exact human string (`"7d"`, `"6h"`, `"250ms"`).
fn duration(d: Duration) -> String {
    let ms = d.as_millis();
    let s = d.as_secs();
    let text = if !ms.is_multiple_of(1000) {
        format!("{ms}ms")
    } else if s != 0 && s.is_multiple_of(86_400) {
        format!("{}d", s / 86_400)
    } else if s != 0 && s.is_multiple_of(3600) {
        format!("{}h", s / 3600)
    } else if s != 0 && s.is_multiple_of(60) {
        format!("{}m", s / 60)
    } else {
        format!("{s}s")
    };
    q(&text)
}

fn schedule(s: &spinneret_core::schedule::Schedule) -> String {
    match s {
        spinneret_core::schedule::Schedule::Every(d) => duration(*d),
        spinneret_core::schedule::Schedule::Daily(h, m) => q(&format!("{h:02}:{m:02}")),
    }
}

/// The configuration as TOML text, with a header saying where it came from.
pub fn to_toml(config: &Config) -> String {
    let mut out = String::new();
    if let Some(src) = &config.source {
        let _ = writeln!(
            out,
            "# Converted by spinneret {} from {}.\n# The keys are described in spinneret's docs/configuration.md.\n",
            env!("CARGO_PKG_VERSION"),
            src.display()
        );
    }
    settings(&config.settings, &mut out);
    for t in &config.tasks {
        let _ = writeln!(out, "\n[[task]]");
        let _ = writeln!(out, "name = {}", q(&t.name));
        let _ = writeln!(out, "kind = {}", q(t.kind.as_str()));
        let _ = writeln!(out, "top = {}", q(t.top.as_str()));
        if let Some(e) = &t.email {
            let _ = writeln!(out, "email = {}", q(e));
        }
        let _ = writeln!(out, "output = {}", path(&t.output));
        if t.index.file.is_some() {
            let _ = writeln!(out, "index_file = {}", path(&t.index_path()));
        }
        if let Some(u) = &t.index.url {
            let _ = writeln!(out, "index_url = {}", q(u.as_str()));
        }
        if let Some(title) = &t.index.title {
            let _ = writeln!(out, "index_title = {}", q(title));
        }
        if !t.exclude.is_empty() {
            let items: Vec<String> = t.exclude.iter().map(|e| q(e)).collect();
            let _ = writeln!(out, "exclude = [{}]", items.join(", "));
        }
        if t.notify.broken {
            let _ = writeln!(out, "email_broken = true");
        }
        if t.notify.moved {
            let _ = writeln!(out, "email_moved = true");
        }
        match t.notify.changed {
            true => writeln!(out, "email_changed = {}", t.changed_days),
            false if t.changed_days != 7 => writeln!(out, "changed_days = {}", t.changed_days),
            false => Ok(()),
        }
        .ok();
        match t.notify.expired {
            true => writeln!(out, "email_expired = {}", t.expiring_days),
            false if t.expiring_days != 7 => {
                writeln!(out, "expiring_days = {}", t.expiring_days)
            }
            false => Ok(()),
        }
        .ok();
        if let Some(sc) = &t.schedule {
            let _ = writeln!(out, "schedule = {}", schedule(sc));
        }
        if !t.default_plugins {
            let _ = writeln!(out, "default_plugins = false");
        }
    }
    for p in &config.plugins {
        let _ = writeln!(out, "\n[[plugin]]\nname = {}", q(&p.name));
        let source = match &p.source {
            PluginSource::Builtin(b) => format!("builtin:{b}"),
            PluginSource::File(f) => f.display().to_string(),
        };
        let _ = writeln!(out, "source = {}", q(&source));
        if let Some(tasks) = &p.tasks {
            let items: Vec<String> = tasks.iter().map(|t| q(t)).collect();
            let _ = writeln!(out, "tasks = [{}]", items.join(", "));
        }
        if let Ok(toml::Value::Table(t)) = serde_json::from_value::<toml::Value>(p.config.clone())
            && !t.is_empty()
        {
            let _ = write!(out, "[plugin.config]\n{t}");
        }
    }
    out
}

fn settings(s: &Settings, out: &mut String) {
    let d = Settings::default();
    if s.user_agent != d.user_agent {
        let _ = writeln!(out, "user_agent = {}", q(&s.user_agent));
    }
    if let Some(from) = &s.from {
        let _ = writeln!(out, "from = {}", q(from));
    }
    match &s.store {
        super::StoreSetting::File(p) if s.store != d.store => {
            let _ = writeln!(out, "store = {}", path(p));
        }
        super::StoreSetting::File(_) => {}
        super::StoreSetting::Postgres { url, password } => {
            let _ = writeln!(out, "store = {}", q(url));
            match password {
                Some(super::Password::Env(var)) => {
                    let _ = writeln!(out, "store_password_env = {}", q(var));
                }
                Some(super::Password::File(file)) => {
                    let _ = writeln!(out, "store_password_file = {}", path(file));
                }
                None => {}
            }
        }
    }
    if s.robots_expiry != d.robots_expiry {
        let _ = writeln!(
            out,
            "# SitesCheck: how long a site's robots.txt holds.\nrobots_expiry = {}",
            duration(s.robots_expiry)
        );
    }
    if let Some(sc) = &s.schedule {
        let _ = writeln!(out, "schedule = {}", schedule(sc));
    }
    if s.result_max_age != d.result_max_age {
        let _ = writeln!(out, "result_max_age = {}", duration(s.result_max_age));
    }
    if s.check_fragments != d.check_fragments {
        let _ = writeln!(out, "check_fragments = {}", s.check_fragments);
    }
    if s.robots_rules != d.robots_rules {
        let _ = writeln!(out, "robots_rules = {}", q(s.robots_rules.as_str()));
    }
    if !s.avoid_files.is_empty() {
        let _ = writeln!(out, "avoid_files = {}", paths(&s.avoid_files));
    }
    if let Some(f) = &s.avoid_file {
        let _ = writeln!(out, "avoid_file = {}", path(f));
    }
    if !s.system_sites.is_empty() {
        let _ = writeln!(out, "system_sites = {}", paths(&s.system_sites));
    }
    if let Some(f) = &s.sites_file {
        let _ = writeln!(out, "sites_file = {}", path(f));
    }
    if let Some(d) = &s.search_index {
        let _ = writeln!(out, "search_index = {}", path(d));
    }
    mail(&s.mail, out);
}

fn mail(m: &MailSettings, out: &mut String) {
    if *m == MailSettings::default() {
        return;
    }
    let _ = writeln!(out, "\n[mail]\nserver = {}", q(&m.server));
    let _ = writeln!(out, "port = {}\ntls = {}", m.port, q(m.tls.as_str()));
    if let Some(u) = &m.username {
        let _ = writeln!(out, "username = {}", q(u));
    }
    match &m.password {
        Some(Password::Env(v)) => {
            let _ = writeln!(out, "password_env = {}", q(v));
        }
        Some(Password::File(f)) => {
            let _ = writeln!(out, "password_file = {}", path(f));
        }
        None => {}
    }
    if let Some(f) = &m.from {
        let _ = writeln!(out, "from = {}", q(f));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{load_str, parse_instructions};

    #[test]
    fn converted_instructions_load_as_the_same_configuration() {
        // A system avoid file must exist for the TOML to load.
        let dir = tempfile::tempdir().unwrap();
        let system = dir.path().join("avoid.mom");
        std::fs::write(&system, "# none yet\n").unwrap();
        let text = "SystemAvoid SYSTEM\nAvoidFile /home/u/.momspider-avoid\nSitesFile /home/u/.momspider-sites\nSitesCheck 3\n\
<Owner\n Name RTF\n TopURL http://www.example/~rtf/hotlist.html\n IndexURL http://www.example/~rtf/MOM/RTF.html\n IndexFile /home/u/public_html/MOM/RTF.html\n IndexTitle Roy's \"hotlist\"\n EmailAddress rtf@example.org\n EmailBroken\n EmailChanged 3\n Exclude http://www.example/~rtf/tmp/\n>\n";
        let text = text.replace("SYSTEM", &system.display().to_string());
        let from = parse_instructions(&text, "mom.txt", Path::new("/home/u")).unwrap();
        let toml = to_toml(&from);
        let back = load_str(&toml, "converted.toml", Path::new("/home/u")).unwrap();
        assert_eq!(
            format!("{:?}", back.settings),
            format!("{:?}", from.settings)
        );
        assert_eq!(format!("{:?}", back.tasks), format!("{:?}", from.tasks));
        assert!(toml.contains("robots_expiry = \"3d\""), "{toml}");
        assert!(
            toml.contains("index_file = \"/home/u/public_html/MOM/RTF.html\""),
            "{toml}"
        );
        assert!(toml.contains("email_changed = 3\n"), "{toml}");
    }

    #[test]
    fn durations_are_written_exactly() {
        assert_eq!(duration(Duration::from_secs(7 * 86_400)), "\"7d\"");
        assert_eq!(duration(Duration::from_secs(5400)), "\"90m\"");
        assert_eq!(duration(Duration::from_millis(250)), "\"250ms\"");
        assert_eq!(duration(Duration::ZERO), "\"0s\"");
    }
}
