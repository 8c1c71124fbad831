//! A collector on loopback for the trace tests: it takes OTLP/HTTP exports
//! and webhook deliveries alike, answers 200, and decodes the exports with
//! OpenTelemetry's own protobuf types.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use prost::Message as _;
use serde_json::Value;

/// One request the collector got.
#[derive(Debug, Clone)]
pub struct Post {
    pub path: String,
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

/// An exported span, with ids in hex and attributes as JSON values.
#[derive(Debug, Clone)]
pub struct Span {
    pub name: String,
    pub trace_id: String,
    pub span_id: String,
    /// Empty for a root span.
    pub parent_span_id: String,
    pub kind: i32,
    pub attributes: BTreeMap<String, Value>,
    /// The resource's `service.name`.
    pub service: String,
}

impl Span {
    pub fn attribute(&self, key: &str) -> &Value {
        self.attributes
            .get(key)
            .unwrap_or_else(|| panic!("span {} has no {key}: {self:#?}", self.name))
    }
}

pub struct Collector {
    /// Its address, as `--otlp-endpoint` takes it.
    pub url: String,
    posts: Arc<Mutex<Vec<Post>>>,
}

impl Collector {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let posts: Arc<Mutex<Vec<Post>>> = Arc::default();
        let record = posts.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let path = line.split(' ').nth(1).unwrap_or_default().to_owned();
                let mut headers = BTreeMap::new();
                loop {
                    line.clear();
                    reader.read_line(&mut line).unwrap();
                    let Some((name, value)) = line.trim_end().split_once(": ") else {
                        break;
                    };
                    headers.insert(name.to_ascii_lowercase(), value.to_owned());
                }
                let length: usize = headers["content-length"].parse().unwrap();
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                record.lock().unwrap().push(Post {
                    path,
                    headers,
                    body,
                });
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
            }
        });
        Self { url, posts }
    }

    /// The requests to `path`.
    pub fn posts_to(&self, path: &str) -> Vec<Post> {
        let posts = self.posts.lock().unwrap();
        posts
            .iter()
            .filter(|post| post.path == path)
            .cloned()
            .collect()
    }

    /// Every span exported so far, decoded.
    pub fn spans(&self) -> Vec<Span> {
        let mut spans = Vec::new();
        for post in self.posts_to("/v1/traces") {
            assert_eq!(
                post.headers["content-type"], "application/x-protobuf",
                "{post:?}"
            );
            let export = ExportTraceServiceRequest::decode(post.body.as_slice()).unwrap();
            for resource in export.resource_spans {
                let service = resource
                    .resource
                    .iter()
                    .flat_map(|resource| &resource.attributes)
                    .find(|attribute| attribute.key == "service.name")
                    .and_then(|attribute| attribute.value.as_ref()?.value.clone())
                    .map(json)
                    .and_then(|value| value.as_str().map(str::to_owned))
                    .unwrap_or_default();
                for scope in resource.scope_spans {
                    for span in scope.spans {
                        spans.push(Span {
                            name: span.name,
                            trace_id: hex(&span.trace_id),
                            span_id: hex(&span.span_id),
                            parent_span_id: hex(&span.parent_span_id),
                            kind: span.kind,
                            attributes: span
                                .attributes
                                .into_iter()
                                .filter_map(|attribute| {
                                    Some((attribute.key, json(attribute.value?.value?)))
                                })
                                .collect(),
                            service: service.clone(),
                        });
                    }
                }
            }
        }
        spans
    }

    /// Waits until the spans satisfy `done`, and returns them.
    pub fn wait_for(&self, what: &str, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            assert!(Instant::now() < deadline, "no {what} among {spans:#?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn json(value: Any) -> Value {
    match value {
        Any::StringValue(text) => Value::from(text),
        Any::BoolValue(flag) => Value::from(flag),
        Any::IntValue(number) => Value::from(number),
        Any::DoubleValue(number) => Value::from(number),
        other => Value::from(format!("{other:?}")),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
