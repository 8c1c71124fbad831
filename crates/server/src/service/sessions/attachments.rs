//! Attachments as notes of a turn's brief. Text goes in the brief itself; a
//! binary (base64 blob) attachment is written as a file under
//! [`FOLDER`] in the session's workspace, where its harness can read it (the
//! sandbox grants a turn its workspace), and the note names the file. The
//! folder holds a `.gitignore` of `*`, so neither checkpoints (tracked and
//! untracked-not-ignored files) nor cinch's commits on the branch take it.

use std::fs::{self, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use cinch_engine::engine::brief::Note;
use cinch_store::Attachment;

/// Where attachments' files go, relative to the workspace.
pub(crate) const FOLDER: &str = ".cinch/attachments";

/// A file name is cut to this many characters (before its extension is added).
const NAME_CHARS: usize = 80;

/// The attachment as a note of the brief: its source, then its text or the
/// file its binary content was written to in `workspace`; `None` when it
/// has no content.
pub(crate) fn note(attachment: Attachment, workspace: &Path) -> Option<Note> {
    let mut text = String::new();
    if let Some(uri) = &attachment.uri {
        text.push_str(&format!("Source: {uri}\n\n"));
    }
    let media_type = attachment.mime_type.as_deref().unwrap_or("unknown type");
    match (&attachment.text, &attachment.blob) {
        (Some(body), _) => text.push_str(body),
        (None, Some(blob)) => match write_blob(workspace, &attachment, blob) {
            Ok((path, bytes)) => text.push_str(&format!(
                "The content ({media_type}, {bytes} bytes) is in the file {}; read it from there.",
                path.display()
            )),
            Err(error) => {
                tracing::warn!(attachment = %attachment.id, "could not write an attachment's file: {error}");
                text.push_str(&format!(
                    "The content ({media_type}) could not be given: {error}."
                ));
            }
        },
        (None, None) => return None,
    }
    Some(Note {
        name: attachment.name,
        text,
    })
}

/// Decodes `blob` and writes it to the attachment's file: its path and size.
fn write_blob(
    workspace: &Path,
    attachment: &Attachment,
    blob: &str,
) -> Result<(PathBuf, usize), String> {
    let bytes = decode_base64(blob).ok_or("its blob is not valid base64")?;
    let folder = folder(workspace)
        .map_err(|error| format!("cinch could not make {FOLDER} in the workspace ({error})"))?;
    let path = folder.join(file_name(attachment));
    write_private(&path, &bytes)
        .map_err(|error| format!("cinch could not write {} ({error})", path.display()))?;
    Ok((path, bytes.len()))
}

/// The attachments' folder in `workspace`, made when missing, with its
/// `.gitignore`. Each folder on the way must be a real folder: a symbolic
/// link the agent left there could point cinch's writes outside the
/// workspace.
fn folder(workspace: &Path) -> io::Result<PathBuf> {
    let mut dir = workspace.to_path_buf();
    for part in Path::new(FOLDER).components() {
        dir.push(part);
        match fs::create_dir(&dir) {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(error),
        }
        if !fs::symlink_metadata(&dir)?.is_dir() {
            return Err(io::Error::other(format!(
                "{} is not a folder",
                dir.display()
            )));
        }
    }
    write_private(
        &dir.join(".gitignore"),
        b"# cinch: attachments for the agent, never committed\n*\n",
    )?;
    Ok(dir)
}

/// Writes `bytes` to `path`, readable by cinch's user alone, never through
/// a symbolic link.
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    file.write_all(bytes)
}

/// `<attachment id>-<its name>`, the name kept to letters, digits, `.`, `-`
/// and `_`, with an extension for its media type when it has none (agents
/// tell an image by its extension).
fn file_name(attachment: &Attachment) -> String {
    let name: String = attachment
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '-'
            }
        })
        .take(NAME_CHARS)
        .collect();
    let name = name.trim_matches(['.', '-']);
    let name = if name.is_empty() { "attachment" } else { name };
    let extension = attachment
        .mime_type
        .as_deref()
        .and_then(extension_for)
        .filter(|_| !name.contains('.'));
    match extension {
        Some(extension) => format!("{}-{name}.{extension}", attachment.id),
        None => format!("{}-{name}", attachment.id),
    }
}

/// The usual file extension of a media type, for the common ones.
fn extension_for(media_type: &str) -> Option<&'static str> {
    let essence = media_type.split(';').next()?.trim().to_ascii_lowercase();
    Some(match essence.as_str() {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "application/pdf" => "pdf",
        "application/json" => "json",
        "application/zip" => "zip",
        "application/gzip" => "gz",
        "text/plain" => "txt",
        "text/markdown" => "md",
        "text/csv" => "csv",
        "text/html" => "html",
        _ => return None,
    })
}

/// Standard base64 (padding optional) to bytes; `None` for anything else.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    let mut bytes = Vec::with_capacity(text.len() / 4 * 3 + 2);
    let mut bits: u32 = 0;
    let mut count = 0;
    for c in text.bytes() {
        let value = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(value);
        count += 6;
        if count >= 8 {
            count -= 8;
            bytes.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    // One character alone cannot end a group: at least 8 bits are needed.
    (count < 6).then_some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cinch_store::AttachmentStatus;

    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(decode_base64("").unwrap(), b"");
        assert_eq!(decode_base64("Zg==").unwrap(), b"f");
        assert_eq!(decode_base64("Zm8=").unwrap(), b"fo");
        assert_eq!(decode_base64("Zm9v").unwrap(), b"foo");
        assert_eq!(decode_base64("Zm9vYg").unwrap(), b"foob");
        assert_eq!(decode_base64("AP8A/w==").unwrap(), [0, 255, 0, 255]);
        assert_eq!(decode_base64("Z"), None);
        assert_eq!(decode_base64("Zm9v!"), None);
    }

    fn attachment(name: &str, mime_type: Option<&str>) -> Attachment {
        Attachment {
            id: "att_1".to_owned().into(),
            task_id: "task_1".to_owned().into(),
            name: name.into(),
            uri: None,
            mime_type: mime_type.map(str::to_owned),
            text: None,
            blob: Some("iVBORw0KGgo=".into()),
            status: AttachmentStatus::Ready,
            error: None,
            created_at: "2026-01-01T00:00:00.000Z".parse().unwrap(),
        }
    }

    #[test]
    fn file_names_stay_in_the_folder_and_get_an_extension() {
        assert_eq!(
            file_name(&attachment("../../etc/passwd", None)),
            "att_1-etc-passwd"
        );
        assert_eq!(
            file_name(&attachment("Login screen", Some("image/png"))),
            "att_1-Login-screen.png"
        );
        assert_eq!(
            file_name(&attachment("trace.json", Some("application/json"))),
            "att_1-trace.json"
        );
        assert_eq!(file_name(&attachment("…", None)), "att_1-attachment");
    }

    #[test]
    fn a_symbolic_link_in_the_way_is_refused() {
        let workspace = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), workspace.path().join(".cinch")).unwrap();
        let note = note(attachment("shot", Some("image/png")), workspace.path()).unwrap();
        assert!(note.text.contains("could not be given"), "{}", note.text);
        assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }
}
