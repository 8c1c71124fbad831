//! A driver as `cinch driver test` and its corpus run name it: a component
//! file on disk, or a driver installed in this home.

use std::path::{Path, PathBuf};

use cinch_runtime::Driver;

use super::Context;
use cinch_engine::drivers::{Entry, load_plugin};

/// A driver named on the command line: installed, or loaded from a file.
pub enum Named<'a> {
    Installed(&'a Driver),
    File(Box<Entry>),
}

impl Named<'_> {
    pub fn driver(&self) -> anyhow::Result<&Driver> {
        match self {
            Named::Installed(driver) => Ok(driver),
            Named::File(entry) => {
                (entry.driver.as_ref()).map_err(|error| anyhow::anyhow!("{error}"))
            }
        }
    }
}

/// The driver `name` names: a component file, or an installed driver.
pub fn named<'a>(context: &'a Context, name: &str) -> anyhow::Result<Named<'a>> {
    Ok(if name.ends_with(".wasm") || Path::new(name).is_file() {
        Named::File(Box::new(load_plugin(&context.runtime, PathBuf::from(name))))
    } else {
        Named::Installed(context.registry.get(name)?)
    })
}
