//! The web app: static pages embedded in the binary, served at `/`. They
//! talk to the API with the bearer token the person signs in with.

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

const INDEX_HTML: &str = include_str!("assets/index.html");

/// The app's routes; they hold no data, so they need no token.
pub fn router() -> axum::Router {
    axum::Router::new().route("/", get(index))
}

async fn index() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        INDEX_HTML,
    )
}
