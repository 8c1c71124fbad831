//! A client of the OCI distribution API carrying driver components in the
//! CNCF "Wasm OCI Artifact" layout: an OCI image manifest whose config is
//! `application/vnd.wasm.config.v0+json` and whose one layer is the
//! component, `application/wasm`. Every blob and the manifest are checked
//! against their digests on the way in.

use std::time::Duration;

use base64::Engine as _;
use cinch_runtime::sha256_hex;
use serde::{Deserialize, Serialize};
use serde_json::json;
use ureq::http;

use super::reference::Reference;

/// The OCI image manifest's media type.
pub(crate) const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The Wasm OCI Artifact config's media type.
pub(crate) const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The component layer's media type.
pub(crate) const LAYER_MEDIA_TYPE: &str = "application/wasm";
/// The manifest annotation holding the component's OpenSSH signature
/// (SSHSIG, armored), when it was published signed.
pub(crate) const SIGNATURE_ANNOTATION: &str = "dev.cinch.driver.signature";
/// The standard annotation cinch reads a driver's version from.
pub(crate) const VERSION_ANNOTATION: &str = "org.opencontainers.image.version";

/// The largest manifest or component cinch takes from a registry.
const MAX_BLOB_BYTES: u64 = 256 << 20;
const TIMEOUT: Duration = Duration::from_secs(120);

/// A username and password for a registry.
#[derive(Debug, Clone)]
pub struct Credentials {
    /// The user.
    pub username: String,
    /// The password or access token.
    pub password: String,
}

impl Credentials {
    /// The credentials `~/.docker/config.json` (or `$DOCKER_CONFIG/config.json`)
    /// keeps for `registry` in its `auths`, if any.
    pub fn from_docker_config(registry: &str) -> anyhow::Result<Option<Self>> {
        use anyhow::Context as _;
        let path = match std::env::var_os("DOCKER_CONFIG") {
            Some(dir) => std::path::PathBuf::from(dir).join("config.json"),
            None => match std::env::home_dir() {
                Some(home) => home.join(".docker/config.json"),
                None => return Ok(None),
            },
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error).with_context(|| format!("reading {}", path.display())),
        };
        #[derive(Deserialize)]
        struct DockerConfig {
            #[serde(default)]
            auths: std::collections::BTreeMap<String, DockerAuth>,
        }
        #[derive(Deserialize)]
        struct DockerAuth {
            auth: Option<String>,
            username: Option<String>,
            password: Option<String>,
        }
        let config: DockerConfig = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a Docker config file", path.display()))?;
        let found = config.auths.iter().find(|(key, _)| {
            let host = key
                .trim_start_matches("https://")
                .trim_start_matches("http://");
            host.split('/').next() == Some(registry)
        });
        let Some((_, auth)) = found else {
            return Ok(None);
        };
        if let (Some(username), Some(password)) = (&auth.username, &auth.password) {
            return Ok(Some(Self {
                username: username.clone(),
                password: password.clone(),
            }));
        }
        let Some(encoded) = &auth.auth else {
            return Ok(None);
        };
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .with_context(|| {
                format!(
                    "the `auth` for {registry} in {} is not base64 of USER:PASSWORD",
                    path.display()
                )
            })?;
        let (username, password) = decoded.split_once(':').with_context(|| {
            format!(
                "the `auth` for {registry} in {} is not USER:PASSWORD",
                path.display()
            )
        })?;
        Ok(Some(Self {
            username: username.to_owned(),
            password: password.to_owned(),
        }))
    }

    fn basic(&self) -> String {
        let pair = format!("{}:{}", self.username, self.password);
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    }
}

/// What went wrong talking to a registry.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The registry could not be reached.
    #[error("cannot reach {url}: {cause}")]
    Unreachable {
        /// What was asked.
        url: String,
        /// Why.
        cause: String,
    },
    /// The registry answered with an error.
    #[error("{method} {url} answered {status}: {body}")]
    Status {
        /// The request's method.
        method: String,
        /// What was asked.
        url: String,
        /// The status.
        status: u16,
        /// The start of the answer.
        body: String,
    },
    /// The registry wants credentials cinch does not have.
    #[error(
        "{registry} asks for credentials: log in with `docker login {registry}` (cinch reads ~/.docker/config.json) or pass --username with CINCH_REGISTRY_PASSWORD set"
    )]
    NeedsCredentials {
        /// The registry.
        registry: String,
    },
    /// Something the registry sent does not hash to the digest it was asked by.
    #[error("{what} from {reference} is {actual}, not the {expected} it was asked for: refused")]
    DigestMismatch {
        /// What it was (the manifest, the config, the component).
        what: &'static str,
        /// Where it came from.
        reference: String,
        /// The digest asked for.
        expected: String,
        /// The digest of what came.
        actual: String,
    },
    /// The manifest is not a Wasm OCI Artifact.
    #[error("{reference} is not a WebAssembly component artifact: {why}")]
    NotAComponent {
        /// Where it came from.
        reference: String,
        /// What is wrong with it.
        why: String,
    },
}

/// The OCI digest (`sha256:HEX`) of `bytes`.
pub fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{}", sha256_hex(bytes))
}

/// A connection to one registry.
pub struct Client {
    agent: ureq::Agent,
    base: String,
    registry: String,
    credentials: Option<Credentials>,
    authorization: Option<String>,
}

/// A component pulled from a registry, every digest checked.
#[derive(Debug)]
pub struct Pulled {
    /// The manifest's digest: what the reference pins.
    pub manifest_digest: String,
    /// The component's bytes.
    pub component: Vec<u8>,
    /// The manifest's annotations.
    pub annotations: std::collections::BTreeMap<String, String>,
}

/// What [`Client::push`] puts in the manifest besides the component.
#[derive(Debug, Default)]
pub struct PushOptions {
    /// The contract the component exports (`cinch:driver/driver@VERSION`).
    pub contract_version: String,
    /// The version annotation.
    pub version: Option<String>,
    /// The armored SSHSIG signature of the component.
    pub signature: Option<String>,
}

#[derive(Deserialize, Serialize)]
struct Descriptor {
    #[serde(rename = "mediaType")]
    media_type: String,
    digest: String,
    size: u64,
}

#[derive(Deserialize)]
struct Manifest {
    #[serde(rename = "mediaType")]
    media_type: Option<String>,
    config: Descriptor,
    layers: Vec<Descriptor>,
    #[serde(default)]
    annotations: std::collections::BTreeMap<String, String>,
}

impl Client {
    /// A client of `reference`'s registry: HTTPS, or plain HTTP when the
    /// registry is on this machine or `insecure` says so.
    pub fn new(reference: &Reference, insecure: bool, credentials: Option<Credentials>) -> Self {
        let scheme = if reference.is_loopback() || insecure {
            "http"
        } else {
            "https"
        };
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(TIMEOUT))
            .user_agent(concat!("cinch/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Self {
            agent,
            base: format!("{scheme}://{}", reference.registry),
            registry: reference.registry.clone(),
            credentials,
            authorization: None,
        }
    }

    /// Pushes `component` to `reference` and returns the manifest's digest.
    pub fn push(
        &mut self,
        reference: &Reference,
        component: &[u8],
        options: &PushOptions,
    ) -> Result<String, RegistryError> {
        let layer_digest = digest_of(component);
        let config = serde_json::to_vec(&json!({
            "created": time::OffsetDateTime::now_utc()
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default(),
            "architecture": "wasm",
            "os": "wasip2",
            "layerDigests": [layer_digest],
            "component": {
                "exports": [format!("cinch:driver/driver@{}", options.contract_version)],
            },
        }))
        .expect("JSON values serialize");
        let config_digest = digest_of(&config);
        self.push_blob(reference, &config, &config_digest)?;
        self.push_blob(reference, component, &layer_digest)?;
        let mut annotations = serde_json::Map::new();
        if let Some(version) = &options.version {
            annotations.insert(VERSION_ANNOTATION.into(), version.clone().into());
        }
        if let Some(signature) = &options.signature {
            annotations.insert(SIGNATURE_ANNOTATION.into(), signature.clone().into());
        }
        let manifest = serde_json::to_vec(&json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA_TYPE,
            "config": Descriptor {
                media_type: CONFIG_MEDIA_TYPE.into(),
                digest: config_digest,
                size: config.len() as u64,
            },
            "layers": [Descriptor {
                media_type: LAYER_MEDIA_TYPE.into(),
                digest: layer_digest,
                size: component.len() as u64,
            }],
            "annotations": annotations,
        }))
        .expect("JSON values serialize");
        let manifest_digest = digest_of(&manifest);
        let url = format!(
            "{}/v2/{}/manifests/{}",
            self.base,
            reference.repository,
            reference.manifest_name()
        );
        let response = self.send(
            http::Method::PUT,
            &url,
            &[("Content-Type", MANIFEST_MEDIA_TYPE)],
            Some(&manifest),
        )?;
        expect_status(&http::Method::PUT, &url, response, &[201])?;
        Ok(manifest_digest)
    }

    fn push_blob(
        &mut self,
        reference: &Reference,
        blob: &[u8],
        digest: &str,
    ) -> Result<(), RegistryError> {
        let blob_url = format!("{}/v2/{}/blobs/{digest}", self.base, reference.repository);
        if self
            .send(http::Method::HEAD, &blob_url, &[], None)?
            .status()
            == 200
        {
            return Ok(());
        }
        let uploads = format!("{}/v2/{}/blobs/uploads/", self.base, reference.repository);
        let response = self.send(http::Method::POST, &uploads, &[], Some(&[]))?;
        let response = expect_status(&http::Method::POST, &uploads, response, &[202])?;
        let location = response
            .headers()
            .get("location")
            .and_then(|value| value.to_str().ok())
            .ok_or_else(|| RegistryError::Status {
                method: "POST".into(),
                url: uploads.clone(),
                status: 202,
                body: "no Location header for the upload".into(),
            })?;
        let mut upload = if location.starts_with('/') {
            format!("{}{location}", self.base)
        } else {
            location.to_owned()
        };
        upload.push(if upload.contains('?') { '&' } else { '?' });
        upload.push_str(&format!("digest={digest}"));
        let response = self.send(
            http::Method::PUT,
            &upload,
            &[("Content-Type", "application/octet-stream")],
            Some(blob),
        )?;
        expect_status(&http::Method::PUT, &upload, response, &[201])?;
        Ok(())
    }

    /// Pulls the component `reference` names, checking the manifest against
    /// the reference's digest (when it has one) and each blob against the
    /// manifest's.
    pub fn pull(&mut self, reference: &Reference) -> Result<Pulled, RegistryError> {
        let url = format!(
            "{}/v2/{}/manifests/{}",
            self.base,
            reference.repository,
            reference.manifest_name()
        );
        let response = self.send(
            http::Method::GET,
            &url,
            &[("Accept", MANIFEST_MEDIA_TYPE)],
            None,
        )?;
        let mut response = expect_status(&http::Method::GET, &url, response, &[200])?;
        let said_digest = response
            .headers()
            .get("docker-content-digest")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let bytes = read_body(&url, &mut response)?;
        let manifest_digest = digest_of(&bytes);
        let mismatch = |what, expected: &str, actual: &str| RegistryError::DigestMismatch {
            what,
            reference: reference.to_string(),
            expected: expected.to_owned(),
            actual: actual.to_owned(),
        };
        for expected in reference.digest.iter().chain(said_digest.as_ref()) {
            if *expected != manifest_digest {
                return Err(mismatch("the manifest", expected, &manifest_digest));
            }
        }
        let not_a_component = |why: String| RegistryError::NotAComponent {
            reference: reference.to_string(),
            why,
        };
        let manifest: Manifest = serde_json::from_slice(&bytes)
            .map_err(|error| not_a_component(format!("its manifest does not read ({error})")))?;
        if let Some(media_type) = &manifest.media_type
            && media_type != MANIFEST_MEDIA_TYPE
        {
            return Err(not_a_component(format!(
                "its manifest is {media_type}, not {MANIFEST_MEDIA_TYPE}"
            )));
        }
        if manifest.config.media_type != CONFIG_MEDIA_TYPE {
            return Err(not_a_component(format!(
                "its config is {}, not {CONFIG_MEDIA_TYPE}",
                manifest.config.media_type
            )));
        }
        let [layer] = manifest.layers.as_slice() else {
            return Err(not_a_component(format!(
                "it has {} layers, not one",
                manifest.layers.len()
            )));
        };
        if layer.media_type != LAYER_MEDIA_TYPE {
            return Err(not_a_component(format!(
                "its layer is {}, not {LAYER_MEDIA_TYPE}",
                layer.media_type
            )));
        }
        let config = self.pull_blob(reference, &manifest.config)?;
        if digest_of(&config) != manifest.config.digest {
            return Err(mismatch(
                "the config",
                &manifest.config.digest,
                &digest_of(&config),
            ));
        }
        let component = self.pull_blob(reference, layer)?;
        if digest_of(&component) != layer.digest {
            return Err(mismatch(
                "the component",
                &layer.digest,
                &digest_of(&component),
            ));
        }
        Ok(Pulled {
            manifest_digest,
            component,
            annotations: manifest.annotations,
        })
    }

    fn pull_blob(
        &mut self,
        reference: &Reference,
        descriptor: &Descriptor,
    ) -> Result<Vec<u8>, RegistryError> {
        if descriptor.size > MAX_BLOB_BYTES {
            return Err(RegistryError::NotAComponent {
                reference: reference.to_string(),
                why: format!(
                    "a blob of {} bytes is past the {MAX_BLOB_BYTES} cinch takes",
                    descriptor.size
                ),
            });
        }
        let url = format!(
            "{}/v2/{}/blobs/{}",
            self.base, reference.repository, descriptor.digest
        );
        let response = self.send(http::Method::GET, &url, &[], None)?;
        let mut response = expect_status(&http::Method::GET, &url, response, &[200])?;
        read_body(&url, &mut response)
    }

    /// Sends a request; on a 401 answers the registry's challenge (basic,
    /// or a bearer token from its token service) once and sends it again.
    fn send(
        &mut self,
        method: http::Method,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Result<http::Response<ureq::Body>, RegistryError> {
        let response = self.send_once(&method, url, headers, body)?;
        if response.status() != 401 {
            return Ok(response);
        }
        let challenge = response
            .headers()
            .get("www-authenticate")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        self.authorization = Some(self.answer(&challenge)?);
        let response = self.send_once(&method, url, headers, body)?;
        if response.status() == 401 {
            return Err(RegistryError::NeedsCredentials {
                registry: self.registry.clone(),
            });
        }
        Ok(response)
    }

    fn send_once(
        &self,
        method: &http::Method,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Result<http::Response<ureq::Body>, RegistryError> {
        let unreachable = |cause: String| RegistryError::Unreachable {
            url: url.to_owned(),
            cause,
        };
        let mut request = http::Request::builder().method(method.clone()).uri(url);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(authorization) = &self.authorization {
            request = request.header("Authorization", authorization);
        }
        let sent = match body {
            Some(body) => self.agent.run(
                request
                    .body(body)
                    .map_err(|error| unreachable(error.to_string()))?,
            ),
            None => self.agent.run(
                request
                    .body(())
                    .map_err(|error| unreachable(error.to_string()))?,
            ),
        };
        sent.map_err(|error| unreachable(error.to_string()))
    }

    /// The `Authorization` value answering `challenge`.
    fn answer(&self, challenge: &str) -> Result<String, RegistryError> {
        let needs_credentials = || RegistryError::NeedsCredentials {
            registry: self.registry.clone(),
        };
        let (scheme, parameters) = challenge.split_once(' ').unwrap_or((challenge, ""));
        if scheme.eq_ignore_ascii_case("basic") {
            return self
                .credentials
                .as_ref()
                .map(Credentials::basic)
                .ok_or_else(needs_credentials);
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(needs_credentials());
        }
        let parameters = challenge_parameters(parameters);
        let realm = parameters
            .iter()
            .find(|(name, _)| name == "realm")
            .map(|(_, value)| value.clone())
            .ok_or_else(needs_credentials)?;
        let query: String = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(
                parameters
                    .iter()
                    .filter(|(name, _)| name == "service" || name == "scope"),
            )
            .finish();
        let url = if query.is_empty() {
            realm
        } else {
            format!("{realm}?{query}")
        };
        let mut request = http::Request::builder().method("GET").uri(&url);
        if let Some(credentials) = &self.credentials {
            request = request.header("Authorization", credentials.basic());
        }
        let unreachable = |cause: String| RegistryError::Unreachable {
            url: url.clone(),
            cause,
        };
        let response = self
            .agent
            .run(
                request
                    .body(())
                    .map_err(|error| unreachable(error.to_string()))?,
            )
            .map_err(|error| unreachable(error.to_string()))?;
        if response.status() == 401 || response.status() == 403 {
            return Err(needs_credentials());
        }
        let mut response = expect_status(&http::Method::GET, &url, response, &[200])?;
        #[derive(Deserialize)]
        struct Token {
            token: Option<String>,
            access_token: Option<String>,
        }
        let body = read_body(&url, &mut response)?;
        let token: Token = serde_json::from_slice(&body).map_err(|error| {
            unreachable(format!("the token service's answer does not read: {error}"))
        })?;
        token
            .token
            .or(token.access_token)
            .map(|token| format!("Bearer {token}"))
            .ok_or_else(|| unreachable("the token service gave no token".into()))
    }
}

/// `name="value", …` of a `WWW-Authenticate` challenge.
fn challenge_parameters(text: &str) -> Vec<(String, String)> {
    let mut parameters = Vec::new();
    let mut rest = text.trim();
    while let Some((name, after)) = rest.split_once('=') {
        let name = name.trim().trim_start_matches(',').trim().to_owned();
        let after = after.trim_start();
        let (value, next) = match after.strip_prefix('"') {
            Some(quoted) => match quoted.split_once('"') {
                Some((value, next)) => (value.to_owned(), next),
                None => (quoted.to_owned(), ""),
            },
            None => match after.split_once(',') {
                Some((value, next)) => (value.trim().to_owned(), next),
                None => (after.trim().to_owned(), ""),
            },
        };
        parameters.push((name, value));
        rest = next.trim_start().trim_start_matches(',');
    }
    parameters
}

fn expect_status(
    method: &http::Method,
    url: &str,
    mut response: http::Response<ureq::Body>,
    expected: &[u16],
) -> Result<http::Response<ureq::Body>, RegistryError> {
    let status = response.status().as_u16();
    if expected.contains(&status) {
        return Ok(response);
    }
    let body = response
        .body_mut()
        .with_config()
        .limit(4096)
        .read_to_string()
        .unwrap_or_default();
    Err(RegistryError::Status {
        method: method.to_string(),
        url: url.to_owned(),
        status,
        body: body.chars().take(500).collect(),
    })
}

fn read_body(
    url: &str,
    response: &mut http::Response<ureq::Body>,
) -> Result<Vec<u8>, RegistryError> {
    response
        .body_mut()
        .with_config()
        .limit(MAX_BLOB_BYTES)
        .read_to_vec()
        .map_err(|error| RegistryError::Unreachable {
            url: url.to_owned(),
            cause: error.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_challenges_read() {
        let parameters = challenge_parameters(
            r#"realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push""#,
        );
        assert_eq!(
            parameters,
            [
                ("realm".into(), "https://auth.example/token".into()),
                ("service".into(), "registry.example".into()),
                ("scope".into(), "repository:a/b:pull,push".into()),
            ]
        );
    }
}
