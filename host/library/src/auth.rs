//! Who may change what in the library: posting passwords (argon2id hashes
//! only), moderators' sessions, the CSRF token every form carries, and the
//! bound on wrong passwords.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Wrong passwords allowed per posting, and per client, in [`WINDOW`].
pub const MAX_WRONG: u32 = 5;
/// Wrong passwords allowed for one moderator from all clients together in
/// [`WINDOW`]: many more than one client may make, so that one who guesses
/// from one address locks out only themselves, but a bound still when the
/// guesses come from many addresses.
pub const MAX_WRONG_MODERATOR: u32 = 50;
/// The window over which wrong passwords are counted.
pub const WINDOW: Duration = Duration::from_secs(15 * 60);
/// Posts (Point, Pointers, Input, Create, Copy: each adds postings)
/// allowed per client in [`POST_WINDOW`]; moderators are not counted.
pub const MAX_POSTS: u32 = 100;
/// The window over which posts are counted.
pub const POST_WINDOW: Duration = Duration::from_secs(10 * 60);
/// How long a moderator's session lasts.
const SESSION: Duration = Duration::from_secs(12 * 60 * 60);
/// The most clients and postings whose wrong passwords are remembered, and
/// the most sessions: past it the oldest are forgotten.
const MAX_TRACKED: usize = 100_000;

/// The argon2id hash (PHC string) of `password`, with a fresh salt.
pub fn hash_password(password: &str) -> anyhow::Result<String> {
    use argon2::password_hash::{PasswordHasher, SaltString};
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system has no random source");
    let salt =
        SaltString::encode_b64(&bytes).map_err(|e| anyhow::anyhow!("cannot make a salt: {e}"))?;
    argon2::Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| anyhow::anyhow!("cannot hash the password: {e}"))
}

/// Whether `password` matches `hash` (a PHC string; anything else matches
/// nothing).
pub fn verify_password(hash: &str, password: &str) -> bool {
    use argon2::password_hash::{PasswordHash, PasswordVerifier};
    PasswordHash::new(hash).is_ok_and(|h| {
        argon2::Argon2::default()
            .verify_password(password.as_bytes(), &h)
            .is_ok()
    })
}

pub use spinneret_config::library::is_argon2id;

/// What wrong passwords and posts are counted against for a client at
/// `address`: the client as `serve` counts them ([`spinneret_core::client::client_of`]:
/// an IPv6 address by its /64).
fn client_key(address: &str) -> String {
    match address.parse::<std::net::IpAddr>() {
        Ok(ip) => match spinneret_core::client::client_of(ip) {
            std::net::IpAddr::V6(block) => format!("{block}/64"),
            v4 => v4.to_string(),
        },
        Err(_) => address.to_string(),
    }
}

/// The hash a password is checked against when the name is no
/// moderator's: of a random password, made once, so the check costs what a
/// real one does and matches nothing.
fn no_one() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| hash_password(&random_hex(16)).expect("argon2id hashes any password"))
}

/// `n` random bytes, as lowercase hex.
pub fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).expect("the operating system has no random source");
    hex(&bytes)
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Counts per key (wrong passwords per posting or client, posts per
/// client), each over a window from the first it counts.
struct Counts {
    window: Duration,
    counts: HashMap<String, (u32, Instant)>,
}

impl Counts {
    fn new(window: Duration) -> Counts {
        Counts {
            window,
            counts: HashMap::new(),
        }
    }

    /// How long `key` must wait, when it has had its `most`.
    fn wait(&self, key: &str, most: u32, now: Instant) -> Option<Duration> {
        let (n, since) = self.counts.get(key)?;
        let elapsed = now.duration_since(*since);
        (*n >= most && elapsed < self.window).then(|| self.window - elapsed)
    }

    fn add(&mut self, key: &str, now: Instant) {
        let window = self.window;
        if self.counts.len() >= MAX_TRACKED {
            self.counts
                .retain(|_, (_, since)| now.duration_since(*since) < window);
            if self.counts.len() >= MAX_TRACKED {
                self.counts.clear();
            }
        }
        let e = self.counts.entry(key.to_string()).or_insert((0, now));
        if now.duration_since(e.1) >= window {
            *e = (0, now);
        }
        e.0 += 1;
    }
}

/// The server's secrets and what it remembers of its clients.
pub struct Guard {
    /// Signs the CSRF tokens (new with every server start).
    key: [u8; 32],
    wrong: Mutex<Counts>,
    posts: Mutex<Counts>,
    sessions: Mutex<HashMap<String, (String, Instant)>>,
    /// The moderators: name and password hash.
    moderators: Vec<(String, String)>,
}

impl Guard {
    /// A guard for a server whose moderators are `moderators` (name,
    /// argon2id hash).
    pub fn new(moderators: Vec<(String, String)>) -> Guard {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the operating system has no random source");
        Guard {
            key,
            wrong: Mutex::new(Counts::new(WINDOW)),
            posts: Mutex::new(Counts::new(POST_WINDOW)),
            sessions: Mutex::default(),
            moderators,
        }
    }

    /// The MAC of `client`'s forms, before it is finished.
    fn form_mac(&self, client: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("any key length");
        mac.update(b"spinneret library form\0");
        mac.update(client.as_bytes());
        mac
    }

    /// The CSRF token of the client whose cookie is `client`.
    pub fn csrf_token(&self, client: &str) -> String {
        hex(&self.form_mac(client).finalize().into_bytes())
    }

    /// Whether `token` is the CSRF token of `client` (compared in constant
    /// time).
    pub fn csrf_ok(&self, client: &str, token: &str) -> bool {
        let Some(bytes) = unhex(token) else {
            return false;
        };
        !client.is_empty() && self.form_mac(client).verify_slice(&bytes).is_ok()
    }

    /// Check `password` against `hash` for posting `posting`, asked by
    /// `client`: refused without trying once either has had
    /// [`MAX_WRONG`] wrong passwords within [`WINDOW`].
    pub fn check_password(
        &self,
        posting: i64,
        client: &str,
        hash: &str,
        password: &str,
    ) -> Result<(), Refusal> {
        let client = client_key(client);
        let keys = [
            (format!("posting {posting}"), MAX_WRONG),
            (format!("client {client}"), MAX_WRONG),
        ];
        self.attempt(&keys, || verify_password(hash, password))
    }

    /// Count a post by the client at `client`: refused, uncounted, once
    /// it has posted [`MAX_POSTS`] times within [`POST_WINDOW`].
    pub fn post(&self, client: &str) -> Result<(), Refusal> {
        let key = client_key(client);
        let now = Instant::now();
        let mut posts = self.posts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(wait) = posts.wait(&key, MAX_POSTS, now) {
            return Err(Refusal::TooManyPosts(wait));
        }
        posts.add(&key, now);
        Ok(())
    }

    /// Log moderator `name` in with `password` for `client`: the session
    /// id, or why not.
    ///
    /// Wrong passwords are counted per client ([`MAX_WRONG`]) and per
    /// moderator from all clients together ([`MAX_WRONG_MODERATOR`]): one
    /// who guesses at a moderator's name from one address locks out
    /// themselves, not the moderator (before, five wrong passwords from
    /// anywhere locked the moderator out for the window), and guesses
    /// spread over many addresses are still bounded. A name that is no
    /// moderator's costs the same hash check as one that is, so the time
    /// of the answer does not tell which names are moderators.
    pub fn log_in(&self, client: &str, name: &str, password: &str) -> Result<String, Refusal> {
        let client = client_key(client);
        let keys = [
            (format!("client {client}"), MAX_WRONG),
            (format!("moderator {name}"), MAX_WRONG_MODERATOR),
        ];
        let hash = self
            .moderators
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, h)| h.as_str());
        self.attempt(&keys, || {
            let checked = verify_password(hash.unwrap_or(no_one()), password);
            hash.is_some() && checked
        })?;
        let id = random_hex(32);
        let now = Instant::now();
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        if sessions.len() >= MAX_TRACKED {
            sessions.retain(|_, (_, since)| now.duration_since(*since) < SESSION);
        }
        sessions.insert(id.clone(), (name.to_string(), now));
        Ok(id)
    }

    /// The moderator whose session is `id`, while it lasts.
    pub fn moderator(&self, id: &str) -> Option<String> {
        let sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let (name, since) = sessions.get(id)?;
        (since.elapsed() < SESSION).then(|| name.clone())
    }

    /// End session `id`.
    pub fn log_out(&self, id: &str) {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }

    /// Whether any moderator is configured.
    pub fn has_moderators(&self) -> bool {
        !self.moderators.is_empty()
    }

    fn attempt(&self, keys: &[(String, u32)], check: impl FnOnce() -> bool) -> Result<(), Refusal> {
        let now = Instant::now();
        {
            let wrong = self.wrong.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(wait) = keys
                .iter()
                .filter_map(|(k, most)| wrong.wait(k, *most, now))
                .max()
            {
                return Err(Refusal::TooMany(wait));
            }
        }
        if check() {
            return Ok(());
        }
        let mut wrong = self.wrong.lock().unwrap_or_else(|p| p.into_inner());
        for (k, _) in keys {
            wrong.add(k, now);
        }
        Err(Refusal::Wrong)
    }
}

/// Why a password was not accepted.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// It is not the password.
    Wrong,
    /// Too many wrong passwords lately: try again after this long.
    TooMany(Duration),
    /// It holds postings with passwords of their own, which moving or
    /// deleting it would move or delete: a moderator's to do.
    HoldsProtected,
    /// The client has posted [`MAX_POSTS`] times lately: it may post
    /// again after this long.
    TooManyPosts(Duration),
}

impl Refusal {
    /// The HTTP status that says it: 403, or 429 while guessing or posting
    /// is cut off.
    pub fn status(&self) -> axum::http::StatusCode {
        match self {
            Refusal::Wrong | Refusal::HoldsProtected => axum::http::StatusCode::FORBIDDEN,
            Refusal::TooMany(_) | Refusal::TooManyPosts(_) => {
                axum::http::StatusCode::TOO_MANY_REQUESTS
            }
        }
    }

    /// How long to wait before asking again (a 429's `Retry-After`), in
    /// whole seconds rounded up; none when waiting does not help.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            Refusal::TooMany(wait) | Refusal::TooManyPosts(wait) => {
                Some(wait.as_secs() + u64::from(wait.subsec_nanos() > 0))
            }
            Refusal::Wrong | Refusal::HoldsProtected => None,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Wrong => write!(f, "the password is wrong"),
            Refusal::HoldsProtected => write!(
                f,
                "it holds postings protected by passwords of their own; only a moderator may move or delete it"
            ),
            Refusal::TooMany(wait) => write!(
                f,
                "too many wrong passwords; try again in {} minutes",
                wait.as_secs().div_ceil(60).max(1)
            ),
            Refusal::TooManyPosts(wait) => write!(
                f,
                "this address has posted {MAX_POSTS} times within {} minutes, the most the library takes; post again in {} minutes, or ask a moderator",
                POST_WINDOW.as_secs() / 60,
                wait.as_secs().div_ceil(60).max(1)
            ),
        }
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || s.len() > 128 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_stored_as_argon2id_hashes() {
        let h = hash_password("s3cret").unwrap();
        assert!(h.starts_with("$argon2id$"), "{h}");
        assert!(verify_password(&h, "s3cret"));
        assert!(!verify_password(&h, "s3cret "));
        assert!(!verify_password("not a hash", "s3cret"));
    }

    #[test]
    fn a_token_belongs_to_its_client() {
        let g = Guard::new(Vec::new());
        let t = g.csrf_token("client-a");
        assert!(g.csrf_ok("client-a", &t));
        assert!(!g.csrf_ok("client-b", &t));
        assert!(!g.csrf_ok("", &g.csrf_token("")));
        assert!(!g.csrf_ok("client-a", "zz"));
        // Another server's token is not this one's.
        assert!(!Guard::new(Vec::new()).csrf_ok("client-a", &t));
    }

    #[test]
    fn wrong_passwords_are_counted_per_posting_and_per_client() {
        let g = Guard::new(Vec::new());
        let h = hash_password("right").unwrap();
        for _ in 0..MAX_WRONG {
            assert_eq!(g.check_password(1, "a", &h, "wrong"), Err(Refusal::Wrong));
        }
        // Posting 1 is closed to everyone for a while, the right password
        // included; client a is closed for every posting.
        assert!(matches!(
            g.check_password(1, "b", &h, "right"),
            Err(Refusal::TooMany(_))
        ));
        assert!(matches!(
            g.check_password(2, "a", &h, "right"),
            Err(Refusal::TooMany(_))
        ));
        assert_eq!(g.check_password(2, "b", &h, "right"), Ok(()));
    }

    /// Posting is bounded per client (before, 200 posts from one address
    /// in 0.6 s were all taken), an IPv6 client by its /64.
    #[test]
    fn posts_are_counted_per_client() {
        let g = Guard::new(Vec::new());
        for _ in 0..MAX_POSTS {
            assert_eq!(g.post("2001:db8::1"), Ok(()));
        }
        let refused = g.post("2001:db8::2").unwrap_err();
        assert!(matches!(refused, Refusal::TooManyPosts(_)), "{refused:?}");
        assert_eq!(refused.status(), 429);
        assert!(
            (POST_WINDOW.as_secs() - 1..=POST_WINDOW.as_secs())
                .contains(&refused.retry_after().unwrap())
        );
        assert_eq!(
            refused.to_string(),
            "this address has posted 100 times within 10 minutes, the most the library takes; post again in 10 minutes, or ask a moderator"
        );
        assert_eq!(g.post("2001:db8:0:1::1"), Ok(()));
        assert_eq!(g.post("10.0.0.1"), Ok(()));
    }

    #[test]
    fn guessing_at_a_moderator_locks_out_the_guesser_not_the_moderator() {
        let h = hash_password("right").unwrap();
        let g = Guard::new(vec![("mod".into(), h)]);
        for _ in 0..MAX_WRONG {
            assert_eq!(g.log_in("10.0.0.9", "mod", "wrong"), Err(Refusal::Wrong));
        }
        assert!(matches!(
            g.log_in("10.0.0.9", "mod", "right"),
            Err(Refusal::TooMany(_))
        ));
        let session = g.log_in("127.0.0.1", "mod", "right").unwrap();
        assert_eq!(g.moderator(&session).as_deref(), Some("mod"));
        // Addresses of one IPv6 /64 count as one client.
        for i in 0..MAX_WRONG {
            let address = format!("2001:db8:1:2::{i:x}");
            assert_eq!(g.log_in(&address, "mod", "wrong"), Err(Refusal::Wrong));
        }
        assert!(matches!(
            g.log_in("2001:db8:1:2::ffff", "mod", "right"),
            Err(Refusal::TooMany(_))
        ));
        // Guesses spread over many addresses are bounded for the moderator.
        for i in 0..MAX_WRONG_MODERATOR {
            let _ = g.log_in(&format!("10.1.{}.{}", i / 200, i % 200), "mod", "wrong");
        }
        assert!(matches!(
            g.log_in("10.9.9.9", "mod", "right"),
            Err(Refusal::TooMany(_))
        ));
        // A name no moderator has is wrong, however the password reads,
        // and counts against the client like any other.
        assert_eq!(g.log_in("10.0.0.8", "nobody", ""), Err(Refusal::Wrong));
        assert_eq!(g.log_in("10.0.0.8", "nobody", "right"), Err(Refusal::Wrong));
    }
}
