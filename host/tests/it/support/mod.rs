//! What the server tests share: a temp world with the fake CLI, a running
//! `cinch serve` on loopback, requests and SSE reading.
#![allow(dead_code)]

pub mod gate;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use cinch_fake_cli::Script;
use serde_json::Value;

pub const API_KEY: &str = "sk-test-key-0123456789";
pub const SECRET: &str = "s3cret-value-never-shown";
/// The secrets key of every world on a PostgreSQL database: nodes sharing
/// one need the same key, as an operator gives them.
pub const SHARED_SECRETS_KEY: &str =
    "5ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7";

/// A temp world: cinch's home, a repository, the fake CLI on a bin folder,
/// and the database: the home's SQLite file, or, when
/// `CINCH_TEST_DATABASE` names a PostgreSQL server (`.ci/run` starts one), a
/// database of the world's own there.
pub struct World {
    pub dir: tempfile::TempDir,
    /// The PostgreSQL database's URL, when the world has one.
    pub database: Option<String>,
}

/// A new database on the PostgreSQL server `CINCH_TEST_DATABASE` names, if it names one.
pub fn test_database() -> Option<String> {
    let server = std::env::var("CINCH_TEST_DATABASE")
        .ok()
        .filter(|url| !url.is_empty())?;
    static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let name = format!(
        "cinch_test_{}_{}_{}",
        std::process::id(),
        COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    Some(
        runtime
            .block_on(cinch_store::create_postgres_database(&server, &name))
            .unwrap(),
    )
}

/// Points a home's cache of compiled drivers at one cache for every test:
/// each world's cinch loads the same built-in drivers, and compiling them
/// takes about a second of CPU. Sharing is safe: an entry is named by the
/// component's hash and the engine's settings, and written whole or not at
/// all.
fn share_compiled_drivers(components: &Path) {
    let shared = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compiled-drivers");
    std::fs::create_dir_all(&shared).unwrap();
    std::os::unix::fs::symlink(&shared, components).unwrap();
}

impl World {
    pub fn new() -> Self {
        Self::with_database(test_database())
    }

    /// A world whose cinch uses the PostgreSQL database `database` (its
    /// home's SQLite file when `None`): several worlds may share one, as
    /// nodes do.
    pub fn with_database(database: Option<String>) -> Self {
        let world = Self {
            dir: tempfile::tempdir().unwrap(),
            database,
        };
        for sub in ["bin", "repo", "user-home", "home/cache", "out"] {
            std::fs::create_dir_all(world.path(sub)).unwrap();
        }
        share_compiled_drivers(&world.path("home/cache/components"));
        if world.database.is_some() {
            std::fs::write(
                world.path("home/secrets.key"),
                format!("{SHARED_SECRETS_KEY}\n"),
            )
            .unwrap();
        }
        cinch_fake_cli::install(&world.path("bin"), "claude");
        committed_repo(&world.path("repo"), "hello\n");
        world.script(Script::default());
        // A test that needs other settings writes its own.
        std::fs::write(world.path("home/config.toml"), world.operator_config()).unwrap();
        world
    }

    /// Everything the database holds, as text: the SQLite file, its
    /// write-ahead log and the run events' logs not indexed yet, or every
    /// row of every table of the world's PostgreSQL database.
    pub fn database_text(&self) -> String {
        let Some(url) = &self.database else {
            let home = self.path("home");
            let event_logs = std::fs::read_dir(home.join("cinch.db-events"))
                .into_iter()
                .flatten()
                .filter_map(|entry| Some(entry.ok()?.path()));
            let bytes: Vec<u8> = [home.join("cinch.db"), home.join("cinch.db-wal")]
                .into_iter()
                .chain(event_logs)
                .filter_map(|file| std::fs::read(file).ok())
                .flatten()
                .collect();
            return String::from_utf8_lossy(&bytes).into_owned();
        };
        use sqlx::Connection as _;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut connection = sqlx::PgConnection::connect(url).await.unwrap();
            let tables: Vec<(String,)> = sqlx::query_as(
                "SELECT table_name::text FROM information_schema.tables \
                 WHERE table_schema = 'public' ORDER BY table_name",
            )
            .fetch_all(&mut connection)
            .await
            .unwrap();
            let mut text = String::new();
            for (table,) in tables {
                let rows: Vec<(String,)> =
                    sqlx::query_as(&format!("SELECT CAST(t AS TEXT) FROM \"{table}\" t"))
                        .fetch_all(&mut connection)
                        .await
                        .unwrap();
                for (row,) in rows {
                    text.push_str(&row);
                    text.push('\n');
                }
            }
            text
        })
    }

    /// Runs `statements` (`;`-separated SQL) on the world's database, as
    /// its operator could: how a test injects a fault into it.
    pub fn execute_sql(&self, statements: &str) {
        use sqlx::Connection as _;
        use sqlx::Executor as _;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            match &self.database {
                Some(url) => {
                    let mut connection = sqlx::PgConnection::connect(url).await.unwrap();
                    connection.execute(statements).await.unwrap();
                }
                None => {
                    let url = format!("sqlite:{}", self.path("home/cinch.db").display());
                    let mut connection = sqlx::SqliteConnection::connect(&url).await.unwrap();
                    connection.execute(statements).await.unwrap();
                }
            }
        });
    }

    /// The rows `query` selects from the world's database, each column
    /// read as text.
    pub fn query_text(&self, query: &str) -> Vec<Vec<String>> {
        use sqlx::Connection as _;
        use sqlx::Row as _;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            match &self.database {
                Some(url) => {
                    let mut connection = sqlx::PgConnection::connect(url).await.unwrap();
                    let rows = sqlx::query(query).fetch_all(&mut connection).await.unwrap();
                    rows.iter()
                        .map(|row| (0..row.len()).map(|at| row.get(at)).collect())
                        .collect()
                }
                None => {
                    let url = format!("sqlite:{}", self.path("home/cinch.db").display());
                    let mut connection = sqlx::SqliteConnection::connect(&url).await.unwrap();
                    let rows = sqlx::query(query).fetch_all(&mut connection).await.unwrap();
                    rows.iter()
                        .map(|row| (0..row.len()).map(|at| row.get(at)).collect())
                        .collect()
                }
            }
        })
    }

    /// Every file under the world's home (its cache of compiled drivers,
    /// shared by all worlds, aside) that holds `text`.
    pub fn home_files_holding(&self, text: &str) -> Vec<PathBuf> {
        fn walk(dir: &Path, text: &[u8], found: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                let meta = std::fs::symlink_metadata(&path).unwrap();
                if meta.is_dir() {
                    walk(&path, text, found);
                } else if meta.is_file()
                    && std::fs::read(&path)
                        .unwrap()
                        .windows(text.len())
                        .any(|window| window == text)
                {
                    found.push(path);
                }
            }
        }
        let mut found = Vec::new();
        walk(&self.path("home"), text.as_bytes(), &mut found);
        found
    }

    pub fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    /// The fake CLI's script: beside the CLI, in the installation the
    /// sandbox lets a harness read.
    pub fn script_path(&self) -> PathBuf {
        self.path("bin/fake-cli-script.json")
    }

    pub fn script(&self, script: Script) {
        script.write_to(&self.script_path()).unwrap();
    }

    pub fn cinch(&self) -> Command {
        self.cinch_at(Path::new(env!("CARGO_BIN_EXE_cinch")))
    }

    /// [`World::cinch`] with the cinch binary at `program`.
    pub fn cinch_at(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        command
            .env_clear()
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", self.path("bin").display()),
            )
            .env("HOME", self.path("user-home"))
            .env("CINCH_HOME", self.path("home"))
            .env("FAKE_CLI_SCRIPT", self.script_path())
            .env("ANTHROPIC_API_KEY", API_KEY)
            .env("CINCH_LOG", "info");
        if let Some(database) = &self.database {
            command.env("CINCH_DATABASE", database);
        }
        command
    }

    /// Starts `cinch serve` on a free loopback port and waits until it answers.
    pub fn serve(&self) -> Server {
        self.serve_with(&[])
    }

    /// The config.toml an operator of the test world writes: the fake CLI's
    /// script and the model key passed on to harnesses, `out/` (where
    /// scripts leave their records) writable and the recorded logs (which
    /// scripts replay) readable from inside the sandbox.
    pub fn operator_config(&self) -> String {
        format!(
            "[serve]\npass_env = [\"FAKE_CLI_SCRIPT\", \"ANTHROPIC_API_KEY\"]\n\n[sandbox]\nread_write = [{:?}]\nread_only = [{:?}]\n",
            self.path("out").display().to_string(),
            recorded("").display().to_string()
        )
    }

    /// Writes the operator's config.toml with `settings` (lines of TOML)
    /// added to its `[serve]` table.
    pub fn configure(&self, settings: &str) {
        let config =
            self.operator_config()
                .replacen("[serve]\n", &format!("[serve]\n{settings}\n"), 1);
        std::fs::write(self.path("home/config.toml"), config).unwrap();
    }

    /// Starts `cinch serve` with `extra` arguments.
    pub fn serve_with(&self, extra: &[&str]) -> Server {
        let mut command = self.cinch();
        command
            .args(["serve", "--home"])
            .arg(self.path("home"))
            .args(extra);
        Server::start(command, self.dir.path())
    }

    /// Runs `cinch serve` with `extra` arguments and variables `vars`,
    /// expecting it to refuse to start: its stderr.
    pub fn refused_start(&self, extra: &[&str], vars: &[(&str, &str)]) -> String {
        let world = self;
        let mut command = world.cinch();
        command
            .envs(vars.iter().copied())
            .args(["serve", "--home"])
            .arg(world.path("home"))
            .args(["--listen", "127.0.0.1:0"])
            .args(extra)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        let mut child = command.spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                child.kill().unwrap();
                child.wait().unwrap();
                panic!("cinch serve started, and should have refused");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert!(!status.success(), "{stderr}");
        stderr
    }

    pub fn admin_token(&self) -> String {
        let path = self.path("home/admin-token");
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::read_to_string(path).unwrap().trim().to_owned()
    }

    /// A new token for the agent `name` (made when the account has none),
    /// from `cinch token create`.
    pub fn agent_token(&self, name: &str) -> String {
        let output = self
            .cinch()
            .args(["token", "create", "--agent", name, "--home"])
            .arg(self.path("home"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    }

    /// A second account, made with `cinch account create`: its id and token.
    pub fn second_account(&self) -> (String, String) {
        let output = self
            .cinch()
            .args(["account", "create", "other", "--home"])
            .arg(self.path("home"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let text = String::from_utf8(output.stdout).unwrap();
        let mut lines = text.lines();
        (
            lines.next().unwrap().to_owned(),
            lines.next().unwrap().to_owned(),
        )
    }
}

/// The host's id of the running process of turn `turn` that its PID namespace numbers `seen`
/// (a fake CLI's record, a grandchild's pid file). A turn runs in a PID namespace of its own
/// where the machine allows one, numbered from 1 (its init; the CLI is 2); elsewhere the two
/// ids are the same. Told apart from other turns' processes of the same number by the turn's
/// id in its environment, which every process of the turn inherits.
pub fn host_pid(seen: i64, turn: &str) -> i64 {
    let marker = format!("CINCH_TURN_ID={turn}");
    let innermost = |pid: i64| -> Option<i64> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let line = status.lines().find(|line| line.starts_with("NSpid:"))?;
        line.split_whitespace().last()?.parse().ok()
    };
    let of_the_turn = |pid: i64| {
        std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
            environ
                .split(|byte| *byte == 0)
                .any(|variable| variable == marker.as_bytes())
        })
    };
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i64>().ok())
        .find(|&pid| innermost(pid) == Some(seen) && of_the_turn(pid))
        .unwrap_or_else(|| panic!("no running process {seen} of turn {turn}"))
}

/// Waits until `check` holds, for at most 60 seconds.
pub fn eventually<T>(what: &str, check: impl FnMut() -> Option<T>) -> T {
    poll_every(Duration::from_millis(20), what, check)
}

/// Polls `check` every `period` until it holds, for at most 60 seconds.
pub fn poll_every<T>(period: Duration, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "waited too long for {what}"
        );
        std::thread::sleep(period);
    }
}

pub fn git(repo: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(repo)
        .args(args)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// git's standard output in `dir`; it must succeed.
pub fn git_output(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// A new repository at `repo` whose one commit holds `readme.txt`.
pub fn committed_repo(repo: &Path, readme: &str) {
    std::fs::create_dir_all(repo).unwrap();
    git(repo, &["init", "-q"]);
    std::fs::write(repo.join("readme.txt"), readme).unwrap();
    git(repo, &["add", "."]);
    git(
        repo,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "init",
        ],
    );
}

pub fn recorded(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/recorded")
        .join(name)
}

/// How long a test reads an event stream at most, as any other request.
const STREAM_LIMIT: Duration = Duration::from_secs(120);

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(STREAM_LIMIT))
        .build()
        .into()
}

/// A running `cinch serve`, killed (by its pid) when dropped.
pub struct Server {
    pub child: Child,
    pub base: String,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An answer: status, content type and body (JSON when it parses).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub text: String,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|_| panic!("not JSON: {self:?}"))
    }

    pub fn data(&self) -> Value {
        self.json()["data"].clone()
    }

    pub fn field_errors(&self) -> Vec<String> {
        assert_eq!(self.content_type, "application/problem+json", "{self:?}");
        self.json()["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|error| error["field"].as_str().unwrap().to_owned())
            .collect()
    }
}

impl Server {
    /// Runs `serve` (a `cinch serve` command without `--listen`) on a free
    /// loopback port, its output in files under `logs`, and waits until it answers.
    pub fn start(mut serve: Command, logs: &Path) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let stdout = logs.join(format!("stdout-{port}"));
        let stderr = logs.join(format!("stderr-{port}"));
        let child = serve
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let server = Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
            stdout,
            stderr,
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(response) = agent().get(&server.url("/openapi.json")).call()
                && response.status() == 200
            {
                return server;
            }
            assert!(
                Instant::now() < deadline,
                "cinch serve did not start: {}",
                std::fs::read_to_string(&server.stderr).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn request(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&str>,
    ) -> Answer {
        let mut builder = ureq::http::Request::builder()
            .method(method)
            .uri(self.url(path));
        if let Some(token) = token {
            builder = builder.header("Authorization", format!("Bearer {token}"));
        }
        let mut response = match body {
            Some(body) => agent().run(
                builder
                    .header("Content-Type", "application/json")
                    .body(body.as_bytes().to_vec())
                    .unwrap(),
            ),
            None => agent().run(builder.body(()).unwrap()),
        }
        .unwrap();
        Answer {
            status: response.status().as_u16(),
            content_type: response
                .headers()
                .get("content-type")
                .map(|value| value.to_str().unwrap().to_owned())
                .unwrap_or_default(),
            text: response.body_mut().read_to_string().unwrap(),
        }
    }

    /// Sends `head` and then `body_bytes` bytes of body (ignoring a server
    /// that stops reading) and returns what comes back until it closes.
    pub fn raw(&self, head: &str, body_bytes: usize) -> String {
        use std::io::{Read as _, Write as _};
        let mut stream =
            std::net::TcpStream::connect(self.base.trim_start_matches("http://")).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut writer = stream.try_clone().unwrap();
        let head = head.to_owned();
        let sender = std::thread::spawn(move || {
            let _ = writer.write_all(head.as_bytes());
            let _ = writer.write_all(&vec![b'x'; body_bytes]);
        });
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        let _ = stream.shutdown(std::net::Shutdown::Both);
        sender.join().unwrap();
        String::from_utf8_lossy(&answer).into_owned()
    }

    pub fn get(&self, path: &str, token: &str) -> Answer {
        self.request("GET", path, Some(token), None)
    }

    pub fn patch(&self, path: &str, token: &str, body: &Value) -> Answer {
        self.request("PATCH", path, Some(token), Some(&body.to_string()))
    }

    pub fn post(&self, path: &str, token: &str, body: &Value) -> Answer {
        self.request("POST", path, Some(token), Some(&body.to_string()))
    }

    /// Reads the SSE stream of `run` until `done` says so: (id, event, data).
    pub fn events(
        &self,
        run: &str,
        token: &str,
        last_event_id: Option<u64>,
        done: impl Fn(&[(u64, String, Value)]) -> bool,
    ) -> Vec<(u64, String, Value)> {
        self.stream(
            &format!("/api/runs/{run}/events"),
            token,
            last_event_id,
            done,
        )
    }

    /// Reads the SSE stream at `path` until `done` says so: (id, event, data).
    pub fn stream(
        &self,
        path: &str,
        token: &str,
        last_event_id: Option<u64>,
        done: impl Fn(&[(u64, String, Value)]) -> bool,
    ) -> Vec<(u64, String, Value)> {
        self.stream_within(path, token, last_event_id, STREAM_LIMIT, done)
    }

    /// Like [`Server::stream`], for at most `within`.
    pub fn stream_within(
        &self,
        path: &str,
        token: &str,
        last_event_id: Option<u64>,
        within: Duration,
        done: impl Fn(&[(u64, String, Value)]) -> bool,
    ) -> Vec<(u64, String, Value)> {
        self.read_stream(
            path,
            token,
            last_event_id,
            within,
            |id, name, data| (id, name, data),
            done,
        )
    }

    /// Like [`Server::stream`], with the moment each event came.
    pub fn timed_stream(
        &self,
        path: &str,
        token: &str,
        last_event_id: Option<u64>,
        done: impl Fn(&[(u64, String, Value, Instant)]) -> bool,
    ) -> Vec<(u64, String, Value, Instant)> {
        self.read_stream(
            path,
            token,
            last_event_id,
            STREAM_LIMIT,
            |id, name, data| (id, name, data, Instant::now()),
            done,
        )
    }

    fn read_stream<E>(
        &self,
        path: &str,
        token: &str,
        last_event_id: Option<u64>,
        within: Duration,
        event: impl Fn(u64, String, Value) -> E,
        done: impl Fn(&[E]) -> bool,
    ) -> Vec<E> {
        let mut request = agent()
            .get(&self.url(path))
            .config()
            .timeout_global(Some(within))
            .build()
            .header("Authorization", format!("Bearer {token}"));
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id.to_string());
        }
        let response = request.call().unwrap();
        assert_eq!(response.status(), 200, "{}", self.log());
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        let reader = BufReader::new(response.into_body().into_reader());
        let mut events = Vec::new();
        let (mut id, mut name, mut data) = (0, String::new(), String::new());
        for line in reader.lines() {
            // A stream still open after `within` ends here: the caller's
            // assertions say what it lacks.
            let Ok(line) = line else { break };
            if let Some(value) = line.strip_prefix("id:") {
                id = value.trim().parse().unwrap();
            } else if let Some(value) = line.strip_prefix("event:") {
                name = value.trim().to_owned();
            } else if let Some(value) = line.strip_prefix("data:") {
                data.push_str(value.trim());
            } else if line.is_empty() && !data.is_empty() {
                let parsed = serde_json::from_str(&data).unwrap();
                events.push(event(id, std::mem::take(&mut name), parsed));
                data.clear();
                if done(&events) {
                    break;
                }
            }
        }
        events
    }
}

/// The `/v1` API of one account, as its token sees it.
pub struct Api<'a> {
    pub server: &'a Server,
    pub token: String,
    pub account: String,
}

impl<'a> Api<'a> {
    pub fn new(server: &'a Server, token: &str) -> Self {
        let accounts = server.get("/v1/accounts", token);
        assert_eq!(accounts.status, 200, "{accounts:?}");
        Self {
            server,
            token: token.to_owned(),
            account: accounts.data()[0]["id"].as_str().unwrap().to_owned(),
        }
    }

    pub fn path(&self, rest: &str) -> String {
        format!("/v1/accounts/{}{rest}", self.account)
    }

    pub fn get(&self, rest: &str) -> Answer {
        self.server.get(&self.path(rest), &self.token)
    }

    pub fn post(&self, rest: &str, body: Value) -> Answer {
        self.server.post(&self.path(rest), &self.token, &body)
    }

    pub fn environment(&self, body: Value) -> String {
        let created = self.post("/environments", body);
        assert_eq!(created.status, 201, "{created:?}");
        created.data()["id"].as_str().unwrap().to_owned()
    }

    /// A new task with `prompt` in `environment`: its id and its session's.
    pub fn task_on(&self, environment: &str, prompt: &str) -> (String, String) {
        let created = self.post(
            "/tasks",
            serde_json::json!({"prompt": prompt, "environment_id": environment}),
        );
        assert_eq!(created.status, 201, "{created:?}");
        let task = created.data()["id"].as_str().unwrap().to_owned();
        let session = self.first_session(&task)["id"].as_str().unwrap().to_owned();
        (task, session)
    }

    /// The task's only (or first) session.
    pub fn first_session(&self, task: &str) -> Value {
        let sessions = self.get(&format!("/tasks/{task}/sessions"));
        assert_eq!(sessions.status, 200, "{sessions:?}");
        sessions.data()[0].clone()
    }

    pub fn session(&self, task: &str, session: &str) -> Value {
        let answer = self.get(&format!("/tasks/{task}/sessions/{session}"));
        assert_eq!(answer.status, 200, "{answer:?}");
        answer.data()
    }

    /// Polls the session until `done` holds, or fails after a minute.
    pub fn wait(
        &self,
        task: &str,
        session: &str,
        what: &str,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let current = self.session(task, session);
            if done(&current) {
                return current;
            }
            assert!(
                Instant::now() < deadline,
                "the session never got {what}: {current:#}\n{}",
                self.server.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn wait_status(&self, task: &str, session: &str, status: &str) -> Value {
        self.wait(task, session, status, |s| s["status"] == status)
    }

    /// Waits for the session to run a turn and for that turn's message,
    /// which the server adds a moment after the session shows as running.
    pub fn wait_turn_message(&self, task: &str, session: &str) -> Value {
        self.wait_status(task, session, "running");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let page = self.messages(task, session, "").data();
            if let Some(turn) = last_assistant(&page) {
                return turn;
            }
            assert!(
                Instant::now() < deadline,
                "the running session never got its turn's message: {page:#}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn messages(&self, task: &str, session: &str, query: &str) -> Answer {
        self.get(&format!("/tasks/{task}/sessions/{session}/messages{query}"))
    }

    /// Holds the message listing, whose JSON the store writes itself (the
    /// API's busiest read), to the serde view live events carry: every listed
    /// message reads as the last `message.created` or `message.updated`
    /// event about it, field for field (an event from while the message was
    /// queued has no sequence yet). Read once the session has settled. Returns
    /// the kinds compared, in the listing's order.
    pub fn assert_listing_reads_as_its_events(&self, task: &str, session: &str) -> Vec<String> {
        let listed = self.walk(task, session, "asc", 50);
        let reads_as = |message: &Value, event: &Value| {
            let mut expected = event.clone();
            if expected["sequence"].is_null() {
                expected["sequence"] = message["sequence"].clone();
            }
            expected
        };
        let latest = |events: &[(u64, String, Value)], message: &Value| {
            events
                .iter()
                .rev()
                .find(|(_, name, data)| name.starts_with("message.") && data["id"] == message["id"])
                .map(|(_, _, data)| reads_as(message, data))
        };
        let path = self.path(&format!("/tasks/{task}/sessions/{session}/events"));
        // Read until every message's latest event reads as listed; on a
        // difference the stream ends after a while, and the assertion below
        // shows it.
        let events = self.server.read_stream(
            &path,
            &self.token,
            None,
            Duration::from_secs(10),
            |id, name, data| (id, name, data),
            |events| {
                listed
                    .iter()
                    .all(|message| latest(events, message).as_ref() == Some(message))
            },
        );
        listed
            .iter()
            .map(|message| {
                assert_eq!(
                    Some(message),
                    latest(&events, message).as_ref(),
                    "the listing and the live events write this message differently"
                );
                message["type"].as_str().unwrap().to_owned()
            })
            .collect()
    }

    /// Every message, walking `meta.next_cursor` pages of `limit` in `direction`.
    pub fn walk(&self, task: &str, session: &str, direction: &str, limit: u32) -> Vec<Value> {
        let mut all = Vec::new();
        let mut cursor = String::new();
        loop {
            let page = self.messages(
                task,
                session,
                &format!("?direction={direction}&limit={limit}{cursor}"),
            );
            assert_eq!(page.status, 200, "{page:?}");
            all.extend(page.data().as_array().unwrap().iter().cloned());
            match page.json()["meta"]["next_cursor"].as_str() {
                Some(next) => cursor = format!("&cursor={next}"),
                None => return all,
            }
        }
    }
}

/// A claude turn's stream-json lines: its start, one message, its result.
pub fn claude_turn(session: &str, text: &str) -> Vec<Value> {
    vec![
        serde_json::json!({"type": "system", "subtype": "init", "session_id": session, "model": "m"}),
        serde_json::json!({"type": "assistant", "session_id": session,
               "message": {"content": [{"type": "text", "text": text}]}}),
        serde_json::json!({"type": "result", "subtype": "success", "is_error": false, "result": text,
               "session_id": session}),
    ]
}

/// The last assistant message of a page.
pub fn assistant(messages: &Value) -> Value {
    last_assistant(messages).unwrap_or_else(|| panic!("no assistant message: {messages:#}"))
}

/// The last assistant message of a page, if it has one.
pub fn last_assistant(messages: &Value) -> Option<Value> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|message| message["type"] == "assistant")
        .cloned()
}
