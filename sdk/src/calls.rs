//! Tool calls in flight, so that each call's result pairs with its start
//! (most harnesses name only the call's id in its result).

use std::collections::BTreeMap;

use crate::{Event, ToolPhase, ToolUse};

/// What the host shows for a call: its tool and what it is about.
pub struct Call {
    /// The tool's name.
    pub name: String,
    /// Its command, path, pattern, URL, description or query.
    pub detail: Option<String>,
}

/// The calls started and not yet finished, by id (in id order, so that
/// closing them all gives the same events every time).
#[derive(Default)]
pub struct ToolCalls {
    open: BTreeMap<String, Call>,
}

impl ToolCalls {
    /// Whether the call `id` has started and not finished.
    pub fn is_open(&self, id: &str) -> bool {
        self.open.contains_key(id)
    }

    /// Ends every call still open with `phase`, in id order: for a turn that
    /// ended (or was cancelled) while the harness left calls unfinished.
    pub fn finish_all(&mut self, phase: ToolPhase, out: &mut Vec<Event>) {
        for (id, call) in std::mem::take(&mut self.open) {
            out.push(tool_use(Some(id), call, phase));
        }
    }

    /// A call was issued.
    pub fn start(&mut self, id: Option<String>, call: Call, out: &mut Vec<Event>) {
        if let Some(id) = &id {
            let kept = Call {
                name: call.name.clone(),
                detail: call.detail.clone(),
            };
            self.open.insert(id.clone(), kept);
        }
        out.push(tool_use(id, call, ToolPhase::Started));
    }

    /// A call's result came; `stated` is the call as the result describes it,
    /// when it does. A result whose start was never seen (some items only
    /// ever arrive completed) is started first, so the host always sees a
    /// call begin before it ends.
    pub fn finish(
        &mut self,
        id: Option<String>,
        stated: Option<Call>,
        phase: ToolPhase,
        out: &mut Vec<Event>,
    ) {
        let opened = id.as_deref().and_then(|id| self.open.remove(id));
        let was_open = opened.is_some();
        // Keep the started name so the host's line stays the same, but take a
        // detail the start did not know yet (a web search's query).
        let call = match (opened, stated) {
            (Some(opened), Some(stated)) => Call {
                name: opened.name,
                detail: stated.detail.or(opened.detail),
            },
            (Some(call), None) | (None, Some(call)) => call,
            (None, None) => Call {
                name: "tool".to_owned(),
                detail: None,
            },
        };
        if !was_open {
            let started = Call {
                name: call.name.clone(),
                detail: call.detail.clone(),
            };
            out.push(tool_use(id.clone(), started, ToolPhase::Started));
        }
        out.push(tool_use(id, call, phase));
    }
}

fn tool_use(id: Option<String>, call: Call, phase: ToolPhase) -> Event {
    Event::ToolUse(ToolUse {
        id,
        name: call.name,
        detail: call.detail,
        phase,
    })
}
