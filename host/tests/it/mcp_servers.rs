//! An environment's `mcp_servers` over HTTP on loopback with a real SQLite
//! file: created, read back, changed and refused with the field at fault;
//! a header's secret is named, never shown, and never logged.

use serde_json::{Value, json};

use crate::support;

use support::*;

/// A stdio server and an HTTP server whose Authorization header takes the
/// environment's secret `DOCS_TOKEN`.
fn servers() -> Value {
    json!([
        {"name": "echo", "type": "stdio", "command": "/usr/local/bin/echo-mcp",
         "args": ["--verbose"], "env": {"MODE": "test"}},
        {"name": "docs", "type": "http", "url": "https://mcp.example.com/mcp",
         "headers": {"Authorization": {"secret": "DOCS_TOKEN"}, "X-Team": "core"}},
    ])
}

#[test]
fn environments_keep_their_mcp_servers_and_refuse_bad_ones() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let account = server.get("/v1/accounts", &token).data()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let environments = format!("/v1/accounts/{account}/environments");
    let repository = world.path("repo").display().to_string();

    // Nothing yet; then a create with both kinds of server.
    assert_eq!(server.get(&environments, &token).data(), json!([]));
    let created = server.post(
        &environments,
        &token,
        &json!({"name": "tools", "repository": repository,
                "secrets": {"DOCS_TOKEN": SECRET}, "mcp_servers": servers()}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let id = created.data()["id"].as_str().unwrap().to_owned();
    let one = format!("{environments}/{id}");
    assert_eq!(created.data()["mcp_servers"], servers());
    let read = server.get(&one, &token);
    assert_eq!(read.status, 200, "{read:?}");
    assert_eq!(read.data()["mcp_servers"], servers());
    assert_eq!(read.data()["secret_names"], json!(["DOCS_TOKEN"]));

    // Refused, each fault named by its field; the environment is as it was.
    let refusals = [
        (
            json!([{"name": "x", "type": "stdio"}]),
            vec!["mcp_servers[0].command"],
        ),
        (
            json!([{"name": "x", "type": "http", "url": "https://h/", "command": "c"}]),
            vec!["mcp_servers[0].command"],
        ),
        (
            json!([{"name": "x", "type": "ftp", "url": "https://h/"}]),
            vec!["mcp_servers[0].type"],
        ),
        (
            json!([{"name": "bad name", "type": "http", "url": "ftp://h/"}]),
            vec!["mcp_servers[0].name", "mcp_servers[0].url"],
        ),
        (
            json!([{"name": "x", "type": "http", "url": "https://h/",
                    "headers": {"Authorization": {"secret": "MISSING"}}}]),
            vec!["mcp_servers[0].headers.Authorization"],
        ),
        (
            json!([{"name": "x", "type": "stdio", "command": "a"},
                   {"name": "x", "type": "stdio", "command": "b"}]),
            vec!["mcp_servers[1].name"],
        ),
    ];
    for (bad, fields) in refusals {
        let answer = server.patch(&one, &token, &json!({"mcp_servers": bad}));
        assert_eq!(answer.status, 422, "{bad}: {answer:?}");
        assert_eq!(answer.field_errors(), fields, "{bad}: {answer:?}");
        assert!(!answer.json()["detail"].as_str().unwrap().is_empty());
        assert_eq!(
            server.get(&one, &token).data()["mcp_servers"],
            servers(),
            "{bad}"
        );
    }
    let missing = server.post(
        &environments,
        &token,
        &json!({"name": "other", "repository": repository,
                "mcp_servers": [{"name": "docs", "type": "http", "url": "https://h/",
                                 "headers": {"Authorization": {"secret": "DOCS_TOKEN"}}}]}),
    );
    assert_eq!(missing.status, 422, "{missing:?}");
    assert_eq!(
        missing.field_errors(),
        ["mcp_servers[0].headers.Authorization"]
    );
    assert_eq!(
        server
            .get(&environments, &token)
            .data()
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // A secret a header takes cannot be removed while the header names it.
    let orphaning = server.patch(&one, &token, &json!({"secrets": {"DOCS_TOKEN": null}}));
    assert_eq!(orphaning.status, 422, "{orphaning:?}");
    assert_eq!(
        orphaning.field_errors(),
        ["mcp_servers[1].headers.Authorization"]
    );
    assert_eq!(
        server.get(&one, &token).data()["secret_names"],
        json!(["DOCS_TOKEN"])
    );

    // A change replaces the list; other changes leave it alone; [] empties it.
    let only_echo = json!([servers()[0].clone()]);
    let patched = server.patch(&one, &token, &json!({"mcp_servers": only_echo}));
    assert_eq!(patched.status, 200, "{patched:?}");
    assert_eq!(server.get(&one, &token).data()["mcp_servers"], only_echo);
    let renamed = server.patch(&one, &token, &json!({"setup": ["true"]}));
    assert_eq!(renamed.status, 200, "{renamed:?}");
    assert_eq!(server.get(&one, &token).data()["mcp_servers"], only_echo);
    let emptied = server.patch(&one, &token, &json!({"mcp_servers": []}));
    assert_eq!(emptied.status, 200, "{emptied:?}");
    assert_eq!(server.get(&one, &token).data()["mcp_servers"], json!([]));

    // The secret's value was in no answer and in no log line.
    for answer in [&created, &read, &server.get(&environments, &token)] {
        assert!(!answer.text.contains(SECRET), "{answer:?}");
    }
    let stderr = std::fs::read_to_string(&server.stderr).unwrap();
    assert!(!stderr.contains(SECRET), "{stderr}");
    // Nor in the database, which holds the header's secret by name.
    let database = world.database_text();
    assert!(database.contains("DOCS_TOKEN"), "no database found");
    assert!(!database.contains(SECRET), "the secret is in the database");
}
