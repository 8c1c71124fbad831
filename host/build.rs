//! Builds the built-in drivers as components and embeds them (see `builtin.rs`).

use std::fmt::Write as _;

const DRIVERS: &[&str] = &["acp", "claude", "codex", "cursor", "gemini"];

fn main() {
    // sqlx's `migrate!` embeds these files; a changed or new one must rebuild the crate.
    println!("cargo:rerun-if-changed=migrations");
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
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("builtin.rs");
    std::fs::write(out, table).expect("writing builtin.rs");
}
