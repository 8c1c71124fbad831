//! `cinch driver new`: a driver crate on the SDK that builds and passes its
//! own test out of the box.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;

use super::drivers::is_driver_name;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The driver's name: lowercase letters, digits and dashes.
    name: String,
    /// Where to create the crate (default: `./cinch-driver-NAME`).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// The cinch-driver-sdk crate to depend on (default: the SDK this cinch
    /// was built from).
    #[arg(long)]
    sdk: Option<PathBuf>,
}

/// The SDK's source directory at the time this binary was built.
const BUILT_WITH_SDK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../sdk");

const FILES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("template/Cargo.toml.tmpl")),
    ("src/lib.rs", include_str!("template/lib.rs.tmpl")),
    ("sample.jsonl", include_str!("template/sample.jsonl")),
    ("README.md", include_str!("template/README.md.tmpl")),
];

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        is_driver_name(&args.name),
        "`{}` is not a driver name: use lowercase letters, digits and dashes, starting with a letter",
        args.name
    );
    let sdk = match args.sdk {
        Some(sdk) => sdk,
        None => PathBuf::from(BUILT_WITH_SDK),
    };
    let sdk = sdk.canonicalize().with_context(|| {
        format!(
            "the SDK is not at {}; pass --sdk with the path of cinch's sdk/ folder",
            sdk.display()
        )
    })?;
    let dir = args
        .dir
        .unwrap_or_else(|| PathBuf::from(format!("cinch-driver-{}", args.name)));
    anyhow::ensure!(
        !dir.exists() || dir.read_dir()?.next().is_none(),
        "{} already exists and is not empty",
        dir.display()
    );

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
            .replace("{{sdk}}", &sdk.display().to_string())
    };
    for (path, template) in FILES {
        write(&dir.join(path), &fill(template))?;
    }
    println!("created {} (driver `{}`)", dir.display(), args.name);
    println!(
        "next: cd {} && cargo test && cargo build --release --target wasm32-wasip2",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn write(path: &Path, contents: &str) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(path, contents).with_context(|| format!("writing {}", path.display()))
}
