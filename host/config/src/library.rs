//! The `[library]` table: how `spinneret serve` presents GENVL's library,
//! who moderates it, and which of its VLs feeds the Worm.
//!
//! ```toml
//! [library]
//! title = "The WWW Virtual Library"
//! worm = 12          # the VL at /library/12: its pointers become tops of every `web` task
//!
//! [[library.moderator]]
//! name = "alice"
//! password_hash = "$argon2id$v=19$m=19456,t=2,p=1$…"   # spinneret library hash-password
//! ```

use serde::Deserialize;
use serde_spanned::Spanned;
use std::collections::HashSet;
use std::ops::Range;

/// The library's settings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LibrarySettings {
    /// The root library's title when the store has no library yet.
    pub title: Option<String>,
    /// The moderators, who may edit, move and delete anywhere.
    pub moderators: Vec<Moderator>,
    /// The VL whose pointers are added to the tops of every `web` task
    /// (the seed's "add your page to the Worm").
    pub worm: Option<i64>,
    /// The configuration's `internal_hosts`: the hosts of this machine or
    /// its network a posting may point at (no other such address may be
    /// posted).
    pub internal_hosts: Vec<String>,
}

/// A moderator's account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Moderator {
    /// The name they log in with.
    pub name: String,
    /// The argon2id hash of their password (a PHC string).
    pub password_hash: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLibrary {
    title: Option<Spanned<String>>,
    worm: Option<Spanned<i64>>,
    #[serde(default, rename = "moderator")]
    moderators: Vec<RawModerator>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModerator {
    name: Spanned<String>,
    password_hash: Spanned<String>,
}

/// The `[library]` table checked: titles on one line, moderators named
/// once each with an argon2id hash (never a password).
pub(super) fn library_settings(
    raw: RawLibrary,
) -> Result<LibrarySettings, (Option<Range<usize>>, String)> {
    let title = match raw.title {
        Some(t) => {
            let value = t.get_ref().trim();
            if value.is_empty() || value.chars().any(char::is_control) || value.len() > 300 {
                return Err((
                    Some(t.span()),
                    "the library's title must be one line of at most 300 characters".into(),
                ));
            }
            Some(value.to_string())
        }
        None => None,
    };
    let worm = match raw.worm {
        Some(w) if *w.get_ref() < 1 => {
            return Err((
                Some(w.span()),
                "`worm` is the number in a VL's address (/library/12 is 12)".into(),
            ));
        }
        w => w.map(Spanned::into_inner),
    };
    let mut names = HashSet::new();
    let mut moderators = Vec::new();
    for m in raw.moderators {
        let name = m.name.get_ref().trim();
        if name.is_empty() || name.chars().any(char::is_control) || name.len() > 100 {
            return Err((
                Some(m.name.span()),
                "a moderator's name must be one line of at most 100 characters".into(),
            ));
        }
        if !names.insert(name.to_string()) {
            return Err((
                Some(m.name.span()),
                format!("a second moderator is named `{name}`; names must be unique"),
            ));
        }
        let hash = m.password_hash.get_ref().trim();
        if !is_argon2id(hash) {
            return Err((
                Some(m.password_hash.span()),
                format!(
                    "`password_hash` of moderator `{name}` is not an argon2id hash; make one with `spinneret library hash-password` and paste what it prints (the password itself never goes in the configuration)"
                ),
            ));
        }
        moderators.push(Moderator {
            name: name.to_string(),
            password_hash: hash.to_string(),
        });
    }
    Ok(LibrarySettings {
        title,
        moderators,
        worm,
        internal_hosts: Vec::new(),
    })
}

/// Whether `hash` is an argon2id hash in the PHC string format (what
/// [`hash_password`] makes), the only form a password is kept in, with
/// costs a server can afford to check: at most 256 MiB of memory, 16
/// passes and 8 lanes (a hash from a hostile file could otherwise ask for
/// terabytes on the first password tried).
pub fn is_argon2id(hash: &str) -> bool {
    argon2::password_hash::PasswordHash::new(hash).is_ok_and(|h| {
        let within = |name: &str, most: u32| {
            h.params
                .get_decimal(name)
                .is_some_and(|v| (1..=most).contains(&v))
        };
        h.algorithm.as_str() == "argon2id"
            && h.hash.is_some()
            && h.version.is_none_or(|v| v == 19)
            && within("m", 256 * 1024)
            && within("t", 16)
            && within("p", 8)
    })
}
