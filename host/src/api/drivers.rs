//! `GET /v1/drivers`: the server's drivers and, per CLI version, the event
//! types each did not know: the early warning that a CLI release changed its
//! output.
//!
//! Drivers are the server's, not an account's, so the seen-list is
//! server-wide: a CLI that changed its output changed it for everyone. It
//! holds only type names (cut and reduced to identifier characters by
//! [`crate::reader::type_name`]), CLI versions, when each was first seen and
//! how often; never which account, turn or line it came from.

use axum::extract::State;
use serde::Serialize;

use super::extract::Caller;
use super::problem::Problem;
use super::{AppState, Envelope};
use crate::drivers::Source;
use crate::store::SeenUnknown;

/// A driver the server has loaded.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DriverView {
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
}

/// Where a driver comes from.
#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DriverSource {
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
    pub first_seen: String,
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
pub async fn list_drivers(
    State(app): State<AppState>,
    _caller: Caller,
) -> Result<axum::Json<Envelope<Vec<DriverView>>>, Problem> {
    let seen = app.drivers.unknown_events().await?;
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
            }
        })
        .collect();
    Ok(Envelope::of(drivers))
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
                    first_seen: row.first_seen.clone(),
                    count: u64::try_from(row.count).unwrap_or(0),
                })
                .collect(),
        })
        .collect()
}
