//! MCP servers an environment gives its harnesses: what they are (a stdio
//! command or an HTTP URL), their checks, and how each harness receives them.
//!
//! Contract 0.1.0 cannot carry them: a driver's `turn` has no field for them
//! and its `command` cannot ask the host to write a file. So the host renders
//! them here, one function per harness, into arguments, variables and files
//! in the turn's private folder. A later contract can let each driver say this
//! itself (see the report that came with this module: `info` naming a delivery
//! and `command` listing files to write).
//!
//! Secrets never land in a file or on a command line: a header that names an
//! environment secret is rendered as a reference to the variable of that name,
//! which the harness already has (`${NAME}` for Claude Code and Gemini CLI,
//! which expand variables in their MCP settings; `env_http_headers` for Codex).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The most MCP servers one environment may list.
pub(crate) const MAX_SERVERS: usize = 20;

/// One MCP server a harness starts (stdio) or connects to (HTTP).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServer {
    /// Its name: letters, digits, `_` and `-`; the harness prefixes its
    /// tools with it (`mcp__<name>__<tool>` in Claude Code).
    pub name: String,
    /// How it is reached.
    #[serde(flatten)]
    pub transport: Transport,
}

/// How a harness reaches an MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Transport {
    /// A program the harness starts, speaking JSON-RPC on its stdin and
    /// stdout; it runs as the harness's child, inside the turn's sandbox.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Variables set for it.
        #[serde(default)]
        env: BTreeMap<String, String>,
    },
    /// A streamable-HTTP endpoint.
    Http {
        /// Its URL (`http://` or `https://`).
        url: String,
        /// Headers sent with every request.
        #[serde(default)]
        headers: BTreeMap<String, HeaderValue>,
    },
}

/// A header's value: as written, or the value of one of the environment's
/// secrets, which is never stored with the server nor shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HeaderValue {
    /// The value itself.
    Text(String),
    /// The environment secret whose value is the header's.
    Secret {
        /// The secret's name.
        secret: String,
    },
}

/// The kind of a server, as clients write it in `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum McpServerKind {
    /// A program on stdin and stdout.
    Stdio,
    /// An HTTP URL.
    Http,
}

/// One complaint about a list of servers: the field (relative to the list,
/// `[0].url`) and what is wrong.
pub(crate) type Complaint = (String, String);

fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn is_variable(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `http://` or `https://`, a host, and no whitespace or control character.
fn is_http_url(url: &str) -> bool {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    rest.is_some_and(|rest| {
        let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
        !host.is_empty() && !url.chars().any(|c| c.is_whitespace() || c.is_control())
    })
}

fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
}

/// Every way `servers` is wrong for an environment whose secrets are named
/// `secrets`: names (valid, unique), commands, URLs, variable and header
/// names, header values without line breaks, and secrets that exist.
pub fn check(servers: &[McpServer], secrets: &BTreeSet<&str>) -> Vec<Complaint> {
    let mut complaints = Vec::new();
    let mut say = |field: String, message: &str| complaints.push((field, message.to_owned()));
    if servers.len() > MAX_SERVERS {
        say(String::new(), &format!("at most {MAX_SERVERS} servers"));
    }
    let mut seen = BTreeSet::new();
    for (index, server) in servers.iter().enumerate() {
        let at = |field: &str| format!("[{index}].{field}");
        if !is_name(&server.name) {
            say(
                at("name"),
                "1 to 64 letters, digits, `_` and `-` (harnesses prefix the server's tools with it)",
            );
        } else if !seen.insert(server.name.as_str()) {
            say(at("name"), "another server has this name");
        }
        match &server.transport {
            Transport::Stdio { command, env, .. } => {
                if command.trim().is_empty() {
                    say(at("command"), "the program to start: not empty");
                }
                for name in env.keys() {
                    if !is_variable(name) {
                        say(
                            at(&format!("env.{name}")),
                            "a name is letters, digits and _, not starting with a digit",
                        );
                    }
                }
            }
            Transport::Http { url, headers } => {
                if !is_http_url(url) {
                    say(at("url"), "an http:// or https:// URL with a host");
                }
                for (name, value) in headers {
                    let field = at(&format!("headers.{name}"));
                    if !is_header_name(name) {
                        say(
                            field,
                            "a header name is letters, digits and !#$%&'*+-.^_`|~",
                        );
                        continue;
                    }
                    match value {
                        HeaderValue::Text(text) if text.contains(['\r', '\n']) => {
                            say(field, "a header value has no line breaks");
                        }
                        HeaderValue::Secret { secret } if !secrets.contains(secret.as_str()) => {
                            say(
                                field,
                                &format!(
                                    "names the secret {secret}, which the environment does not have (set it in `secrets`)"
                                ),
                            );
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    complaints
}

/// What the host does for a turn's harness to receive its MCP servers:
/// arguments before and after the driver's, variables, and private files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delivery {
    /// Arguments placed before the driver's (Codex takes `-c` there for any
    /// subcommand).
    pub args_before: Vec<String>,
    /// Arguments placed after the driver's.
    pub args_after: Vec<String>,
    /// Variables set for the harness.
    pub env: Vec<(String, String)>,
    /// Files to write (mode 0600) and let the harness read: path and content.
    pub files: Vec<(PathBuf, String)>,
}

/// The harness cannot receive MCP servers from cinch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the environment lists MCP servers, and cinch cannot give them to {harness}: {why}. \
     Run this environment on claude, codex or gemini, or remove its mcp_servers."
)]
pub struct Unsupported {
    /// The driver's name.
    pub harness: String,
    /// Why not.
    pub why: &'static str,
}

/// How `harness` receives `servers`, with its files in `dir` (the turn's
/// private folder). Nothing at all when there are no servers.
pub fn deliver(harness: &str, servers: &[McpServer], dir: &Path) -> Result<Delivery, Unsupported> {
    if servers.is_empty() {
        return Ok(Delivery::default());
    }
    match harness {
        "claude" => Ok(claude(servers, dir)),
        "codex" => Ok(codex(servers)),
        "gemini" => Ok(gemini(servers, dir)),
        "cursor" => Err(Unsupported {
            harness: harness.to_owned(),
            why: "cursor-agent reads MCP servers only from .cursor/mcp.json in the repository or \
                  the agent's home, and has no flag or variable naming another file",
        }),
        other => Err(Unsupported {
            harness: other.to_owned(),
            why: "its driver is a plugin, and contract 0.1.0 has no way for a driver to say how \
                  its CLI takes MCP servers",
        }),
    }
}

/// `${NAME}`: a variable reference that Claude Code and Gemini CLI expand.
fn reference(value: &HeaderValue) -> String {
    match value {
        HeaderValue::Text(text) => text.clone(),
        HeaderValue::Secret { secret } => format!("${{{secret}}}"),
    }
}

/// Claude Code: `--mcp-config=<file>` with `{"mcpServers": {...}}`. The `=`
/// form, since the flag takes several values and would swallow what follows.
pub fn claude(servers: &[McpServer], dir: &Path) -> Delivery {
    let entries: serde_json::Map<String, Value> = servers
        .iter()
        .map(|server| {
            let entry = match &server.transport {
                Transport::Stdio { command, args, env } => {
                    json!({"type": "stdio", "command": command, "args": args, "env": env})
                }
                Transport::Http { url, headers } => {
                    let headers: BTreeMap<&String, String> = headers
                        .iter()
                        .map(|(name, value)| (name, reference(value)))
                        .collect();
                    json!({"type": "http", "url": url, "headers": headers})
                }
            };
            (server.name.clone(), entry)
        })
        .collect();
    let path = dir.join("mcp-claude.json");
    Delivery {
        args_after: vec![format!("--mcp-config={}", path.display())],
        files: vec![(path, json!({"mcpServers": entries}).to_string())],
        ..Delivery::default()
    }
}

/// A TOML string for a `-c key=value` override (Codex parses the value as
/// TOML). A JSON string is a TOML basic string: the same escapes, and control
/// characters as `\uXXXX`.
fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| String::from("\"\""))
}

fn toml_table<'a>(entries: impl IntoIterator<Item = (&'a String, String)>) -> String {
    let inner: Vec<String> = entries
        .into_iter()
        .map(|(key, value)| format!("{} = {}", toml_string(key), toml_string(&value)))
        .collect();
    format!("{{{}}}", inner.join(", "))
}

/// Codex: `-c mcp_servers.<name>.<key>=<TOML>` before its subcommand. A
/// secret header goes in `env_http_headers`, which names the variable
/// holding the value, so the value is on no command line.
pub fn codex(servers: &[McpServer]) -> Delivery {
    let mut args = Vec::new();
    let mut set = |server: &str, key: &str, value: String| {
        args.push("-c".to_owned());
        args.push(format!("mcp_servers.{server}.{key}={value}"));
    };
    for server in servers {
        let name = server.name.as_str();
        match &server.transport {
            Transport::Stdio { command, args, env } => {
                set(name, "command", toml_string(command));
                let list: Vec<String> = args.iter().map(|arg| toml_string(arg)).collect();
                set(name, "args", format!("[{}]", list.join(", ")));
                if !env.is_empty() {
                    set(
                        name,
                        "env",
                        toml_table(env.iter().map(|(k, v)| (k, v.clone()))),
                    );
                }
            }
            Transport::Http { url, headers } => {
                set(name, "url", toml_string(url));
                let (secret, plain): (Vec<_>, Vec<_>) = headers
                    .iter()
                    .partition(|(_, value)| matches!(value, HeaderValue::Secret { .. }));
                let pick = |entries: Vec<(&String, &HeaderValue)>| {
                    toml_table(entries.into_iter().map(|(header, value)| {
                        let text = match value {
                            HeaderValue::Text(text) => text.clone(),
                            HeaderValue::Secret { secret } => secret.clone(),
                        };
                        (header, text)
                    }))
                };
                if !plain.is_empty() {
                    set(name, "http_headers", pick(plain));
                }
                if !secret.is_empty() {
                    set(name, "env_http_headers", pick(secret));
                }
            }
        }
    }
    Delivery {
        args_before: args,
        ..Delivery::default()
    }
}

/// Gemini CLI: a settings file with `mcpServers`, named by
/// `GEMINI_CLI_SYSTEM_DEFAULTS_PATH`: the lowest of its settings layers, so the
/// agent's own settings keep their say, and nothing is written into the
/// repository or the agent's home. Gemini skips the file unless no folder
/// above it is writable by others, which holds for cinch's home (0700).
pub fn gemini(servers: &[McpServer], dir: &Path) -> Delivery {
    let entries: serde_json::Map<String, Value> = servers
        .iter()
        .map(|server| {
            let entry = match &server.transport {
                Transport::Stdio { command, args, env } => {
                    json!({"command": command, "args": args, "env": env})
                }
                Transport::Http { url, headers } => {
                    let headers: BTreeMap<&String, String> = headers
                        .iter()
                        .map(|(name, value)| (name, reference(value)))
                        .collect();
                    json!({"httpUrl": url, "headers": headers})
                }
            };
            (server.name.clone(), entry)
        })
        .collect();
    let path = dir.join("mcp-gemini-settings.json");
    Delivery {
        env: vec![(
            "GEMINI_CLI_SYSTEM_DEFAULTS_PATH".to_owned(),
            path.display().to_string(),
        )],
        files: vec![(path, json!({"mcpServers": entries}).to_string())],
        ..Delivery::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio() -> McpServer {
        McpServer {
            name: "echo".into(),
            transport: Transport::Stdio {
                command: "/bin/echo-mcp".into(),
                args: vec!["--flag".into(), "a \"quoted\" arg".into()],
                env: BTreeMap::from([("MODE".into(), "test".into())]),
            },
        }
    }

    fn http() -> McpServer {
        McpServer {
            name: "docs".into(),
            transport: Transport::Http {
                url: "https://mcp.example.com/mcp".into(),
                headers: BTreeMap::from([
                    (
                        "Authorization".into(),
                        HeaderValue::Secret {
                            secret: "DOCS_TOKEN".into(),
                        },
                    ),
                    ("X-Team".into(), HeaderValue::Text("core".into())),
                ]),
            },
        }
    }

    fn file(delivery: &Delivery) -> Value {
        assert_eq!(delivery.files.len(), 1, "{delivery:?}");
        serde_json::from_str(&delivery.files[0].1).expect("the file is JSON")
    }

    #[test]
    fn claude_gets_a_config_file_and_one_flag() {
        let delivery = deliver("claude", &[stdio(), http()], Path::new("/turn")).unwrap();
        assert_eq!(delivery.args_after, ["--mcp-config=/turn/mcp-claude.json"]);
        assert_eq!(delivery.files[0].0, Path::new("/turn/mcp-claude.json"));
        assert!(delivery.args_before.is_empty() && delivery.env.is_empty());
        assert_eq!(
            file(&delivery),
            json!({"mcpServers": {
                "echo": {"type": "stdio", "command": "/bin/echo-mcp", "args": ["--flag", "a \"quoted\" arg"], "env": {"MODE": "test"}},
                "docs": {"type": "http", "url": "https://mcp.example.com/mcp",
                         "headers": {"Authorization": "${DOCS_TOKEN}", "X-Team": "core"}},
            }})
        );
    }

    #[test]
    fn codex_gets_toml_overrides_and_secret_headers_by_variable() {
        let delivery = deliver("codex", &[stdio(), http()], Path::new("/turn")).unwrap();
        assert!(delivery.files.is_empty() && delivery.env.is_empty());
        assert!(delivery.args_after.is_empty());
        let overrides: Vec<&str> = delivery
            .args_before
            .chunks(2)
            .map(|pair| {
                assert_eq!(pair[0], "-c");
                pair[1].as_str()
            })
            .collect();
        assert_eq!(
            overrides,
            [
                r#"mcp_servers.echo.command="/bin/echo-mcp""#,
                r#"mcp_servers.echo.args=["--flag", "a \"quoted\" arg"]"#,
                r#"mcp_servers.echo.env={"MODE" = "test"}"#,
                r#"mcp_servers.docs.url="https://mcp.example.com/mcp""#,
                r#"mcp_servers.docs.http_headers={"X-Team" = "core"}"#,
                r#"mcp_servers.docs.env_http_headers={"Authorization" = "DOCS_TOKEN"}"#,
            ]
        );
        // Each value parses back as TOML to what was meant.
        let args: toml::Table =
            toml::from_str(&format!("v = {}", overrides[1].split_once('=').unwrap().1)).unwrap();
        assert_eq!(
            args["v"],
            toml::Value::Array(vec!["--flag".into(), "a \"quoted\" arg".into()])
        );
    }

    #[test]
    fn gemini_gets_a_system_defaults_file() {
        let delivery = deliver("gemini", &[stdio(), http()], Path::new("/turn")).unwrap();
        assert_eq!(
            delivery.env,
            [(
                "GEMINI_CLI_SYSTEM_DEFAULTS_PATH".to_owned(),
                "/turn/mcp-gemini-settings.json".to_owned()
            )]
        );
        assert!(delivery.args_before.is_empty() && delivery.args_after.is_empty());
        assert_eq!(
            file(&delivery),
            json!({"mcpServers": {
                "echo": {"command": "/bin/echo-mcp", "args": ["--flag", "a \"quoted\" arg"], "env": {"MODE": "test"}},
                "docs": {"httpUrl": "https://mcp.example.com/mcp",
                         "headers": {"Authorization": "${DOCS_TOKEN}", "X-Team": "core"}},
            }})
        );
    }

    #[test]
    fn cursor_and_plugins_are_refused_and_no_servers_need_nothing() {
        let refused = deliver("cursor", &[stdio()], Path::new("/turn")).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("cursor-agent reads MCP servers only")
        );
        let plugin = deliver("my-cli", &[stdio()], Path::new("/turn")).unwrap_err();
        assert_eq!(plugin.harness, "my-cli");
        assert_eq!(
            deliver("cursor", &[], Path::new("/turn")),
            Ok(Delivery::default())
        );
    }

    #[test]
    fn no_secret_value_is_in_any_delivery() {
        // Only the secret's name is in the server; the value is never handed here at all,
        // so check the name is what appears, as a reference.
        for harness in ["claude", "codex", "gemini"] {
            let delivery = deliver(harness, &[http()], Path::new("/turn")).unwrap();
            let all = format!("{delivery:?}");
            assert!(all.contains("DOCS_TOKEN"), "{harness}: {all}");
        }
    }

    #[test]
    fn checks_name_every_fault() {
        let mut bad_http = http();
        if let Transport::Http { url, headers } = &mut bad_http.transport {
            *url = "ftp://x".into();
            headers.insert("Bad Header".into(), HeaderValue::Text("v".into()));
            headers.insert("X-Split".into(), HeaderValue::Text("a\r\nb".into()));
        }
        let mut no_command = stdio();
        no_command.name = "echo".into();
        if let Transport::Stdio { command, env, .. } = &mut no_command.transport {
            *command = " ".into();
            env.insert("1BAD".into(), "v".into());
        }
        let mut bad_name = stdio();
        bad_name.name = "has space".into();
        let complaints = check(
            &[stdio(), bad_http, no_command, bad_name],
            &BTreeSet::from(["OTHER"]),
        );
        let fields: Vec<&str> = complaints.iter().map(|(field, _)| field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "[1].url",
                "[1].headers.Authorization",
                "[1].headers.Bad Header",
                "[1].headers.X-Split",
                "[2].name",
                "[2].command",
                "[2].env.1BAD",
                "[3].name",
            ]
        );
        assert!(complaints[1].1.contains("DOCS_TOKEN"));
        assert!(
            check(&[stdio(), http()], &BTreeSet::from(["DOCS_TOKEN"])).is_empty(),
            "a valid list has no complaint"
        );
    }

    #[test]
    fn servers_round_trip_through_their_stored_json() {
        let servers = vec![stdio(), http()];
        let text = serde_json::to_string(&servers).unwrap();
        assert!(text.contains(r#""type":"stdio""#) && text.contains(r#"{"secret":"DOCS_TOKEN"}"#));
        let back: Vec<McpServer> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, servers);
    }
}
