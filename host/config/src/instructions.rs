//! MOMspider instruction files (seed 000, Appendix A), read into the same
//! [`Config`] a TOML file gives:
//!
//! ```text
//! SystemAvoid /usr/local/httpd/admin/avoid.mom
//! SitesFile   /usr/grads/fielding/test/.momspider-sites
//! SitesCheck  7
//! <Site
//!   Name      ICS
//!   TopURL    http://www.ics.uci.edu/ICSHome.html
//!   IndexURL  http://www.ics.uci.edu/Admin/ICS.html
//!   IndexFile /usr/local/httpd/documentroot/MOM/ICS.html
//!   EmailAddress www@ics.uci.edu
//!   EmailBroken
//!   EmailExpired 2
//! >
//! ```
//!
//! Global directives: `SystemAvoid`, `SystemSites`, `AvoidFile`, `SitesFile`,
//! `SitesCheck DAYS`, and spinneret's `MailServer HOST[:PORT]` (MOMspider
//! handed mail to the local `sendmail`; spinneret speaks SMTP, to
//! `localhost:25` unless this names another server). Each `<Site`, `<Tree` or `<Owner` block is a task with
//! `Name`, `TopURL` (both required), `IndexURL`, `IndexFile`, `IndexTitle`,
//! `EmailAddress`, `EmailBroken`, `EmailChanged DAYS`, `EmailExpired DAYS`
//! and any number of `Exclude PREFIX`; a line holding only `>` ends it.
//! Directive names are matched without regard to case; `#` starts a comment
//! line. Anything else is an error naming the file and line.

use super::load::{parse_top, read_with, relative_to, sanitize};
use super::mail::check_email;
use super::{Config, ConfigError, IndexSettings, Notify, Settings, TaskConfig, TaskKind};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;
use url::Url;

const GLOBAL: [&str; 6] = [
    "SystemAvoid",
    "SystemSites",
    "AvoidFile",
    "SitesFile",
    "SitesCheck",
    "MailServer",
];
const TASK: [&str; 10] = [
    "Name",
    "TopURL",
    "IndexURL",
    "IndexFile",
    "IndexTitle",
    "EmailAddress",
    "EmailBroken",
    "EmailChanged",
    "EmailExpired",
    "Exclude",
];

/// `MailServer HOST[:PORT]`: the SMTP server the owners' mail goes to
/// (plain SMTP, port 25 unless given; the TOML form's `[mail]` table says
/// more: TLS, a user name and password).
fn mail_server(value: &str) -> Result<(String, u16), String> {
    let bad = || {
        format!(
            "`MailServer` takes a host and an optional port (`mail.example.org` or `mail.example.org:2525`), not `{value}`"
        )
    };
    let (host, port) = match value.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') || h.ends_with(']') => {
            (h, p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(bad)?)
        }
        _ => (value, 25),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let plain = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'));
    match plain {
        true => Ok((host.to_string(), port)),
        false => Err(bad()),
    }
}

/// Whether `text` reads as an instruction file rather than TOML: its first
/// line that is not blank or a comment opens a task block or starts with a
/// directive name followed by a value (never `key = value` or `[table]`).
pub fn is_instruction_file(text: &str) -> bool {
    let Some(line) = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
    else {
        return false;
    };
    if line.starts_with('<') {
        return true;
    }
    let mut words = line.split_whitespace();
    let first = words.next().unwrap_or("");
    let second = words.next();
    first.chars().all(|c| c.is_ascii_alphabetic()) && second.is_none_or(|w| !w.starts_with('='))
}

/// Read an instruction file; relative paths resolve against its directory.
pub fn load_instructions(path: &Path) -> Result<Config, ConfigError> {
    read_with(path, parse_instructions)
}

/// A task block being read.
struct Block {
    kind: TaskKind,
    opened_at: usize,
    name: Option<String>,
    top: Option<Url>,
    index_url: Option<Url>,
    index_file: Option<PathBuf>,
    index_title: Option<String>,
    email: Option<String>,
    notify: Notify,
    changed_days: Option<u32>,
    expiring_days: Option<u32>,
    exclude: Vec<String>,
    seen: HashSet<String>,
}

/// An error at `line` of the instruction file named `file`.
fn at(file: &str, line: usize, message: String) -> ConfigError {
    ConfigError::At {
        path: file.to_string(),
        line,
        column: 1,
        message,
    }
}

/// One directive line: where it is, which directive (as the lists above
/// spell it) and the value it gives (empty when none).
struct Directive<'a> {
    /// The instruction file's name, for errors.
    file: &'a str,
    line: usize,
    name: &'static str,
    value: &'a str,
}

impl Directive<'_> {
    /// An error at this directive's line.
    fn error(&self, message: String) -> ConfigError {
        at(self.file, self.line, message)
    }

    /// The value, which this directive must have.
    fn value(&self) -> Result<&str, ConfigError> {
        match self.value.is_empty() {
            true => Err(self.error(format!("`{}` needs a value", self.name))),
            false => Ok(self.value),
        }
    }

    /// The value as a whole number of days.
    fn days(&self) -> Result<u32, ConfigError> {
        self.value()?.parse::<u32>().map_err(|_| {
            self.error(format!(
                "`{}` takes a whole number of days, not `{}`",
                self.name, self.value
            ))
        })
    }

    /// The value as an absolute URL; `what` names it in the error.
    fn url(&self, what: &str) -> Result<Url, ConfigError> {
        Url::parse(self.value()?).map_err(|e| {
            self.error(format!(
                "{what} `{}` is not an absolute URL ({e})",
                self.value
            ))
        })
    }
}

impl Block {
    /// The block of `kind` opened at line `opened_at`, nothing in it yet.
    fn new(kind: TaskKind, opened_at: usize) -> Block {
        Block {
            kind,
            opened_at,
            name: None,
            top: None,
            index_url: None,
            index_file: None,
            index_title: None,
            email: None,
            notify: Notify::default(),
            changed_days: None,
            expiring_days: None,
            exclude: Vec::new(),
            seen: HashSet::new(),
        }
    }

    /// A task directive inside this block; each but `Exclude` is given at
    /// most once. `abs_dir` and `rel` resolve relative tops and paths.
    fn take(
        &mut self,
        d: &Directive,
        abs_dir: &Path,
        rel: &dyn Fn(&str) -> PathBuf,
    ) -> Result<(), ConfigError> {
        if d.name != "Exclude" && !self.seen.insert(d.name.to_string()) {
            return Err(d.error(format!(
                "`{}` is given twice in the block of line {}",
                d.name, self.opened_at
            )));
        }
        match d.name {
            "Name" => self.name = Some(d.value()?.to_string()),
            "TopURL" => self.top = Some(parse_top(d.value()?, abs_dir).map_err(|m| d.error(m))?),
            "IndexURL" => self.index_url = Some(d.url("IndexURL")?),
            "IndexFile" => self.index_file = Some(rel(d.value()?)),
            "IndexTitle" => self.index_title = Some(d.value()?.to_string()),
            "EmailAddress" => {
                check_email(d.value()?).map_err(|m| d.error(m))?;
                self.email = Some(d.value.to_string());
            }
            "EmailBroken" => {
                if !d.value.is_empty() {
                    return Err(d.error(format!("`EmailBroken` takes no value (`{}`)", d.value)));
                }
                self.notify.broken = true;
            }
            "EmailChanged" => {
                self.changed_days = Some(d.days()?);
                self.notify.changed = true;
            }
            "EmailExpired" => {
                self.expiring_days = Some(d.days()?);
                self.notify.expired = true;
            }
            _ => self.exclude.push(d.url("Exclude prefix")?.to_string()),
        }
        Ok(())
    }
}

/// An instruction file being read, a line at a time: the settings, the
/// tasks and the open block so far.
struct Reading<'a> {
    /// The file's name, for errors.
    file: &'a str,
    /// The file's directory, absolute.
    abs_dir: PathBuf,
    /// A path as written, resolved against `abs_dir`.
    rel: &'a dyn Fn(&str) -> PathBuf,
    settings: Settings,
    /// The global directives given so far that may be given only once.
    seen_global: HashSet<String>,
    /// The line of `AvoidFile`, for an error about the file it names.
    avoid_file_line: usize,
    tasks: Vec<TaskConfig>,
    /// The names of the tasks so far.
    names: HashSet<String>,
    /// The task block open now, if any.
    block: Option<Block>,
}

impl Reading<'_> {
    /// An error at `line` of the file.
    fn at(&self, line: usize, message: String) -> ConfigError {
        at(self.file, line, message)
    }

    /// Read one line of the file, trimmed; `line_no` counts from 1.
    fn line(&mut self, line_no: usize, line: &str) -> Result<(), ConfigError> {
        if line.is_empty() || line.starts_with('#') {
            return Ok(());
        }
        if line == ">" {
            return self.close_block(line_no);
        }
        if let Some(open) = line.strip_prefix('<') {
            return self.open_block(line_no, open);
        }
        self.directive(line_no, line)
    }

    /// A line holding only `>`: the open block ends as a task, whose name
    /// must not be taken.
    fn close_block(&mut self, line_no: usize) -> Result<(), ConfigError> {
        let Some(b) = self.block.take() else {
            return Err(self.at(line_no, "`>` closes no <Site, <Tree or <Owner block".into()));
        };
        let task = finish_block(b, &self.abs_dir).map_err(|(l, m)| self.at(l, m))?;
        if !self.names.insert(task.name.clone()) {
            return Err(self.at(
                line_no,
                format!(
                    "a second task is named `{}`; task names must be unique",
                    task.name
                ),
            ));
        }
        self.tasks.push(task);
        Ok(())
    }

    /// `<Site`, `<Tree` or `<Owner` (`open` is what follows the `<`): a
    /// block opens, unless one is open already.
    fn open_block(&mut self, line_no: usize, open: &str) -> Result<(), ConfigError> {
        if let Some(b) = &self.block {
            return Err(self.at(
                line_no,
                format!(
                    "a new block opens before the block of line {} is closed with `>`",
                    b.opened_at
                ),
            ));
        }
        let kind = match open.trim().to_ascii_lowercase().as_str() {
            "site" => TaskKind::Site,
            "tree" => TaskKind::Tree,
            "owner" => TaskKind::Owner,
            other => {
                return Err(self.at(
                    line_no,
                    format!(
                        "unknown block `<{other}`; tasks are `<Site`, `<Tree` or `<Owner`, each on a line of its own"
                    ),
                ));
            }
        };
        self.block = Some(Block::new(kind, line_no));
        Ok(())
    }

    /// A line `DIRECTIVE [VALUE]`: a global directive outside the blocks,
    /// a task's inside one.
    fn directive(&mut self, line_no: usize, line: &str) -> Result<(), ConfigError> {
        let (word, value) = match line.split_once(char::is_whitespace) {
            Some((w, v)) => (w, v.trim()),
            None => (line, ""),
        };
        let file = self.file;
        let directive = |name: &'static str| Directive {
            file,
            line: line_no,
            name,
            value,
        };
        let global = GLOBAL
            .iter()
            .copied()
            .find(|d| d.eq_ignore_ascii_case(word));
        let task = TASK.iter().copied().find(|d| d.eq_ignore_ascii_case(word));
        match (global, task) {
            (Some(d), _) => self.global_directive(&directive(d)),
            (None, Some(d)) => self.task_directive(&directive(d)),
            (None, None) => Err(self.unknown_directive(line_no, word)),
        }
    }

    /// A global directive, which must be outside the blocks; those that
    /// set one thing may be given once.
    fn global_directive(&mut self, d: &Directive) -> Result<(), ConfigError> {
        if let Some(b) = &self.block {
            return Err(d.error(format!(
                "`{}` is a global directive; it cannot be inside the block of line {}",
                d.name, b.opened_at
            )));
        }
        let once = matches!(
            d.name,
            "AvoidFile" | "SitesFile" | "SitesCheck" | "MailServer"
        );
        if once && !self.seen_global.insert(d.name.to_string()) {
            return Err(d.error(format!("`{}` is given twice", d.name)));
        }
        let rel = self.rel;
        match d.name {
            "SystemAvoid" => self.settings.avoid_files.push(system_avoid(d, rel)?),
            "SystemSites" => self.settings.system_sites.push(rel(d.value()?)),
            "AvoidFile" => {
                self.settings.avoid_file = Some(rel(d.value()?));
                self.avoid_file_line = d.line;
            }
            "SitesFile" => self.settings.sites_file = Some(rel(d.value()?)),
            "MailServer" => {
                let (server, port) = mail_server(d.value()?).map_err(|m| d.error(m))?;
                self.settings.mail.server = server;
                self.settings.mail.port = port;
            }
            _ => self.settings.robots_expiry = sites_check(d)?,
        }
        Ok(())
    }

    /// A task directive, which must be inside a block.
    fn task_directive(&mut self, d: &Directive) -> Result<(), ConfigError> {
        let Some(b) = self.block.as_mut() else {
            return Err(d.error(format!(
                "`{}` belongs inside a <Site, <Tree or <Owner block",
                d.name
            )));
        };
        b.take(d, &self.abs_dir, self.rel)
    }

    /// The error for a directive of neither list at `line_no`, naming the
    /// directives that may stand there.
    fn unknown_directive(&self, line_no: usize, word: &str) -> ConfigError {
        let (known, which) = match self.block.is_some() {
            true => (&TASK[..], "the directives of a task block"),
            false => (&GLOBAL[..], "the global directives (outside task blocks)"),
        };
        self.at(
            line_no,
            format!(
                "unknown directive `{word}`; {which} are {}",
                known.join(", ")
            ),
        )
    }

    /// The configuration read, once the last line is: every block closed,
    /// the avoid file there (unless a sites file comes with it), at least
    /// one task, and no two tasks writing one index.
    fn finish(self) -> Result<Config, ConfigError> {
        if let Some(b) = &self.block {
            return Err(self.at(
                b.opened_at,
                "this block is never closed; end it with a line holding only `>`".into(),
            ));
        }
        self.check_avoid_file()?;
        if self.tasks.is_empty() {
            return Err(ConfigError::Whole {
                path: self.file.to_string(),
                message:
                    "no tasks: add at least one <Site, <Tree or <Owner block with Name and TopURL"
                        .into(),
            });
        }
        let config = Config {
            source: None,
            settings: self.settings,
            tasks: self.tasks,
            plugins: Vec::new(),
            library: Default::default(),
        };
        if let Some(message) = config.index_clash("IndexFile") {
            return Err(ConfigError::Whole {
                path: self.file.to_string(),
                message,
            });
        }
        Ok(config)
    }

    /// The avoid file is written only with a sites file (robots.txt's
    /// lines go there): without one, a missing file is a typo, and every
    /// rule it was meant to hold would be lost without a word.
    fn check_avoid_file(&self) -> Result<(), ConfigError> {
        if let Some(file) = &self.settings.avoid_file
            && self.settings.sites_file.is_none()
            && !file.is_file()
        {
            return Err(self.at(
                self.avoid_file_line,
                format!(
                    "the avoid file {} does not exist; write its path (it is created only with a SitesFile)",
                    file.display()
                ),
            ));
        }
        Ok(())
    }
}

/// `SystemAvoid FILE`: the system's avoid file, which must exist.
fn system_avoid(d: &Directive, rel: &dyn Fn(&str) -> PathBuf) -> Result<PathBuf, ConfigError> {
    let file = rel(d.value()?);
    if !file.is_file() {
        return Err(d.error(format!(
            "the system avoid file {} does not exist; write its path or remove the line",
            file.display()
        )));
    }
    Ok(file)
}

/// `SitesCheck DAYS`: how long a site's robots.txt is trusted, from 1 to
/// 3650 days.
fn sites_check(d: &Directive) -> Result<Duration, ConfigError> {
    let n = d.days()?;
    if !(1..=3650).contains(&n) {
        return Err(d.error(format!("`SitesCheck` takes from 1 to 3650 days, not {n}")));
    }
    Ok(Duration::from_secs(u64::from(n) * 86_400))
}

/// Parse the text of an instruction file named `name`.
pub fn parse_instructions(text: &str, name: &str, base_dir: &Path) -> Result<Config, ConfigError> {
    let (abs_dir, rel) = relative_to(base_dir);
    let mut reading = Reading {
        file: name,
        abs_dir,
        rel: &rel,
        settings: Settings::default(),
        seen_global: HashSet::new(),
        avoid_file_line: 0,
        tasks: Vec::new(),
        names: HashSet::new(),
        block: None,
    };
    for (i, raw) in text.lines().enumerate() {
        reading.line(i + 1, raw.trim())?;
    }
    reading.finish()
}

/// A closed block as a task; errors point at the block's first line.
fn finish_block(b: Block, abs_dir: &Path) -> Result<TaskConfig, (usize, String)> {
    let kind = format!("<{}", capitalised(b.kind.as_str()));
    let name = b
        .name
        .ok_or_else(|| (b.opened_at, format!("the {kind} block has no Name")))?;
    let top = b.top.ok_or_else(|| {
        (
            b.opened_at,
            format!("the {kind} block `{name}` has no TopURL"),
        )
    })?;
    let (output, file) = match &b.index_file {
        Some(f) => match (f.parent(), f.file_name().and_then(|n| n.to_str())) {
            (Some(dir), Some(file)) => (dir.to_path_buf(), Some(file.to_string())),
            _ => {
                return Err((
                    b.opened_at,
                    format!("IndexFile `{}` of `{name}` names no file", f.display()),
                ));
            }
        },
        None => (abs_dir.join("reports").join(sanitize(&name)), None),
    };
    Ok(TaskConfig {
        name,
        kind: b.kind,
        top,
        more_tops: Vec::new(),
        email: b.email,
        output,
        exclude: b.exclude,
        patterns: super::UrlPatterns::default(),
        changed_days: b.changed_days.unwrap_or(7),
        expiring_days: b.expiring_days.unwrap_or(7),
        default_plugins: true,
        index: IndexSettings {
            file,
            url: b.index_url,
            title: b.index_title,
        },
        notify: b.notify,
        schedule: None,
        bounds: Default::default(),
    })
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Appendix A of seed 000, verbatim.
    pub(super) const APPENDIX_A: &str = "SystemAvoid /usr/local/httpd/admin/avoid.mom
SystemSites /usr/local/httpd/admin/sites.mom
AvoidFile   /usr/grads/fielding/test/.momspider-avoid
SitesFile   /usr/grads/fielding/test/.momspider-sites
SitesCheck  7
<Site
  Name      ICS
  TopURL    http://www.ics.uci.edu/ICSHome.html
  IndexURL  http://www.ics.uci.edu/Admin/ICS.html
  IndexFile /usr/local/httpd/documentroot/MOM/ICS.html
  IndexTitle MOMspider Index for All of ICS
  EmailAddress www@ics.uci.edu
  EmailBroken
  EmailExpired 2
>
<Tree
  Name      MOMspider-WWW94
  TopURL    http://www.ics.uci.edu/WebSoft/MOMspider/WWW94/paper.html
  IndexURL  http://www.ics.uci.edu/Admin/MOMspider-WWW94.html
  IndexFile /usr/local/httpd/documentroot/Admin/MOMspider-WWW94.html
  IndexTitle MOMspider Index for Roy's WWW94 Paper
  EmailAddress fielding@ics.uci.edu
  EmailBroken
>
<Owner
  Name      RTF
  TopURL    http://www.ics.uci.edu/~fielding/hotlist.html
  IndexURL  http://www.ics.uci.edu/~fielding/MOM/RTF.html
  IndexFile /usr/grads/fielding/public_html/MOM/RTF.html
  EmailAddress fielding@ics.uci.edu
  EmailBroken
  EmailChanged 3
  EmailExpired 7
>
";

    fn parse(text: &str) -> Result<Config, ConfigError> {
        parse_instructions(text, "mom.txt", Path::new("/srv"))
    }

    #[test]
    fn appendix_a_reads_as_three_tasks() {
        assert!(is_instruction_file(APPENDIX_A));
        // The system avoid file must exist: one stands in for the seed's.
        let avoid = tempfile::NamedTempFile::new().unwrap();
        let text = APPENDIX_A.replace(
            "/usr/local/httpd/admin/avoid.mom",
            avoid.path().to_str().unwrap(),
        );
        let c = parse(&text).unwrap();
        let s = &c.settings;
        assert_eq!(s.avoid_files, [avoid.path().to_path_buf()]);
        assert_eq!(
            s.system_sites,
            [PathBuf::from("/usr/local/httpd/admin/sites.mom")]
        );
        assert_eq!(
            s.avoid_file.as_deref(),
            Some(Path::new("/usr/grads/fielding/test/.momspider-avoid"))
        );
        assert_eq!(
            s.sites_file.as_deref(),
            Some(Path::new("/usr/grads/fielding/test/.momspider-sites"))
        );
        assert_eq!(s.robots_expiry, Duration::from_secs(7 * 86_400));
        let kinds: Vec<_> = c.tasks.iter().map(|t| (t.name.as_str(), t.kind)).collect();
        assert_eq!(
            kinds,
            [
                ("ICS", TaskKind::Site),
                ("MOMspider-WWW94", TaskKind::Tree),
                ("RTF", TaskKind::Owner)
            ]
        );
        let ics = &c.tasks[0];
        assert_eq!(
            ics.output,
            PathBuf::from("/usr/local/httpd/documentroot/MOM")
        );
        assert_eq!(ics.index.file.as_deref(), Some("ICS.html"));
        assert_eq!(
            ics.index_path(),
            PathBuf::from("/usr/local/httpd/documentroot/MOM/ICS.html")
        );
        assert_eq!(
            ics.index.title.as_deref(),
            Some("MOMspider Index for All of ICS")
        );
        assert_eq!(
            ics.index.url.as_ref().map(Url::as_str),
            Some("http://www.ics.uci.edu/Admin/ICS.html")
        );
        assert_eq!(ics.email.as_deref(), Some("www@ics.uci.edu"));
        assert_eq!(
            ics.notify,
            Notify {
                broken: true,
                moved: false,
                changed: false,
                expired: true
            }
        );
        assert_eq!(ics.expiring_days, 2);
        let rtf = &c.tasks[2];
        assert_eq!((rtf.changed_days, rtf.expiring_days), (3, 7));
        assert!(rtf.notify.changed && rtf.notify.broken && rtf.notify.expired);
        assert_eq!(
            c.tasks[1].index.title.as_deref(),
            Some("MOMspider Index for Roy's WWW94 Paper")
        );
    }

    #[test]
    fn toml_is_not_taken_for_instructions() {
        assert!(!is_instruction_file("# c\nconcurrency = 4\n[[task]]\n"));
        assert!(!is_instruction_file("[[task]]\nname = \"x\"\n"));
        assert!(!is_instruction_file("store=\"x.db\"\n"));
        assert!(is_instruction_file("# MOMspider\nSitesCheck 7\n"));
    }

    #[test]
    fn errors_name_the_line() {
        let e = |t: &str| parse(t).unwrap_err().to_string();
        assert_eq!(
            e("SitesCheck 7\nMaxDepth 3\n"),
            "mom.txt:2:1: unknown directive `MaxDepth`; the global directives (outside task blocks) are SystemAvoid, SystemSites, AvoidFile, SitesFile, SitesCheck, MailServer"
        );
        assert_eq!(
            e("<Site\n Name A\n TopURL http://a.example/\n Color blue\n>\n"),
            "mom.txt:4:1: unknown directive `Color`; the directives of a task block are Name, TopURL, IndexURL, IndexFile, IndexTitle, EmailAddress, EmailBroken, EmailChanged, EmailExpired, Exclude"
        );
        assert_eq!(
            e("<Site\n Name A\n TopURL http://a.example/\n"),
            "mom.txt:1:1: this block is never closed; end it with a line holding only `>`"
        );
        assert_eq!(
            e("<Tree\n TopURL http://a.example/\n>\n"),
            "mom.txt:1:1: the <Tree block has no Name"
        );
        assert_eq!(
            e("SitesCheck soon\n"),
            "mom.txt:1:1: `SitesCheck` takes a whole number of days, not `soon`"
        );
        assert_eq!(
            e("SitesCheck 0\n"),
            "mom.txt:1:1: `SitesCheck` takes from 1 to 3650 days, not 0"
        );
        assert_eq!(
            e("SitesCheck 7\nSystemAvoid /nonexistent/avoid\n"),
            "mom.txt:2:1: the system avoid file /nonexistent/avoid does not exist; write its path or remove the line"
        );
        assert_eq!(
            e("AvoidFile /nonexistent/avoid\n<Site\n Name A\n TopURL http://a.example/\n>\n"),
            "mom.txt:1:1: the avoid file /nonexistent/avoid does not exist; write its path (it is created only with a SitesFile)"
        );
        assert_eq!(
            e("<Site\n Name A\n TopURL http://a.example/\n EmailChanged\n>\n"),
            "mom.txt:4:1: `EmailChanged` needs a value"
        );
        assert_eq!(
            e("Name A\n"),
            "mom.txt:1:1: `Name` belongs inside a <Site, <Tree or <Owner block"
        );
        assert_eq!(
            e("<Site\n SitesCheck 3\n>\n"),
            "mom.txt:2:1: `SitesCheck` is a global directive; it cannot be inside the block of line 1"
        );
        assert_eq!(
            e("<Web\n"),
            "mom.txt:1:1: unknown block `<web`; tasks are `<Site`, `<Tree` or `<Owner`, each on a line of its own"
        );
        assert!(e("<Site\n Name A\n TopURL gopher://a/\n>\n").starts_with("mom.txt:3:1: top URL"));
        assert!(
            e("<Site\n Name A\n TopURL http://a.example/\n>\n<Owner\n Name A\n TopURL http://a.example/\n>\n")
                .starts_with("mom.txt:8:1: a second task is named `A`")
        );
    }

    #[test]
    fn relative_paths_and_default_outputs() {
        // With a sites file, the avoid file need not exist yet: the run
        // writes it.
        let c = parse("AvoidFile my.avoid\nSitesFile my.sites\n<Site\n Name My Web\n TopURL http://a.example/\n Exclude http://a.example/tmp/\n>\n").unwrap();
        assert_eq!(
            c.settings.avoid_file.as_deref(),
            Some(Path::new("/srv/my.avoid"))
        );
        let t = &c.tasks[0];
        assert_eq!(t.name, "My Web");
        assert_eq!(t.output, PathBuf::from("/srv/reports/My_Web"));
        assert_eq!(
            t.index_path(),
            PathBuf::from("/srv/reports/My_Web/index.html")
        );
        assert_eq!(t.exclude, ["http://a.example/tmp/"]);
        assert_eq!(t.notify, Notify::default());
    }
}
