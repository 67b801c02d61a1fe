//! The console's static files, compiled into the binary: the vendored htmx and uPlot
//! (vendor/, refreshed from npm by vendor/refresh.sh) and the console's own stylesheet
//! and script (static/). They are served from a fixed table by name: no path reaches the
//! file system, so no `..` or encoded variant can name another file. Each answer has its
//! content type, an ETag (CRC-32C and length of the bytes; `If-None-Match` gets 304) and
//! `Cache-Control: no-cache`, so a browser revalidates and an upgraded binary's files are
//! seen at once.

use axum::extract::Path;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// One file the console serves.
pub(crate) struct Asset {
    /// Its name under `/ibmmq/console/assets/`.
    pub name: &'static str,
    /// Its content type.
    pub content_type: &'static str,
    /// Its bytes.
    pub bytes: &'static [u8],
}

/// Every file the console serves.
pub(crate) const ASSETS: &[Asset] = &[
    Asset {
        name: "htmx.min.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("vendor/htmx.min.js"),
    },
    Asset {
        name: "uPlot.iife.min.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("vendor/uPlot.iife.min.js"),
    },
    Asset {
        name: "uPlot.min.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("vendor/uPlot.min.css"),
    },
    Asset {
        name: "console.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("static/console.css"),
    },
    Asset {
        name: "console.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("static/console.js"),
    },
];

/// The file named `name`, if the console has it.
pub(crate) fn find(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.name == name)
}

/// The ETag of `bytes`.
fn etag(bytes: &[u8]) -> String {
    format!("\"{:08x}-{:x}\"", crc32c::crc32c(bytes), bytes.len())
}

/// `GET /ibmmq/console/assets/{file}`: the file, 304 when the browser has it, 404 for
/// any other name. No authentication: these files are the same in every installation.
pub(crate) async fn serve(Path(file): Path<String>, headers: HeaderMap) -> Response {
    let Some(asset) = find(&file) else {
        return super::super::errors::not_found().await.into_response();
    };
    let tag = etag(asset.bytes);
    let cached = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag));
    let mut response = if cached {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static(asset.content_type),
            )],
            asset.bytes,
        )
            .into_response()
    };
    let h = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&tag) {
        h.insert(header::ETAG, v);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;

    #[test]
    fn names_are_a_fixed_table() {
        assert!(find("htmx.min.js").is_some());
        for bad in [
            "../mod.rs",
            "..%2Fmod.rs",
            "vendor/htmx.min.js",
            "",
            "/etc/passwd",
        ] {
            assert!(find(bad).is_none(), "{bad}");
        }
    }

    /// vendor/SHA512SUMS names each vendored file's SHA-512 and the npm package (with
    /// package-lock.json's integrity) it was copied from by refresh.sh: the files served
    /// must be those, and the packages those the lockfile pins.
    #[test]
    fn vendored_files_are_the_npm_packages() {
        let sums = include_str!("vendor/SHA512SUMS");
        let lock: serde_json::Value =
            serde_json::from_str(include_str!("vendor/package-lock.json")).expect("lockfile");
        let mut checked = 0;
        for line in sums.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [file, sum, package, integrity] = fields[..] else {
                panic!("SHA512SUMS line '{line}' is not: file sha512 package@version integrity")
            };
            let asset = find(file).unwrap_or_else(|| panic!("{file} is not served"));
            let digest = ring::digest::digest(&ring::digest::SHA512, asset.bytes);
            let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(hex, sum, "{file} was edited: run vendor/refresh.sh");
            let (name, version) = package.rsplit_once('@').expect("package@version");
            let entry = &lock["packages"][format!("node_modules/{name}")];
            assert_eq!(entry["version"], version, "{name} in package-lock.json");
            assert_eq!(entry["integrity"], integrity, "{name}'s integrity");
            let b64 = integrity
                .strip_prefix("sha512-")
                .expect("a sha512 integrity");
            let raw = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .expect("base64");
            assert_eq!(raw.len(), 64, "{name}'s integrity is a SHA-512");
            checked += 1;
        }
        let vendored = ASSETS
            .iter()
            .filter(|a| !a.name.starts_with("console."))
            .count();
        assert_eq!(checked, vendored, "every vendored file is in SHA512SUMS");
    }
}
