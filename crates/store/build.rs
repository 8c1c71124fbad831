//! Lists the store's migrations for it to embed (see `src/migrations.rs`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    embed_migrations(&out);
}

/// Lists the migration files of each backend for `store::migrations`, as
/// `(version, description, sql)` in order of version, read as sqlx reads a
/// folder of them: `<version>_<description>.sql`, `_` in a description
/// being a space.
fn embed_migrations(out: &Path) {
    println!("cargo:rerun-if-changed=migrations");
    let mut code = String::new();
    for (name, folder_name) in [
        ("SQLITE", "migrations"),
        ("POSTGRES", "migrations/postgres"),
    ] {
        let folder = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join(folder_name);
        let mut files: Vec<(i64, String, String)> = std::fs::read_dir(&folder)
            .unwrap_or_else(|error| panic!("listing {}: {error}", folder.display()))
            .map(|entry| entry.expect("a migration file").path())
            .filter(|path| path.is_file())
            .map(|path| {
                let file = path
                    .file_name()
                    .unwrap()
                    .to_str()
                    .expect("a UTF-8 file name");
                let (version, description) = file
                    .strip_suffix(".sql")
                    .and_then(|stem| stem.split_once('_'))
                    .unwrap_or_else(|| panic!("{file} is not named <version>_<description>.sql"));
                let version = version
                    .parse()
                    .unwrap_or_else(|_| panic!("{file} does not start with a version number"));
                (version, description.replace('_', " "), file.to_owned())
            })
            .collect();
        files.sort_by_key(|(version, ..)| *version);
        let _ = writeln!(code, "const {name}: &[File] = &[");
        // Named from the crate's folder when it compiles, not from this
        // script's: a target folder shared by two checkouts keeps the
        // script's output while its inputs look unchanged.
        for (version, description, file) in files {
            let path = format!("/{folder_name}/{file}");
            let _ = writeln!(
                code,
                "    ({version}, {description:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), {path:?}))),"
            );
        }
        code.push_str("];\n");
    }
    std::fs::write(out.join("migrations.rs"), code).expect("writing migrations.rs");
}
