//! Accounts: who a token is, the account it belongs to, with its usage,
//! its members, and its tokens (made, listed, revoked).

use super::ServiceError;
use cinch_store::{
    Account, AccountId, AgentId, Member, Page, Principal, Store, TokenInfo, TokenOwner, UsageTotals,
};

/// An account and the tokens and cost of all its turns.
#[derive(Debug)]
pub(crate) struct AccountWithUsage {
    /// The account.
    pub account: Account,
    /// Its usage to date.
    pub usage: UsageTotals,
}

/// The accounts service.
#[derive(Clone)]
pub(crate) struct Accounts {
    store: Store,
}

impl Accounts {
    /// Accounts kept in `store`.
    pub(crate) fn new(store: Store) -> Self {
        Self { store }
    }

    /// Who `token` is; none when it is not a valid token.
    pub(crate) async fn authenticate(
        &self,
        token: &str,
    ) -> Result<Option<Principal>, ServiceError> {
        Ok(self.store.authenticate(token).await?)
    }

    /// The account `id` with its usage to date; none when it is gone.
    pub(crate) async fn with_usage(
        &self,
        id: &AccountId,
    ) -> Result<Option<AccountWithUsage>, ServiceError> {
        let Some(account) = self.store.account(id).await? else {
            return Ok(None);
        };
        let (usage, _) = self.store.usage_report(id, None, None, None).await?;
        Ok(Some(AccountWithUsage { account, usage }))
    }

    /// A page of the account's members, oldest first.
    pub(crate) async fn members(
        &self,
        account_id: &AccountId,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Member>, ServiceError> {
        Ok(self.store.members(account_id, cursor, limit).await?)
    }

    /// A new token of the account's agent `agent_id`, or of `caller`
    /// itself when none is named, called `name`: its text (shown this once)
    /// and its listing.
    pub(crate) async fn issue_token(
        &self,
        caller: &Principal,
        agent_id: Option<&AgentId>,
        name: Option<&str>,
    ) -> Result<(String, TokenInfo), ServiceError> {
        let name = name
            .map(token_name)
            .transpose()
            .map_err(|problem| ServiceError::invalid_field("name", problem))?;
        let owner = match agent_id {
            None => caller.owner.clone(),
            Some(agent_id) => {
                self.store
                    .agent(&caller.account_id, agent_id)
                    .await?
                    .ok_or_else(|| {
                        ServiceError::invalid_field(
                            "agent_id",
                            "no agent of this account has that id",
                        )
                    })?;
                TokenOwner::Agent(agent_id.clone())
            }
        };
        Ok(self
            .store
            .issue_token(&caller.account_id, &owner, name)
            .await?)
    }

    /// The account's tokens, oldest first.
    pub(crate) async fn tokens(
        &self,
        account_id: &AccountId,
    ) -> Result<Vec<TokenInfo>, ServiceError> {
        Ok(self.store.tokens_of(account_id).await?)
    }

    /// Revokes the account's token `id`: the caller's own or an agent's
    /// (another member's token is that member's to revoke). `Ok(None)` when
    /// there is no such token.
    pub(crate) async fn revoke_token(
        &self,
        caller: &Principal,
        id: &str,
    ) -> Result<Option<TokenInfo>, TokenRefusal> {
        let tokens = self
            .store
            .tokens_of(&caller.account_id)
            .await
            .map_err(ServiceError::from)?;
        let Some(token) = tokens.into_iter().find(|token| token.id == id) else {
            return Ok(None);
        };
        if matches!(&token.owner, TokenOwner::Member(member) if caller.owner != TokenOwner::Member(member.clone()))
        {
            return Err(TokenRefusal::OthersToken);
        }
        Ok(self
            .store
            .revoke_token(&caller.account_id, id)
            .await
            .map_err(ServiceError::from)?)
    }
}

/// Why a token is not revoked.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TokenRefusal {
    /// It is another member's.
    #[error("that token is another member's: only they can revoke it")]
    OthersToken,
    /// The store failed.
    #[error(transparent)]
    Service(#[from] ServiceError),
}

/// The longest name a token may have, in characters.
const TOKEN_NAME_MAX: usize = 100;

/// `name` as a token's name: trimmed, not blank, one line of at most
/// [`TOKEN_NAME_MAX`] characters.
pub fn token_name(name: &str) -> Result<&str, &'static str> {
    let name = name.trim();
    let problem = if name.is_empty() {
        "a token's name cannot be blank: leave name out for a token without one"
    } else if name.chars().count() > TOKEN_NAME_MAX {
        "a token's name is at most 100 characters"
    } else if name.chars().any(char::is_control) {
        "a token's name is one line of text, without control characters"
    } else {
        return Ok(name);
    };
    Err(problem)
}
