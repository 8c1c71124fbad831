//! Driver plugins as a distribution: published to and added from a real OCI
//! registry (Debian's `docker-registry`, the CNCF distribution server, on
//! loopback), pinned in drivers.lock, signed with OpenSSH keys, swapped and
//! rolled back under a running server.

use crate::support;
use crate::support::gate::{self, Load};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use cinch_fake_cli::Script;
use serde_json::{Value, json};
use support::{World, claude_turn};

/// A distribution registry on a free loopback port, storing in a folder of
/// its own; killed when dropped.
struct Registry {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Registry {
    fn start() -> Self {
        Self::start_with(None)
    }

    /// A registry asking for basic credentials `user`:`password` when given
    /// (its htpasswd file's bcrypt hash made by Python's crypt).
    fn start_with(user: Option<(&str, &str)>) -> Self {
        let program = Path::new("/usr/bin/docker-registry");
        assert!(
            program.exists(),
            "these tests need Debian's docker-registry package (apt-get install docker-registry; .ci/run installs it)"
        );
        let dir = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = dir.path().join("config.yml");
        let mut settings = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n",
            dir.path().join("storage").display()
        );
        if let Some((user, password)) = user {
            let hashed = Command::new("python3")
                .args([
                    "-W",
                    "ignore",
                    "-c",
                    "import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH)))",
                    password,
                ])
                .output()
                .unwrap();
            let hashed = ok(&hashed);
            let htpasswd = dir.path().join("htpasswd");
            std::fs::write(&htpasswd, format!("{user}:{}", hashed.trim())).unwrap();
            settings.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: cinch-test\n    path: {}\n",
                htpasswd.display()
            ));
        }
        std::fs::write(&config, settings).unwrap();
        let child = Command::new(program)
            .arg("serve")
            .arg(&config)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("registry.log")).unwrap())
            .spawn()
            .unwrap();
        let registry = Self { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", registry.port)).is_err() {
            assert!(Instant::now() < deadline, "the registry did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        registry
    }

    fn http(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn oci(&self, rest: &str) -> String {
        format!("oci://127.0.0.1:{}/{rest}", self.port)
    }

    /// The raw manifest of `repository:name` and the digest the registry gives it.
    fn manifest(&self, repository: &str, name: &str) -> (Vec<u8>, String) {
        let mut response = ureq::get(&format!("{}/v2/{repository}/manifests/{name}", self.http()))
            .header("Accept", "application/vnd.oci.image.manifest.v1+json")
            .call()
            .unwrap();
        let digest = response
            .headers()
            .get("docker-content-digest")
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        (response.body_mut().read_to_vec().unwrap(), digest)
    }

    fn blob(&self, repository: &str, digest: &str) -> Vec<u8> {
        ureq::get(&format!("{}/v2/{repository}/blobs/{digest}", self.http()))
            .call()
            .unwrap()
            .body_mut()
            .with_config()
            .limit(1 << 30)
            .read_to_vec()
            .unwrap()
    }

    /// Where the registry keeps the blob of `digest` on disk.
    fn stored_blob(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap();
        self.dir
            .path()
            .join("storage/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", cinch_runtime::sha256_hex(bytes))
}

/// The built-in claude driver's component.
fn claude_component() -> Vec<u8> {
    cinch_engine::drivers::BUILTIN
        .iter()
        .find(|driver| driver.name == "claude")
        .unwrap()
        .wasm
        .to_vec()
}

/// The same driver with a custom section `mark` appended: other bytes,
/// another digest, the same behaviour.
fn marked(component: &[u8], mark: &str) -> Vec<u8> {
    let name = b"cinch-test";
    let mut section = vec![name.len() as u8];
    section.extend_from_slice(name);
    section.extend_from_slice(mark.as_bytes());
    assert!(section.len() < 128);
    let mut bytes = component.to_vec();
    bytes.push(0);
    bytes.push(section.len() as u8);
    bytes.extend_from_slice(&section);
    bytes
}

fn run(command: &mut Command) -> Output {
    command.output().unwrap()
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn refused(output: &Output) -> String {
    assert!(
        !output.status.success(),
        "should have failed: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn lock(world: &World) -> Value {
    serde_json::from_str(&std::fs::read_to_string(world.path("home/drivers.lock")).unwrap())
        .unwrap()
}

fn write(world: &World, name: &str, bytes: &[u8]) -> PathBuf {
    let path = world.path("out").join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_driver_goes_through_a_registry_pinned_and_checked() {
    let world = World::new();
    let registry = Registry::start();
    let v1 = claude_component();
    let v2 = marked(&v1, "v2");
    let v1_file = write(&world, "claude-v1.wasm", &v1);
    let v2_file = write(&world, "claude-v2.wasm", &v2);
    let tag = registry.oci("drivers/claude:1.0");

    // cinch → registry: the Wasm OCI Artifact layout, digest printed.
    let published = ok(&run(world
        .cinch()
        .args(["driver", "publish"])
        .arg(&v1_file)
        .arg(&tag)));
    let (manifest_bytes, manifest_digest) = registry.manifest("drivers/claude", "1.0");
    assert_eq!(published.trim(), manifest_digest);
    assert_eq!(digest(&manifest_bytes), manifest_digest);
    let manifest: Value = serde_json::from_slice(&manifest_bytes).unwrap();
    assert_eq!(
        manifest["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1);
    assert_eq!(layers[0]["mediaType"], "application/wasm");
    assert_eq!(layers[0]["digest"], digest(&v1));
    assert_eq!(registry.blob("drivers/claude", &digest(&v1)), v1);
    let config: Value = serde_json::from_slice(&registry.blob(
        "drivers/claude",
        manifest["config"]["digest"].as_str().unwrap(),
    ))
    .unwrap();
    assert_eq!(config["architecture"], "wasm");
    assert_eq!(config["layerDigests"], json!([digest(&v1)]));

    // registry → cinch: pinned in drivers.lock.
    assert!(!world.path("home/drivers.lock").exists());
    let added = ok(&run(world.cinch().args(["driver", "add", &tag])));
    assert!(added.contains(&digest(&v1)), "{added}");
    let pinned = &lock(&world)["drivers"]["claude"];
    assert_eq!(pinned["digest"], digest(&v1));
    assert_eq!(pinned["manifest"], manifest_digest);
    assert_eq!(pinned["source"], tag);
    assert_eq!(pinned["version"], "1.0");
    assert_eq!(pinned["contract"], "0.3.0");
    let listed = ok(&run(world.cinch().arg("drivers")));
    assert!(
        listed.contains(&format!("{tag} ({})", digest(&v1))),
        "{listed}"
    );

    // The tag moves: adding it again shows old → new and needs --update.
    let republished = ok(&run(world
        .cinch()
        .args(["driver", "publish"])
        .arg(&v2_file)
        .arg(&tag)));
    assert_ne!(republished.trim(), manifest_digest);
    let moved = refused(&run(world.cinch().args(["driver", "add", &tag])));
    assert!(
        moved.contains(&format!("now points to {}", digest(&v2)))
            && moved.contains(&format!("it was {}", digest(&v1)))
            && moved.contains("--update"),
        "{moved}"
    );
    assert_eq!(lock(&world)["drivers"]["claude"]["digest"], digest(&v1));
    let updated = ok(&run(world
        .cinch()
        .args(["driver", "add", &tag, "--update"])));
    assert!(
        updated.contains(&format!("was {} → now {}", digest(&v1), digest(&v2))),
        "{updated}"
    );
    let pinned = &lock(&world)["drivers"]["claude"];
    assert_eq!(pinned["digest"], digest(&v2));
    assert_eq!(pinned["previous"][0]["digest"], digest(&v1));

    // The pinned bytes changed on disk: refused, naming both digests and the fix.
    let kept = world
        .path("home/drivers/blobs")
        .join(format!("{}.wasm", cinch_runtime::sha256_hex(&v2)));
    let tampered = marked(&v2, "evil");
    std::fs::write(&kept, &tampered).unwrap();
    let listed = ok(&run(world.cinch().arg("drivers")));
    let row = listed
        .lines()
        .find(|line| line.starts_with("claude "))
        .unwrap();
    assert!(
        row.contains(&format!(
            "is {}, but drivers.lock pins {}",
            digest(&tampered),
            digest(&v2)
        )) && row.contains("cinch driver rollback claude"),
        "{listed}"
    );
    // Rolled back to the previous pin, which is intact.
    let rolled = ok(&run(world.cinch().args(["driver", "rollback", "claude"])));
    assert!(
        rolled.contains(&format!("{} → {}", digest(&v2), digest(&v1))),
        "{rolled}"
    );
    assert_eq!(lock(&world)["drivers"]["claude"]["digest"], digest(&v1));
    let listed = ok(&run(world.cinch().arg("drivers")));
    assert!(!listed.contains("did not load"), "{listed}");

    // A pull whose bytes are not the manifest's digest is refused.
    let digest_tag = format!("{}@{manifest_digest}", registry.oci("drivers/claude"));
    std::fs::write(registry.stored_blob(&digest(&v1)), marked(&v1, "swapped")).unwrap();
    let mismatch = refused(&run(world.cinch().args(["driver", "add", &digest_tag])));
    assert!(
        mismatch.contains(&format!(
            "the component from {digest_tag} is {}, not the {} it was asked for",
            digest(&marked(&v1, "swapped")),
            digest(&v1)
        )),
        "{mismatch}"
    );
    assert_eq!(lock(&world)["drivers"]["claude"]["digest"], digest(&v1));
}

/// An ed25519 key pair made by ssh-keygen: (private key, public key line).
fn ssh_key(dir: &Path, name: &str) -> (PathBuf, String) {
    let key = dir.join(name);
    let made = run(Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&key));
    ok(&made);
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    (key, public.trim().to_owned())
}

/// `ssh-keygen -Y verify` of `signature` over `file` by `public` in namespace cinch-driver.
fn ssh_keygen_verifies(dir: &Path, public: &str, file: &Path, signature: &Path) -> Output {
    let allowed = dir.join("allowed_signers");
    std::fs::write(&allowed, format!("publisher {public}\n")).unwrap();
    Command::new("ssh-keygen")
        .args([
            "-Y",
            "verify",
            "-n",
            "cinch-driver",
            "-I",
            "publisher",
            "-f",
        ])
        .arg(&allowed)
        .arg("-s")
        .arg(signature)
        .stdin(std::fs::File::open(file).unwrap())
        .output()
        .unwrap()
}

#[test]
fn signatures_are_openssh_ones_and_required_when_configured() {
    let world = World::new();
    let registry = Registry::start();
    let keys = world.path("out");
    let (key, public) = ssh_key(&keys, "publisher");
    let (stranger_key, _) = ssh_key(&keys, "stranger");
    let v1 = claude_component();
    let v2 = marked(&v1, "v2");
    let v1_file = write(&world, "claude-v1.wasm", &v1);
    let v2_file = write(&world, "claude-v2.wasm", &v2);

    // `cinch driver sign` writes FILE.sig, which ssh-keygen verifies outside cinch.
    let signed = ok(&run(world
        .cinch()
        .args(["driver", "sign"])
        .arg(&v1_file)
        .arg("--key")
        .arg(&key)));
    let signature = PathBuf::from(signed.trim());
    assert_eq!(signature, keys.join("claude-v1.wasm.sig"));
    ok(&ssh_keygen_verifies(&keys, &public, &v1_file, &signature));
    // ...and not over other bytes.
    assert!(
        !ssh_keygen_verifies(&keys, &public, &v2_file, &signature)
            .status
            .success()
    );

    std::fs::write(
        world.path("home/config.toml"),
        format!(
            "{}\n[drivers]\nrequire_signature = true\ntrusted_keys = [{public:?}]\n",
            world.operator_config()
        ),
    )
    .unwrap();
    // Unsigned: refused.
    let unsigned = refused(&run(world.cinch().args(["driver", "add"]).arg(&v2_file)));
    assert!(
        unsigned.contains("is not signed") && unsigned.contains("require_signature"),
        "{unsigned}"
    );
    // Another component's signature: refused.
    let wrong = refused(&run(world
        .cinch()
        .args(["driver", "add"])
        .arg(&v2_file)
        .arg("--signature")
        .arg(&signature)));
    assert!(wrong.contains("does not verify"), "{wrong}");
    // A key not trusted: refused.
    let stranger_file = write(&world, "claude-stranger.wasm", &v2);
    ok(&run(world
        .cinch()
        .args(["driver", "sign"])
        .arg(&stranger_file)
        .arg("--key")
        .arg(&stranger_key)));
    let untrusted = refused(&run(world
        .cinch()
        .args(["driver", "add"])
        .arg(&stranger_file)));
    assert!(
        untrusted.contains("not in config.toml's [drivers] trusted_keys"),
        "{untrusted}"
    );
    assert!(!world.path("home/drivers.lock").exists());
    // Signed by the trusted key: installed, the signer recorded.
    let added = ok(&run(world.cinch().args(["driver", "add"]).arg(&v1_file)));
    assert!(added.contains("signed by SHA256:"), "{added}");
    assert!(
        lock(&world)["drivers"]["claude"]["signed_by"]
            .as_str()
            .unwrap()
            .starts_with("SHA256:")
    );

    // Through a registry: `publish --sign` carries the signature in the
    // manifest's annotation, where ssh-keygen checks it too.
    let tag = registry.oci("signed/claude:2");
    ok(&run(world
        .cinch()
        .args(["driver", "publish"])
        .arg(&v2_file)
        .arg(&tag)
        .arg("--sign")
        .arg(&key)));
    let (manifest, _) = registry.manifest("signed/claude", "2");
    let manifest: Value = serde_json::from_slice(&manifest).unwrap();
    let annotation = keys.join("from-manifest.sig");
    std::fs::write(
        &annotation,
        manifest["annotations"]["dev.cinch.driver.signature"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let layer = write(
        &world,
        "layer.wasm",
        &registry.blob(
            "signed/claude",
            manifest["layers"][0]["digest"].as_str().unwrap(),
        ),
    );
    ok(&ssh_keygen_verifies(&keys, &public, &layer, &annotation));
    let added = ok(&run(world.cinch().args(["driver", "add", &tag])));
    assert!(
        added.contains(&digest(&v2)) && added.contains("signed by"),
        "{added}"
    );
    // Unsigned in a registry: refused.
    let unsigned_tag = registry.oci("unsigned/claude:1");
    let v3_file = write(&world, "claude-v3.wasm", &marked(&v1, "v3"));
    ok(&run(world
        .cinch()
        .args(["driver", "publish"])
        .arg(&v3_file)
        .arg(&unsigned_tag)));
    let unsigned = refused(&run(world.cinch().args(["driver", "add", &unsigned_tag])));
    assert!(unsigned.contains("is not signed"), "{unsigned}");
    assert_eq!(lock(&world)["drivers"]["claude"]["digest"], digest(&v2));

    // A pinned plugin whose lock lost its signature no longer loads.
    let mut edited = lock(&world);
    edited["drivers"]["claude"]
        .as_object_mut()
        .unwrap()
        .remove("signature");
    std::fs::write(world.path("home/drivers.lock"), edited.to_string()).unwrap();
    let listed = ok(&run(world.cinch().arg("drivers")));
    let row = listed
        .lines()
        .find(|line| line.starts_with("claude "))
        .unwrap();
    assert!(row.contains("is not signed"), "{listed}");
}

/// What GET /v1/drivers says of claude.
fn serving(server: &support::Server, token: &str) -> Value {
    let drivers = server.get("/v1/drivers", token).json();
    drivers["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|driver| driver["name"] == "claude")
        .cloned()
        .unwrap()
}

/// Polls GET /v1/drivers until claude's digest is `expected`; how long it took.
fn until_serving(server: &support::Server, token: &str, expected: &str) -> Duration {
    let started = Instant::now();
    loop {
        let claude = serving(server, token);
        if claude["digest"] == expected {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "still {claude} after 10 s, not {expected}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn task_result(server: &support::Server, token: &str, path: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let task = server.get(path, token).json();
        if task["status"] != "running" {
            return task;
        }
        assert!(Instant::now() < deadline, "{task}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_running_server_swaps_drivers_live_and_rolls_back() {
    let _machine = gate::hold(Load::Machine);
    let world = World::new();
    let v1 = marked(&claude_component(), "v1");
    let v2 = marked(&claude_component(), "v2");
    let v1_file = write(&world, "claude-v1.wasm", &v1);
    let v2_file = write(&world, "claude-v2.wasm", &v2);
    ok(&run(world.cinch().args(["driver", "add"]).arg(&v1_file)));
    support::committed_repo(&world.path("repo2"), "two\n");
    let server = world.serve_with(&["--operator-token", OPERATOR]);
    let token = world.admin_token();
    let api = support::Api::new(&server, &token);
    for (name, repo) in [("one", "repo"), ("two", "repo2")] {
        api.environment(json!({
            "name": name,
            "repository": world.path(repo).display().to_string(),
        }));
    }
    let drivers = server.get("/v1/drivers", &token).json();
    let claude = drivers["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|driver| driver["name"] == "claude")
        .unwrap()
        .clone();
    assert_eq!(claude["digest"], digest(&v1), "{claude}");
    assert_eq!(claude["origin"], v1_file.display().to_string());
    assert_eq!(claude["source"], "plugin");

    // A slow turn on v1...
    world.script(Script {
        lines: claude_turn("s-slow", "slow done"),
        line_delay_ms: 1500,
        ..Script::default()
    });
    let started = server.post(
        "/api/runs/run-swap/tasks",
        &token,
        &json!({"brief": "Slowly.", "harness": "claude", "repo": "one"}),
    );
    assert_eq!(started.status, 201, "{started:?}");
    let slow = format!(
        "/api/runs/run-swap/tasks/{}",
        started.json()["call_id"].as_str().unwrap()
    );
    // ...still running when v2 is added on the same home.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(server.get(&slow, &token).json()["status"], "running");
    world.script(Script {
        lines: claude_turn("s-fast", "fast done"),
        ..Script::default()
    });
    let adding = Instant::now();
    ok(&run(world.cinch().args(["driver", "add"]).arg(&v2_file)));
    let add_took = adding.elapsed();
    let swap_took = until_serving(&server, &token, &digest(&v2));
    assert!(swap_took < Duration::from_secs(1), "took {swap_took:?}");
    let fast = server.post(
        "/api/runs/run-swap/tasks?wait=true",
        &token,
        &json!({"brief": "Quickly.", "harness": "claude", "repo": "two"}),
    );
    let first_turn_took = adding.elapsed();
    assert_eq!(fast.status, 201, "{fast:?}");
    let fast = fast.json();
    assert_eq!(fast["status"], "completed", "{fast}");
    assert_eq!(fast["result"]["driver"]["digest"], digest(&v2), "{fast}");
    assert_eq!(fast["result"]["driver"]["name"], "claude");
    eprintln!(
        "driver add took {add_took:?}; the server served the new component {swap_took:?} after it returned; \
         the first turn on it ended {first_turn_took:?} after the add started"
    );
    // The turn in flight ended on the component it started with.
    let slow = task_result(&server, &token, &slow);
    assert_eq!(slow["status"], "completed", "{slow}");
    assert_eq!(slow["result"]["final_message"], "slow done");
    assert_eq!(slow["result"]["driver"]["digest"], digest(&v1), "{slow}");
    // `cinch log` names the driver the turn ran on.
    let turn = slow["turn_id"].as_str().unwrap();
    let log = ok(&run(world.cinch().args(["log", turn])));
    assert!(
        log.starts_with(&format!("driver: claude (no version) {}", digest(&v1))),
        "{log}"
    );

    // Rollback: back to v1 for new turns, without a restart.
    ok(&run(world.cinch().args(["driver", "rollback", "claude"])));
    until_serving(&server, &token, &digest(&v1));
    let again = server.post(
        "/api/runs/run-swap/tasks?wait=true",
        &token,
        &json!({"brief": "Again.", "harness": "claude", "repo": "two"}),
    );
    assert_eq!(again.json()["result"]["driver"]["digest"], digest(&v1));
    // Removal: the built-in is back.
    ok(&run(world.cinch().args(["driver", "remove", "claude"])));
    let builtin = cinch_engine::drivers::BUILTIN
        .iter()
        .find(|driver| driver.name == "claude")
        .unwrap();
    let builtin = format!("sha256:{}", builtin.sha256);
    until_serving(&server, &token, &builtin);

    // Over HTTP, with the operator's token: in force as soon as answered.
    let registry = Registry::start();
    let v3 = marked(&claude_component(), "v3");
    let v3_file = write(&world, "claude-v3.wasm", &v3);
    let tag = registry.oci("drivers/claude:3");
    ok(&run(world
        .cinch()
        .args(["driver", "publish"])
        .arg(&v3_file)
        .arg(&tag)));
    let body = json!({"source": tag});
    let by_account = server.post("/v1/drivers", &token, &body);
    assert_eq!(by_account.status, 401, "{by_account:?}");
    let bad = server.post("/v1/drivers", OPERATOR, &json!({"source": "https://x/y"}));
    assert_eq!(bad.status, 422, "{bad:?}");
    assert_eq!(serving(&server, &token)["digest"], builtin);
    let added = server.post("/v1/drivers", OPERATOR, &body);
    assert_eq!(added.status, 201, "{added:?}");
    assert_eq!(added.data()["digest"], digest(&v3));
    assert_eq!(added.data()["version"], "3");
    assert_eq!(serving(&server, &token)["digest"], digest(&v3));
    assert_eq!(lock(&world)["drivers"]["claude"]["digest"], digest(&v3));
    let removed = server.request("DELETE", "/v1/drivers/claude", Some(OPERATOR), None);
    assert_eq!(removed.status, 204, "{removed:?}");
    assert_eq!(serving(&server, &token)["digest"], builtin);
    let again = server.request("DELETE", "/v1/drivers/claude", Some(OPERATOR), None);
    assert_eq!(again.status, 404, "{again:?}");
}

/// The operator token the live-swap test's server takes plugin changes with.
const OPERATOR: &str = "operator-token-of-the-test";

/// An OCI image layout folder (as `skopeo`, `oras` and `wkg` read them)
/// holding `component` in the Wasm OCI Artifact layout, tagged `tag`.
fn oci_layout(dir: &Path, component: &[u8], tag: &str) {
    let blobs = dir.join("blobs/sha256");
    std::fs::create_dir_all(&blobs).unwrap();
    let put = |bytes: &[u8]| {
        let digest = digest(bytes);
        std::fs::write(blobs.join(digest.strip_prefix("sha256:").unwrap()), bytes).unwrap();
        json!({"digest": digest, "size": bytes.len()})
    };
    let layer = put(component);
    let config = put(
        json!({"architecture": "wasm", "os": "wasip2", "layerDigests": [layer["digest"]]})
            .to_string()
            .as_bytes(),
    );
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.wasm.config.v0+json",
                   "digest": config["digest"], "size": config["size"]},
        "layers": [{"mediaType": "application/wasm",
                    "digest": layer["digest"], "size": layer["size"]}],
    })
    .to_string();
    let manifest = put(manifest.as_bytes());
    std::fs::write(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
    std::fs::write(
        dir.join("index.json"),
        json!({"schemaVersion": 2, "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": manifest["digest"], "size": manifest["size"],
            "annotations": {"org.opencontainers.image.ref.name": tag},
        }]})
        .to_string(),
    )
    .unwrap();
}

fn skopeo(args: &[&str]) -> Output {
    assert!(
        Path::new("/usr/bin/skopeo").exists(),
        "this test needs Debian's skopeo package (apt-get install skopeo; .ci/run installs it)"
    );
    Command::new("skopeo").args(args).output().unwrap()
}

#[test]
fn a_third_party_client_interoperates_both_ways() {
    let world = World::new();
    let registry = Registry::start();
    let theirs = marked(&claude_component(), "pushed-by-skopeo");
    let layout = world.path("out/layout");
    oci_layout(&layout, &theirs, "3.1");
    // skopeo → registry → cinch.
    let pushed = format!("docker://127.0.0.1:{}/third/claude:3.1", registry.port);
    ok(&skopeo(&[
        "copy",
        "--dest-tls-verify=false",
        &format!("oci:{}:3.1", layout.display()),
        &pushed,
    ]));
    let added = ok(&run(world.cinch().args([
        "driver",
        "add",
        &registry.oci("third/claude:3.1"),
    ])));
    assert!(added.contains(&digest(&theirs)), "{added}");
    assert_eq!(lock(&world)["drivers"]["claude"]["version"], "3.1");

    // cinch → registry → skopeo.
    let ours = marked(&claude_component(), "pushed-by-cinch");
    let file = write(&world, "ours.wasm", &ours);
    let published = ok(&run(world
        .cinch()
        .args(["driver", "publish"])
        .arg(&file)
        .arg(registry.oci("ours/claude:1"))));
    let pulled = world.path("out/pulled");
    ok(&skopeo(&[
        "copy",
        "--src-tls-verify=false",
        &format!("docker://127.0.0.1:{}/ours/claude:1", registry.port),
        &format!("oci:{}:1", pulled.display()),
    ]));
    let index: Value =
        serde_json::from_str(&std::fs::read_to_string(pulled.join("index.json")).unwrap()).unwrap();
    assert_eq!(index["manifests"][0]["digest"], published.trim());
    let blob = |digest: &str| {
        std::fs::read(
            pulled
                .join("blobs/sha256")
                .join(digest.strip_prefix("sha256:").unwrap()),
        )
        .unwrap()
    };
    let manifest: Value = serde_json::from_slice(&blob(published.trim())).unwrap();
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    assert_eq!(
        blob(manifest["layers"][0]["digest"].as_str().unwrap()),
        ours
    );
}

#[test]
fn registry_credentials_come_from_the_docker_config_or_the_flag() {
    let world = World::new();
    let registry = Registry::start_with(Some(("publisher", "s3cret-pass")));
    let component = marked(&claude_component(), "private");
    let file = write(&world, "private.wasm", &component);
    let tag = registry.oci("private/claude:1");
    let publish = || {
        let mut command = world.cinch();
        command.args(["driver", "publish"]).arg(&file).arg(&tag);
        command
    };
    // No credentials: refused, saying how to give them.
    let anonymous = refused(&run(&mut publish()));
    assert!(
        anonymous.contains("asks for credentials") && anonymous.contains("docker login"),
        "{anonymous}"
    );
    // A wrong password: refused.
    let wrong = refused(&run(publish()
        .args(["--username", "publisher"])
        .env("CINCH_REGISTRY_PASSWORD", "not-it")));
    assert!(wrong.contains("asks for credentials"), "{wrong}");
    // The flag, the password from the environment.
    let published = ok(&run(publish()
        .args(["--username", "publisher"])
        .env("CINCH_REGISTRY_PASSWORD", "s3cret-pass")));
    assert!(published.trim().starts_with("sha256:"), "{published}");
    // Pulling: none, then ~/.docker/config.json's `auths`, as docker login writes it.
    let anonymous = refused(&run(world.cinch().args(["driver", "add", &tag])));
    assert!(anonymous.contains("asks for credentials"), "{anonymous}");
    let docker = world.path("user-home/.docker");
    std::fs::create_dir_all(&docker).unwrap();
    use base64::Engine as _;
    let auth = base64::engine::general_purpose::STANDARD.encode("publisher:s3cret-pass");
    std::fs::write(
        docker.join("config.json"),
        json!({"auths": {format!("127.0.0.1:{}", registry.port): {"auth": auth}}}).to_string(),
    )
    .unwrap();
    let added = ok(&run(world.cinch().args(["driver", "add", &tag])));
    assert!(added.contains(&digest(&component)), "{added}");
}
