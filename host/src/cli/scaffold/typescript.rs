//! `cinch driver new --lang ts`: a TypeScript driver that the Bytecode
//! Alliance's componentize-js makes a component, against the contract's WIT
//! this binary embeds.

use std::path::Path;

use super::{vendored, write, write_wit};

/// The componentize-js the scaffold builds with (from npm): the release this
/// scaffold was tested with.
const COMPONENTIZE_JS: &str = "0.23.0";
/// The TypeScript compiler it type-checks and compiles with.
const TYPESCRIPT: &str = "7.0.2";

const FILES: &[(&str, &str)] = &[
    ("package.json", include_str!("ts/package.json.tmpl")),
    ("tsconfig.json", include_str!("ts/tsconfig.json")),
    ("src/contract.ts", include_str!("ts/contract.ts")),
    ("src/driver.ts", include_str!("ts/driver.ts.tmpl")),
    (
        "test/driver-test.mjs",
        include_str!("ts/driver-test.mjs.tmpl"),
    ),
    ("sample.jsonl", include_str!("rust/sample.jsonl")),
    ("README.md", include_str!("ts/README.md.tmpl")),
    (".gitignore", "node_modules/\ndist/\n"),
];

/// Writes the project into `dir`.
pub fn write_project(name: &str, dir: &Path) -> anyhow::Result<()> {
    let fill = |template: &str| {
        template
            .replace("{{name}}", name)
            .replace("{{contract}}", vendored::CONTRACT)
            .replace("{{componentize_js}}", COMPONENTIZE_JS)
            .replace("{{typescript}}", TYPESCRIPT)
    };
    for (path, template) in FILES {
        write(&dir.join(path), &fill(template))?;
    }
    write_wit(&dir.join("wit").join(vendored::CONTRACT))
}
