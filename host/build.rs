//! Lists the SDK's sources and contract that `cinch driver new` writes
//! into a scaffold (see `cli/scaffold/vendored.rs`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    embed_sdk(&out);
}

/// Lists for `cinch driver new` the SDK's source files, a standalone manifest
/// for it (the workspace's inherited keys filled in), and the contract's WIT
/// folder the SDK's bindings are generated from, so that a scaffold builds
/// with no cinch checkout around.
fn embed_sdk(out: &Path) {
    let root = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("..");
    println!("cargo:rerun-if-changed=../sdk");
    println!("cargo:rerun-if-changed=../wit");
    println!("cargo:rerun-if-changed=../Cargo.toml");
    let sources = root.join("sdk/src");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&sources)
        .unwrap_or_else(|error| panic!("listing {}: {error}", sources.display()))
        .map(|entry| entry.expect("an SDK file").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .collect();
    files.sort();

    // The contract is the folder the SDK's `wit_bindgen::generate!` reads.
    let guest =
        std::fs::read_to_string(sources.join("guest.rs")).expect("reading sdk/src/guest.rs");
    let contract = guest
        .split("path: \"../wit/")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("sdk/src/guest.rs generates its bindings from a path \"../wit/<version>\"");
    let wit = root.join("wit").join(contract);
    let mut wit_files: Vec<PathBuf> = std::fs::read_dir(&wit)
        .unwrap_or_else(|error| panic!("listing {}: {error}", wit.display()))
        .map(|entry| entry.expect("a WIT file").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wit"))
        .collect();
    wit_files.sort();

    let manifest = standalone_manifest(
        &std::fs::read_to_string(root.join("sdk/Cargo.toml")).expect("reading sdk/Cargo.toml"),
        &std::fs::read_to_string(root.join("Cargo.toml")).expect("reading Cargo.toml"),
    );
    let out_manifest = out.join("sdk-Cargo.toml");
    std::fs::write(&out_manifest, manifest).expect("writing sdk-Cargo.toml");

    let mut code = format!(
        "/// The contract version the SDK exports.\npub const CONTRACT: &str = {contract:?};\n"
    );
    code.push_str(
        "/// The SDK's files, by path inside its crate.\npub const SDK: &[(&str, &str)] = &[\n",
    );
    // Files named from the crate's folder (and OUT_DIR) when it compiles,
    // not from this script's: a target folder shared by two checkouts keeps
    // the script's output while its inputs look unchanged.
    let _ = writeln!(
        code,
        "    (\"Cargo.toml\", include_str!(concat!(env!(\"OUT_DIR\"), \"/sdk-Cargo.toml\"))),"
    );
    for file in &files {
        let name = file
            .file_name()
            .unwrap()
            .to_str()
            .expect("a UTF-8 file name");
        let _ = writeln!(
            code,
            "    (\"src/{name}\", include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/../sdk/src/{name}\"))),"
        );
    }
    code.push_str(
        "];\n/// The contract's WIT files, by name.\npub const WIT: &[(&str, &str)] = &[\n",
    );
    for file in &wit_files {
        let name = file
            .file_name()
            .unwrap()
            .to_str()
            .expect("a UTF-8 file name");
        let _ = writeln!(
            code,
            "    ({name:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/../wit/{contract}/{name}\"))),"
        );
    }
    code.push_str("];\n");
    std::fs::write(out.join("vendored_sdk.rs"), code).expect("writing vendored_sdk.rs");
}

/// The SDK's manifest with every `.workspace = true` key replaced by the
/// workspace's value, and no workspace lints: a crate that builds alone.
fn standalone_manifest(sdk: &str, workspace: &str) -> String {
    let mut section = "";
    let mut inherited = std::collections::HashMap::new();
    for line in workspace.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line;
            continue;
        }
        if let ("[workspace.package]" | "[workspace.dependencies]", Some((key, value))) =
            (section, line.split_once('='))
        {
            inherited.insert((section, key.trim().to_owned()), value.trim().to_owned());
        }
    }
    let mut out = String::from("# The cinch driver SDK, vendored by `cinch driver new`.\n");
    let mut section = "";
    for line in sdk.lines() {
        if line.starts_with('[') {
            section = line;
            if section == "[lints]" {
                continue;
            }
        } else if section == "[lints]" {
            continue;
        } else if let Some(key) = line.strip_suffix(".workspace = true") {
            let table = if section == "[package]" {
                "[workspace.package]"
            } else {
                "[workspace.dependencies]"
            };
            let value = inherited
                .get(&(table, key.to_owned()))
                .unwrap_or_else(|| panic!("the workspace has no {table} {key}"));
            let _ = writeln!(out, "{key} = {value}");
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}
