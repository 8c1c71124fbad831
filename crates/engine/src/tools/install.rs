//! Installing a harness's CLI from its registry into
//! `<home>/tools/<harness>/<version>`: into a staging folder beside it
//! first, renamed into place once whole, so that a failed install leaves
//! what was there; under a file lock per harness, so that two servers (or
//! commands) on one home install a version once.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context as _;

use super::{Package, Registry, Tool, is_version};

/// A version in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// Its version.
    pub version: String,
    /// Its program.
    pub program: PathBuf,
    /// Whether this call installed it (false: it was there already).
    pub fresh: bool,
}

/// Why an install failed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// No package is known for the harness.
    #[error(
        "{harness} has no package cinch knows of: name it in config.toml, under [harness.{harness}], as package = \"npm:PACKAGE\" or \"pypi:PACKAGE\""
    )]
    NoPackage {
        /// The harness.
        harness: String,
    },
    /// The version asked for cannot name a folder.
    #[error("`{version}` is not a version: letters, digits and `.+-`")]
    BadVersion {
        /// What was asked for.
        version: String,
    },
    /// The registry could not be reached.
    #[error(
        "installing {} ({}) failed: {} could not be reached{}: {}\nCheck this machine's network (or proxy), or point {} at a registry it can reach ({}), then run `cinch harness install {}` again.",
        .0.harness, .0.package, .0.registry, .0.at, .0.detail, .0.tool, .0.hint, .0.harness
    )]
    Unreachable(Box<RegistryFailure>),
    /// The registry has no such package or version.
    #[error(
        "installing {} ({}) failed: {}{} has no {}: {}\nCheck the version (`npm view PACKAGE versions` or PyPI's release history) and the package's name in config.toml.",
        .0.harness, .0.package, .0.registry, .0.at, .0.wanted, .0.detail
    )]
    NotFound(Box<RegistryFailure>),
    /// The installer failed otherwise.
    #[error("installing {harness} ({package}) failed: {detail}")]
    Failed {
        /// The harness.
        harness: String,
        /// Its package, as config.toml names it.
        package: String,
        /// The installer's last words.
        detail: String,
    },
    /// cinch's own files.
    #[error(transparent)]
    Local(#[from] anyhow::Error),
}

/// What a registry's failure was, as the installer told it.
#[derive(Debug)]
pub struct RegistryFailure {
    /// The harness.
    pub harness: String,
    /// Its package, as config.toml names it.
    pub package: String,
    /// The registry's name.
    pub registry: &'static str,
    /// ` at URL`: where the registry is, when known.
    pub at: String,
    /// The installer.
    pub tool: &'static str,
    /// How to point the installer elsewhere.
    pub hint: &'static str,
    /// The package and version asked for.
    pub wanted: String,
    /// The installer's last words.
    pub detail: String,
}

/// Installs `tool` at `version` (else its default, else the registry's
/// latest) under the tools folder `root`, unless it is there already.
pub fn install(root: &Path, tool: &Tool, version: Option<&str>) -> Result<Installed, InstallError> {
    let package = tool
        .package
        .clone()
        .ok_or_else(|| InstallError::NoPackage {
            harness: tool.harness.clone(),
        })?;
    let wanted = version
        .map(str::to_owned)
        .or_else(|| tool.default_version.clone());
    if let Some(version) = &wanted
        && !is_version(version)
    {
        return Err(InstallError::BadVersion {
            version: version.clone(),
        });
    }
    let folder = root.join(&tool.harness);
    crate::home::create_private_dir(root)?;
    crate::home::create_private_dir(&folder)?;
    let _lock = Lock::take(&folder.join(".lock"))?;
    if let Some(version) = &wanted
        && let Some(program) = tool.installed_program(root, version)
    {
        return Ok(Installed {
            version: version.clone(),
            program,
            fresh: false,
        });
    }
    let staging = Staging::new(&folder)?;
    let version = match package.registry {
        Registry::Npm => npm(tool, &package, wanted.as_deref(), staging.path())?,
        Registry::Pypi => pip(tool, &package, wanted.as_deref(), staging.path())?,
    };
    if !is_version(&version) {
        return Err(InstallError::BadVersion { version });
    }
    let program = tool.program_in(staging.path());
    if !program.is_file() {
        return Err(InstallError::Failed {
            harness: tool.harness.clone(),
            package: package.spec(),
            detail: format!(
                "the package has no program `{}`; name the harness's program in config.toml",
                tool.program
            ),
        });
    }
    let target = tool.dir(root, &version);
    if let Some(program) = tool.installed_program(root, &version) {
        // The latest was asked for, and it was there already.
        return Ok(Installed {
            version,
            program,
            fresh: false,
        });
    }
    // A folder without its program is what an interrupted older cinch
    // left: not an installation.
    if target.exists() {
        std::fs::remove_dir_all(&target)
            .with_context(|| format!("removing the broken {}", target.display()))?;
    }
    staging.place(&target)?;
    tracing::info!(harness = %tool.harness, %version, "installed the harness's CLI");
    Ok(Installed {
        version,
        program: tool.program_in(&target),
        fresh: true,
    })
}

/// `npm install` into `dir`; the version it installed.
fn npm(
    tool: &Tool,
    package: &Package,
    wanted: Option<&str>,
    dir: &Path,
) -> Result<String, InstallError> {
    let spec = format!("{}@{}", package.name, wanted.unwrap_or("latest"));
    let output = Command::new("npm")
        .args([
            "install",
            "--no-save",
            "--no-package-lock",
            "--no-audit",
            "--no-fund",
            "--no-update-notifier",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(dir)
        .arg(&spec)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| InstallError::Failed {
            harness: tool.harness.clone(),
            package: package.spec(),
            detail: format!("could not run npm ({error}); install Node.js and npm"),
        })?;
    if !output.status.success() {
        let at = npm_registry()
            .map(|url| format!(" at {url}"))
            .unwrap_or_default();
        return Err(classify(tool, package, &spec, at, &output.stderr));
    }
    let manifest = dir
        .join("node_modules")
        .join(&package.name)
        .join("package.json");
    let text = std::fs::read_to_string(&manifest)
        .with_context(|| format!("reading {}", manifest.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("reading {}", manifest.display()))?;
    value["version"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| anyhow::anyhow!("{} names no version", manifest.display()).into())
}

/// The registry npm installs from, as its configuration says.
fn npm_registry() -> Option<String> {
    let output = Command::new("npm")
        .args(["config", "get", "registry"])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let url = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (output.status.success() && !url.is_empty()).then_some(url)
}

/// `pip install --target` into `dir/lib`, with a launcher at
/// `dir/bin/<program>` that finds it wherever the folder moves; the
/// version it installed.
fn pip(
    tool: &Tool,
    package: &Package,
    wanted: Option<&str>,
    dir: &Path,
) -> Result<String, InstallError> {
    let spec = match wanted {
        Some(version) => format!("{}=={version}", package.name),
        None => package.name.clone(),
    };
    let lib = dir.join("lib");
    let output = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--no-input",
            "--disable-pip-version-check",
            "--quiet",
            "--target",
        ])
        .arg(&lib)
        .arg(&spec)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| InstallError::Failed {
            harness: tool.harness.clone(),
            package: package.spec(),
            detail: format!("could not run python3 -m pip ({error}); install Python 3 and pip"),
        })?;
    if !output.status.success() {
        return Err(classify(
            tool,
            package,
            &spec,
            String::new(),
            &output.stderr,
        ));
    }
    let version = dist_version(&lib, &package.name)
        .ok_or_else(|| anyhow::anyhow!("pip installed no {} that cinch can find", package.name))?;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).with_context(|| format!("creating {}", bin.display()))?;
    let launcher = bin.join(&tool.program);
    let script = format!(
        "#!/bin/sh\n# cinch's launcher of {name} {version}, installed by pip --target.\nhere=$(dirname \"$(readlink -f \"$0\")\")/..\nPYTHONPATH=\"$here/lib${{PYTHONPATH:+:$PYTHONPATH}}\" exec \"$here/lib/bin/{program}\" \"$@\"\n",
        name = package.name,
        program = tool.program,
    );
    std::fs::write(&launcher, script).with_context(|| format!("writing {}", launcher.display()))?;
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("making {} executable", launcher.display()))?;
    Ok(version)
}

/// The version of the distribution `name` installed in `lib`, from its
/// `NAME-VERSION.dist-info` folder (names compared as PyPI normalizes them).
fn dist_version(lib: &Path, name: &str) -> Option<String> {
    let normal = |text: &str| text.to_lowercase().replace(['-', '.'], "_");
    std::fs::read_dir(lib).ok()?.find_map(|entry| {
        let file = entry.ok()?.file_name().into_string().ok()?;
        let stem = file.strip_suffix(".dist-info")?;
        let (dist, version) = stem.rsplit_once('-')?;
        (normal(dist) == normal(name)).then(|| version.to_owned())
    })
}

/// What an installer's failure says, by what its stderr names.
fn classify(
    tool: &Tool,
    package: &Package,
    wanted: &str,
    at: String,
    stderr: &[u8],
) -> InstallError {
    let text = String::from_utf8_lossy(stderr);
    let detail = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .rev()
        .take(4)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join(" | ");
    let detail = if detail.is_empty() {
        "the installer said nothing".to_owned()
    } else {
        crate::reading::progress::cut(detail, 600)
    };
    let unreachable = [
        "ECONNREFUSED",
        "ENOTFOUND",
        "EAI_AGAIN",
        "ETIMEDOUT",
        "ECONNRESET",
        "ENETUNREACH",
        "Failed to establish a new connection",
        "Temporary failure in name resolution",
        "Network is unreachable",
    ];
    let missing = [
        "E404",
        "ETARGET",
        "No matching version",
        "No matching distribution",
        "Could not find a version",
    ];
    let (registry, tool_name, hint) = match package.registry {
        Registry::Npm => (
            "npm",
            "npm",
            "`npm config set registry URL` or NPM_CONFIG_REGISTRY",
        ),
        Registry::Pypi => ("PyPI", "pip", "PIP_INDEX_URL"),
    };
    let failure = || {
        Box::new(RegistryFailure {
            harness: tool.harness.clone(),
            package: package.spec(),
            registry,
            at: at.clone(),
            tool: tool_name,
            hint,
            wanted: wanted.to_owned(),
            detail: detail.clone(),
        })
    };
    if unreachable.iter().any(|sign| text.contains(sign)) {
        InstallError::Unreachable(failure())
    } else if missing.iter().any(|sign| text.contains(sign)) {
        InstallError::NotFound(failure())
    } else {
        InstallError::Failed {
            harness: tool.harness.clone(),
            package: package.spec(),
            detail: format!("{tool_name} failed: {detail}"),
        }
    }
}

/// An exclusive lock on a file, waited for, released on drop.
struct Lock {
    _file: File,
}

impl Lock {
    fn take(path: &Path) -> anyhow::Result<Self> {
        use std::os::fd::AsRawFd as _;
        use std::os::unix::fs::OpenOptionsExt as _;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        loop {
            // SAFETY: flock on a descriptor we own; no memory is involved.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(Self { _file: file });
            }
            let error = std::io::Error::last_os_error();
            if error.kind() != std::io::ErrorKind::Interrupted {
                return Err(error).with_context(|| format!("locking {}", path.display()));
            }
        }
    }
}

/// A folder an install goes into, removed unless placed.
struct Staging {
    path: Option<PathBuf>,
}

impl Staging {
    fn new(folder: &Path) -> anyhow::Result<Self> {
        let path = folder.join(format!(
            ".staging-{}-{}",
            std::process::id(),
            crate::turn_dir::now_ms()
        ));
        crate::home::create_private_dir(&path)?;
        Ok(Self { path: Some(path) })
    }

    fn path(&self) -> &Path {
        self.path
            .as_deref()
            .expect("a staging folder not yet placed")
    }

    /// Renames it to `target`: the installation appears whole or not at all.
    fn place(mut self, target: &Path) -> anyhow::Result<()> {
        let path = self.path.take().expect("a staging folder placed once");
        std::fs::rename(&path, target).with_context(|| {
            format!(
                "moving {} into place at {}",
                path.display(),
                target.display()
            )
        })
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if let Some(path) = self.path.take()
            && let Err(error) = std::fs::remove_dir_all(&path)
        {
            tracing::warn!(
                "could not remove the failed install at {}: {error}",
                path.display()
            );
        }
    }
}
