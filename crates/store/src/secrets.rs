//! Environments' and webhooks' secrets in the database, sealed (see
//! [`super::sealing`]): unlocking a store with the nodes' key, reading and
//! writing an owner's secrets inside the owner's own transactions,
//! importing the folder of files older versions kept them in, and sealing
//! every value again under a new key.

use std::collections::BTreeMap;
use std::path::Path;

use super::sealing::Sealer;
use super::{Result, Store, StoreError, old_vault, on_pool};
use cinch_engine::sealing::{SecretsKey, SecretsKeyError};

/// A store's key, checked against the database's.
pub(super) struct Unlocked {
    sealer: Sealer,
    /// The key check the database held when the key was checked: a
    /// transaction that seals compares it with the stored one, which a
    /// rotation changes.
    key_check: String,
}

impl Unlocked {
    /// Each of `secrets` sealed for its row under `owner`.
    pub(super) fn seal_all<'a>(
        &self,
        owner: &str,
        secrets: impl IntoIterator<Item = (&'a String, &'a String)>,
    ) -> Result<Vec<(String, String)>> {
        secrets
            .into_iter()
            .map(|(name, value)| Ok((name.clone(), self.sealer.seal(owner, name, value)?)))
            .collect()
    }

    /// Whether `stored` is the key check this key was checked against.
    pub(super) fn is_current(&self, stored: &str) -> bool {
        stored == self.key_check
    }
}

/// The values of `owner`'s sealed secrets (name, sealed value), opened with
/// the store's key; a store given no key reads an owner with none.
pub(super) fn open_all(
    unlocked: Option<&Unlocked>,
    owner: &str,
    sealed: Vec<(String, String)>,
) -> Result<BTreeMap<String, String>> {
    if sealed.is_empty() {
        return Ok(BTreeMap::new());
    }
    let unlocked = unlocked.ok_or(SecretsKeyError::Missing)?;
    sealed
        .into_iter()
        .map(|(name, sealed)| {
            let value = unlocked.sealer.open(owner, &name, &sealed)?;
            Ok((name, value))
        })
        .collect()
}

/// The sealed secrets (name, sealed value) of the owner `$owner`, by name,
/// read through `$executor`.
macro_rules! read_sealed {
    ($executor:expr, $owner:expr) => {
        sqlx::query_as::<_, (String, String)>(
            "SELECT name, sealed FROM secrets WHERE owner_id = $1 ORDER BY name",
        )
        .bind($owner)
        .fetch_all($executor)
        .await
    };
}
pub(super) use read_sealed;

/// Stores the sealed secrets `$sealed` (name, sealed value) of `$owner` in
/// the transaction `$tx` of `$dialect`, replacing those of the same names;
/// returns from the function when the database's key is no longer the one
/// they were sealed with. The key's row is read first, sharing its lock: a
/// rotation waits for this transaction, or this one for the rotation.
/// `$unlocked` is evaluated only when there is something to seal, so that a
/// store given no key still writes owners without secrets.
macro_rules! put_sealed {
    ($tx:expr, $dialect:expr, $unlocked:expr, $owner:expr, $sealed:expr) => {
        if !$sealed.is_empty() {
            let (stored,): (String,) = sqlx::query_as(&format!(
                "SELECT key_check FROM secrets_key WHERE id = 1{}",
                $dialect.for_share
            ))
            .fetch_one(&mut *$tx)
            .await?;
            if !$unlocked.is_current(&stored) {
                return Err(cinch_engine::sealing::SecretsKeyError::Rotated.into());
            }
        }
        for (name, sealed) in $sealed {
            sqlx::query(
                "INSERT INTO secrets (owner_id, name, sealed) VALUES ($1, $2, $3) \
                 ON CONFLICT (owner_id, name) DO UPDATE SET sealed = excluded.sealed",
            )
            .bind($owner)
            .bind(name)
            .bind(sealed)
            .execute(&mut *$tx)
            .await?;
        }
    };
}
pub(super) use put_sealed;

/// Forgets every secret of `$owner` in the transaction `$tx`.
macro_rules! forget_sealed {
    ($tx:expr, $owner:expr) => {
        sqlx::query("DELETE FROM secrets WHERE owner_id = $1")
            .bind($owner)
            .execute(&mut *$tx)
            .await?
    };
}
pub(super) use forget_sealed;

/// What importing a folder of secret files did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Imported {
    /// Secrets stored in the database (those it held already are kept).
    pub secrets: usize,
    /// Files imported and removed.
    pub files: usize,
    /// Files removed whose environment or webhook no longer exists.
    pub orphans: usize,
}

impl Store {
    /// Whether the database has a key check, that is, whether a key was
    /// given to it before: then only that key opens its secrets.
    pub async fn has_secrets_key(&self) -> Result<bool> {
        let (count,): (i64,) = on_pool!(self, |pool| sqlx::query_as(
            "SELECT COUNT(*) FROM secrets_key"
        )
        .fetch_one(pool)
        .await)?;
        Ok(count > 0)
    }

    /// The same store, sealing and opening secrets with `key`; a database
    /// with no key check yet is given one made with `key`. Fails with
    /// [`SecretsKeyError::Wrong`] when its key check is another key's.
    pub async fn unlock_secrets(self, key: &SecretsKey) -> Result<Self> {
        let sealer = Sealer::new(key);
        let fresh = sealer.key_check()?;
        // Nodes starting together: the first check stored is every node's.
        on_pool!(self, |pool| sqlx::query(
            "INSERT INTO secrets_key (id, key_check) VALUES (1, $1) ON CONFLICT (id) DO NOTHING"
        )
        .bind(&fresh)
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?;
        let (stored,): (String,) = on_pool!(self, |pool| sqlx::query_as(
            "SELECT key_check FROM secrets_key WHERE id = 1"
        )
        .fetch_one(pool)
        .await)?;
        if !sealer.opens_check(&stored) {
            return Err(SecretsKeyError::Wrong.into());
        }
        Ok(Self {
            secrets: Some(std::sync::Arc::new(Unlocked {
                sealer,
                key_check: stored,
            })),
            ..self
        })
    }

    /// The store's key; an error saying it was given none.
    pub(super) fn unlocked(&self) -> Result<&Unlocked> {
        Ok(self.secrets.as_deref().ok_or(SecretsKeyError::Missing)?)
    }

    /// Seals every stored secret again under `new`, in one transaction,
    /// and makes `new` the database's key; how many secrets there were.
    /// Nodes still holding the old key refuse to seal afterwards and fail
    /// to open: they must be restarted with the new one.
    pub async fn rotate_secrets_key(&self, new: &SecretsKey) -> Result<usize> {
        let old = self.unlocked()?;
        let next = Sealer::new(new);
        let next_check = next.key_check()?;
        let dialect = self.dialect();
        on_pool!(self, |pool| {
            let mut tx = pool.begin_with(dialect.begin_write).await?;
            // The key's row first: sealing transactions of other nodes wait.
            let (stored,): (String,) = sqlx::query_as(&format!(
                "SELECT key_check FROM secrets_key WHERE id = 1{}",
                dialect.for_update
            ))
            .fetch_one(&mut *tx)
            .await?;
            if !old.sealer.opens_check(&stored) {
                return Err(SecretsKeyError::Wrong.into());
            }
            let rows: Vec<(String, String, String)> = sqlx::query_as(&format!(
                "SELECT owner_id, name, sealed FROM secrets ORDER BY owner_id, name{}",
                dialect.for_update
            ))
            .fetch_all(&mut *tx)
            .await?;
            for (owner, name, sealed) in &rows {
                let value = old.sealer.open(owner, name, sealed)?;
                sqlx::query("UPDATE secrets SET sealed = $3 WHERE owner_id = $1 AND name = $2")
                    .bind(owner)
                    .bind(name)
                    .bind(next.seal(owner, name, &value)?)
                    .execute(&mut *tx)
                    .await?;
            }
            sqlx::query("UPDATE secrets_key SET key_check = $1 WHERE id = 1")
                .bind(&next_check)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(rows.len())
        })
    }

    /// Imports the secret files older versions kept in `dir` (one JSON
    /// object of name to value per environment or webhook, named by its
    /// id): each file's secrets are sealed into the database, those it
    /// holds already kept, and the file is removed once they are
    /// committed, so that an import cut short is finished by the next.
    pub async fn import_old_vault(&self, dir: &Path) -> Result<Imported> {
        let mut imported = Imported::default();
        let files = old_vault::files(dir)?;
        if files.is_empty() {
            return Ok(imported);
        }
        let unlocked = self.unlocked()?;
        let dialect = self.dialect();
        for file in files {
            let sealed = unlocked.seal_all(&file.owner, &file.secrets)?;
            let stored = on_pool!(self, |pool| {
                let mut tx = pool.begin_with(dialect.begin_write).await?;
                let (owners,): (i64,) = sqlx::query_as(
                    "SELECT (SELECT COUNT(*) FROM environments WHERE id = $1) \
                     + (SELECT COUNT(*) FROM webhooks WHERE id = $1)",
                )
                .bind(&file.owner)
                .fetch_one(&mut *tx)
                .await?;
                if owners == 0 {
                    false
                } else {
                    let had: Vec<(String, String)> = read_sealed!(&mut *tx, &file.owner)?;
                    let new: Vec<&(String, String)> = sealed
                        .iter()
                        .filter(|(name, _)| !had.iter().any(|(kept, _)| kept == name))
                        .collect();
                    imported.secrets += new.len();
                    put_sealed!(tx, dialect, unlocked, &file.owner, new);
                    tx.commit().await?;
                    true
                }
            });
            match stored {
                true => imported.files += 1,
                false => imported.orphans += 1,
            }
            old_vault::remove(&file.path)?;
        }
        Ok(imported)
    }
}

impl From<SecretsKeyError> for StoreError {
    fn from(error: SecretsKeyError) -> Self {
        Self::SecretsKey(error)
    }
}
