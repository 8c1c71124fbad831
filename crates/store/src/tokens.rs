//! Bearer tokens: handed out once, kept only as their SHA-256.

use cinch_base::timestamp::Timestamp;
use sha2::{Digest as _, Sha256};

use super::{AccountId, AgentId, Result, Store, StoreError, new_id, on_pool, random_hex};

/// Who a token acts for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenOwner {
    /// A member, by id.
    Member(String),
    /// An agent, by id.
    Agent(AgentId),
}

/// Who is calling: the account a token belongs to and its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The token's account.
    pub account_id: AccountId,
    /// The member or agent it acts for.
    pub owner: TokenOwner,
}

/// What a token is stored as: the hex SHA-256 of its text.
pub(super) fn hash(token: &str) -> String {
    cinch_base::hex::encode(&Sha256::digest(token.as_bytes()))
}

/// A new token's text.
pub(super) fn new_token() -> Result<String> {
    Ok(format!(
        "cinch_{}",
        random_hex(32).map_err(|error| StoreError::Database(error.into()))?
    ))
}

/// Makes a token for `$owner` (a [`TokenOwner`]) in `$account_id` inside the
/// transaction `$tx`, of either backend, and evaluates to its text.
macro_rules! issue {
    ($tx:ident, $account_id:expr, $owner:expr, $name:expr) => {{
        let token = $crate::tokens::new_token()?;
        let (member_id, agent_id) = match $owner {
            $crate::TokenOwner::Member(id) => (Some(id.as_str()), None),
            $crate::TokenOwner::Agent(id) => (None, Some(id.as_str())),
        };
        sqlx::query(
            "INSERT INTO tokens (hash, account_id, member_id, agent_id, name, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind($crate::tokens::hash(&token))
        .bind($account_id)
        .bind(member_id)
        .bind(agent_id)
        .bind($name)
        .bind(Timestamp::now())
        .execute(&mut *$tx)
        .await?;
        token
    }};
}
pub(super) use issue;

/// A token as listed: its id and owner, never its text.
#[derive(Debug, Clone)]
pub struct TokenInfo {
    /// `tok_` and the first 16 hex digits of its hash: enough to name it,
    /// nothing that helps guess it.
    pub id: String,
    /// Whom it acts for.
    pub owner: TokenOwner,
    /// That member's or agent's name.
    pub owner_name: String,
    /// The name it was given when made, if any.
    pub name: Option<String>,
    /// When it was made (RFC 3339).
    pub created_at: Timestamp,
}

/// The prefix of a token's id.
const ID_PREFIX: &str = "tok_";
/// How many hex digits of its hash a token's id keeps.
const ID_DIGITS: usize = 16;

/// A token's id, from its stored hash.
fn id_of(hash: &str) -> String {
    format!("{ID_PREFIX}{}", &hash[..ID_DIGITS.min(hash.len())])
}

/// Whom a new token is for, by name.
#[derive(Debug, Clone)]
pub enum TokenFor<'a> {
    /// A member, created (role `member`) when the account has none of that name.
    Member(&'a str),
    /// An agent, created (enabled) when the account has none of that name.
    Agent(&'a str),
}

impl Store {
    /// A new token for a member or an agent of `account_id`, named `name`.
    pub async fn create_token(
        &self,
        account_id: &AccountId,
        who: TokenFor<'_>,
        name: Option<&str>,
    ) -> Result<String> {
        on_pool!(self, |pool| {
            let mut tx = pool.begin().await?;
            let owner = match &who {
                TokenFor::Member(name) => {
                    sqlx::query(
                        "INSERT INTO members (id, account_id, name, role, created_at) \
                     VALUES ($1, $2, $3, 'member', $4) ON CONFLICT (account_id, name) DO NOTHING",
                    )
                    .bind(new_id("mem")?)
                    .bind(account_id)
                    .bind(name)
                    .bind(Timestamp::now())
                    .execute(&mut *tx)
                    .await?;
                    let (id,): (String,) = sqlx::query_as(
                        "SELECT id FROM members WHERE account_id = $1 AND name = $2",
                    )
                    .bind(account_id)
                    .bind(name)
                    .fetch_one(&mut *tx)
                    .await?;
                    TokenOwner::Member(id)
                }
                TokenFor::Agent(name) => {
                    sqlx::query(
                    "INSERT INTO agents (id, account_id, name, connected, enabled, created_at) \
                     VALUES ($1, $2, $3, FALSE, TRUE, $4) ON CONFLICT (account_id, name) DO NOTHING",
                )
                .bind(AgentId::generate()?)
                .bind(account_id)
                .bind(name)
                .bind(Timestamp::now())
                .execute(&mut *tx)
                .await?;
                    let (id,): (AgentId,) =
                        sqlx::query_as("SELECT id FROM agents WHERE account_id = $1 AND name = $2")
                            .bind(account_id)
                            .bind(name)
                            .fetch_one(&mut *tx)
                            .await?;
                    TokenOwner::Agent(id)
                }
            };
            let token = issue!(tx, account_id, &owner, name);
            tx.commit().await?;
            Ok(token)
        })
    }

    /// A new token for `owner` (a member or an agent of `account_id`, by
    /// id), named `name`: its text, and how it is listed.
    pub async fn issue_token(
        &self,
        account_id: &AccountId,
        owner: &TokenOwner,
        name: Option<&str>,
    ) -> Result<(String, TokenInfo)> {
        let token = on_pool!(self, |pool| {
            let mut tx = pool.begin().await?;
            let token = issue!(tx, account_id, owner, name);
            tx.commit().await?;
            Ok::<_, StoreError>(token)
        })?;
        let id = id_of(&hash(&token));
        let info = self
            .tokens_of(account_id)
            .await?
            .into_iter()
            .find(|info| info.id == id)
            .expect("the token was just stored");
        Ok((token, info))
    }

    /// The account's tokens, oldest first.
    pub async fn tokens_of(&self, account_id: &AccountId) -> Result<Vec<TokenInfo>> {
        type Row = (
            String,
            Option<String>,
            Option<AgentId>,
            Option<String>,
            Option<String>,
            Timestamp,
        );
        let rows: Vec<Row> = on_pool!(self, |pool| {
            sqlx::query_as(
            "SELECT t.hash, t.member_id, t.agent_id, COALESCE(m.name, a.name), t.name, t.created_at \
             FROM tokens t LEFT JOIN members m ON m.id = t.member_id \
             LEFT JOIN agents a ON a.id = t.agent_id \
             WHERE t.account_id = $1 ORDER BY t.created_at, t.hash"
        )
        .bind(account_id)
        .fetch_all(pool)
        .await
        })?;
        Ok(rows
            .into_iter()
            .filter_map(|(hash, member, agent, owner_name, name, created_at)| {
                let owner = match (member, agent) {
                    (Some(member), None) => TokenOwner::Member(member),
                    (None, Some(agent)) => TokenOwner::Agent(agent),
                    _ => return None,
                };
                Some(TokenInfo {
                    id: id_of(&hash),
                    owner,
                    owner_name: owner_name.unwrap_or_default(),
                    name,
                    created_at,
                })
            })
            .collect())
    }

    /// Deletes the account's token `id`; it stops working here at once
    /// (other nodes trust a token they saw for up to a minute). Returns
    /// the token as it was, none when the account has no such token.
    pub async fn revoke_token(
        &self,
        account_id: &AccountId,
        id: &str,
    ) -> Result<Option<TokenInfo>> {
        let Some(digits) = id.strip_prefix(ID_PREFIX).filter(|digits| {
            digits.len() == ID_DIGITS && digits.bytes().all(|byte| byte.is_ascii_hexdigit())
        }) else {
            return Ok(None);
        };
        let Some(info) = self
            .tokens_of(account_id)
            .await?
            .into_iter()
            .find(|info| info.id == id)
        else {
            return Ok(None);
        };
        let pattern = format!("{}%", digits.to_ascii_lowercase());
        let hashes: Vec<(String,)> = on_pool!(self, |pool| sqlx::query_as(
            "DELETE FROM tokens WHERE account_id = $1 AND hash LIKE $2 RETURNING hash"
        )
        .bind(account_id)
        .bind(&pattern)
        .fetch_all(pool)
        .await)?;
        for (hash,) in hashes {
            self.tokens.forget(&hash);
        }
        Ok(Some(info))
    }

    /// Who `token` acts for, when it is a token of this store.
    pub async fn authenticate(&self, token: &str) -> Result<Option<Principal>> {
        let hash = hash(token);
        if let Some(principal) = self.tokens.get(&hash) {
            return Ok(Some(principal));
        }
        let row: Option<(AccountId, Option<String>, Option<AgentId>)> =
            on_pool!(self, |pool| sqlx::query_as(
                "SELECT account_id, member_id, agent_id FROM tokens WHERE hash = $1"
            )
            .bind(&hash)
            .fetch_optional(pool)
            .await)?;
        let principal = row.and_then(|(account_id, member, agent)| {
            let owner = match (member, agent) {
                (Some(member), None) => TokenOwner::Member(member),
                (None, Some(agent)) => TokenOwner::Agent(agent),
                _ => return None,
            };
            Some(Principal { account_id, owner })
        });
        if let Some(principal) = &principal {
            self.tokens.put(hash, principal.clone());
        }
        Ok(principal)
    }
}

/// Tokens recently seen valid, by hash, so that a busy client does not cost
/// a query per request. Only valid tokens are kept (a new token is found by
/// the query), each for [`TOKEN_CACHE_TTL`].
#[derive(Debug, Default)]
pub(crate) struct TokenCache {
    seen: std::sync::Mutex<std::collections::HashMap<String, (Principal, std::time::Instant)>>,
}

/// How long a token stays trusted without asking the database again.
const TOKEN_CACHE_TTL: std::time::Duration = std::time::Duration::from_secs(60);

/// The most tokens kept; past it the cache starts over.
const TOKEN_CACHE_SIZE: usize = 10_000;

impl TokenCache {
    fn get(&self, hash: &str) -> Option<Principal> {
        let seen = cinch_base::sync::lock(&self.seen);
        seen.get(hash)
            .filter(|(_, at)| at.elapsed() < TOKEN_CACHE_TTL)
            .map(|(principal, _)| principal.clone())
    }

    fn forget(&self, hash: &str) {
        cinch_base::sync::lock(&self.seen).remove(hash);
    }

    fn put(&self, hash: String, principal: Principal) {
        let mut seen = cinch_base::sync::lock(&self.seen);
        if seen.len() >= TOKEN_CACHE_SIZE {
            seen.clear();
        }
        seen.insert(hash, (principal, std::time::Instant::now()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tokens_are_stored_hashed_and_authenticate_their_owner() {
        let (store, _dir) = crate::test_store().await;
        let token = store.bootstrap().await.unwrap().unwrap();
        assert!(store.bootstrap().await.unwrap().is_none());
        let principal = store.authenticate(&token).await.unwrap().unwrap();
        assert!(matches!(principal.owner, TokenOwner::Member(_)));
        assert!(store.authenticate("cinch_nope").await.unwrap().is_none());
        let stored: Vec<(String,)> =
            on_pool!(store, |pool| sqlx::query_as("SELECT hash FROM tokens")
                .fetch_all(pool)
                .await)
            .unwrap();
        assert_eq!(stored, [(hash(&token),)]);

        let agent = store
            .create_token(&principal.account_id, TokenFor::Agent("ci"), None)
            .await
            .unwrap();
        let again = store
            .create_token(&principal.account_id, TokenFor::Agent("ci"), None)
            .await
            .unwrap();
        let (first, second) = (
            store.authenticate(&agent).await.unwrap().unwrap(),
            store.authenticate(&again).await.unwrap().unwrap(),
        );
        assert_eq!(first, second);
        assert!(matches!(first.owner, TokenOwner::Agent(_)));
    }
}
