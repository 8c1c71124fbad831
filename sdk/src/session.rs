//! The harness's session id, for harnesses that repeat it on every line.

use crate::Event;

/// The session id a turn has reported so far. The first one usually comes
/// with [`Event::Started`]; a line that names another one after that is
/// reported once, as [`Event::Session`].
#[derive(Debug, Default)]
pub struct SessionId(Option<String>);

impl SessionId {
    /// Takes `id` as the session's without reporting it: for the id that
    /// [`Event::Started`] carries.
    pub fn set(&mut self, id: Option<String>) {
        self.0 = id;
    }

    /// Notes the id a line names: a non-empty id other than the last one is
    /// reported.
    pub fn note(&mut self, id: Option<&str>, out: &mut Vec<Event>) {
        let Some(id) = id.filter(|id| !id.is_empty()) else {
            return;
        };
        if self.0.as_deref() != Some(id) {
            self.0 = Some(id.to_owned());
            out.push(Event::Session(id.to_owned()));
        }
    }

    /// The id last taken or reported.
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_each_new_id_once() {
        let mut session = SessionId::default();
        session.set(Some("a".into()));
        let mut out = Vec::new();
        session.note(Some("a"), &mut out);
        session.note(Some(""), &mut out);
        session.note(None, &mut out);
        session.note(Some("b"), &mut out);
        session.note(Some("b"), &mut out);
        assert_eq!(out, [Event::Session("b".into())]);
        assert_eq!(session.get(), Some("b"));
    }
}
