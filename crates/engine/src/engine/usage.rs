//! A turn's usage and cost: what its driver reported, as the turn's own
//! share, with a cost the harness reported or cinch estimates from the price
//! table it ships (`prices.toml`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::LazyLock;

use cinch_driver_sdk::Usage;
use serde::{Deserialize, Serialize};

use super::result::{CostSource, TurnUsage};
use crate::home::Home;
use crate::turn_dir::{read_json, write_json};

/// The price table, as shipped.
#[derive(Debug, Deserialize)]
struct PriceTable {
    /// What is particular about a harness's usage, by driver name.
    #[serde(default)]
    harness: BTreeMap<String, HarnessUsage>,
    /// Prices of groups of models.
    #[serde(default)]
    price: Vec<Price>,
}

/// What is particular about a harness's usage.
#[derive(Debug, Default, Deserialize)]
struct HarnessUsage {
    /// Its usage is a running total for its session, not the turn's own.
    #[serde(default)]
    running_total: bool,
}

/// The price of some models of one harness, in US dollars per million tokens.
#[derive(Debug, Deserialize)]
struct Price {
    harness: String,
    models: Vec<String>,
    input: f64,
    cached_input: f64,
    output: f64,
}

static TABLE: LazyLock<PriceTable> = LazyLock::new(|| {
    toml::from_str(include_str!("prices.toml")).expect("the shipped price table is valid TOML")
});

/// A session's running total as the harness last reported it, kept to take
/// the next turn's own share from the next total.
#[derive(Debug, Default, Clone, Copy, Serialize, Deserialize)]
struct RunningTotal {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cached_input_tokens: Option<u64>,
    cost_usd: Option<f64>,
}

impl From<Usage> for RunningTotal {
    fn from(usage: Usage) -> Self {
        Self {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cached_input_tokens: usage.cached_input_tokens,
            cost_usd: usage.cost_usd,
        }
    }
}

/// The turn of `harness` on `model` that resumed session `resumed` and
/// ended in session `session`, whose driver reported `reported`: its own
/// tokens and cost. For a harness that reports running totals, the total is
/// kept under cinch's home and the previous one (of the session resumed)
/// taken off.
pub(crate) fn of_turn(
    home: &Home,
    harness: &str,
    model: Option<&str>,
    resumed: Option<&str>,
    session: Option<&str>,
    reported: Option<Usage>,
) -> Option<TurnUsage> {
    let reported = reported?;
    let own = if reports_running_total(harness) {
        own_share(home, harness, resumed, session, reported.into())
    } else {
        reported.into()
    };
    let mut usage = TurnUsage {
        input_tokens: own.input_tokens,
        output_tokens: own.output_tokens,
        cached_input_tokens: own.cached_input_tokens,
        cost_usd: None,
        cost_source: None,
    };
    if let Some(cost) = own.cost_usd {
        usage.cost_usd = Some(cost);
        usage.cost_source = Some(CostSource::Reported);
    } else if let Some(cost) = model.and_then(|model| estimate(harness, model, &usage)) {
        usage.cost_usd = Some(cost);
        usage.cost_source = Some(CostSource::Estimated);
    }
    Some(usage)
}

fn reports_running_total(harness: &str) -> bool {
    TABLE
        .harness
        .get(harness)
        .is_some_and(|usage| usage.running_total)
}

/// cinch's estimate of what `usage` cost on `model`, when its table prices it.
fn estimate(harness: &str, model: &str, usage: &TurnUsage) -> Option<f64> {
    let price = price_of(harness, model)?;
    if usage.input_tokens.is_none() && usage.output_tokens.is_none() {
        return None;
    }
    let input = usage.input_tokens.unwrap_or(0);
    let cached = usage.cached_input_tokens.unwrap_or(0).min(input);
    let output = usage.output_tokens.unwrap_or(0);
    let dollars = (input - cached) as f64 * price.input
        + cached as f64 * price.cached_input
        + output as f64 * price.output;
    Some(dollars / 1_000_000.0)
}

/// The price of `model` (a dated id such as `claude-sonnet-4-5-20250929`
/// priced as its undated one).
fn price_of(harness: &str, model: &str) -> Option<&'static Price> {
    let undated = model
        .rsplit_once('-')
        .filter(|(_, date)| date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()))
        .map_or(model, |(stem, _)| stem);
    TABLE.price.iter().find(|price| {
        price.harness == harness && price.models.iter().any(|m| m == model || m == undated)
    })
}

/// The turn's own share of the running total `total`, which is then kept as
/// session `session`'s. A total smaller than the previous one starts afresh.
fn own_share(
    home: &Home,
    harness: &str,
    resumed: Option<&str>,
    session: Option<&str>,
    total: RunningTotal,
) -> RunningTotal {
    let previous: RunningTotal = resumed
        .and_then(|id| total_file(home, harness, id))
        .and_then(|path| read_json(&path).ok())
        .unwrap_or_default();
    if let Some(path) = session.and_then(|id| total_file(home, harness, id)) {
        let kept = path
            .parent()
            .map_or(Ok(()), crate::home::create_private_dir)
            .and_then(|()| write_json(&path, &total));
        if let Err(error) = kept {
            tracing::warn!("could not keep the session's running usage total: {error:#}");
        }
    }
    let minus = |now: Option<u64>, before: Option<u64>| match (now, before) {
        (Some(now), Some(before)) if now >= before => Some(now - before),
        (now, _) => now,
    };
    let fresh = [
        (total.input_tokens, previous.input_tokens),
        (total.output_tokens, previous.output_tokens),
        (total.cached_input_tokens, previous.cached_input_tokens),
    ]
    .iter()
    .all(|(now, before)| now.unwrap_or(0) >= before.unwrap_or(0));
    if !fresh {
        return total;
    }
    RunningTotal {
        input_tokens: minus(total.input_tokens, previous.input_tokens),
        output_tokens: minus(total.output_tokens, previous.output_tokens),
        cached_input_tokens: minus(total.cached_input_tokens, previous.cached_input_tokens),
        cost_usd: match (total.cost_usd, previous.cost_usd) {
            (Some(now), Some(before)) if now >= before => Some(now - before),
            (now, _) => now,
        },
    }
}

/// Where session `id`'s running total is kept; none for an id that is not
/// a plain file name (a harness's output names it).
fn total_file(home: &Home, harness: &str, id: &str) -> Option<PathBuf> {
    super::is_plain_session_id(id).then(|| home.root().join("usage").join(harness).join(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, cached: u64, output: u64) -> Usage {
        Usage {
            input_tokens: Some(input),
            output_tokens: Some(output),
            cached_input_tokens: Some(cached),
            cost_usd: None,
        }
    }

    #[test]
    fn the_shipped_table_prices_the_default_models() {
        for harness in ["claude", "codex", "gemini"] {
            assert!(TABLE.price.iter().any(|price| price.harness == harness));
        }
        assert!(reports_running_total("codex") && !reports_running_total("claude"));
        assert!(price_of("claude", "claude-sonnet-4-5-20250929").is_some());
        assert!(price_of("cursor", "auto").is_none());
    }

    #[test]
    fn estimates_and_reported_costs_are_told_apart() {
        let home = tempfile::tempdir().unwrap();
        let home = Home::open(home.path().to_path_buf()).unwrap();
        let estimated = of_turn(
            &home,
            "claude",
            Some("sonnet"),
            None,
            None,
            Some(usage(1_000_000, 0, 1_000_000)),
        )
        .unwrap();
        assert_eq!(estimated.cost_source, Some(CostSource::Estimated));
        assert!((estimated.cost_usd.unwrap() - 18.0).abs() < 1e-9);
        let reported = Usage {
            cost_usd: Some(0.25),
            ..usage(10, 0, 5)
        };
        let reported = of_turn(&home, "claude", Some("sonnet"), None, None, Some(reported));
        assert_eq!(reported.unwrap().cost_source, Some(CostSource::Reported));
        let unpriced = of_turn(
            &home,
            "cursor",
            Some("auto"),
            None,
            None,
            Some(usage(1, 0, 1)),
        );
        assert_eq!(unpriced.unwrap().cost_usd, None);
        assert_eq!(of_turn(&home, "claude", None, None, None, None), None);
    }
}
