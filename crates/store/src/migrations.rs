//! The schema's migrations, one list for each backend, embedded in the
//! binary from `migrations/` and `migrations/postgres/` by the build script
//! (as `sqlx::migrate!` would, without sqlx's proc-macro crate).

use std::borrow::Cow;

use futures_util::future::BoxFuture;
use sqlx::error::BoxDynError;
use sqlx::migrate::{MigrateError, Migration, MigrationSource, MigrationType, Migrator};

/// One migration file: its version, its description and its SQL.
type File = (i64, &'static str, &'static str);

// `SQLITE` and `POSTGRES`, in order of version.
include!(concat!(env!("OUT_DIR"), "/migrations.rs"));

/// The migrations of SQLite databases.
pub(crate) async fn sqlite() -> Result<Migrator, MigrateError> {
    Migrator::new(Embedded(SQLITE)).await
}

/// The migrations of PostgreSQL databases.
pub(crate) async fn postgres() -> Result<Migrator, MigrateError> {
    Migrator::new(Embedded(POSTGRES)).await
}

#[derive(Debug)]
struct Embedded(&'static [File]);

impl MigrationSource<'static> for Embedded {
    fn resolve(self) -> BoxFuture<'static, Result<Vec<Migration>, BoxDynError>> {
        let migrations = self
            .0
            .iter()
            .map(|&(version, description, sql)| {
                // What sqlx reads a migration file as: its checksum is of the
                // SQL, so a database migrated before by `sqlx::migrate!` stays
                // valid.
                Migration::new(
                    version,
                    Cow::Borrowed(description),
                    MigrationType::Simple,
                    Cow::Borrowed(sql),
                    sql.starts_with("-- no-transaction"),
                )
            })
            .collect();
        Box::pin(std::future::ready(Ok(migrations)))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// A migrator's migrations, as comparable values.
    fn described(migrator: Migrator) -> Vec<(i64, String, MigrationType, Vec<u8>, bool)> {
        migrator
            .iter()
            .map(|m| {
                (
                    m.version,
                    m.description.to_string(),
                    m.migration_type,
                    m.checksum.to_vec(),
                    m.no_tx,
                )
            })
            .collect()
    }

    #[tokio::test]
    async fn the_embedded_migrations_are_the_folders_as_sqlx_reads_them() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        for (embedded, folder) in [
            (sqlite().await.unwrap(), root.join("migrations")),
            (postgres().await.unwrap(), root.join("migrations/postgres")),
        ] {
            let from_folder = Migrator::new(folder.as_path()).await.unwrap();
            // What `sqlx::migrate!` embedded, read from the folder as it did.
            let from_folder = described(from_folder);
            assert!(from_folder.len() >= 14, "{from_folder:?}");
            assert_eq!(described(embedded), from_folder, "{folder:?}");
        }
    }
}
