//! Which world a component implements and which API version it was built
//! against, read from its exports before it is ever instantiated.

use super::api::ApiVersion;
use super::engine::PluginEngine;
use wasmtime::component::Component;

/// The kinds of plugin, by the interface their world exports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PluginKind {
    /// `reporter-api`.
    Reporter,
    /// `detector-api`.
    ChangeDetector,
    /// `policy-api`.
    Policy,
    /// `fetch-hook-api`.
    FetchHook,
    /// `parser-api`.
    Parser,
    /// `search-engine-api`.
    SearchEngine,
    /// `collection-index-api` (new in 0.3.0).
    CollectionIndex,
}

impl PluginKind {
    /// The world's name.
    pub fn world(self) -> &'static str {
        match self {
            PluginKind::Reporter => "reporter",
            PluginKind::ChangeDetector => "change-detector",
            PluginKind::Policy => "policy",
            PluginKind::FetchHook => "fetch-hook",
            PluginKind::Parser => "parser",
            PluginKind::SearchEngine => "search-engine",
            PluginKind::CollectionIndex => "collection-index",
        }
    }

    /// The kind whose world is named `world`.
    pub fn from_world(world: &str) -> Option<PluginKind> {
        [
            PluginKind::Reporter,
            PluginKind::ChangeDetector,
            PluginKind::Policy,
            PluginKind::FetchHook,
            PluginKind::Parser,
            PluginKind::SearchEngine,
            PluginKind::CollectionIndex,
        ]
        .into_iter()
        .find(|k| k.world() == world)
    }

    fn from_interface(name: &str) -> Option<PluginKind> {
        Some(match name {
            "reporter-api" => PluginKind::Reporter,
            "detector-api" => PluginKind::ChangeDetector,
            "policy-api" => PluginKind::Policy,
            "fetch-hook-api" => PluginKind::FetchHook,
            "parser-api" => PluginKind::Parser,
            "search-engine-api" => PluginKind::SearchEngine,
            "collection-index-api" => PluginKind::CollectionIndex,
            _ => return None,
        })
    }
}

/// What a component says about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// Its kind.
    pub kind: PluginKind,
    /// The API version it was built against.
    pub api: (u64, u64, u64),
}

impl Identity {
    /// The API version of this host it runs under, if any.
    pub fn runs_under(&self) -> Option<ApiVersion> {
        ApiVersion::for_component(self.api)
    }
}

/// Why a component cannot be used.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum IdentifyError {
    /// It exports no spinneret plugin interface.
    #[error(
        "it exports no spinneret:plugin interface; is it a spinneret plugin built with spinneret-sdk?"
    )]
    NotAPlugin,
    /// It was built against an API this host cannot run.
    #[error(
        "it was built against plugin API {0}.{1}.{2}, but this spinneret runs {host}; it needs a spinneret that runs {0}.{1}.x",
        host = ApiVersion::supported()
    )]
    Incompatible(u64, u64, u64),
}

fn parse_version(v: &str) -> Option<(u64, u64, u64)> {
    let mut it = v.split(['.', '-', '+']).map(|p| p.parse::<u64>());
    Some((it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?))
}

/// Read a component's world and API version from its exports.
pub fn identify(engine: &PluginEngine, component: &Component) -> Result<Identity, IdentifyError> {
    let id = declared(engine, component)?;
    if id.runs_under().is_none() {
        return Err(IdentifyError::Incompatible(id.api.0, id.api.1, id.api.2));
    }
    Ok(id)
}

/// The world and API version a component says it implements, whether or
/// not this host runs that version (`plugin pack` packs for any version).
pub fn declared(engine: &PluginEngine, component: &Component) -> Result<Identity, IdentifyError> {
    let ty = component.component_type();
    for (name, _) in ty.exports(engine.engine()) {
        let Some(rest) = name.strip_prefix("spinneret:plugin/") else {
            continue;
        };
        let (iface, version) = rest.split_once('@').unwrap_or((rest, "0.0.0"));
        let Some(kind) = PluginKind::from_interface(iface) else {
            continue;
        };
        let api = parse_version(version).unwrap_or((0, 0, 0));
        return Ok(Identity { kind, api });
    }
    Err(IdentifyError::NotAPlugin)
}

/// What `spinneret plugin inspect` shows about a component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inspection {
    /// Its kind and API version, or why it cannot run here.
    pub identity: Result<Identity, IdentifyError>,
    /// The API version it was built against, even when incompatible.
    pub built_against: Option<String>,
    /// Each exported interface with its functions.
    pub exports: Vec<(String, Vec<String>)>,
    /// The interfaces it imports.
    pub imports: Vec<String>,
}

fn functions(
    engine: &PluginEngine,
    item: &wasmtime::component::types::ComponentItem,
) -> Vec<String> {
    use wasmtime::component::types::ComponentItem;
    match item {
        ComponentItem::ComponentInstance(i) => i
            .exports(engine.engine())
            .filter(|(_, it)| matches!(it.ty, ComponentItem::ComponentFunc(_)))
            .map(|(n, _)| n.to_string())
            .collect(),
        _ => Vec::new(),
    }
}

/// Everything a component says about itself: world, API version, exports
/// and imports.
pub fn inspect(engine: &PluginEngine, component: &Component) -> Inspection {
    let ty = component.component_type();
    let exports: Vec<(String, Vec<String>)> = ty
        .exports(engine.engine())
        .map(|(name, item)| (name.to_string(), functions(engine, &item.ty)))
        .collect();
    let built_against = exports.iter().find_map(|(name, _)| {
        let rest = name.strip_prefix("spinneret:plugin/")?;
        let (iface, version) = rest.split_once('@')?;
        PluginKind::from_interface(iface).map(|_| version.to_string())
    });
    Inspection {
        identity: identify(engine, component),
        built_against,
        exports,
        imports: ty
            .imports(engine.engine())
            .map(|(n, _)| n.to_string())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("0.2.0"), Some((0, 2, 0)));
        assert_eq!(parse_version("0.2.3-pre"), Some((0, 2, 3)));
        let runs = |api| {
            Identity {
                kind: PluginKind::Reporter,
                api,
            }
            .runs_under()
        };
        assert_eq!(runs((0, 2, 7)), Some(ApiVersion::V0_2));
        assert_eq!(runs((0, 1, 0)), None);
        assert_eq!(runs((0, 3, 0)), Some(ApiVersion::V0_3));
        assert_eq!(runs((0, 4, 0)), Some(ApiVersion::V0_4));
        assert_eq!(runs((0, 5, 0)), Some(ApiVersion::V0_5));
        assert_eq!(runs((0, 6, 0)), None);
        assert_eq!(runs((2, 2, 0)), None);
        assert_eq!(
            IdentifyError::Incompatible(0, 6, 0).to_string(),
            "it was built against plugin API 0.6.0, but this spinneret runs 0.2.x, 0.3.x, 0.4.x, 0.5.x; it needs a spinneret that runs 0.6.x"
        );
    }
}
