//! Where a password comes from: an environment variable or a file, never
//! the configuration itself. The `[mail]` table, `[[request]]` tables and a
//! PostgreSQL `store` name their passwords this way.

use serde_spanned::Spanned;
use std::ops::Range;
use std::path::PathBuf;

/// Where a password (the SMTP server's, a `[[request]]` table's, the
/// store's) is read from when it is needed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Password {
    /// An environment variable.
    Env(String),
    /// A file (its first line).
    File(PathBuf),
}

/// The most bytes of a password file read: a password is one short line,
/// and a device or a huge file named by mistake (`/dev/zero`) is not read
/// whole.
const MAX_PASSWORD_FILE_LINE: u64 = 4096;

/// The first line of the file at `path` (without its line ending), read
/// through at most [`MAX_PASSWORD_FILE_LINE`] bytes: an error when no line
/// ends within them, or when the line is not UTF-8.
fn first_line(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::{BufRead, Read};
    let file = std::fs::File::open(path)?;
    let mut line = Vec::new();
    std::io::BufReader::new(file)
        .take(MAX_PASSWORD_FILE_LINE + 1)
        .read_until(b'\n', &mut line)?;
    let ended = line.last() == Some(&b'\n');
    if !ended && line.len() as u64 > MAX_PASSWORD_FILE_LINE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "its first line is longer than {MAX_PASSWORD_FILE_LINE} bytes; a password file holds the password alone on its first line"
            ),
        ));
    }
    while matches!(line.last(), Some(b'\n' | b'\r')) {
        line.pop();
    }
    String::from_utf8(line).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "its first line is not UTF-8 text",
        )
    })
}

impl Password {
    /// The password: the variable's value, or the file's first line. The
    /// error is the file's (`None` for a variable that is not set).
    pub fn value(&self) -> Result<String, Option<std::io::Error>> {
        match self {
            Password::Env(var) => std::env::var(var).map_err(|_| None),
            Password::File(path) => first_line(path).map_err(Some),
        }
    }

    /// Read the password now; the message names it (`what`: "SMTP
    /// password") and the key it was named by (`key`: `mail.password`, to
    /// which `_env` or `_file` is added).
    pub fn read(&self, what: &str, key: &str) -> Result<String, String> {
        self.value().map_err(|e| match (self, e) {
            (Password::Env(var), _) => {
                format!("the {what} variable {var} is not set ({key}_env)")
            }
            (Password::File(path), e) => format!(
                "cannot read the {what} file {} ({key}_file): {}",
                path.display(),
                e.map_or_else(String::new, |e| e.to_string())
            ),
        })
    }
}

/// Where a table's password is (`[mail]`, `[[request]]`; the store's,
/// whose keys have the `prefix` `store_`): the variable of `password_env`
/// or the file of `password_file`, not both; a `password` key (`literal`)
/// is refused, as a password is never in the configuration. `what` names
/// the password in that refusal.
pub(super) fn password_source(
    what: &str,
    prefix: &str,
    literal: Option<&Spanned<toml::Value>>,
    env: Option<&str>,
    file: Option<&str>,
    table: &Range<usize>,
    rel: &dyn Fn(&str) -> PathBuf,
) -> Result<Option<Password>, (Option<Range<usize>>, String)> {
    if let Some(p) = literal {
        return Err((
            Some(p.span()),
            format!(
                "{what} is never read from the configuration; name where it is with {prefix}password_env = \"VARIABLE\" or {prefix}password_file = \"PATH\""
            ),
        ));
    }
    match (env, file) {
        (Some(_), Some(_)) => Err((
            Some(table.clone()),
            format!("give {prefix}password_env or {prefix}password_file, not both"),
        )),
        (Some(v), None) => Ok(Some(Password::Env(v.to_string()))),
        (None, Some(f)) => Ok(Some(Password::File(rel(f)))),
        (None, None) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_file_is_read_to_its_first_line_and_no_further() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pw");
        std::fs::write(&file, "s3cret\r\nsecond line\n").unwrap();
        assert_eq!(
            Password::File(file.clone()).value().unwrap(),
            "s3cret".to_string()
        );
        std::fs::write(&file, "no line end").unwrap();
        assert_eq!(Password::File(file.clone()).value().unwrap(), "no line end");
        // A device that never ends, and a file of one endless line: refused
        // after 4 KiB, not read whole.
        for endless in [std::path::PathBuf::from("/dev/zero"), file.clone()] {
            if endless == file {
                std::fs::write(&file, vec![b'x'; 1 << 20]).unwrap();
            }
            let e = Password::File(endless.clone())
                .read("SMTP password", "mail.password")
                .unwrap_err();
            assert!(
                e.ends_with("its first line is longer than 4096 bytes; a password file holds the password alone on its first line"),
                "{e}"
            );
        }
    }
}
