//! The one place that knows which contract versions there are: a component
//! bound for its version, and each call the host makes into a driver,
//! dispatched to that version's bindings and converted to the SDK's types.
//! A new contract version is a new variant here and a module beside
//! `v0_1_0`; nothing else in the host changes.

use cinch_driver_sdk as sdk;
use wasmtime::Store;
use wasmtime::component::{InstancePre, ResourceAny};

use super::Sandbox;
use super::{v0_1_0, v0_2_0, v0_3_0};

/// The contract versions this host links, oldest first.
pub const VERSIONS: &[&str] = &["0.1.0", "0.2.0", "0.3.0"];

/// A pre-instantiated component, per contract version.
#[derive(Clone)]
pub(super) enum Bindings {
    V0_1_0(v0_1_0::Pre<Sandbox>),
    V0_2_0(v0_2_0::Pre<Sandbox>),
    V0_3_0(v0_3_0::Pre<Sandbox>),
}

/// An instance, per contract version.
pub(super) enum Instance {
    V0_1_0(v0_1_0::HarnessDriver),
    V0_2_0(v0_2_0::HarnessDriver),
    V0_3_0(v0_3_0::HarnessDriver),
}

impl Bindings {
    /// Binds `pre` as contract `version` (one of [`VERSIONS`]).
    pub(super) fn new(version: &str, pre: InstancePre<Sandbox>) -> wasmtime::Result<Self> {
        match version {
            "0.1.0" => Ok(Self::V0_1_0(v0_1_0::Pre::new(pre)?)),
            "0.2.0" => Ok(Self::V0_2_0(v0_2_0::Pre::new(pre)?)),
            "0.3.0" => Ok(Self::V0_3_0(v0_3_0::Pre::new(pre)?)),
            other => Err(wasmtime::Error::msg(format!(
                "contract {other} is not linked by this host"
            ))),
        }
    }

    /// A fresh instance in `store`.
    pub(super) fn instantiate(&self, store: &mut Store<Sandbox>) -> wasmtime::Result<Instance> {
        match self {
            Self::V0_1_0(pre) => Ok(Instance::V0_1_0(pre.instantiate(store)?)),
            Self::V0_2_0(pre) => Ok(Instance::V0_2_0(pre.instantiate(store)?)),
            Self::V0_3_0(pre) => Ok(Instance::V0_3_0(pre.instantiate(store)?)),
        }
    }
}

impl Instance {
    /// `describe`.
    pub(super) fn describe(&self, store: &mut Store<Sandbox>) -> wasmtime::Result<sdk::Info> {
        match self {
            Self::V0_1_0(bindings) => {
                Ok(bindings.cinch_driver_driver().call_describe(store)?.into())
            }
            Self::V0_2_0(bindings) => {
                Ok(bindings.cinch_driver_driver().call_describe(store)?.into())
            }
            Self::V0_3_0(bindings) => {
                Ok(bindings.cinch_driver_driver().call_describe(store)?.into())
            }
        }
    }

    /// `parse-version`.
    pub(super) fn parse_version(
        &self,
        store: &mut Store<Sandbox>,
        output: &str,
    ) -> wasmtime::Result<Option<String>> {
        match self {
            Self::V0_1_0(bindings) => bindings
                .cinch_driver_driver()
                .call_parse_version(store, output),
            Self::V0_2_0(bindings) => bindings
                .cinch_driver_driver()
                .call_parse_version(store, output),
            Self::V0_3_0(bindings) => bindings
                .cinch_driver_driver()
                .call_parse_version(store, output),
        }
    }

    /// `start-command`.
    pub(super) fn start_command(
        &self,
        store: &mut Store<Sandbox>,
        turn: &sdk::Turn,
    ) -> wasmtime::Result<sdk::Command> {
        match self {
            Self::V0_1_0(bindings) => Ok(bindings
                .cinch_driver_driver()
                .call_start_command(store, &turn.into())?
                .into()),
            Self::V0_2_0(bindings) => Ok(bindings
                .cinch_driver_driver()
                .call_start_command(store, &turn.into())?
                .into()),
            Self::V0_3_0(bindings) => Ok(bindings
                .cinch_driver_driver()
                .call_start_command(store, &turn.into())?
                .into()),
        }
    }

    /// The parser resource's constructor; a 0.1.0 parser takes no turn.
    pub(super) fn new_parser(
        &self,
        store: &mut Store<Sandbox>,
        turn: &sdk::Turn,
    ) -> wasmtime::Result<ResourceAny> {
        match self {
            Self::V0_1_0(bindings) => bindings
                .cinch_driver_driver()
                .parser()
                .call_constructor(store),
            Self::V0_2_0(bindings) => bindings
                .cinch_driver_driver()
                .parser()
                .call_constructor(store, &turn.into()),
            Self::V0_3_0(bindings) => bindings
                .cinch_driver_driver()
                .parser()
                .call_constructor(store, &turn.into()),
        }
    }

    /// The parser's `opening`; a 0.1.0 parser has none.
    pub(super) fn opening(
        &self,
        store: &mut Store<Sandbox>,
        parser: ResourceAny,
    ) -> wasmtime::Result<Vec<String>> {
        match self {
            Self::V0_1_0(_) => Ok(Vec::new()),
            Self::V0_2_0(bindings) => bindings
                .cinch_driver_driver()
                .parser()
                .call_opening(store, parser),
            Self::V0_3_0(bindings) => bindings
                .cinch_driver_driver()
                .parser()
                .call_opening(store, parser),
        }
    }

    /// The parser's `feed`; a 0.1.0 parser never replies and is never done.
    pub(super) fn feed(
        &self,
        store: &mut Store<Sandbox>,
        parser: ResourceAny,
        lines: &[String],
    ) -> wasmtime::Result<sdk::Fed> {
        match self {
            Self::V0_1_0(bindings) => Ok(sdk::Fed {
                events: bindings
                    .cinch_driver_driver()
                    .parser()
                    .call_feed(store, parser, lines)?
                    .into_iter()
                    .map(Into::into)
                    .collect(),
                ..sdk::Fed::default()
            }),
            Self::V0_2_0(bindings) => Ok(bindings
                .cinch_driver_driver()
                .parser()
                .call_feed(store, parser, lines)?
                .into()),
            Self::V0_3_0(bindings) => Ok(bindings
                .cinch_driver_driver()
                .parser()
                .call_feed(store, parser, lines)?
                .into()),
        }
    }

    /// The parser's `stop`; a 0.1.0 parser has none.
    pub(super) fn stop(
        &self,
        store: &mut Store<Sandbox>,
        parser: ResourceAny,
    ) -> wasmtime::Result<Vec<String>> {
        match self {
            Self::V0_1_0(_) => Ok(Vec::new()),
            Self::V0_2_0(bindings) => bindings
                .cinch_driver_driver()
                .parser()
                .call_stop(store, parser),
            Self::V0_3_0(bindings) => bindings
                .cinch_driver_driver()
                .parser()
                .call_stop(store, parser),
        }
    }

    /// The parser's `decide`; a driver before 0.3.0 never asks (its turns
    /// never `ask`), so it has nothing to answer.
    pub(super) fn decide(
        &self,
        store: &mut Store<Sandbox>,
        parser: ResourceAny,
        key: &str,
        allow: bool,
        message: Option<&str>,
    ) -> wasmtime::Result<Vec<String>> {
        match self {
            Self::V0_1_0(_) | Self::V0_2_0(_) => Ok(Vec::new()),
            Self::V0_3_0(bindings) => bindings
                .cinch_driver_driver()
                .parser()
                .call_decide(store, parser, key, allow, message),
        }
    }

    /// The parser's `finish`.
    pub(super) fn finish(
        &self,
        store: &mut Store<Sandbox>,
        parser: ResourceAny,
        exit_code: Option<i32>,
        stderr_tail: &str,
    ) -> wasmtime::Result<sdk::Outcome> {
        match self {
            Self::V0_1_0(bindings) => Ok(bindings
                .cinch_driver_driver()
                .parser()
                .call_finish(store, parser, exit_code, stderr_tail)?
                .into()),
            Self::V0_2_0(bindings) => Ok(bindings
                .cinch_driver_driver()
                .parser()
                .call_finish(store, parser, exit_code, stderr_tail)?
                .into()),
            Self::V0_3_0(bindings) => Ok(bindings
                .cinch_driver_driver()
                .parser()
                .call_finish(store, parser, exit_code, stderr_tail)?
                .into()),
        }
    }
}
