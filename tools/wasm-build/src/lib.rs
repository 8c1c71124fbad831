//! Builds workspace crates as `wasm32-wasip2` components from a build script.
//!
//! The host embeds the built-in drivers and the tests use deliberately broken
//! drivers; both are crates of this workspace that must be compiled for
//! another target first. A build script runs a nested `cargo build` for them
//! into a target directory of its own (the outer build holds the lock on the
//! usual one), the way wasmtime's own test programs are built.

use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// The target every component is built for.
pub const TARGET: &str = "wasm32-wasip2";

/// The cargo profile components are built with (defined in the workspace).
pub const PROFILE: &str = "driver";

/// The compiler flags components are built with, beyond their profile's.
///
/// LLVM inlines much more than its default: a call that stays a call costs
/// more in a component than natively (Cranelift checks the call deadline and
/// the stack on every entry, and optimises across no call). With it the
/// drivers parse 10-15% faster sandboxed, for components about 40% larger;
/// past 3000 the growth cost more than it saved.
pub const RUSTFLAGS: &str = "-C llvm-args=-inline-threshold=3000";

/// A component built by [`build`].
pub struct Built {
    /// The cargo package name.
    pub package: String,
    /// Where the `.wasm` file is.
    pub path: PathBuf,
    /// Lowercase hex SHA-256 of its bytes.
    pub sha256: String,
}

/// Builds `packages` (cargo package names of this workspace) for
/// [`TARGET`] and returns where each component is. Tells cargo to rebuild
/// when anything under `watch` (paths relative to the workspace root) changes.
///
/// # Panics
/// When the nested build fails: a build script has no other way to fail, and
/// the message says what to do (usually `rustup target add wasm32-wasip2`).
pub fn build(packages: &[&str], watch: &[&str]) -> Vec<Built> {
    let workspace = workspace_root();
    for path in watch {
        println!("cargo:rerun-if-changed={}", workspace.join(path).display());
    }
    ensure_target();
    let target_dir = target_dir(&workspace).join("components");
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());

    let mut command = Command::new(cargo);
    command
        .current_dir(&workspace)
        .args(["build", "--target", TARGET, "--profile", PROFILE])
        .arg("--target-dir")
        .arg(&target_dir);
    for package in packages {
        command.args(["-p", package]);
    }
    // The outer build's flags are for the host target, not for wasm.
    for variable in ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET"] {
        command.env_remove(variable);
    }
    let target_flags = format!("CARGO_TARGET_{}_RUSTFLAGS", TARGET.replace('-', "_"));
    command.env(target_flags.to_uppercase(), RUSTFLAGS);
    let status = command
        .status()
        .unwrap_or_else(|error| panic!("could not run cargo to build the components: {error}"));
    if !status.success() {
        panic!("building {packages:?} for {TARGET} failed (see above)");
    }

    packages
        .iter()
        .map(|package| {
            let path = target_dir
                .join(TARGET)
                .join(PROFILE)
                .join(format!("{}.wasm", package.replace('-', "_")));
            let bytes = std::fs::read(&path)
                .unwrap_or_else(|error| panic!("reading {}: {error}", path.display()));
            Built {
                package: (*package).to_owned(),
                sha256: hex(&Sha256::digest(&bytes)),
                path,
            }
        })
        .collect()
}

/// Adds [`TARGET`] to the toolchain through rustup when its standard library
/// is missing: rustup installs a `rust-toolchain.toml`'s targets only with the
/// toolchain itself, so on a machine that already had the toolchain a plain
/// `cargo build` would otherwise fail here.
fn ensure_target() {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let libdir = Command::new(&rustc)
        .args(["--print", "target-libdir", "--target", TARGET])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()));
    if libdir.is_some_and(|dir| dir.is_dir()) {
        return;
    }
    println!(
        "cargo:warning=the {TARGET} target is missing; adding it with `rustup target add {TARGET}`"
    );
    let added = Command::new("rustup")
        .args(["target", "add", TARGET])
        .status()
        .is_ok_and(|status| status.success());
    if !added {
        panic!(
            "the {TARGET} target is missing and rustup could not add it: \
             run `rustup target add {TARGET}` (or install the target's standard library) and build again"
        );
    }
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut out, byte| {
        let _ = write!(out, "{byte:02x}");
        out
    })
}

fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("run from a build script"));
    manifest
        .ancestors()
        .find(|dir| is_workspace_root(dir))
        .map(Path::to_path_buf)
        .unwrap_or(manifest)
}

fn is_workspace_root(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("Cargo.toml")).is_ok_and(|text| text.contains("[workspace]"))
}

fn target_dir(workspace: &Path) -> PathBuf {
    env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|dir| {
            if dir.is_absolute() {
                dir
            } else {
                workspace.join(dir)
            }
        })
        .unwrap_or_else(|| workspace.join("target"))
}
