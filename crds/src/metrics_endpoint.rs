//! The `/metrics` answer both binaries serve: a Prometheus registry in the text exposition
//! format, or a 500 naming why it could not be rendered.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use prometheus::{Encoder, Registry, TextEncoder};

/// The text exposition format's content type.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Renders every metric family of `registry`.
pub fn render(registry: &Registry) -> Result<Vec<u8>, prometheus::Error> {
    let mut text = Vec::new();
    TextEncoder::new().encode(&registry.gather(), &mut text)?;
    Ok(text)
}

/// The answer to `GET /metrics` for what [`render`] (or a caller's own rendering) gave.
pub fn response(rendered: Result<Vec<u8>, prometheus::Error>) -> Response {
    match rendered {
        Ok(text) => ([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response(),
        Err(error) => {
            tracing::warn!(%error, "rendering the metrics failed");
            (StatusCode::INTERNAL_SERVER_ERROR, format!("{error}\n")).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registry_renders_as_text_with_its_content_type() {
        let registry = Registry::new();
        let counter = prometheus::IntCounter::new("probe_total", "A probe.").unwrap();
        registry.register(Box::new(counter.clone())).unwrap();
        counter.inc();
        let answer = response(render(&registry));
        assert_eq!(answer.status(), StatusCode::OK);
        assert_eq!(answer.headers()[header::CONTENT_TYPE], CONTENT_TYPE);
        let failed = response(Err(prometheus::Error::Msg("no".to_owned())));
        assert_eq!(failed.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(
            String::from_utf8(render(&registry).unwrap())
                .unwrap()
                .contains("probe_total 1")
        );
    }
}
