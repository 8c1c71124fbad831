//! Claude's questions to the user: its `AskUserQuestion` tool asks through
//! the same `can_use_tool` control request as any tool. It is reported as a
//! permission request of kind `question` (the first question as its title,
//! every question with its options as its input, the first question's
//! options as choices), and the host's answer goes back the way the Claude
//! Agent SDK gives it: the tool allowed with its input plus `answers`, each
//! question's text mapped to the answer.

use cinch_driver_sdk::PermissionRequest;
use cinch_driver_sdk::serde_json::{Map, Value as Json};

/// The tool's name.
pub(crate) const TOOL: &str = "AskUserQuestion";

/// The tool's refusal when nobody answered (a deadline, a deny).
pub(crate) const UNANSWERED: &str = "The user did not answer the question.";

/// The question of control request `key` with tool input `input`; none when
/// the input holds no question (then it is asked about like any tool).
pub(crate) fn request(key: &str, input: &Json) -> Option<PermissionRequest> {
    let questions = input["questions"].as_array()?;
    let first = questions.first()?["question"].as_str()?;
    let mut text = Vec::new();
    for asked in questions {
        let Some(question) = asked["question"].as_str() else {
            continue;
        };
        text.push(question.to_owned());
        for option in labels(asked) {
            text.push(format!("- {option}"));
        }
    }
    let options = labels(&questions[0])
        .map(|label| cinch_driver_sdk::PermissionOption {
            id: label.to_owned(),
            name: label.to_owned(),
            kind: "answer".to_owned(),
        })
        .collect();
    Some(PermissionRequest {
        key: key.to_owned(),
        tool: TOOL.to_owned(),
        kind: "question".to_owned(),
        title: first.to_owned(),
        input: Some(text.join("\n")),
        options,
    })
}

/// The labels of a question's options.
fn labels(question: &Json) -> impl Iterator<Item = &str> {
    question["options"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|option| option["label"].as_str().or_else(|| option.as_str()))
}

/// The tool's input with the user's answer to each of its questions (one
/// answer: the host asks once, for all of them).
pub(crate) fn answered(input: &Json, answer: &str) -> Json {
    let mut answers = Map::new();
    for asked in input["questions"].as_array().into_iter().flatten() {
        if let Some(question) = asked["question"].as_str() {
            answers.insert(question.to_owned(), Json::String(answer.to_owned()));
        }
    }
    let mut updated = input.as_object().cloned().unwrap_or_default();
    updated.insert("answers".to_owned(), Json::Object(answers));
    Json::Object(updated)
}
