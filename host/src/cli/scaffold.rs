//! `cinch driver new`: a driver project that builds and passes its own test
//! out of the box, on a machine with only this binary and the language's
//! toolchain. The SDK and the contract's WIT are written into the project
//! from what this binary embeds, so a scaffold follows the contract cinch
//! was built with.

mod typescript;
mod vendored;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;

use super::drivers::is_driver_name;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The driver's name: lowercase letters, digits and dashes.
    name: String,
    /// Where to create the project (default: `./cinch-driver-NAME`).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// The language to write the driver in.
    #[arg(long, value_enum, default_value_t = Lang::Rust)]
    lang: Lang,
    /// Rust only: depend on this cinch-driver-sdk crate (a checkout's `sdk/`)
    /// instead of the copy written into the project.
    #[arg(long)]
    sdk: Option<PathBuf>,
}

/// The languages a driver can be scaffolded in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Lang {
    /// A crate on cinch-driver-sdk, built with cargo for wasm32-wasip2.
    Rust,
    /// A TypeScript module made a component by the Bytecode Alliance's jco
    /// (componentize-js).
    #[value(alias = "typescript")]
    Ts,
}

/// Where the vendored SDK goes inside a Rust scaffold; the contract's WIT
/// sits beside it, where the SDK's bindings look for it (`../wit/<version>`).
const VENDOR_DIR: &str = "vendor";

const RUST_FILES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("scaffold/rust/Cargo.toml.tmpl")),
    ("src/lib.rs", include_str!("scaffold/rust/lib.rs.tmpl")),
    ("sample.jsonl", include_str!("scaffold/rust/sample.jsonl")),
    ("README.md", include_str!("scaffold/rust/README.md.tmpl")),
];

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        is_driver_name(&args.name),
        "`{}` is not a driver name: use lowercase letters, digits and dashes, starting with a letter",
        args.name
    );
    anyhow::ensure!(
        args.sdk.is_none() || args.lang == Lang::Rust,
        "--sdk names the Rust SDK crate to depend on; a TypeScript driver needs none"
    );
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("cinch-driver-{}", args.name)));
    anyhow::ensure!(
        !dir.exists() || dir.read_dir()?.next().is_none(),
        "{} already exists and is not empty",
        dir.display()
    );
    match args.lang {
        Lang::Rust => rust(&args, &dir)?,
        Lang::Ts => typescript::write_project(&args.name, &dir)?,
    }
    println!(
        "created {} (driver `{}`, contract cinch:driver@{})",
        dir.display(),
        args.name,
        vendored::CONTRACT
    );
    println!(
        "next: cd {} && {}",
        dir.display(),
        match args.lang {
            Lang::Rust => "cargo test && cargo build --release --target wasm32-wasip2",
            Lang::Ts => "npm install && npm test",
        }
    );
    Ok(ExitCode::SUCCESS)
}

fn rust(args: &Args, dir: &Path) -> anyhow::Result<()> {
    let sdk = match &args.sdk {
        Some(sdk) => sdk
            .canonicalize()
            .with_context(|| format!("--sdk {}: no such folder", sdk.display()))?
            .display()
            .to_string(),
        None => {
            write_vendored_sdk(&dir.join(VENDOR_DIR))?;
            format!("{VENDOR_DIR}/cinch-driver-sdk")
        }
    };
    let type_name: String = args
        .name
        .split('-')
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase())
                .into_iter()
                .chain(chars)
                .collect::<String>()
        })
        .collect();
    let fill = |template: &str| {
        template
            .replace("{{name}}", &args.name)
            .replace("{{crate}}", &args.name.replace('-', "_"))
            .replace("{{type}}", &type_name)
            .replace("{{sdk}}", &sdk)
            .replace("{{contract}}", vendored::CONTRACT)
    };
    for (path, template) in RUST_FILES {
        write(&dir.join(path), &fill(template))?;
    }
    Ok(())
}

/// Writes the SDK crate and the contract it binds to under `vendor`.
fn write_vendored_sdk(vendor: &Path) -> anyhow::Result<()> {
    for (path, contents) in vendored::SDK {
        write(&vendor.join("cinch-driver-sdk").join(path), contents)?;
    }
    write_wit(&vendor.join("wit").join(vendored::CONTRACT))
}

/// Writes the contract's WIT files into `dir`.
fn write_wit(dir: &Path) -> anyhow::Result<()> {
    for (name, contents) in vendored::WIT {
        write(&dir.join(name), contents)?;
    }
    Ok(())
}

fn write(path: &Path, contents: &str) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(path, contents).with_context(|| format!("writing {}", path.display()))
}
