//! Traces over OpenTelemetry: `cinch serve --otlp-endpoint URL` exports the
//! spans cinch makes (a request, a turn and the steps of its life, a webhook
//! delivery) to a collector over OTLP/HTTP, protobuf-encoded.
//!
//! The spans are `tracing` spans of target `cinch_engine::telemetry::TARGET`
//! (that module holds the trace context they carry across processes),
//! bridged to OpenTelemetry by a layer that exists only while exporting;
//! without it no subscriber wants them, so each costs the check that says so.
//! Spans carry no secret and no prompt's or answer's text unless the operator
//! asks for the content (`--otlp-include-content`), and then masked.

use std::time::Duration;

use anyhow::Context as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::registry::LookupSpan;

/// The path under a collector's address where OTLP/HTTP takes traces.
const TRACES_PATH: &str = "/v1/traces";

/// How long one export to the collector may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the operator asked of traces.
#[derive(Debug, Clone, Default)]
pub struct Traces {
    /// The collector's OTLP/HTTP address (`http://host:4318`); none: no traces.
    pub endpoint: Option<String>,
    /// Spans carry prompts and final messages, masked of secrets.
    pub include_content: bool,
}

/// The running exporter: dropping it sends what is still buffered.
pub struct Exporter {
    provider: SdkTracerProvider,
}

impl Drop for Exporter {
    fn drop(&mut self) {
        if let Err(error) = self.provider.shutdown() {
            eprintln!("cinch: could not send the last traces: {error}");
        }
    }
}

/// The layer that exports cinch's spans as `traces` asks, with the
/// exporter behind it; none when traces are off.
pub fn exporter<S>(traces: &Traces) -> anyhow::Result<Option<(Exporter, impl Layer<S>)>>
where
    S: tracing::Subscriber + for<'span> LookupSpan<'span>,
{
    let Some(endpoint) = traces.endpoint.as_deref().filter(|url| !url.is_empty()) else {
        return Ok(None);
    };
    let url = traces_url(endpoint)?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(Ureq::new())
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_endpoint(url)
        .with_timeout(EXPORT_TIMEOUT)
        .build()
        .context("starting the trace exporter")?;
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name("cinch")
        .with_attribute(opentelemetry::KeyValue::new(
            "service.version",
            env!("CARGO_PKG_VERSION"),
        ))
        .build();
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build();
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("cinch"))
        .with_location(false)
        .with_threads(false)
        // cinch hands contexts on explicitly; activating one on every entry
        // (the parsing span is entered per read of a turn's log) would cost.
        .with_context_activation(false)
        .with_filter(tracing_subscriber::filter::filter_fn(|metadata| {
            metadata.target() == cinch_engine::telemetry::TARGET
        }));
    cinch_engine::telemetry::exporting_started(traces.include_content);
    Ok(Some((Exporter { provider }, layer)))
}

/// Where the traces go: the collector's address with OTLP's path for
/// traces, unless it ends with it already. Plain HTTP only: cinch carries no
/// TLS stack, so the collector is one on this machine or its network.
fn traces_url(endpoint: &str) -> anyhow::Result<String> {
    let rest = endpoint.strip_prefix("http://").with_context(|| {
        format!(
            "--otlp-endpoint {endpoint:?}: give the collector's OTLP/HTTP address as http://host:4318 (cinch sends traces over plain HTTP, to a collector on this machine or its network)"
        )
    })?;
    anyhow::ensure!(
        !rest.is_empty() && !rest.starts_with('/'),
        "--otlp-endpoint {endpoint:?}: the address names no host; give http://host:4318"
    );
    let base = endpoint.trim_end_matches('/');
    Ok(if base.ends_with(TRACES_PATH) {
        base.to_owned()
    } else {
        format!("{base}{TRACES_PATH}")
    })
}

/// Sends the exporter's requests with ureq, the HTTP client cinch has
/// already: the exporter's batches go out from its own thread, which may
/// block.
#[derive(Debug)]
struct Ureq(ureq::Agent);

impl Ureq {
    fn new() -> Self {
        Self(
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(EXPORT_TIMEOUT))
                .max_redirects(0)
                .build()
                .into(),
        )
    }
}

#[async_trait::async_trait]
impl HttpClient for Ureq {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let response = self.0.run(request.map(|body| body.to_vec()))?;
        let (parts, mut body) = response.into_parts();
        let body = body.read_to_vec()?;
        Ok(Response::from_parts(parts, Bytes::from(body)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_is_a_collector_over_plain_http() {
        assert_eq!(
            traces_url("http://127.0.0.1:4318").unwrap(),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(
            traces_url("http://collector:4318/").unwrap(),
            "http://collector:4318/v1/traces"
        );
        assert_eq!(
            traces_url("http://collector:4318/v1/traces").unwrap(),
            "http://collector:4318/v1/traces"
        );
        let refused = traces_url("https://collector:4318")
            .unwrap_err()
            .to_string();
        assert!(refused.contains("http://host:4318"), "{refused}");
        assert!(traces_url("http://").is_err());
    }
}
