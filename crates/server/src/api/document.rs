//! What the OpenAPI document says about every operation beyond its own
//! annotations: the answers the shared layers give (a malformed, unsupported,
//! oversized or stalled body; a bad query or path; an idempotency key in
//! flight or reused), the rule for a key, and the harnesses this server has.

use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::openapi::{OpenApi, Ref, RefOr};

/// An `Idempotency-Key`: 1 to 255 printable ASCII characters, not starting
/// or ending with a space.
const KEY_PATTERN: &str = "^[!-~]([ -~]{0,253}[!-~])?$";

/// A run id, as [`crate::service::code_tasks::CodeTasks::check_run`] takes it.
const RUN_PATTERN: &str = r"^[A-Za-z0-9_]([A-Za-z0-9_-]|\.[A-Za-z0-9_-])*$";

/// Adds the shared layers' answers and the key's rule to every operation.
pub(super) struct SharedAnswers;

impl utoipa::Modify for SharedAnswers {
    fn modify(&self, openapi: &mut OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            let operations = [
                &mut item.get,
                &mut item.post,
                &mut item.put,
                &mut item.patch,
                &mut item.delete,
            ];
            for operation in operations.into_iter().flatten() {
                add_shared_answers(operation);
            }
        }
    }
}

fn problem(description: &str) -> Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/problem+json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Problem")))
                .build(),
        )
        .build()
}

fn add_shared_answers(operation: &mut Operation) {
    let has_body = operation.request_body.is_some();
    let parameters = operation.parameters.get_or_insert_with(Vec::new);
    let has_query_or_path = parameters
        .iter()
        .any(|p| matches!(p.parameter_in, ParameterIn::Query | ParameterIn::Path));
    let mut keyed = false;
    for parameter in parameters.iter_mut() {
        if parameter.name == "run" && parameter.parameter_in == ParameterIn::Path {
            parameter.schema = Some(RefOr::T(Schema::Object(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .max_length(Some(100))
                    .pattern(Some(RUN_PATTERN))
                    .build(),
            )));
        }
        if parameter.name == "Last-Event-ID" {
            parameter.schema = Some(RefOr::T(Schema::Object(
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
                    .minimum(Some(0))
                    .build(),
            )));
        }
        if parameter.name == "Idempotency-Key" {
            keyed = true;
            parameter.schema = Some(RefOr::T(Schema::Object(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(1))
                    .max_length(Some(255))
                    .pattern(Some(KEY_PATTERN))
                    .build(),
            )));
        }
    }
    let responses = &mut operation.responses.responses;
    for response in responses.values_mut() {
        if let RefOr::T(response) = response
            && let Some(stream) = response.content.get_mut("text/event-stream")
        {
            stream.schema = Some(RefOr::T(Schema::Object(sse_event())));
        }
    }
    let mut add = |status: &str, response: Response| {
        responses
            .entry(status.to_owned())
            .or_insert(RefOr::T(response));
    };
    if has_body {
        add("400", problem("The body is not JSON"));
        add("408", problem("The body did not arrive in time"));
        add("413", problem("The body is too large"));
        add(
            "415",
            problem("The body is not sent as Content-Type: application/json"),
        );
    }
    if has_body || has_query_or_path || keyed {
        add(
            "422",
            problem("A field, parameter or Idempotency-Key breaks its rule; the problem names it"),
        );
    }
    if keyed {
        let mut in_flight = problem(
            "A request with this Idempotency-Key is still being answered, or was cut off by a restart",
        );
        in_flight.headers.insert(
            "Retry-After".to_owned(),
            HeaderBuilder::new()
                .schema(ObjectBuilder::new().schema_type(Type::Integer))
                .description(Some(
                    "Seconds to wait before retrying, while the first request is in flight",
                ))
                .build(),
        );
        responses.insert("409".to_owned(), RefOr::T(in_flight));
    }
}

/// One server-sent event as a client reads it: its number, its name and its
/// data (a JSON object).
fn sse_event() -> utoipa::openapi::schema::Object {
    let text = || ObjectBuilder::new().schema_type(Type::String);
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("id", text())
        .property("event", text())
        .property("data", text())
        .build()
}

/// Lists the harnesses this server has where a request must name one of them.
pub(super) fn name_harnesses(openapi: &mut OpenApi, harnesses: &[&str]) {
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    for (schema_name, nullable) in [
        ("TaskRequest", false),
        ("AgentCreate", true),
        ("AgentChange", true),
    ] {
        let Some(RefOr::T(Schema::Object(object))) = components.schemas.get_mut(schema_name) else {
            continue;
        };
        let Some(RefOr::T(Schema::Object(harness))) = object.properties.get_mut("harness") else {
            continue;
        };
        let mut names: Vec<serde_json::Value> =
            harnesses.iter().map(|name| (*name).into()).collect();
        if nullable {
            names.push(serde_json::Value::Null);
        }
        harness.enum_values = Some(names);
    }
}
