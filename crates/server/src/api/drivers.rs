//! `GET /v1/drivers`: the server's drivers and, per CLI version, the event
//! types each did not know: the early warning that a CLI release changed its
//! output. `POST /v1/drivers` and `DELETE /v1/drivers/{name}`: the
//! operator's plugin changes, in force for new turns at once; they take the
//! server's operator token (`--operator-token`), not an account's, since a
//! driver serves every account.
//!
//! Drivers are the server's, not an account's, so the seen-list is
//! server-wide: a CLI that changed its output changed it for everyone. It
//! holds only type names (cut and reduced to identifier characters by
//! [`cinch_engine::reading::reader::type_name`]), CLI versions, when each was first seen and
//! how often; never which account, turn or line it came from.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use serde::{Deserialize, Serialize};

use super::extract::{Caller, Json};
use super::problem::Problem;
use super::{AppState, Envelope};
use cinch_base::timestamp::Timestamp;
use cinch_engine::drivers::Source;
use cinch_engine::plugins::Installed;
use cinch_store::{SeenCliVersion, SeenUnknown};

/// A driver the server has loaded.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct DriverView {
    /// The harness, as a request's `harness` names it.
    pub name: String,
    /// What people call it.
    pub display_name: String,
    /// The program it runs, looked up on the server's PATH.
    pub program: String,
    /// The driver contract version it implements.
    pub contract_version: String,
    /// Whether it is built into cinch or a plugin the operator installed.
    pub source: DriverSource,
    /// Where a pinned plugin came from: a file's path or an OCI reference;
    /// null for a built-in or an unpinned plugin file.
    pub origin: Option<String>,
    /// Its version: a pinned plugin's (its OCI version or tag), cinch's for
    /// a built-in; null when unknown.
    pub version: Option<String>,
    /// The component's digest, `sha256:HEX`: what a turn's result names.
    pub digest: String,
    /// Per CLI version its turns ran, the event types it did not know,
    /// oldest sighting first; empty when it has known every event.
    pub cli_versions: Vec<CliVersionSeen>,
    /// The harnesses it runs (itself and its profiles): each one's CLI
    /// package, tested and pinned versions, and the CLI versions turns ran on.
    pub harnesses: Vec<HarnessCliView>,
}

/// A harness's CLI: where it comes from, the versions its driver was tested
/// with, the one pinned, and those turns ran on.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct HarnessCliView {
    /// The harness.
    pub name: String,
    /// Its package, `npm:NAME` or `pypi:NAME`; null when none is known.
    pub package: Option<String>,
    /// The CLI versions its driver was tested with (a semver range); null
    /// when it states none.
    pub tested_versions: Option<String>,
    /// The version config.toml pins (`[harness.NAME] version`); null: the
    /// CLI on the server's PATH runs.
    pub pinned_version: Option<String>,
    /// The CLI versions its turns ran on, first seen first.
    pub cli_versions_run: Vec<CliVersionRun>,
}

/// A CLI version turns of a harness ran on.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct CliVersionRun {
    /// The version; null when the CLI did not say it.
    pub cli_version: Option<String>,
    /// Where it stands against the tested range (`tested`, `untested`,
    /// `unknown`); null when no range is stated.
    pub drift: Option<cinch_engine::tools::CliDrift>,
    /// How many turns ran on it.
    pub turns: u64,
    /// When a turn on it first ended (RFC 3339, UTC).
    #[schema(value_type = String)]
    pub first_seen: Timestamp,
    /// When a turn on it last ended (RFC 3339, UTC).
    #[schema(value_type = String)]
    pub last_seen: Timestamp,
}

/// Where a driver comes from.
#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DriverSource {
    /// Embedded in cinch.
    Builtin,
    /// A plugin in the server's drivers folder.
    Plugin,
}

/// The unknown event types seen from one version of a harness's CLI.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct CliVersionSeen {
    /// The CLI's version; null when it did not say it.
    pub cli_version: Option<String>,
    /// The types, by when each was first seen.
    pub unknown_events: Vec<UnknownEventSeen>,
}

/// An event type a driver did not know.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct UnknownEventSeen {
    /// The type's name (`(no type)` for JSON without one, `(other types)`
    /// for those past a turn's 32).
    #[serde(rename = "type")]
    pub event_type: String,
    /// When a turn's end first recorded it (RFC 3339, UTC).
    #[schema(value_type = String)]
    pub first_seen: Timestamp,
    /// How many such events turns on every account have seen since.
    pub count: u64,
}

/// The drivers and the event types each did not know, per CLI version.
#[utoipa::path(
    get,
    path = "/v1/drivers",
    responses(
        (status = 200, body = Envelope<Vec<DriverView>>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "drivers"
)]
pub(crate) async fn list_drivers(
    State(app): State<AppState>,
    _caller: Caller,
) -> Result<axum::Json<Envelope<Vec<DriverView>>>, Problem> {
    let seen = app.drivers.unknown_events().await?;
    let runs = app.drivers.cli_versions().await?;
    let registry = app.drivers.registry();
    let drivers = registry
        .entries()
        .iter()
        .filter_map(|entry| Some((entry, entry.driver.as_ref().ok()?)))
        .map(|(entry, driver)| {
            let info = driver.info();
            let used = registry.driver_used(driver);
            DriverView {
                name: info.name.clone(),
                display_name: info.display_name.clone(),
                program: info.program.clone(),
                contract_version: driver.contract_version().to_owned(),
                source: match entry.source {
                    Source::Builtin => DriverSource::Builtin,
                    Source::Plugin(_) | Source::Pinned(_) => DriverSource::Plugin,
                },
                origin: match &entry.source {
                    Source::Pinned(pin) => Some(pin.source.clone()),
                    Source::Builtin | Source::Plugin(_) => None,
                },
                version: used.version,
                digest: used.digest,
                cli_versions: by_version(seen.iter().filter(|row| row.harness == info.name)),
                harnesses: std::iter::once(info.name.as_str())
                    .chain(
                        registry
                            .profiles()
                            .iter()
                            .filter(|profile| profile.driver == info.name)
                            .map(|profile| profile.name.as_str()),
                    )
                    .map(|name| harness_cli(&app, name, &runs))
                    .collect(),
            }
        })
        .collect();
    Ok(Envelope::of(drivers))
}

/// The harness `name`'s CLI, with the versions `runs` saw its turns on.
fn harness_cli(app: &AppState, name: &str, runs: &[SeenCliVersion]) -> HarnessCliView {
    let tool = app.drivers.tool(name);
    let tested = tool.as_ref().and_then(|tool| tool.tested.clone());
    HarnessCliView {
        name: name.to_owned(),
        package: tool
            .as_ref()
            .and_then(|tool| tool.package.as_ref())
            .map(cinch_engine::tools::Package::spec),
        pinned_version: tool.as_ref().and_then(|tool| tool.pinned.clone()),
        cli_versions_run: runs
            .iter()
            .filter(|run| run.harness == name)
            .map(|run| {
                let version = (!run.cli_version.is_empty()).then(|| run.cli_version.clone());
                CliVersionRun {
                    drift: cinch_engine::tools::drift(tested.as_deref(), version.as_deref()),
                    cli_version: version,
                    turns: u64::try_from(run.turns).unwrap_or(0),
                    first_seen: run.first_seen,
                    last_seen: run.last_seen,
                }
            })
            .collect(),
        tested_versions: tested,
    }
}

/// One harness's rows grouped by CLI version, versions in the order they
/// were first seen.
pub fn by_version<'a>(rows: impl Iterator<Item = &'a SeenUnknown>) -> Vec<CliVersionSeen> {
    let mut versions: Vec<(String, Vec<&SeenUnknown>)> = Vec::new();
    for row in rows {
        match versions
            .iter_mut()
            .find(|(version, _)| *version == row.cli_version)
        {
            Some((_, rows)) => rows.push(row),
            None => versions.push((row.cli_version.clone(), vec![row])),
        }
    }
    for (_, rows) in &mut versions {
        rows.sort_by(|a, b| (&a.first_seen, &a.event_type).cmp(&(&b.first_seen, &b.event_type)));
    }
    versions.sort_by(|a, b| a.1[0].first_seen.cmp(&b.1[0].first_seen));
    versions
        .into_iter()
        .map(|(version, rows)| CliVersionSeen {
            cli_version: (!version.is_empty()).then_some(version),
            unknown_events: rows
                .into_iter()
                .map(|row| UnknownEventSeen {
                    event_type: row.event_type.clone(),
                    first_seen: row.first_seen,
                    count: u64::try_from(row.count).unwrap_or(0),
                })
                .collect(),
        })
        .collect()
}

/// A plugin to install from an OCI registry.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DriverAdd {
    /// `oci://HOST[:PORT]/REPO:TAG` or `oci://HOST[:PORT]/REPO@sha256:DIGEST`.
    pub source: String,
    /// Take what the source gives now even though it is not what it gave
    /// when the plugin was added (a tag that moved).
    #[serde(default)]
    pub update: bool,
}

/// A plugin as it is now pinned.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct DriverPinned {
    /// The driver's name.
    pub name: String,
    /// Its version, when its source tells one.
    pub version: Option<String>,
    /// The contract version it implements.
    pub contract_version: String,
    /// The component's digest, `sha256:HEX`.
    pub digest: String,
    /// Where it came from.
    pub origin: String,
    /// The digest it replaced; null when it replaced no pin.
    pub replaced: Option<String>,
    /// Whether it was pinned to these very bytes already.
    pub unchanged: bool,
}

/// Checks the request carries the operator's token: none is 401, as on
/// every route; a server with no operator token refuses the change (403).
fn operator(app: &AppState, headers: &HeaderMap) -> Result<(), Problem> {
    let unauthorized = || {
        Problem::unauthorized(
            "plugin changes take the server's operator token: Authorization: Bearer <token>",
        )
    };
    let given = super::extract::bearer(headers).ok_or_else(unauthorized)?;
    let Some(expected) = &app.operator_token else {
        return Err(Problem::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "plugin changes over HTTP are off on this server: start cinch serve with --operator-token (or use `cinch driver` on its home)",
        ));
    };
    if !super::health::same_secret(given.as_bytes(), expected.as_bytes()) {
        return Err(unauthorized());
    }
    Ok(())
}

/// Installs a plugin from an OCI registry (every digest checked, the
/// component loaded first, its signature checked as config.toml says); new
/// turns run on it at once, running ones finish on the component they
/// started with.
#[utoipa::path(
    post,
    path = "/v1/drivers",
    request_body = DriverAdd,
    responses(
        (status = 201, body = Envelope<DriverPinned>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json", description = "The server takes no plugin changes over HTTP"),
        (status = 409, body = Problem, content_type = "application/problem+json", description = "The source moved since it was added; send update"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "drivers"
)]
pub(crate) async fn add_driver(
    State(app): State<AppState>,
    headers: HeaderMap,
    Json(add): Json<DriverAdd>,
) -> Result<(StatusCode, axum::Json<Envelope<DriverPinned>>), Problem> {
    operator(&app, &headers)?;
    let (driver, pin, replaced, unchanged) = match app.drivers.add(add.source, add.update).await? {
        Installed::Pinned {
            driver,
            pin,
            replaced,
        } => (driver, pin, replaced.map(|old| old.digest), false),
        Installed::Unchanged { driver, pin } => (driver, pin, None, true),
    };
    Ok((
        StatusCode::CREATED,
        Envelope::of(DriverPinned {
            name: driver.info().name.clone(),
            version: pin.version,
            contract_version: pin.contract,
            digest: pin.digest,
            origin: pin.source,
            replaced,
            unchanged,
        }),
    ))
}

/// Removes a plugin; a built-in driver of its name is in force again.
#[utoipa::path(
    delete,
    path = "/v1/drivers/{name}",
    params(("name" = String, Path, description = "The driver")),
    responses(
        (status = 204, description = "Removed"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json", description = "The server takes no plugin changes over HTTP"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "drivers"
)]
pub(crate) async fn remove_driver(
    State(app): State<AppState>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Result<StatusCode, Problem> {
    operator(&app, &headers)?;
    if !cinch_engine::harnesses::is_driver_name(&name) {
        return Err(Problem::not_found("no plugin of that name"));
    }
    app.drivers.remove(name).await?;
    Ok(StatusCode::NO_CONTENT)
}
