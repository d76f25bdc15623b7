//! The plugin API versions this host runs. Each released version of the WIT
//! package keeps its own folder, `wit/since_vX.Y.Z/`, and its own module of
//! host bindings; [`ApiVersion`] names them, and a component is run under
//! the version it was built against (semver: the same major, and for 0.x
//! the same minor). Adding a version never drops the older ones, so a
//! plugin shared as a bundle keeps running on newer hosts. `wit/README.md`
//! says, step by step, how the next version is added; the tests check
//! that each variant has its folder and that the SDK builds against
//! [`ApiVersion::LATEST`].

use std::fmt;

/// A plugin API version this host implements: one per `wit/since_v*` folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ApiVersion {
    /// `spinneret:plugin@0.2.0` (`wit/since_v0.2.0/`).
    V0_2,
    /// `spinneret:plugin@0.3.0` (`wit/since_v0.3.0/`): search engines gained
    /// advanced options, `supports` and a "no results" answer.
    V0_3,
    /// `spinneret:plugin@0.4.0` (`wit/since_v0.4.0/`): reporters gained each
    /// reference's source line and `output.append-file`.
    V0_4,
    /// `spinneret:plugin@0.5.0` (`wit/since_v0.5.0/`): reporters gained each
    /// reference's source column.
    V0_5,
}

impl ApiVersion {
    /// Every version this host runs, oldest first.
    pub const ALL: [ApiVersion; 4] = [
        ApiVersion::V0_2,
        ApiVersion::V0_3,
        ApiVersion::V0_4,
        ApiVersion::V0_5,
    ];

    /// The newest: what the SDK and the built-in plugins build against.
    pub const LATEST: ApiVersion = ApiVersion::V0_5;

    /// The WIT package version this variant stands for.
    pub fn number(self) -> (u64, u64, u64) {
        match self {
            ApiVersion::V0_2 => (0, 2, 0),
            ApiVersion::V0_3 => (0, 3, 0),
            ApiVersion::V0_4 => (0, 4, 0),
            ApiVersion::V0_5 => (0, 5, 0),
        }
    }

    /// The folder of `wit/` that holds this version's package.
    pub fn folder(self) -> String {
        format!("since_v{self}")
    }

    /// The version a component built against API `api` runs under, if this
    /// host runs it (semver): the same major, and below 1.0 the same minor
    /// (a 0.x minor may break); from 1.0 a minor no newer than the host's.
    pub fn for_component(api: (u64, u64, u64)) -> Option<ApiVersion> {
        ApiVersion::ALL.into_iter().rev().find(|v| {
            let (major, minor, _) = v.number();
            match major {
                0 => api.0 == 0 && api.1 == minor,
                major => api.0 == major && api.1 <= minor,
            }
        })
    }

    /// The versions this host runs, as a person reads them ("0.2.x").
    pub fn supported() -> String {
        ApiVersion::ALL
            .iter()
            .map(|v| {
                let (major, minor, _) = v.number();
                format!("{major}.{minor}.x")
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for ApiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (major, minor, patch) = self.number();
        write!(f, "{major}.{minor}.{patch}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_component_runs_under_the_version_it_was_built_against() {
        assert_eq!(ApiVersion::for_component((0, 2, 0)), Some(ApiVersion::V0_2));
        assert_eq!(ApiVersion::for_component((0, 2, 9)), Some(ApiVersion::V0_2));
        // Below 1.0 a minor is a breaking change, either way.
        assert_eq!(ApiVersion::for_component((0, 1, 0)), None);
        assert_eq!(ApiVersion::for_component((0, 3, 1)), Some(ApiVersion::V0_3));
        assert_eq!(ApiVersion::for_component((0, 4, 2)), Some(ApiVersion::V0_4));
        assert_eq!(ApiVersion::for_component((0, 5, 0)), Some(ApiVersion::V0_5));
        assert_eq!(ApiVersion::for_component((0, 6, 0)), None);
        assert_eq!(ApiVersion::for_component((1, 0, 0)), None);
        assert_eq!(ApiVersion::supported(), "0.2.x, 0.3.x, 0.4.x, 0.5.x");
        assert_eq!(ApiVersion::LATEST.folder(), "since_v0.5.0");
    }

    #[test]
    fn every_version_has_its_folder_and_the_newest_is_latest() {
        let wit = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../wit");
        for v in ApiVersion::ALL {
            let worlds = wit.join(v.folder()).join("worlds.wit");
            let text = std::fs::read_to_string(&worlds)
                .unwrap_or_else(|e| panic!("{}: {e}", worlds.display()));
            assert!(
                text.contains(&format!("package spinneret:plugin@{v};")),
                "{} does not declare spinneret:plugin@{v}",
                worlds.display()
            );
        }
        let mut folders: Vec<String> = std::fs::read_dir(&wit)
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.starts_with("since_v"))
            .collect();
        folders.sort();
        let mut expected: Vec<String> = ApiVersion::ALL.iter().map(|v| v.folder()).collect();
        expected.sort();
        assert_eq!(
            folders, expected,
            "each wit/since_v* folder needs its ApiVersion variant (see wit/README.md)"
        );
        let newest = ApiVersion::ALL.iter().max_by_key(|v| v.number());
        assert_eq!(Some(&ApiVersion::LATEST), newest);
    }
}
