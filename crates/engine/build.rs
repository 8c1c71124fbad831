//! Builds the built-in drivers as components and embeds them (see
//! `drivers.rs`'s `BUILTIN`).

use std::fmt::Write as _;
use std::path::PathBuf;

const DRIVERS: &[&str] = &["acp", "claude", "codex", "cursor", "gemini"];

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let packages: Vec<String> = DRIVERS
        .iter()
        .map(|d| format!("cinch-driver-{d}"))
        .collect();
    let packages: Vec<&str> = packages.iter().map(String::as_str).collect();
    let built = wasm_build::build(&packages, &["sdk", "drivers", "wit", "Cargo.toml"]);

    let mut table = String::from("&[\n");
    for (name, component) in DRIVERS.iter().zip(&built) {
        let _ = writeln!(
            table,
            "    BuiltinDriver {{ name: {name:?}, wasm: include_bytes!({path:?}), sha256: {sha:?} }},",
            path = component.path,
            sha = component.sha256,
        );
    }
    table.push(']');
    std::fs::write(out.join("builtin.rs"), table).expect("writing builtin.rs");
}
