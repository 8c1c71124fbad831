//! Trace context for the spans cinch makes (a turn and the steps of its
//! life, a request, a webhook delivery): their target, whether they are
//! exported and may carry content, and the W3C `traceparent` that crosses
//! process edges (in from a request's header, out to a harness's
//! `TRACEPARENT` and a webhook's header).
//!
//! Exporting them is the host's (`cinch serve --otlp-endpoint`, its
//! `telemetry` module), which calls [`exporting_started`] once its layer
//! is in place; until then no subscriber wants these spans, so each costs
//! the check that says so.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use opentelemetry::propagation::TextMapPropagator as _;
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// The target of every span meant for the exporter, and of nothing else.
pub const TARGET: &str = "cinch::traces";

/// Whether spans are exported: set once, when the exporter starts.
static EXPORTING: AtomicBool = AtomicBool::new(false);

/// Whether spans may carry a prompt's and an answer's text.
static CONTENT: AtomicBool = AtomicBool::new(false);

/// Records that spans of [`TARGET`] are exported from now on, with a
/// prompt's and an answer's text (masked) when `include_content`.
pub fn exporting_started(include_content: bool) {
    EXPORTING.store(true, Ordering::Relaxed);
    CONTENT.store(include_content, Ordering::Relaxed);
}

/// Whether spans are being exported.
pub fn exporting() -> bool {
    EXPORTING.load(Ordering::Relaxed)
}

/// Whether spans may carry a prompt's or an answer's text.
pub fn include_content() -> bool {
    CONTENT.load(Ordering::Relaxed)
}

/// `count` as a span records it: OpenTelemetry's integers are signed, and
/// the bridge would record an unsigned one as text.
pub fn integer(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// The W3C `traceparent` of `span`, for a process or a request that joins
/// its trace; none when nothing is exported or the span is not recorded.
pub fn traceparent(span: &Span) -> Option<String> {
    if !exporting() || span.is_disabled() {
        return None;
    }
    let context = span.context();
    if !context.span().span_context().is_valid() {
        return None;
    }
    let mut carrier = HashMap::new();
    TraceContextPropagator::new().inject_context(&context, &mut carrier);
    carrier.remove("traceparent")
}

/// Makes `span`, not yet entered, continue the trace `traceparent` names;
/// a malformed one is ignored, and the span starts a trace of its own.
pub fn continue_trace(span: &Span, traceparent: Option<&str>) {
    let Some(traceparent) = traceparent.filter(|_| !span.is_disabled()) else {
        return;
    };
    let carrier = HashMap::from([("traceparent".to_owned(), traceparent.to_owned())]);
    let context = TraceContextPropagator::new().extract(&carrier);
    if context.span().span_context().is_valid() {
        // Fails only for a span already started, which callers never pass.
        let _ = span.set_parent(context);
    }
}
