//! A turn's spans for the trace exporter (see [`crate::telemetry`]): the
//! turn's own, after OpenTelemetry's semantic conventions for generative AI
//! (an agent invoked: the harness, the model, the tokens) with its cost, and
//! the steps of its life under it, each opened where the step runs.

use serde_json::json;
use tracing::Span;
use tracing::field::Empty;

use super::result::{Status, TurnResult};
use crate::telemetry::{self, TARGET};

/// A new turn's span on `harness`, continuing the trace `trace_parent`
/// names (its caller's), else starting one of its own.
pub(super) fn turn(harness: &str, trace_parent: Option<&str>) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        parent: None,
        "turn",
        otel.name = %format!("invoke_agent {harness}"),
        otel.status_code = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.system = %harness,
        gen_ai.request.model = Empty,
        gen_ai.response.model = Empty,
        gen_ai.conversation.id = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        cinch.cost_usd = Empty,
        cinch.turn.id = Empty,
        cinch.run.id = Empty,
        cinch.turn.status = Empty,
        error.type = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
    );
    telemetry::continue_trace(&span, trace_parent);
    span
}

/// Records what the start settled: the ids, the model asked for, and the
/// brief (`brief` gives it masked) when the operator lets spans carry content.
pub(super) fn started(
    span: &Span,
    turn: &str,
    run: &str,
    model: Option<&str>,
    brief: impl FnOnce() -> String,
) {
    if span.is_disabled() {
        return;
    }
    span.record("cinch.turn.id", turn);
    span.record("cinch.run.id", run);
    if let Some(model) = model {
        span.record("gen_ai.request.model", model);
    }
    if telemetry::include_content() {
        let messages = json!([{"role": "user", "parts": [{"type": "text", "content": brief()}]}]);
        span.record("gen_ai.input.messages", messages.to_string());
    }
}

/// Records a start that was refused or failed.
pub(super) fn not_started(span: &Span, error: &super::StartError) {
    span.record("otel.status_code", "ERROR");
    let kind = match error {
        super::StartError::Refused(refusal) => refusal.code.as_str(),
        _ => "start_failed",
    };
    span.record("error.type", kind);
}

/// Records how the turn ended: its status, the model that answered, the
/// session, the tokens and the cost, and the final message (already
/// masked) when the operator lets spans carry content.
pub(super) fn ended(span: &Span, result: &TurnResult) {
    if span.is_disabled() {
        return;
    }
    span.record("cinch.turn.status", result.status.as_str());
    if matches!(
        result.status,
        Status::Failed | Status::TimedOut | Status::Interrupted
    ) {
        span.record("otel.status_code", "ERROR");
        span.record("error.type", result.status.as_str());
    }
    if let Some(model) = &result.model {
        span.record("gen_ai.response.model", model.as_str());
    }
    if let Some(session) = &result.session_id {
        span.record("gen_ai.conversation.id", session.as_str());
    }
    if let Some(usage) = &result.usage {
        if let Some(tokens) = usage.input_tokens {
            span.record("gen_ai.usage.input_tokens", telemetry::integer(tokens));
        }
        if let Some(tokens) = usage.output_tokens {
            span.record("gen_ai.usage.output_tokens", telemetry::integer(tokens));
        }
        if let Some(cost) = usage.cost_usd {
            span.record("cinch.cost_usd", cost);
        }
    }
    if telemetry::include_content()
        && let Some(message) = &result.final_message
    {
        let messages =
            json!([{"role": "assistant", "parts": [{"type": "text", "content": message}]}]);
        span.record("gen_ai.output.messages", messages.to_string());
    }
}
