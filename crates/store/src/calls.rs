//! Code-task calls: which turn a call of a run is, and whose it is.

use super::readers::numbered;
use super::{AccountId, EnvironmentId, Result, Store, new_id, on_pool};
use cinch_base::timestamp::Timestamp;
use cinch_engine::engine::result::{CostSource, TurnResult};

/// A count as SQLite keeps integers.
fn saturating_i64(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// Keeps a call's result and its usage (`$1` the result, `$2` to `$4` the
/// call, `$5` to `$11` the usage's columns), unless it has one.
const KEEP_FIRST_RESULT: &str = "UPDATE code_task_calls SET result = $1, harness = $5, \
     model = $6, input_tokens = $7, output_tokens = $8, cached_input_tokens = $9, \
     cost_usd = $10, cost_source = $11 WHERE account_id = $2 AND run_id = $3 AND call_id = $4 \
     AND result IS NULL";

/// Records a call (`$1`) of run `$2`, the engine's turn `$3`, of account
/// `$4` in environment `$5`, started at `$6` on node `$7`.
const CREATE_CALL: &str = "INSERT INTO code_task_calls (call_id, run_id, turn_id, account_id, \
     environment_id, created_at, node_id) VALUES ($1, $2, $3, $4, $5, $6, $7)";

/// Counts a driver's unknown event type (`$3`) seen `$5` times by a CLI
/// (`$1` at version `$2`) at `$4`.
const TALLY_UNKNOWN_EVENT: &str = "INSERT INTO unknown_events (harness, cli_version, event_type, \
     first_seen, count) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (harness, cli_version, \
     event_type) DO UPDATE SET count = unknown_events.count + excluded.count";

/// Counts a turn of a CLI (`$1` at version `$2`) at `$3`.
const TALLY_CLI_VERSION: &str = "INSERT INTO cli_versions (harness, cli_version, first_seen, \
     last_seen, turns) VALUES ($1, $2, $3, $3, 1) ON CONFLICT (harness, cli_version) \
     DO UPDATE SET last_seen = excluded.last_seen, turns = cli_versions.turns + 1";

/// What keeping a call's result writes, owned, for a thread of its own.
struct KeptResult {
    json: String,
    account_id: AccountId,
    run_id: String,
    call_id: String,
    harness: String,
    model: Option<String>,
    input_tokens: Option<i64>,
    output_tokens: Option<i64>,
    cached_input_tokens: Option<i64>,
    cost_usd: Option<f64>,
    cost_source: Option<&'static str>,
    cli_version: String,
    unknown_events: Vec<(String, i64)>,
    /// When it was counted, as stored.
    at: String,
}

impl KeptResult {
    fn of(
        account_id: &AccountId,
        run_id: &str,
        call_id: &str,
        result: &TurnResult,
    ) -> Result<Self> {
        let usage = result.usage.unwrap_or_default();
        Ok(Self {
            json: serde_json::to_string(result)?,
            account_id: account_id.clone(),
            run_id: run_id.to_owned(),
            call_id: call_id.to_owned(),
            harness: result.harness.clone(),
            model: result.model.clone(),
            input_tokens: usage.input_tokens.map(saturating_i64),
            output_tokens: usage.output_tokens.map(saturating_i64),
            cached_input_tokens: usage.cached_input_tokens.map(saturating_i64),
            cost_usd: usage.cost_usd,
            cost_source: usage.cost_source.map(|source| match source {
                CostSource::Reported => "reported",
                CostSource::Estimated => "estimated",
            }),
            cli_version: result.cli_version.clone().unwrap_or_default(),
            unknown_events: result
                .unknown_events
                .iter()
                .map(|(event_type, count)| (event_type.clone(), saturating_i64(*count)))
                .collect(),
            at: Timestamp::now().to_string(),
        })
    }

    /// [`KEEP_FIRST_RESULT`]'s parameters, on the store's own connection.
    fn params(&self) -> [&dyn rusqlite::ToSql; 11] {
        [
            &self.json,
            &self.account_id,
            &self.run_id,
            &self.call_id,
            &self.harness,
            &self.model,
            &self.input_tokens,
            &self.output_tokens,
            &self.cached_input_tokens,
            &self.cost_usd,
            &self.cost_source,
        ]
    }

    /// The tallies' statements and parameters, on the store's own connection.
    fn tallies(&self) -> impl Iterator<Item = (&'static str, Vec<&dyn rusqlite::ToSql>)> + '_ {
        let version: Vec<&dyn rusqlite::ToSql> = vec![&self.harness, &self.cli_version, &self.at];
        self.unknown_events
            .iter()
            .map(|(event_type, count)| {
                let params: Vec<&dyn rusqlite::ToSql> = vec![
                    &self.harness,
                    &self.cli_version,
                    event_type,
                    &self.at,
                    count,
                ];
                (TALLY_UNKNOWN_EVENT, params)
            })
            .chain(std::iter::once((TALLY_CLI_VERSION, version)))
    }

    /// Says that a tally could not be counted: the result is kept anyway.
    fn uncounted(&self, error: &dyn std::fmt::Display) {
        tracing::warn!(harness = %self.harness, "could not count the turn's CLI version or unknown events: {error}");
    }
}

super::rows::row_struct! {
    /// One code-task call: a turn of the engine, in a run, of an account.
    #[derive(Debug, Clone)]
    pub struct Call {
        /// The call's id (the spec's `tool_call_id`).
        pub call_id: String,
        /// The run it belongs to.
        pub run_id: String,
        /// The engine's turn.
        pub turn_id: String,
        /// The account whose call it is.
        pub account_id: AccountId,
        /// The environment it ran in; empty for a session's turn without one.
        pub environment_id: String,
        /// When it started (RFC 3339).
        pub created_at: Timestamp,
        /// The node it ran on; none for a call from before nodes were recorded.
        pub node_id: Option<String>,
        /// Its result as JSON, once its turn has ended.
        result: Option<String>,
    }
}

impl Call {
    /// Its result, once its turn has ended and the server has seen it end.
    pub fn result(&self) -> Result<Option<TurnResult>> {
        Ok(self
            .result
            .as_deref()
            .map(serde_json::from_str)
            .transpose()?)
    }
}

impl Store {
    /// Records a call that has started as `turn_id` on `node`.
    pub async fn create_call(
        &self,
        account_id: &AccountId,
        run_id: &str,
        turn_id: &str,
        environment_id: Option<&EnvironmentId>,
        node: &str,
    ) -> Result<Call> {
        let call = Call {
            call_id: new_id("call")?,
            run_id: run_id.to_owned(),
            turn_id: turn_id.to_owned(),
            account_id: account_id.to_owned(),
            environment_id: environment_id.map_or_else(String::new, EnvironmentId::to_string),
            created_at: Timestamp::now(),
            node_id: Some(node.to_owned()),
            result: None,
        };
        if let Some(writer) = &self.writer {
            let params = vec![
                call.call_id.clone().into(),
                call.run_id.clone().into(),
                call.turn_id.clone().into(),
                call.account_id.as_str().to_owned().into(),
                call.environment_id.clone().into(),
                call.created_at.to_string().into(),
                node.to_owned().into(),
            ];
            writer.execute(CREATE_CALL, params).await?;
            return Ok(call);
        }
        on_pool!(self, |pool| sqlx::query(CREATE_CALL)
            .bind(&call.call_id)
            .bind(&call.run_id)
            .bind(&call.turn_id)
            .bind(&call.account_id)
            .bind(&call.environment_id)
            .bind(call.created_at)
            .bind(node)
            .execute(pool)
            .await
            .map(|done| done.rows_affected()))?;
        Ok(call)
    }

    /// The account's call `call_id` of run `run_id`.
    pub async fn call(
        &self,
        account_id: &AccountId,
        run_id: &str,
        call_id: &str,
    ) -> Result<Option<Call>> {
        Ok(on_pool!(self, |pool| {
            sqlx::query_as(
            "SELECT call_id, run_id, turn_id, account_id, environment_id, created_at, node_id, result \
             FROM code_task_calls WHERE account_id = $1 AND run_id = $2 AND call_id = $3",
        )
        .bind(account_id)
        .bind(run_id)
        .bind(call_id)
        .fetch_optional(pool)
        .await
        })?)
    }

    /// Keeps the result of the account's call `call_id` of run `run_id`,
    /// with its usage apart for rollups, and counts the event types its
    /// driver did not know in the server's seen-list (the first time only).
    /// The first result kept stands: keeping another changes nothing.
    pub async fn record_call_result(
        &self,
        account_id: &AccountId,
        run_id: &str,
        call_id: &str,
        result: &TurnResult,
    ) -> Result<()> {
        let kept = KeptResult::of(account_id, run_id, call_id, result)?;
        // A turn's end is kept by its follower and, should that fail, by its
        // session; a node taking a session over keeps its turn `interrupted`
        // before the lost node's follower can. The first keep is the one
        // whose update finds no result yet (the row's lock orders two on
        // PostgreSQL, the file's on SQLite), and only it counts. One
        // statement, where a transaction read the row first: at every turn's
        // end four round trips more.
        if let Some(writer) = &self.writer {
            return writer
                .write_off_task(move |transaction| {
                    let params = kept.params();
                    if transaction
                        .prepare_cached(KEEP_FIRST_RESULT)?
                        .execute(&*numbered(&params))?
                        == 0
                    {
                        return Ok(());
                    }
                    // A statement that fails in a SQLite transaction undoes
                    // itself only: the result stays kept.
                    for (sql, params) in kept.tallies() {
                        let counted = transaction
                            .prepare_cached(sql)
                            .and_then(|mut statement| statement.execute(&*numbered(&params)));
                        if let Err(error) = counted {
                            kept.uncounted(&error);
                        }
                    }
                    Ok(())
                })
                .await;
        }
        on_pool!(self, |pool| {
            let keep = sqlx::query(KEEP_FIRST_RESULT)
                .bind(&kept.json)
                .bind(&kept.account_id)
                .bind(&kept.run_id)
                .bind(&kept.call_id)
                .bind(&kept.harness)
                .bind(&kept.model)
                .bind(kept.input_tokens)
                .bind(kept.output_tokens)
                .bind(kept.cached_input_tokens)
                .bind(kept.cost_usd)
                .bind(kept.cost_source);
            if keep.execute(pool).await?.rows_affected() == 0 {
                return Ok(());
            }
            // Tallies beside the result, not part of it: counted after the
            // result is kept, and a failure to count loses no turn.
            let tallies = kept
                .unknown_events
                .iter()
                .map(|(event_type, count)| {
                    sqlx::query(TALLY_UNKNOWN_EVENT)
                        .bind(&kept.harness)
                        .bind(&kept.cli_version)
                        .bind(event_type)
                        .bind(&kept.at)
                        .bind(*count)
                })
                .chain(std::iter::once(
                    sqlx::query(TALLY_CLI_VERSION)
                        .bind(&kept.harness)
                        .bind(&kept.cli_version)
                        .bind(&kept.at),
                ));
            for tally in tallies {
                if let Err(error) = tally.execute(pool).await {
                    kept.uncounted(&error);
                }
            }
            Ok(())
        })
    }

    /// Whether the account has started a call in run `run_id`.
    pub async fn run_exists(&self, account_id: &AccountId, run_id: &str) -> Result<bool> {
        let row: Option<(String,)> = on_pool!(self, |pool| sqlx::query_as(
            "SELECT call_id FROM code_task_calls WHERE account_id = $1 AND run_id = $2 LIMIT 1",
        )
        .bind(account_id)
        .bind(run_id)
        .fetch_optional(pool)
        .await)?;
        Ok(row.is_some())
    }

    /// Whether another account has used run id `run_id` (a run is one account's).
    pub async fn run_taken_by_other(&self, account_id: &AccountId, run_id: &str) -> Result<bool> {
        let row: Option<(String,)> = on_pool!(self, |pool| {
            sqlx::query_as(
            "SELECT account_id FROM code_task_calls WHERE run_id = $1 AND account_id <> $2 LIMIT 1",
        )
        .bind(run_id)
        .bind(account_id)
        .fetch_optional(pool)
        .await
        })?;
        Ok(row.is_some())
    }
}
