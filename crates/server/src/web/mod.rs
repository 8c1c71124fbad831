//! The web app: plain HTML, CSS and JavaScript modules embedded in the
//! binary, served at `/` and `/assets/<file>`. The pages hold no data, so
//! they need no token; every data call they make sends the bearer token the
//! person signed in with.

use std::sync::LazyLock;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use sha2::{Digest as _, Sha256};

/// One embedded file: its name under `/assets/`, its type and its bytes.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $type:expr) => {
        Asset {
            name: $name,
            content_type: $type,
            body: include_bytes!(concat!("assets/", $name)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

/// The app's files; the first is the page `/` serves.
static ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("app.css", "text/css; charset=utf-8"),
    asset!("screens.css", "text/css; charset=utf-8"),
    asset!("compare.css", "text/css; charset=utf-8"),
    asset!("approvals.css", "text/css; charset=utf-8"),
    asset!("favicon.svg", "image/svg+xml"),
    asset!("app.js", JS),
    asset!("api.js", JS),
    asset!("dom.js", JS),
    asset!("events.js", JS),
    asset!("logos.js", JS),
    asset!("block.js", JS),
    asset!("reply.js", JS),
    asset!("markdown.js", JS),
    asset!("tabs.js", JS),
    asset!("tasks.js", JS),
    asset!("new-task.js", JS),
    asset!("credentials.js", JS),
    asset!("task.js", JS),
    asset!("result.js", JS),
    asset!("new-session.js", JS),
    asset!("status.js", JS),
    asset!("failure.js", JS),
    asset!("form.js", JS),
    asset!("environments.js", JS),
    asset!("agents.js", JS),
    asset!("tokens.js", JS),
    asset!("usage.js", JS),
    asset!("diff.js", JS),
    asset!("highlight.js", JS),
    asset!("fork.js", JS),
    asset!("compare.js", JS),
    asset!("approvals.js", JS),
];

/// Each asset's entity tag, a hash of its bytes: the files are not
/// fingerprinted by name, so browsers revalidate them with it instead of
/// keeping a stale copy after an upgrade.
static ETAGS: LazyLock<Vec<HeaderValue>> = LazyLock::new(|| {
    ASSETS
        .iter()
        .map(|asset| {
            let hash = Sha256::digest(asset.body);
            let hex = cinch_base::hex::encode(&hash[..8]);
            HeaderValue::from_str(&format!("\"{hex}\"")).expect("hex is a valid header")
        })
        .collect()
});

/// The app's routes: `/` and one per embedded file, so that any other path
/// falls through to the server's own "no such route".
pub(crate) fn router() -> axum::Router {
    ASSETS.iter().enumerate().fold(
        axum::Router::new().route(
            "/",
            get(|headers: HeaderMap| async move { serve(0, &headers) }),
        ),
        |router, (index, asset)| {
            router.route(
                &format!("/assets/{}", asset.name),
                get(move |headers: HeaderMap| async move { serve(index, &headers) }),
            )
        },
    )
}

fn serve(index: usize, headers: &HeaderMap) -> Response {
    let asset = &ASSETS[index];
    let etag = ETAGS[index].clone();
    let cache = (header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if headers.get(header::IF_NONE_MATCH) == Some(&etag) {
        return (StatusCode::NOT_MODIFIED, [(header::ETAG, etag), cache]).into_response();
    }
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static(asset.content_type),
            ),
            (header::ETAG, etag),
            cache,
            // The pages load only from cinch itself and talk only to it.
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(
                    "default-src 'self'; img-src 'self' data:; style-src 'self'; \
                     frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
                ),
            ),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
        ],
        asset.body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file the pages refer to is served: one left out of [`ASSETS`]
    /// would break the app only in a browser.
    #[test]
    fn every_referenced_file_is_an_asset() {
        for asset in ASSETS {
            let text = std::str::from_utf8(asset.body).unwrap();
            for prefix in ["\"./", "\"/assets/"] {
                for part in text.split(prefix).skip(1) {
                    let name = part.split('"').next().unwrap();
                    assert!(
                        ASSETS.iter().any(|asset| asset.name == name),
                        "{} refers to {name}, which is not served",
                        asset.name
                    );
                }
            }
        }
    }
}
