//! Sharing plugins: pack, sign, trust, install (from a file and from a real
//! OCI registry on loopback), list, info, remove, update, and a crawl that
//! names an installed plugin as `NAME@^VERSION`. Every command runs the
//! binary as a user would, with `SPINNERET_HOME` in a temporary directory.

use crate::common::{self, expect_exit, text};
use spinneret_bundle::Bundle;
use spinneret_tests::fixtures::page;
use spinneret_tests::harness::Setup;
use spinneret_tests::registry::Registry;
use spinneret_tests::server::{Site, TestWeb, Web};
use std::path::{Path, PathBuf};
use std::process::Output;

const FUTURE: &str = env!("TEST_PLUGIN_FUTURE_API");

/// An author's workspace and a user's plugin home.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        World {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    fn home(&self) -> PathBuf {
        self.path("home")
    }

    /// `spinneret ARGS` with this world's plugin home, stdin closed.
    fn run(&self, args: &[&str]) -> Output {
        common::command()
            .env("SPINNERET_HOME", self.home())
            .current_dir(self.dir.path())
            .stdin(std::process::Stdio::null())
            .args(args)
            .output()
            .expect("run spinneret")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        expect_exit(&out, 0);
        text(&out.stdout)
    }

    fn refused(&self, args: &[&str]) -> String {
        let out = self.run(args);
        expect_exit(&out, 2)
    }

    /// A plugin directory `name` holding the built-in json-report's
    /// component (as its author's build output) and a manifest.
    fn author(&self, name: &str, version: &str, extra: &str) -> PathBuf {
        self.author_with(name, version, extra, json_report())
    }

    fn author_with(&self, name: &str, version: &str, extra: &str, component: Vec<u8>) -> PathBuf {
        let dir = self.path(&format!("src-{name}-{version}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("component.wasm"), component).unwrap();
        std::fs::write(
            dir.join("plugin.toml"),
            format!(
                "schema = 1\nname = \"{name}\"\nversion = \"{version}\"\ndescription = \"JSON lines for machines\"\nauthors = [\"Ada <ada@example.org>\"]\nlicense = \"MIT\"\ncomponent = \"component.wasm\"\n{extra}"
            ),
        )
        .unwrap();
        std::fs::write(dir.join("README.md"), format!("# {name}\n")).unwrap();
        dir
    }

    /// Pack and sign; returns the bundle's path.
    fn pack_and_sign(&self, dir: &Path) -> PathBuf {
        let out = self.ok(&["plugin", "pack", dir.to_str().unwrap()]);
        let file = out
            .split_whitespace()
            .find(|w| w.ends_with(".spkg"))
            .expect("pack names its bundle")
            .to_string();
        let bundle = self.path(&file);
        self.ok(&[
            "plugin",
            "sign",
            bundle.to_str().unwrap(),
            "--key",
            self.path("author.key").to_str().unwrap(),
        ]);
        bundle
    }

    /// The author makes a key; the user trusts it.
    fn keys(&self) {
        self.ok(&["plugin", "keygen", "--out", "author", "--no-password"]);
        self.ok(&["plugin", "trust", "add", "author.pub"]);
    }

    /// What is installed: every file under the plugin home's plugins/.
    fn installed_files(&self) -> Vec<String> {
        fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, root, out);
                } else {
                    out.push(p.strip_prefix(root).unwrap().display().to_string());
                }
            }
        }
        let mut out = Vec::new();
        let root = self.home().join("plugins");
        walk(&root, &root, &mut out);
        out.sort();
        out
    }
}

fn json_report() -> Vec<u8> {
    spinneret_plugin_host::builtin::builtin("json-report")
        .expect("built in")
        .to_vec()
}

fn web() -> Web {
    Web::new().site(
        "a.example",
        Site::new().page(
            "/index.html",
            &page("Home", None, r#"<a href="gone.html">Gone</a>"#),
        ),
    )
}

/// `spinneret crawl` of the test web with one `[[plugin]]` whose source is
/// `source` (the default plugins off); the setup holds the reports.
fn crawl_using(world: &World, source: &str) -> (Setup, Output) {
    let web = TestWeb::start(web());
    let setup = Setup::new(
        &web,
        &format!(
            "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{{PORT}}/index.html\"\ndefault_plugins = false\n\n[[plugin]]\nname = \"shared\"\nsource = \"{source}\"\n"
        ),
    );
    let out = common::command()
        .env("SPINNERET_HOME", world.home())
        .arg("crawl")
        .arg(&setup.config_path)
        .output()
        .unwrap();
    (setup, out)
}

/// Crawl with the installed plugin named as `source`; returns report.jsonl.
fn crawl_with(world: &World, source: &str) -> String {
    let (setup, out) = crawl_using(world, source);
    expect_exit(&out, 1);
    std::fs::read_to_string(setup.path().join("reports/A/report.jsonl")).unwrap()
}

#[test]
fn pack_sign_install_list_info_and_crawl_with_it() {
    let w = World::new();
    w.keys();
    let dir = w.author(
        "link-report",
        "1.2.0",
        "[capabilities]\nmemory = \"32MiB\"\n",
    );
    let bundle = w.pack_and_sign(&dir);
    assert_eq!(bundle.file_name().unwrap(), "link-report-1.2.0.spkg");
    let b = Bundle::read(&bundle).unwrap();
    // A .wasm file with plugin.toml beside it packs the same component.
    let component = dir.join("component.wasm");
    w.ok(&[
        "plugin",
        "pack",
        component.to_str().unwrap(),
        "-o",
        "by-file.spkg",
    ]);
    let by_file = Bundle::read(&w.path("by-file.spkg")).unwrap();
    assert_eq!(by_file.manifest, b.manifest);
    assert_eq!(b.manifest.kind.as_deref(), Some("reporter"));
    assert_eq!(b.manifest.api.as_ref().unwrap().to_string(), "0.5.0");
    assert!(b.signature.is_some());

    let out = w.ok(&["plugin", "install", bundle.to_str().unwrap(), "--yes"]);
    assert!(
        out.starts_with("installed link-report 1.2.0 (signed by key "),
        "{out}"
    );
    assert!(out.contains("source = \"link-report@^1.2.0\""), "{out}");
    assert_eq!(
        w.installed_files(),
        [
            "link-report/1.2.0/README.md",
            "link-report/1.2.0/install.toml",
            "link-report/1.2.0/plugin.toml",
            "link-report/1.2.0/plugin.toml.minisig",
            "link-report/1.2.0/plugin.wasm",
        ]
    );
    // Installing the same bundle again changes nothing.
    let again = w.ok(&["plugin", "install", bundle.to_str().unwrap(), "--yes"]);
    assert!(
        again.starts_with("link-report 1.2.0 is already installed"),
        "{again}"
    );
    // The same version with another component is refused, before any question.
    let other = w.author_with(
        "link-report",
        "1.2.0",
        "",
        std::fs::read(env!("TEST_PLUGIN_HOSTILE_REPORTER")).unwrap(),
    );
    let other = w.pack_and_sign(&other);
    let err = w.refused(&["plugin", "install", other.to_str().unwrap()]);
    assert!(
        err.contains("link-report 1.2.0 is already installed with a different component; `spinneret plugin remove link-report@1.2.0` first"),
        "{err}"
    );
    assert!(!err.contains("it asks for"), "{err}");

    let list = w.ok(&["plugin", "list"]);
    let cols: Vec<&str> = list.split_whitespace().collect();
    assert_eq!(&cols[..3], ["link-report", "1.2.0", "reporter"], "{list}");
    let info = w.ok(&["plugin", "info", "link-report"]);
    assert!(info.contains("memory: 32 MiB per instance"), "{info}");
    // A name that is a built-in's, not an installed plugin's, says so.
    assert_eq!(
        w.refused(&["plugin", "info", "searxng"]),
        "spinneret: searxng is not installed, but spinneret has a built-in plugin of that name: `builtin:searxng` (see `spinneret plugin inspect builtin:searxng`; its settings are in docs/plugins.md)\n"
    );
    let help = w.ok(&["plugin", "--help"]);
    assert!(
        help.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .starts_with("Write, examine and share plugins: `new`, `inspect`, `run`, `builtins`; `pack`, `keygen`, `sign`, `trust`, `push`; `install`"),
        "the sharing commands are named first: {help}"
    );
    assert!(info.contains("network: none"), "{info}");
    assert!(
        info.contains(&format!("source       {}", bundle.display())),
        "{info}"
    );

    let report = crawl_with(&w, "link-report@^1.2");
    assert!(report.contains("\"category\":\"broken\""), "{report}");
    assert!(report.contains("/gone.html"), "{report}");

    // A requirement nothing installed meets is a located configuration error.
    let (_, out) = crawl_using(&w, "link-report@^2");
    let err = expect_exit(&out, 2);
    assert!(
        err.contains("no installed version of `link-report` matches ^2 (installed: 1.2.0)"),
        "{err}"
    );

    let removed = w.ok(&["plugin", "remove", "link-report@1.2.0"]);
    assert_eq!(removed.trim(), "removed link-report 1.2.0");
    assert!(w.installed_files().is_empty());
}

#[test]
fn tampered_unsigned_untrusted_and_incompatible_bundles_are_refused() {
    let w = World::new();
    w.keys();
    let bundle = w.pack_and_sign(&w.author("p", "1.0.0", ""));

    // A component changed after packing: its sha256 is not the manifest's.
    let mut b = Bundle::read(&bundle).unwrap();
    let last = b.component.len() - 1;
    b.component[last] ^= 1;
    b.write(&w.path("tampered.spkg")).unwrap();
    let err = w.refused(&["plugin", "install", "tampered.spkg", "--yes"]);
    assert!(err.contains("the component's sha256 is"), "{err}");
    assert!(
        err.contains("tampered with or damaged — not installed"),
        "{err}"
    );

    // A manifest changed after signing.
    let mut b = Bundle::read(&bundle).unwrap();
    b.manifest_text = b
        .manifest_text
        .replace("JSON lines", "JSON lines, trust me");
    b.write(&w.path("edited.spkg")).unwrap();
    let err = w.refused(&["plugin", "install", "edited.spkg", "--yes"]);
    assert!(err.contains("does not match its manifest"), "{err}");

    // Unsigned: refused unless allowed.
    let unsigned = w.ok(&[
        "plugin",
        "pack",
        w.author("u", "1.0.0", "").to_str().unwrap(),
    ]);
    assert!(unsigned.contains("u-1.0.0.spkg"), "{unsigned}");
    let err = w.refused(&["plugin", "install", "u-1.0.0.spkg", "--yes"]);
    assert!(err.contains("u 1.0.0 is not signed"), "{err}");
    assert!(err.contains("--allow-unsigned"), "{err}");

    // Signed by a key the user does not trust.
    w.ok(&["plugin", "trust", "remove", &trusted_id(&w)]);
    let err = w.refused(&["plugin", "install", bundle.to_str().unwrap(), "--yes"]);
    assert!(err.contains("which is not in your trust store"), "{err}");
    assert!(w.installed_files().is_empty());

    // Built against an API this host does not run: packed (an author may
    // pack for a newer spinneret) but refused at install, naming both.
    let dir = w.author_with("future", "1.0.0", "", std::fs::read(FUTURE).unwrap());
    w.ok(&["plugin", "pack", dir.to_str().unwrap()]);
    let err = w.refused(&[
        "plugin",
        "install",
        "future-1.0.0.spkg",
        "--yes",
        "--allow-unsigned",
    ]);
    assert!(
        err.contains("future 1.0.0 was built against plugin API 0.6.0, but this spinneret runs 0.2.x, 0.3.x, 0.4.x, 0.5.x; it needs a spinneret that runs 0.6.x"),
        "{err}"
    );
    assert!(w.installed_files().is_empty());

    // A manifest that contradicts its component is not packed.
    let dir = w.author("liar", "1.0.0", "kind = \"policy\"\n");
    let err = w.refused(&["plugin", "pack", dir.to_str().unwrap()]);
    assert!(
        err.contains("says kind = \"policy\", but the component implements the reporter world"),
        "{err}"
    );
    let dir = w.author("liar", "1.0.1", "api = \"0.3.0\"\n");
    let err = w.refused(&["plugin", "pack", dir.to_str().unwrap()]);
    assert!(
        err.contains("says api = \"0.3.0\", but the component was built against plugin API 0.5.0"),
        "{err}"
    );
}

fn trusted_id(w: &World) -> String {
    w.ok(&["plugin", "trust", "list"]).trim().to_string()
}

#[test]
fn consent_is_needed_and_an_update_asking_for_more_asks_again() {
    let w = World::new();
    w.keys();
    let published = w.path("published.spkg");
    std::fs::copy(w.pack_and_sign(&w.author("feed", "1.0.0", "")), &published).unwrap();
    // No terminal and no --yes: the capabilities are shown, nothing installed.
    let err = w.refused(&["plugin", "install", "published.spkg"]);
    assert!(err.contains("it asks for:\n    network: none\n    memory: 64 MiB per instance\n    time: 1s per call"), "{err}");
    assert!(err.contains("pass --yes in a script"), "{err}");
    assert!(w.installed_files().is_empty());
    w.ok(&["plugin", "install", "published.spkg", "--yes"]);

    // Nothing newer where it came from.
    let same = w.ok(&["plugin", "update", "feed"]);
    assert!(same.starts_with("feed is up to date (1.0.0"), "{same}");

    // 1.1.0 asks for a network host: the update needs consent again.
    let newer = w.pack_and_sign(&w.author(
        "feed",
        "1.1.0",
        "[capabilities]\nhosts = [\"api.example.org\"]\n",
    ));
    std::fs::copy(&newer, &published).unwrap();
    let err = w.refused(&["plugin", "update", "feed"]);
    assert!(
        err.contains("it asks for more than 1.0.0 did:\n    network access to api.example.org"),
        "{err}"
    );
    assert_eq!(
        w.installed_files()
            .iter()
            .filter(|f| f.ends_with("plugin.wasm"))
            .count(),
        1
    );
    let out = w.ok(&["plugin", "update", "feed", "--yes"]);
    assert!(out.starts_with("installed feed 1.1.0"), "{out}");
    // Side by side; a crawl asking for ^1.0 gets the newest.
    let list = w.ok(&["plugin", "list"]);
    assert_eq!(
        list.lines()
            .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>(),
        ["feed 1.1.0", "feed 1.0.0"]
    );
    // 1.2.0 asking for nothing more updates without asking.
    let quiet = w.pack_and_sign(&w.author(
        "feed",
        "1.2.0",
        "[capabilities]\nhosts = [\"api.example.org\"]\n",
    ));
    std::fs::copy(&quiet, &published).unwrap();
    let out = w.ok(&["plugin", "update", "feed"]);
    assert!(out.starts_with("installed feed 1.2.0"), "{out}");
    let removed = w.ok(&["plugin", "remove", "feed"]);
    assert_eq!(removed.lines().count(), 3, "{removed}");
}

#[test]
fn two_concurrent_installs_leave_one_good_copy() {
    let w = World::new();
    w.keys();
    let bundle = w.pack_and_sign(&w.author("twice", "1.0.0", ""));
    let spawn = || {
        common::command()
            .env("SPINNERET_HOME", w.home())
            .args(["plugin", "install", bundle.to_str().unwrap(), "--yes"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        expect_exit(&out, 0);
    }
    assert_eq!(
        w.installed_files(),
        [
            "twice/1.0.0/README.md",
            "twice/1.0.0/install.toml",
            "twice/1.0.0/plugin.toml",
            "twice/1.0.0/plugin.toml.minisig",
            "twice/1.0.0/plugin.wasm",
        ]
    );
    let installed = std::fs::read(w.home().join("plugins/twice/1.0.0/plugin.wasm")).unwrap();
    assert_eq!(installed, json_report());
    // The installed copy is checked before use: altering it is caught.
    std::fs::write(w.home().join("plugins/twice/1.0.0/plugin.wasm"), b"\0asm").unwrap();
    let (_, out) = crawl_using(&w, "twice");
    let err = expect_exit(&out, 2);
    assert!(err.contains("was changed after it was installed"), "{err}");
}

#[test]
fn a_registry_that_is_down_changes_nothing() {
    let w = World::new();
    w.keys();
    w.ok(&[
        "plugin",
        "install",
        w.pack_and_sign(&w.author("kept", "1.0.0", ""))
            .to_str()
            .unwrap(),
        "--yes",
    ]);
    let before = w.installed_files();
    let port = spinneret_tests::smtp::closed_port();
    let err = w.refused(&[
        "plugin",
        "install",
        &format!("oci://127.0.0.1:{port}/plugins/kept:2.0.0"),
        "--yes",
    ]);
    assert!(
        err.contains(&format!(
            "cannot fetch oci://127.0.0.1:{port}/plugins/kept:2.0.0"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("the registry 127.0.0.1:{port} cannot be reached")),
        "{err}"
    );
    assert_eq!(w.installed_files(), before);
    let err = w.refused(&["plugin", "install", "oci://no-repository", "--yes"]);
    assert!(err.contains("names no repository"), "{err}");
}

#[test]
fn round_trip_through_an_oci_registry() {
    let Some(registry) = Registry::start() else {
        return;
    };
    let w = World::new();
    w.keys();
    let bundle = w.pack_and_sign(&w.author("oci-report", "1.0.0", ""));
    let reference = format!("oci://{}/plugins/oci-report:1.0.0", registry.address());
    let out = w.ok(&["plugin", "push", bundle.to_str().unwrap(), &reference]);
    assert!(
        out.starts_with(&format!("pushed oci-report 1.0.0 to {reference}")),
        "{out}"
    );

    // The artifact follows the wasm OCI layout: a wasm config, the
    // component as the first layer.
    let manifest = http_get(
        &registry.address(),
        "/v2/plugins/oci-report/manifests/1.0.0",
        "application/vnd.oci.image.manifest.v1+json",
    );
    let m: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(
        m["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(m["layers"][0]["mediaType"], "application/wasm");
    assert_eq!(
        m["annotations"]["org.opencontainers.image.version"],
        "1.0.0"
    );
    let types: Vec<&str> = m["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["mediaType"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "application/wasm",
            "application/vnd.spinneret.plugin.manifest.v1+toml",
            "application/vnd.spinneret.plugin.signature.v1+minisign",
            "text/markdown"
        ]
    );

    let out = w.ok(&["plugin", "install", &reference, "--yes"]);
    assert!(
        out.starts_with("installed oci-report 1.0.0 (signed by key "),
        "{out}"
    );
    let info = w.ok(&["plugin", "info", "oci-report"]);
    assert!(
        info.contains(&format!("source       {reference}")),
        "{info}"
    );
    let report = crawl_with(&w, "oci-report@^1");
    assert!(report.contains("/gone.html"), "{report}");

    // A tag nobody pushed.
    let err = w.refused(&[
        "plugin",
        "install",
        &format!("oci://{}/plugins/oci-report:9.9.9", registry.address()),
        "--yes",
    ]);
    assert!(err.contains("cannot fetch oci://"), "{err}");
}

/// A plain HTTP GET on loopback (the registry's API), body as text.
fn http_get(address: &str, path: &str, accept: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(address).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    body.to_string()
}

#[test]
fn install_from_an_http_url() {
    let w = World::new();
    w.keys();
    let bundle = std::fs::read(w.pack_and_sign(&w.author("fetched", "1.0.0", ""))).unwrap();
    let web = TestWeb::start(Web::new().site(
        "127.0.0.1",
        Site::new().route(
            "/dist/fetched-1.0.0.spkg",
            spinneret_tests::server::Route::file("application/octet-stream", bundle),
        ),
    ));
    let missing = web.url("127.0.0.1", "/dist/nothing.spkg");
    let err = w.refused(&["plugin", "install", &missing, "--yes"]);
    assert!(
        err.contains(&format!("cannot fetch {missing}: the server answered 404")),
        "{err}"
    );
    let url = web.url("127.0.0.1", "/dist/fetched-1.0.0.spkg");
    let out = w.ok(&["plugin", "install", &url, "--yes"]);
    assert!(
        out.starts_with("installed fetched 1.0.0 (signed by key "),
        "{out}"
    );
    let info = w.ok(&["plugin", "info", "fetched@1.0.0"]);
    assert!(info.contains(&format!("source       {url}")), "{info}");
}

/// `spinneret ARGS` on a pseudo-terminal (util-linux `script`), typing
/// `answer` at the prompt.
fn on_terminal(w: &World, args: &[&str], answer: &str) -> Output {
    use std::io::Write;
    let line = std::iter::once(env!("CARGO_BIN_EXE_spinneret-e2e"))
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    let mut child = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env("SPINNERET_HOME", w.home())
        .current_dir(w.dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("util-linux `script` runs a command on a pseudo-terminal");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{answer}\n").as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn consent_is_asked_on_a_terminal() {
    let w = World::new();
    w.keys();
    let bundle = w.pack_and_sign(&w.author(
        "asked",
        "1.0.0",
        "[capabilities]\nhosts = [\"api.example.org\"]\n",
    ));
    let file = bundle.file_name().unwrap().to_str().unwrap().to_string();
    let no = on_terminal(&w, &["plugin", "install", &file], "n");
    // A terminal ends lines with CR LF.
    let shown = text(&no.stdout).replace("\r\n", "\n");
    assert_eq!(no.status.code(), Some(2), "{shown}");
    assert!(shown.contains("    network: api.example.org\n"), "{shown}");
    assert!(shown.contains("Install? [y/N]"), "{shown}");
    assert!(
        shown.contains("not installed: consent was not given"),
        "{shown}"
    );
    assert!(w.installed_files().is_empty());
    let yes = on_terminal(&w, &["plugin", "install", &file], "y");
    let shown = text(&yes.stdout).replace("\r\n", "\n");
    assert_eq!(yes.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("installed asked 1.0.0 (signed by key "),
        "{shown}"
    );
    assert_eq!(w.installed_files().len(), 5);
}

/// Bundles that lie about their contents are refused in bounded memory,
/// and the bundles spinneret writes are readable by others (they are
/// meant to be shared).
#[test]
fn bombs_odd_paths_and_missing_readmes_are_refused() {
    use std::io::Write;
    let w = World::new();
    // A GNU long-name header declaring 2 GiB, with 8 MiB of it sent.
    let mut h = tar::Header::new_gnu();
    h.set_path("././@LongLink").unwrap();
    h.set_entry_type(tar::EntryType::GNULongName);
    h.set_size(2 << 30);
    h.set_cksum();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(h.as_bytes()).unwrap();
    gz.write_all(&vec![b'a'; 8 << 20]).unwrap();
    let bomb = gz.finish().unwrap();
    std::fs::write(w.path("bomb.spkg"), &bomb).unwrap();
    let err = w.refused(&[
        "plugin",
        "install",
        "bomb.spkg",
        "--yes",
        "--allow-unsigned",
    ]);
    assert!(
        err.contains("bomb.spkg is not a spinneret plugin bundle: it holds an entry of tar type `L` (a bundle holds only plain files)"),
        "{err}"
    );
    // Over http: the same bundle is read by the same bounded reader, and a
    // download that never ends is cut off at the bundle's cap.
    let web = TestWeb::start(
        Web::new().site(
            "127.0.0.1",
            Site::new()
                .route(
                    "/dist/bomb.spkg",
                    spinneret_tests::server::Route::file("application/octet-stream", bomb),
                )
                .route(
                    "/dist/endless.spkg",
                    spinneret_tests::server::Route::Endless {
                        content_type: "application/octet-stream".into(),
                        declared: 10 << 30,
                    },
                ),
        ),
    );
    let url = web.url("127.0.0.1", "/dist/bomb.spkg");
    let err = w.refused(&["plugin", "install", &url, "--yes", "--allow-unsigned"]);
    assert_eq!(
        err.trim_end(),
        format!(
            "spinneret: {url} is not a spinneret plugin bundle: it holds an entry of tar type `L` (a bundle holds only plain files)"
        )
    );
    let url = web.url("127.0.0.1", "/dist/endless.spkg");
    let err = w.refused(&["plugin", "install", &url, "--yes", "--allow-unsigned"]);
    assert_eq!(
        err.trim_end(),
        format!("spinneret: {url} is larger than 68 MiB; that is no plugin bundle")
    );
    assert!(w.installed_files().is_empty());

    let dir = w.author("p", "1.0.0", "");
    let out = w.ok(&["plugin", "pack", dir.to_str().unwrap()]);
    assert!(out.contains("p-1.0.0.spkg"), "{out}");
    let packed = w.path("p-1.0.0.spkg");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&packed).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644, "{mode:o}");
    }

    // A manifest naming a component elsewhere.
    let b = Bundle::read(&packed).unwrap();
    let mut odd = b.clone();
    odd.manifest_text = b.manifest_text.replace(
        "component = \"plugin.wasm\"",
        "component = \"../../../etc/passwd\"",
    );
    assert_ne!(odd.manifest_text, b.manifest_text);
    odd.write(&w.path("odd.spkg")).unwrap();
    let err = w.refused(&["plugin", "install", "odd.spkg", "--yes", "--allow-unsigned"]);
    assert!(
        err.contains(
            "names the component `../../../etc/passwd`, but in a bundle it is always `plugin.wasm`"
        ),
        "{err}"
    );

    // A README the manifest promises but the bundle does not carry.
    let mut bare = b.clone();
    bare.readme = None;
    bare.write(&w.path("bare.spkg")).unwrap();
    let err = w.refused(&[
        "plugin",
        "install",
        "bare.spkg",
        "--yes",
        "--allow-unsigned",
    ]);
    assert!(
        err.contains("p 1.0.0: the manifest gives a README sha256 but the bundle has no README"),
        "{err}"
    );
    assert!(w.installed_files().is_empty());
}
