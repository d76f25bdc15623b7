//! One live instance of a plugin, kept across calls: instantiated and
//! configured on first use, dropped after a call that traps, hangs or
//! overspends so that the next call starts afresh. Every world but the
//! reporter (which gets a fresh instance per task) runs through it.

use super::api::ApiVersion;
use super::bindings::host::types::PluginError;
use super::capabilities::PluginState;
use super::sandbox::{PluginFailure, Sandbox};
use wasmtime::Store;
use wasmtime::component::{Component, InstancePre, Linker};

/// What the runner needs to know of a world's generated bindings.
pub trait World: Sized {
    /// The world's pre-instantiated form.
    type Pre;
    /// Add the world's imports to `linker`.
    fn add_to_linker(linker: &mut Linker<PluginState>) -> wasmtime::Result<()>;
    /// Type-check an instance-pre against the world.
    fn pre(pre: InstancePre<PluginState>) -> wasmtime::Result<Self::Pre>;
    /// Instantiate.
    fn instantiate(pre: &Self::Pre, store: &mut Store<PluginState>) -> wasmtime::Result<Self>;
    /// Call the world's `configure`.
    fn configure(
        &self,
        store: &mut Store<PluginState>,
        config: &str,
    ) -> wasmtime::Result<Result<(), PluginError>>;
}

/// A plugin of world `W` with its live instance.
pub struct Runner<W: World> {
    sandbox: Sandbox,
    pre: W::Pre,
    live: Option<(Store<PluginState>, W)>,
}

impl<W: World> Runner<W> {
    /// Link a compiled component against world `W`.
    pub fn new(sandbox: Sandbox, component: &Component) -> wasmtime::Result<Runner<W>> {
        let mut linker = sandbox.linker()?;
        W::add_to_linker(&mut linker)?;
        let pre = W::pre(linker.instantiate_pre(component)?)?;
        Ok(Runner {
            sandbox,
            pre,
            live: None,
        })
    }

    /// The plugin's sandbox (name, configuration, grants).
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// Instantiate and configure, unless an instance is live.
    pub fn start(&mut self) -> Result<(), PluginFailure> {
        if self.live.is_some() {
            return Ok(());
        }
        let sb = &self.sandbox;
        let mut store = sb.store(None);
        let bindings = sb.call(&mut store, "instantiate", |s| W::instantiate(&self.pre, s))?;
        sb.call(&mut store, "configure", |s| {
            bindings.configure(s, sb.config())
        })?
        .map_err(|e| sb.failed("configure", e.message))?;
        self.live = Some((store, bindings));
        Ok(())
    }

    /// Make the call named `call` on the live instance (started if need
    /// be) with a fresh deadline.
    pub fn call<T>(
        &mut self,
        call: &str,
        f: impl FnOnce(&W, &mut Store<PluginState>) -> wasmtime::Result<T>,
    ) -> Result<T, PluginFailure> {
        self.start()?;
        let (store, bindings) = self.live.as_mut().expect("started above");
        let r = self.sandbox.call(store, call, |s| f(bindings, s));
        if r.is_err() {
            // The instance may be in any state after a trap: start afresh.
            self.live = None;
        }
        r
    }

    /// Like [`Runner::call`] for a call whose own error (the plugin's
    /// refusal) is a failure too.
    pub fn call_refusable<T>(
        &mut self,
        call: &str,
        f: impl FnOnce(&W, &mut Store<PluginState>) -> wasmtime::Result<Result<T, PluginError>>,
    ) -> Result<T, PluginFailure> {
        self.call(call, f)?
            .map_err(|e| self.sandbox.failed(call, e.message))
    }
}

/// A plugin of one world, run under the API version its component was
/// built against: `V2` to `V5` are the world's 0.2.0 to 0.5.0 bindings.
/// Each world's runner matches on it, converting the types
/// its interface defines for an older plugin.
pub enum Versioned<V2: World, V3: World, V4: World, V5: World> {
    /// Built against plugin API 0.2.x.
    V0_2(Runner<V2>),
    /// Built against plugin API 0.3.x.
    V0_3(Runner<V3>),
    /// Built against plugin API 0.4.x.
    V0_4(Runner<V4>),
    /// Built against plugin API 0.5.x.
    V0_5(Runner<V5>),
}

impl<V2: World, V3: World, V4: World, V5: World> Versioned<V2, V3, V4, V5> {
    /// Link a compiled component against the world of its own API version.
    pub fn new(sandbox: Sandbox, component: &Component) -> wasmtime::Result<Self> {
        Ok(match sandbox.api_of(component)? {
            ApiVersion::V0_2 => Versioned::V0_2(Runner::new(sandbox, component)?),
            ApiVersion::V0_3 => Versioned::V0_3(Runner::new(sandbox, component)?),
            ApiVersion::V0_4 => Versioned::V0_4(Runner::new(sandbox, component)?),
            ApiVersion::V0_5 => Versioned::V0_5(Runner::new(sandbox, component)?),
        })
    }

    /// The plugin's sandbox.
    pub fn sandbox(&self) -> &Sandbox {
        match self {
            Versioned::V0_2(r) => r.sandbox(),
            Versioned::V0_3(r) => r.sandbox(),
            Versioned::V0_4(r) => r.sandbox(),
            Versioned::V0_5(r) => r.sandbox(),
        }
    }

    /// Instantiate and configure, unless an instance is live.
    pub fn start(&mut self) -> Result<(), PluginFailure> {
        match self {
            Versioned::V0_2(r) => r.start(),
            Versioned::V0_3(r) => r.start(),
            Versioned::V0_4(r) => r.start(),
            Versioned::V0_5(r) => r.start(),
        }
    }
}

/// A flags value of an older plugin API as its newer twin, flag by flag
/// (the two types are generated apart, with the same flags):
/// `same_flags!(n, old::Needs => Needs: REFERENCES)`.
macro_rules! same_flags {
    ($value:expr, $old:ty => $new:ty: $($flag:ident),+) => {{
        let old = $value;
        let mut new = <$new>::empty();
        $(
            if old.contains(<$old>::$flag) {
                new |= <$new>::$flag;
            }
        )+
        new
    }};
}
pub(crate) use same_flags;

/// Implement [`World`] for a generated world.
macro_rules! world {
    ($world:ty, $pre:ident, $api:ident) => {
        impl $crate::runner::World for $world {
            type Pre = $pre<$crate::capabilities::PluginState>;
            fn add_to_linker(
                linker: &mut wasmtime::component::Linker<$crate::capabilities::PluginState>,
            ) -> wasmtime::Result<()> {
                <$world>::add_to_linker::<
                    $crate::capabilities::PluginState,
                    wasmtime::component::HasSelf<$crate::capabilities::PluginState>,
                >(linker, |s| s)
            }
            fn pre(
                pre: wasmtime::component::InstancePre<$crate::capabilities::PluginState>,
            ) -> wasmtime::Result<Self::Pre> {
                $pre::new(pre)
            }
            fn instantiate(
                pre: &Self::Pre,
                store: &mut wasmtime::Store<$crate::capabilities::PluginState>,
            ) -> wasmtime::Result<Self> {
                pre.instantiate(store)
            }
            fn configure(
                &self,
                store: &mut wasmtime::Store<$crate::capabilities::PluginState>,
                config: &str,
            ) -> wasmtime::Result<Result<(), $crate::bindings::host::types::PluginError>> {
                self.$api().call_configure(store, config)
            }
        }
    };
}
pub(crate) use world;

/// Match on a [`Versioned`] runner: `$older` runs for a 0.2, 0.3 or 0.4
/// plugin with `$old` naming that version's interface module (`[v2]`,
/// `[v3]` or `[v4]`, in scope where the macro is used), and `$newest` for a
/// 0.5 plugin. The older versions' interfaces have the same items under the
/// same names, so `$older` is written once and type-checked against each:
/// it converts an older plugin's values field by field where it builds them.
/// (The reporter, whose 0.4 interface differs from 0.2's and 0.3's, has a
/// macro of its own in `reporter.rs`.)
macro_rules! by_version {
    // 0.2, 0.3 and 0.4 alike (their interface's items have the same names).
    (
        $versioned:expr, [$($v2:tt)+], [$($v3:tt)+], [$($v4:tt)+],
        |$r:ident, $old:ident| $older:expr,
        |$n:ident| $newest:expr $(,)?
    ) => {
        match $versioned {
            $crate::runner::Versioned::V0_2($r) => {
                #[allow(unused_imports)]
                use $($v2)+ as $old;
                $older
            }
            $crate::runner::Versioned::V0_3($r) => {
                #[allow(unused_imports)]
                use $($v3)+ as $old;
                $older
            }
            $crate::runner::Versioned::V0_4($r) => {
                #[allow(unused_imports)]
                use $($v4)+ as $old;
                $older
            }
            $crate::runner::Versioned::V0_5($n) => $newest,
        }
    };
    // Older code that names no type of its version's interface.
    ($versioned:expr, |$r:ident| $older:expr, |$n:ident| $newest:expr $(,)?) => {
        match $versioned {
            $crate::runner::Versioned::V0_2($r) => $older,
            $crate::runner::Versioned::V0_3($r) => $older,
            $crate::runner::Versioned::V0_4($r) => $older,
            $crate::runner::Versioned::V0_5($n) => $newest,
        }
    };
}
pub(crate) use by_version;
