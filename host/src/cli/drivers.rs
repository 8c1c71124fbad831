//! `cinch drivers` and `cinch driver add|publish|sign|remove|rollback`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;

use super::Context;
use cinch_engine::drivers::Source;
pub use cinch_engine::harnesses::is_driver_name;
use cinch_engine::harnesses::{Profile, ProfileSource};
use cinch_engine::plugins::reference::{self, Reference};
use cinch_engine::plugins::{Candidate, Installed, Plugins, SignaturePolicy, oci, signature};
use cinch_engine::probe::{CliStatus, probe};

/// Prints one row per driver, then one per harness profile on a driver.
pub fn list(context: &Context) -> anyhow::Result<ExitCode> {
    let rows: Vec<[String; 5]> = std::thread::scope(|scope| {
        let registry = &context.registry;
        let probes: Vec<_> = registry
            .entries()
            .iter()
            .map(|entry| scope.spawn(move || row(entry)))
            .chain(
                registry
                    .profiles()
                    .iter()
                    .map(|profile| scope.spawn(move || profile_row(registry, profile))),
            )
            .collect();
        probes
            .into_iter()
            .map(|probe| probe.join().expect("a probe thread panicked"))
            .collect()
    });
    let header = ["NAME", "DISPLAY NAME", "CONTRACT", "SOURCE", "CLI"].map(str::to_owned);
    print_table(std::iter::once(&header).chain(&rows));
    Ok(ExitCode::SUCCESS)
}

fn row(entry: &cinch_engine::drivers::Entry) -> [String; 5] {
    let source = entry.source.to_string();
    match &entry.driver {
        Err(error) => [
            entry.name.clone(),
            "-".into(),
            "-".into(),
            source,
            format!("did not load: {error}"),
        ],
        Ok(driver) => {
            let info = driver.info();
            [
                info.name.clone(),
                info.display_name.clone(),
                driver.contract_version().to_owned(),
                source,
                cli_cell(driver, info),
            ]
        }
    }
}

fn profile_row(registry: &cinch_engine::drivers::Registry, profile: &Profile) -> [String; 5] {
    let source = match profile.source {
        ProfileSource::Driver => format!("{} driver", profile.driver),
        ProfileSource::Config => format!("config.toml ({} driver)", profile.driver),
    };
    match registry.harness(&profile.name) {
        Err(error) => [
            profile.name.clone(),
            profile.display_name.clone(),
            "-".into(),
            source,
            format!("{error:#}"),
        ],
        Ok(harness) => [
            profile.name.clone(),
            profile.display_name.clone(),
            harness.driver.contract_version().to_owned(),
            source,
            cli_cell(harness.driver, &harness.info),
        ],
    }
}

/// Where the harness's CLI is and its version, or why not.
fn cli_cell(driver: &cinch_runtime::Driver, info: &cinch_driver_sdk::Info) -> String {
    if info.program.is_empty() {
        return "no program of its own: it runs its harnesses (below)".to_owned();
    }
    match probe(driver, info, &std::env::var("PATH").unwrap_or_default()) {
        CliStatus::Missing => format!("{} not on PATH", info.program),
        CliStatus::Found {
            path,
            version,
            problem,
        } => {
            // ACP agents often have no version command: not a fault.
            let version = version.unwrap_or_else(|| "(no version reported)".into());
            match problem {
                Some(problem) => format!("{} {version} ({problem})", path.display()),
                None => format!("{} {version}", path.display()),
            }
        }
    }
}

fn print_table<'a>(rows: impl Iterator<Item = &'a [String; 5]> + Clone) {
    let mut widths = [0; 5];
    for row in rows.clone() {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:width$}"))
            .collect();
        println!("{}", cells.join("  ").trim_end());
    }
}

/// Prints, per driver and CLI version, the event types the driver did not
/// know, from the server's database (where `cinch serve` records them when a
/// turn ends): `database`, else the one the home's config names, else the
/// home's SQLite file; a home without a database has seen none.
pub fn seen(
    home: &cinch_engine::home::Home,
    database: Option<String>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let rows = super::database::runtime()?.block_on(async {
        let Some(store) = super::database::open_existing_store(home, database).await? else {
            return anyhow::Ok(Vec::new());
        };
        store
            .unknown_events()
            .await
            .context("reading the unknown events")
    })?;
    if json {
        let mut harnesses: Vec<&str> = rows.iter().map(|row| row.harness.as_str()).collect();
        harnesses.dedup();
        let drivers: Vec<serde_json::Value> = harnesses
            .into_iter()
            .map(|harness| {
                let versions = cinch_server::unknown_events_by_version(
                    rows.iter().filter(|row| row.harness == harness),
                );
                serde_json::json!({"name": harness, "cli_versions": versions})
            })
            .collect();
        println!("{}", serde_json::to_string(&drivers)?);
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        println!("no unknown event types seen");
        return Ok(ExitCode::SUCCESS);
    }
    let header = ["DRIVER", "CLI VERSION", "TYPE", "FIRST SEEN", "COUNT"].map(str::to_owned);
    let table: Vec<[String; 5]> = rows
        .iter()
        .map(|row| {
            [
                row.harness.clone(),
                if row.cli_version.is_empty() {
                    "unknown".to_owned()
                } else {
                    row.cli_version.clone()
                },
                row.event_type.clone(),
                row.first_seen.to_string(),
                row.count.to_string(),
            ]
        })
        .collect();
    print_table(std::iter::once(&header).chain(&table));
    Ok(ExitCode::SUCCESS)
}

/// Where a registry's credentials and transport come from.
#[derive(Debug, clap::Args)]
pub struct RegistryArgs {
    /// Plain HTTP to a registry off this machine (a loopback one always
    /// gets plain HTTP).
    #[arg(long)]
    insecure: bool,
    /// The registry user; the password is CINCH_REGISTRY_PASSWORD. Without
    /// it, ~/.docker/config.json's `auths` are used.
    #[arg(long, env = "CINCH_REGISTRY_USERNAME")]
    username: Option<String>,
}

impl RegistryArgs {
    fn client(&self, reference: &Reference) -> anyhow::Result<oci::Client> {
        let credentials = match &self.username {
            Some(username) => Some(oci::Credentials {
                username: username.clone(),
                password: std::env::var("CINCH_REGISTRY_PASSWORD").context(
                    "--username needs the password in the CINCH_REGISTRY_PASSWORD environment variable",
                )?,
            }),
            None => oci::Credentials::from_docker_config(&reference.registry)?,
        };
        Ok(oci::Client::new(reference, self.insecure, credentials))
    }
}

/// `cinch driver add`.
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// A component file built for wasm32-wasip2, or
    /// oci://HOST[:PORT]/REPO:TAG, or oci://HOST[:PORT]/REPO@sha256:DIGEST.
    source: String,
    /// Take what the source gives now even though it is not what it gave
    /// when the plugin was added (a tag that moved, a file rebuilt).
    #[arg(long)]
    update: bool,
    /// A file's SSHSIG signature (default: FILE.sig beside it, if there).
    #[arg(long)]
    signature: Option<PathBuf>,
    #[command(flatten)]
    registry: RegistryArgs,
}

/// Checks the component `args` name, then pins and installs it.
pub fn add(context: &Context, args: AddArgs) -> anyhow::Result<ExitCode> {
    let candidate = if args.source.starts_with(reference::SCHEME) {
        let reference = Reference::parse(&args.source)?;
        let mut client = args.registry.client(&reference)?;
        Candidate::pull(&reference, &mut client)?
    } else {
        let file = Path::new(&args.source);
        let component =
            std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        let signature_path = args.signature.clone().unwrap_or_else(|| sig_path(file));
        let signature = match std::fs::read_to_string(&signature_path) {
            Ok(text) => Some(text),
            Err(error)
                if error.kind() == std::io::ErrorKind::NotFound && args.signature.is_none() =>
            {
                None
            }
            Err(error) => {
                return Err(error).with_context(|| format!("reading {}", signature_path.display()));
            }
        };
        let source = std::path::absolute(file)
            .unwrap_or_else(|_| file.to_path_buf())
            .display()
            .to_string();
        Candidate {
            component,
            source,
            version: None,
            manifest: None,
            signature,
        }
    };
    let plugins = Plugins::in_dir(&context.home.plugins_dir());
    let policy = SignaturePolicy::from_config(&context.config.drivers)?;
    match plugins.install(&context.runtime, &policy, candidate, args.update)? {
        Installed::Unchanged { driver, pin } => {
            println!(
                "driver `{}` is already pinned to {} ({})",
                driver.info().name,
                pin.digest,
                pin.source
            );
        }
        Installed::Pinned {
            driver,
            pin,
            replaced,
        } => {
            let name = &driver.info().name;
            let before = match (
                &replaced,
                context
                    .registry
                    .entries()
                    .iter()
                    .find(|entry| &entry.name == name),
            ) {
                (Some(old), _) => format!(" (was {} → now {})", old.digest, pin.digest),
                (None, Some(entry)) if entry.source == Source::Builtin => {
                    " (it replaces the built-in driver)".to_owned()
                }
                (None, Some(_)) => " (it replaces the plugin file installed before)".to_owned(),
                (None, None) => String::new(),
            };
            println!(
                "installed driver `{name}` ({}, contract {}{}) pinned to {}{before}",
                driver.info().display_name,
                pin.contract,
                pin.version
                    .as_deref()
                    .map(|version| format!(", version {version}"))
                    .unwrap_or_default(),
                pin.digest,
            );
            if let Some(signer) = &pin.signed_by {
                println!("signed by {signer}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn sig_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_os_string();
    name.push(".sig");
    PathBuf::from(name)
}

/// `cinch driver publish`.
#[derive(Debug, clap::Args)]
pub struct PublishArgs {
    /// The component, built for wasm32-wasip2.
    file: PathBuf,
    /// Where to push it: oci://HOST[:PORT]/REPO:TAG.
    reference: String,
    /// Signs the component with this OpenSSH private key and carries the
    /// signature in the manifest's `dev.cinch.driver.signature` annotation
    /// (without it, FILE.sig is carried when there is one).
    #[arg(long, value_name = "KEY")]
    sign: Option<PathBuf>,
    /// The version annotation (default: the tag).
    #[arg(long)]
    version: Option<String>,
    #[command(flatten)]
    registry: RegistryArgs,
}

/// Pushes a driver component to an OCI registry and prints its digest.
pub fn publish(context: &Context, args: PublishArgs) -> anyhow::Result<ExitCode> {
    let reference = Reference::parse(&args.reference)?;
    anyhow::ensure!(
        reference.tag.is_some() && reference.digest.is_none(),
        "publish to a tag (oci://HOST/REPO:TAG): a digest is what the registry gives back"
    );
    let component =
        std::fs::read(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let driver = context
        .runtime
        .load(&args.file.display().to_string(), &component, None)
        .with_context(|| format!("{} cannot be published", args.file.display()))?;
    let signature = match &args.sign {
        Some(key) => Some(signature::sign(key, &component)?),
        None => std::fs::read_to_string(sig_path(&args.file)).ok(),
    };
    let mut client = args.registry.client(&reference)?;
    let digest = client.push(
        &reference,
        &component,
        &oci::PushOptions {
            contract_version: driver.contract_version().to_owned(),
            version: args.version.or_else(|| reference.tag.clone()),
            signature: signature.clone(),
        },
    )?;
    eprintln!(
        "published driver `{}` (contract {}, component {}{}) to {reference}",
        driver.info().name,
        driver.contract_version(),
        oci::digest_of(&component),
        if signature.is_some() { ", signed" } else { "" },
    );
    println!("{digest}");
    Ok(ExitCode::SUCCESS)
}

/// `cinch driver sign`.
#[derive(Debug, clap::Args)]
pub struct SignArgs {
    /// The component.
    file: PathBuf,
    /// The OpenSSH private key (unencrypted) to sign with.
    #[arg(long)]
    key: PathBuf,
}

/// Writes FILE.sig: the component's SSHSIG signature, as
/// `ssh-keygen -Y sign -n cinch-driver` writes it.
pub fn sign(args: SignArgs) -> anyhow::Result<ExitCode> {
    let component =
        std::fs::read(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let signature = signature::sign(&args.key, &component)?;
    let path = sig_path(&args.file);
    std::fs::write(&path, signature).with_context(|| format!("writing {}", path.display()))?;
    println!("{}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// Removes plugin `name`.
pub fn remove(context: &Context, name: &str) -> anyhow::Result<ExitCode> {
    let plugins = Plugins::in_dir(&context.home.plugins_dir());
    match plugins.remove(name)? {
        Some(pin) => println!("removed driver `{name}` ({}, {})", pin.source, pin.digest),
        None => println!("removed the unpinned plugin file of `{name}`"),
    }
    Ok(ExitCode::SUCCESS)
}

/// Pins plugin `name` back to its previous component.
pub fn rollback(context: &Context, name: &str) -> anyhow::Result<ExitCode> {
    let plugins = Plugins::in_dir(&context.home.plugins_dir());
    let (left, restored) = plugins.rollback(name)?;
    println!(
        "driver `{name}` rolled back: {} → {} ({})",
        left.digest, restored.digest, restored.source
    );
    Ok(ExitCode::SUCCESS)
}
