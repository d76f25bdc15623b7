//! `spinneret plugin pack|keygen|sign|trust|push|install|list|info|remove|update`:
//! sharing plugins as signed bundles (see [`spinneret_bundle`]).

use super::output::outln;
use clap::{Args, Subcommand};
use spinneret_bundle::home::PluginHome;
use spinneret_bundle::{self as bundle, Bundle, BundleError, Consent, Outcome, oci, sign};
use spinneret_plugin_host::engine::PluginEngine;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

/// The sharing commands, flattened into `spinneret plugin`.
#[derive(Subcommand, Debug)]
pub(super) enum ShareCommand {
    /// Pack a plugin into NAME-VERSION.spkg: its plugin.toml, component and README.
    ///
    /// DIR is a plugin crate with plugin.toml (the component is read from
    /// target/wasm32-wasip2/release/ unless the manifest names it); FILE.wasm
    /// needs a plugin.toml beside it. The component's world and API version
    /// are written into the manifest; a manifest that contradicts them is refused.
    Pack(PackArgs),
    /// Make a signing key pair: PREFIX.key (secret) and PREFIX.pub (share this one).
    Keygen(KeygenArgs),
    /// Sign a bundle's manifest (which holds the component's sha256) with your key.
    Sign(SignArgs),
    /// The public keys whose signatures you accept.
    #[command(subcommand)]
    Trust(TrustCommand),
    /// Publish a bundle to an OCI registry (oci://REGISTRY/REPOSITORY:TAG).
    Push(PushArgs),
    /// Install a bundle from a .spkg file, an http(s):// URL or an oci:// reference.
    ///
    /// The component must match the manifest's sha256, the signature must be by
    /// a trusted key (`plugin trust add`), and the plugin API must be one this
    /// spinneret runs. The capabilities it asks for are shown and need your
    /// consent (--yes gives it in scripts). Versions install side by side.
    Install(InstallArgs),
    /// List the installed plugins and their versions.
    List,
    /// Show an installed plugin: manifest, capabilities, source, signer.
    Info(InfoArgs),
    /// Remove an installed plugin (NAME: every version; NAME@VERSION: that one).
    Remove(RemoveArgs),
    /// Install a newer version from where the installed one came from.
    ///
    /// An update that asks for more capabilities (new hosts, more memory or
    /// time) needs consent again.
    Update(UpdateArgs),
}

#[derive(Subcommand, Debug)]
pub(super) enum TrustCommand {
    /// Trust a public key: a .pub file or its base64 line.
    Add {
        /// The key.
        key: String,
    },
    /// List the trusted keys' ids.
    List,
    /// Stop trusting a key, by id.
    Remove {
        /// The key's id (16 hex digits, as `trust list` shows it).
        id: String,
    },
}

#[derive(Args, Debug)]
pub(super) struct PackArgs {
    /// A plugin directory with plugin.toml, or a .wasm component.
    #[arg(default_value = ".")]
    input: PathBuf,
    /// Where to write the bundle (default: NAME-VERSION.spkg here).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(super) struct KeygenArgs {
    /// Path prefix of the key files.
    #[arg(long, value_name = "PREFIX", default_value = "spinneret")]
    out: PathBuf,
    /// Encrypt the secret key with the password in this environment variable.
    #[arg(long, value_name = "VAR", conflicts_with = "no_password")]
    password_env: Option<String>,
    /// Leave the secret key unencrypted (keep it safe by other means).
    #[arg(long)]
    no_password: bool,
}

#[derive(Args, Debug)]
pub(super) struct SignArgs {
    /// The bundle to sign (rewritten in place, or to --output).
    bundle: PathBuf,
    /// Your secret key (from `plugin keygen`).
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    /// The environment variable holding the key's password.
    #[arg(long, value_name = "VAR")]
    password_env: Option<String>,
    /// Write the signed bundle here instead.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(super) struct PushArgs {
    /// The bundle.
    bundle: PathBuf,
    /// Where: oci://REGISTRY/REPOSITORY:TAG.
    target: String,
}

#[derive(Args, Debug)]
pub(super) struct InstallArgs {
    /// A .spkg path, an http(s):// URL or an oci://REGISTRY/REPOSITORY:TAG reference.
    source: String,
    /// Consent to the capabilities it asks for without asking.
    #[arg(long, short = 'y')]
    yes: bool,
    /// Install even if it is not signed.
    #[arg(long)]
    allow_unsigned: bool,
}

#[derive(Args, Debug)]
pub(super) struct InfoArgs {
    /// The plugin's name (NAME or NAME@VERSION).
    name: String,
}

#[derive(Args, Debug)]
pub(super) struct RemoveArgs {
    /// NAME or NAME@VERSION.
    name: String,
}

#[derive(Args, Debug)]
pub(super) struct UpdateArgs {
    /// The plugin's name.
    name: String,
    /// Consent to new capabilities without asking.
    #[arg(long, short = 'y')]
    yes: bool,
    /// Accept an unsigned new version.
    #[arg(long)]
    allow_unsigned: bool,
}

fn password(var: Option<&str>) -> anyhow::Result<Option<String>> {
    var.map(|v| {
        std::env::var(v).map_err(|_| {
            anyhow::anyhow!("the environment variable {v} (--password-env) is not set")
        })
    })
    .transpose()
}

/// `NAME` or `NAME@VERSION`.
fn name_and_version(s: &str) -> anyhow::Result<(String, Option<semver::Version>)> {
    match s.split_once('@') {
        None => Ok((s.to_string(), None)),
        Some((n, v)) => semver::Version::parse(v)
            .map(|v| (n.to_string(), Some(v)))
            .map_err(|e| anyhow::anyhow!("`{v}` is not a version ({e}); write NAME@1.2.0")),
    }
}

/// Ask on the terminal, or explain how to consent in a script.
fn ask_on_terminal(text: &str) -> Result<bool, BundleError> {
    if !std::io::stdin().is_terminal() {
        return Err(BundleError::Refused(format!(
            "{text}installing needs your consent to these capabilities; run it in a terminal, or pass --yes in a script"
        )));
    }
    eprint!("{text}Install? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| BundleError::Io(format!("cannot read the answer: {e}")))?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}

/// Consent given by `--yes`, else asked on the terminal.
fn consent(yes: bool) -> Consent {
    if yes {
        Consent::Given
    } else {
        Consent::Ask(ask_on_terminal)
    }
}

fn report(outcome: &Outcome) {
    match outcome {
        Outcome::Installed(i) => outln!(
            "installed {} {} ({}) in {}",
            i.manifest.name,
            i.manifest.version,
            i.record.signer(),
            i.dir.display()
        ),
        Outcome::AlreadyInstalled(i) => outln!(
            "{} {} is already installed in {}",
            i.manifest.name,
            i.manifest.version,
            i.dir.display()
        ),
        Outcome::UpToDate(i) => outln!(
            "{} is up to date ({}; from {})",
            i.manifest.name,
            i.manifest.version,
            i.record.source
        ),
    }
}

pub(super) fn run(cmd: ShareCommand) -> anyhow::Result<u8> {
    match run_inner(cmd) {
        Ok(()) => Ok(super::EXIT_OK),
        Err(e) => {
            eprintln!("spinneret: {e}");
            Ok(super::EXIT_USAGE)
        }
    }
}

fn run_inner(cmd: ShareCommand) -> anyhow::Result<()> {
    match cmd {
        ShareCommand::Pack(a) => pack(a)?,
        ShareCommand::Keygen(a) => keygen(a)?,
        ShareCommand::Sign(a) => sign_bundle(a)?,
        ShareCommand::Trust(t) => trust(t)?,
        ShareCommand::Push(a) => push(a)?,
        ShareCommand::Install(a) => install(a)?,
        ShareCommand::List => {
            let home = PluginHome::from_env()?;
            let names = home.names();
            if names.is_empty() {
                outln!("no plugins installed in {}", home.root().display());
            }
            for name in names {
                for v in home.versions(&name) {
                    outln!(
                        "{:<24} {:<10} {:<16} {}",
                        name,
                        v.manifest.version,
                        v.manifest.kind.as_deref().unwrap_or("?"),
                        match v.record.signer() {
                            sign::Signer::Trusted(id) => format!("key {id}"),
                            sign::Signer::Unsigned => "unsigned".into(),
                        }
                    );
                }
            }
        }
        ShareCommand::Info(a) => info(a)?,
        ShareCommand::Remove(a) => {
            let home = PluginHome::from_env()?;
            let (name, version) = name_and_version(&a.name)?;
            for v in home.remove(&name, version.as_ref())? {
                outln!("removed {name} {v}");
            }
        }
        ShareCommand::Update(a) => {
            let home = PluginHome::from_env()?;
            let outcome = bundle::update(
                &PluginEngine::new()?,
                &home,
                &a.name,
                a.allow_unsigned,
                &consent(a.yes),
            )?;
            report(&outcome);
        }
    }
    Ok(())
}

/// `plugin pack`: a plugin and its manifest into a bundle.
fn pack(a: PackArgs) -> anyhow::Result<()> {
    let bundle = bundle::pack::pack(&PluginEngine::new()?, &a.input)?;
    let out = a
        .output
        .unwrap_or_else(|| PathBuf::from(bundle.manifest.bundle_file_name()));
    bundle.write(&out)?;
    let m = &bundle.manifest;
    outln!(
        "packed {} {} ({} plugin, API {}) into {}\n  sha256 {}\nnext: spinneret plugin sign {} --key KEY",
        m.name,
        m.version,
        m.kind.as_deref().unwrap_or("?"),
        m.api.as_ref().map(ToString::to_string).unwrap_or_default(),
        out.display(),
        m.sha256.as_deref().unwrap_or(""),
        out.display()
    );
    Ok(())
}

/// `plugin keygen`: a signing key pair.
fn keygen(a: KeygenArgs) -> anyhow::Result<()> {
    let pw = match (password(a.password_env.as_deref())?, a.no_password) {
        (Some(p), _) => Some(p),
        (None, true) => None,
        (None, false) => {
            anyhow::bail!(
                "choose how the secret key is kept: --password-env VAR (encrypted with that password) or --no-password"
            );
        }
    };
    let id = sign::keygen(&a.out, pw)?;
    outln!(
        "key {id}: secret {} (keep it), public {} (give it to your users: `spinneret plugin trust add {}`)",
        a.out.with_extension("key").display(),
        a.out.with_extension("pub").display(),
        a.out.with_extension("pub").display()
    );
    Ok(())
}

/// `plugin sign`: sign a bundle with a secret key.
fn sign_bundle(a: SignArgs) -> anyhow::Result<()> {
    let mut bundle = Bundle::read(&a.bundle)?;
    let key = sign::read_secret_key(&a.key, password(a.password_env.as_deref())?)?;
    let id = sign::sign(&mut bundle, &key)?;
    let out = a.output.unwrap_or(a.bundle);
    bundle.write(&out)?;
    outln!(
        "signed {} {} with key {id}: {}",
        bundle.manifest.name,
        bundle.manifest.version,
        out.display()
    );
    Ok(())
}

/// `plugin trust`: the keys whose bundles install without asking.
fn trust(t: TrustCommand) -> anyhow::Result<()> {
    let home = PluginHome::from_env()?;
    let trust = home.trust();
    match t {
        TrustCommand::Add { key } => {
            let id = trust.add(&sign::parse_public_key(&key)?)?;
            outln!("trusting key {id} ({})", trust.dir().display());
        }
        TrustCommand::List => {
            for id in trust.ids() {
                outln!("{id}");
            }
        }
        TrustCommand::Remove { id } => {
            if !trust.remove(&id)? {
                anyhow::bail!("key {id} is not trusted");
            }
            outln!("no longer trusting key {id}");
        }
    }
    Ok(())
}

/// `plugin push`: a bundle to an OCI registry.
fn push(a: PushArgs) -> anyhow::Result<()> {
    let bundle = Bundle::read(&a.bundle)?;
    let target = oci::OciRef::parse(&a.target)?;
    if bundle.signature.is_none() {
        eprintln!(
            "spinneret: warning: {} is not signed; users will need --allow-unsigned",
            a.bundle.display()
        );
    }
    let url = oci::push(&PluginEngine::new()?, &bundle, &target)?;
    outln!(
        "pushed {} {} to {target} ({url})",
        bundle.manifest.name,
        bundle.manifest.version
    );
    Ok(())
}

/// `plugin install`: a bundle from a file, a URL or a registry.
fn install(a: InstallArgs) -> anyhow::Result<()> {
    let home = PluginHome::from_env()?;
    let outcome = bundle::install(
        &PluginEngine::new()?,
        &home,
        &a.source,
        a.allow_unsigned,
        &consent(a.yes),
    )?;
    report(&outcome);
    if let Outcome::Installed(i) = &outcome {
        outln!(
            "use it in a crawl configuration:\n  [[plugin]]\n  name = \"{}\"\n  source = \"{}@^{}\"",
            i.manifest.name,
            i.manifest.name,
            i.manifest.version
        );
    }
    Ok(())
}

/// `plugin info`: an installed plugin, as its manifest and record say.
fn info(a: InfoArgs) -> anyhow::Result<()> {
    let home = PluginHome::from_env()?;
    let (name, version) = name_and_version(&a.name)?;
    let versions = home.versions(&name);
    let v = versions
            .iter()
            .find(|v| {
                version
                    .as_ref()
                    .is_none_or(|want| &v.manifest.version == want)
            })
            .ok_or_else(|| {
                // A built-in of that name is what the user may mean.
                match spinneret_plugin_host::builtin::names().any(|b| b == name) {
                    true => anyhow::anyhow!(
                        "{} is not installed, but spinneret has a built-in plugin of that name: `builtin:{name}` (see `spinneret plugin inspect builtin:{name}`; its settings are in docs/plugins.md)",
                        a.name
                    ),
                    false => anyhow::anyhow!(
                        "{} is not installed (`spinneret plugin list` shows what is; `spinneret plugin builtins` the built-ins)",
                        a.name
                    ),
                }
            })?;
    let m = &v.manifest;
    outln!("{} {}", m.name, m.version);
    for (label, value) in [
        ("description", m.description.clone()),
        ("authors", m.authors.join(", ")),
        ("license", m.license.clone()),
        ("kind", m.kind.clone().unwrap_or_default()),
        (
            "api",
            m.api.as_ref().map(ToString::to_string).unwrap_or_default(),
        ),
        ("sha256", m.sha256.clone().unwrap_or_default()),
        ("source", v.record.source.clone()),
        ("signer", v.record.signer.clone()),
        ("installed", v.record.installed_at.clone()),
        ("directory", v.dir.display().to_string()),
    ] {
        if !value.is_empty() {
            outln!("  {label:<12} {value}");
        }
    }
    outln!("  capabilities");
    for line in m.capabilities.describe() {
        outln!("    {line}");
    }
    if !m.config.is_empty() {
        outln!("  default config");
        for line in toml::to_string(&m.config).unwrap_or_default().lines() {
            outln!("    {line}");
        }
    }
    let others: Vec<String> = versions
        .iter()
        .filter(|o| o.manifest.version != m.version)
        .map(|o| o.manifest.version.to_string())
        .collect();
    if !others.is_empty() {
        outln!("  other versions {}", others.join(", "));
    }
    Ok(())
}
