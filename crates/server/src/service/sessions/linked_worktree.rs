//! Linking a new work tree to a repository in a time that does not grow with
//! the work trees it has. `git worktree add` reads every linked work tree of
//! the repository (its folder, HEAD and branch, several times over) before it
//! adds one: with 1,000 sessions in one repository an add made 64,000 system
//! calls and took 100-250 ms, one add at a time. Here the files that
//! gitrepository-layout(5) documents for a linked work tree are written
//! directly (`worktrees/<id>/{gitdir,commondir,HEAD,locked}` and the work
//! tree's `.git` file); git itself makes the branch as it checks it out.
//!
//! cinch writes these with its own rights, into a git folder that agents
//! write too (they commit from their work trees): a symbolic link planted
//! there could send the writes anywhere. So every write goes through folder
//! descriptors opened without following links, and each file is made new,
//! never opened through a link or over one that is there: whatever stands in
//! the way is an error, and the caller lets git do the work instead.

use std::ffi::{CStr, CString};
use std::fs::{self, File};
use std::io::{self, ErrorKind, Write as _};
use std::os::fd::{AsFd as _, AsRawFd as _, BorrowedFd, FromRawFd as _, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

/// The repository's own git folder, where its `worktrees/` are kept, when a
/// work tree can be linked to it here: a `.git` folder or a bare
/// repository. `None` otherwise (its `.git` is a file, or it keeps settings
/// per work tree, which `git worktree add` copies into a new one): those
/// are left to git.
pub(super) fn common_dir(repository: &Path) -> Option<PathBuf> {
    let dot_git = repository.join(".git");
    let common = if dot_git.is_dir() {
        dot_git
    } else if repository.join("HEAD").is_file() && repository.join("objects").is_dir() {
        repository.to_path_buf()
    } else {
        return None;
    };
    let config = fs::read(common.join("config")).ok()?;
    let per_worktree = config
        .to_ascii_lowercase()
        .windows(b"worktreeconfig".len())
        .any(|window| window == b"worktreeconfig");
    (!per_worktree).then_some(common)
}

/// Links `dir`, an empty folder, as a work tree of the repository whose git
/// folder is `common` (see [`common_dir`]), its HEAD on `branch`, which
/// need not exist yet. No file is checked out. Fails, having written
/// nothing, where a symbolic link or anything but a folder stands where a
/// folder belongs.
pub(super) fn link(common: &Path, dir: &Path, branch: &str) -> Result<Linked> {
    let dir = dir
        .canonicalize()
        .with_context(|| format!("finding {}", dir.display()))?;
    let common = common
        .canonicalize()
        .with_context(|| format!("finding {}", common.display()))?;
    // Both are canonical: no link on the way. The repository's own folder is
    // not the agents' to change, so none can be put there since.
    let common_fd = open_folder(None, &path_name(&common)).with_context(|| opening(&common))?;
    let worktrees = common.join("worktrees");
    let worktrees_fd = make_folder(common_fd.as_fd(), c"worktrees")
        .or_else(|error| match error.kind() {
            ErrorKind::AlreadyExists => Ok(()),
            _ => Err(error),
        })
        .and_then(|()| open_folder(Some(common_fd.as_fd()), c"worktrees"))
        .with_context(|| opening(&worktrees))?;
    let (id, admin_fd) = reserve(worktrees_fd.as_fd(), &id_of(&dir))?;
    let admin = worktrees.join(&id);
    let work_tree_fd = open_folder(None, &path_name(&dir)).with_context(|| opening(&dir))?;
    let mut linked = Linked {
        worktrees_fd,
        id,
        admin_fd,
        work_tree_fd,
        written: Written::default(),
    };
    let result = write_link(
        &mut linked.written,
        linked.admin_fd.as_fd(),
        linked.work_tree_fd.as_fd(),
        &admin,
        &dir,
        branch,
    );
    match result {
        Ok(()) => Ok(linked),
        Err(error) => {
            linked.take_back();
            Err(error).with_context(|| format!("linking the work tree {}", dir.display()))
        }
    }
}

/// A work tree [`link`] made, with the folders it wrote in.
pub(super) struct Linked {
    worktrees_fd: OwnedFd,
    id: String,
    admin_fd: OwnedFd,
    work_tree_fd: OwnedFd,
    written: Written,
}

impl Linked {
    /// Removes the link's files and its administrative folder, when git
    /// could not check out its branch, so that `git worktree add` can make
    /// the work tree in the same folder. Tells whether it is all gone: git
    /// may have left files of its own in the folder, which is then kept.
    pub(super) fn take_back(self) -> bool {
        self.written
            .undo(self.admin_fd.as_fd(), self.work_tree_fd.as_fd());
        remove_checked(
            self.worktrees_fd.as_fd(),
            &name(&self.id),
            libc::AT_REMOVEDIR,
        )
        .is_ok()
    }
}

/// The context of a folder's opening that failed.
fn opening(path: &Path) -> String {
    format!(
        "opening the folder {} without following links",
        path.display()
    )
}

/// The files of the link, locked while they are written as git does, so
/// that a `git worktree prune` meanwhile leaves them.
fn write_link(
    written: &mut Written,
    admin_fd: BorrowedFd<'_>,
    work_tree_fd: BorrowedFd<'_>,
    admin: &Path,
    dir: &Path,
    branch: &str,
) -> io::Result<()> {
    written.admin(admin_fd, c"locked", b"initializing")?;
    written.admin(admin_fd, c"commondir", b"../..\n")?;
    let head = format!("ref: refs/heads/{branch}\n");
    written.admin(admin_fd, c"HEAD", head.as_bytes())?;
    create_new(
        work_tree_fd,
        c".git",
        &line(&[b"gitdir: ", admin.as_os_str().as_bytes()]),
    )?;
    written.work_tree_git = true;
    let gitdir = line(&[dir.join(".git").as_os_str().as_bytes()]);
    written.admin(admin_fd, c"gitdir", &gitdir)?;
    remove_checked(admin_fd, c"locked", 0)?;
    written.admin_files.retain(|file| *file != c"locked");
    Ok(())
}

/// What [`write_link`] made, to take back when it fails half-way.
#[derive(Default)]
struct Written {
    admin_files: Vec<&'static CStr>,
    work_tree_git: bool,
}

impl Written {
    fn admin(
        &mut self,
        admin_fd: BorrowedFd<'_>,
        file: &'static CStr,
        bytes: &[u8],
    ) -> io::Result<()> {
        create_new(admin_fd, file, bytes)?;
        self.admin_files.push(file);
        Ok(())
    }

    fn undo(&self, admin_fd: BorrowedFd<'_>, work_tree_fd: BorrowedFd<'_>) {
        for file in &self.admin_files {
            remove(admin_fd, file, 0);
        }
        if self.work_tree_git {
            remove(work_tree_fd, c".git", 0);
        }
    }
}

/// `parts` joined, with a newline.
fn line(parts: &[&[u8]]) -> Vec<u8> {
    let mut bytes = parts.concat();
    bytes.push(b'\n');
    bytes
}

/// The work tree's id as git names it: its folder's name, with what a ref
/// name may not hold replaced.
fn id_of(dir: &Path) -> String {
    let name: String = dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' => c,
            _ => '-',
        })
        .collect();
    if name.is_empty() {
        "worktree".to_owned()
    } else {
        name
    }
}

/// Makes the administrative folder `worktrees/<id>`, or `<id>1`, `<id>2`…
/// when taken (as git does), and returns its name, opened.
fn reserve(worktrees_fd: BorrowedFd<'_>, id: &str) -> Result<(String, OwnedFd)> {
    let mut taken = 0u32;
    loop {
        let id = match taken {
            0 => id.to_owned(),
            n => format!("{id}{n}"),
        };
        let c_id = name(&id);
        match make_folder(worktrees_fd, &c_id) {
            Ok(()) => {
                let opened = open_folder(Some(worktrees_fd), &c_id);
                return match opened {
                    Ok(fd) => Ok((id, fd)),
                    Err(error) => {
                        remove(worktrees_fd, &c_id, libc::AT_REMOVEDIR);
                        Err(error).with_context(|| format!("opening worktrees/{id}"))
                    }
                };
            }
            Err(error) if error.kind() == ErrorKind::AlreadyExists => taken += 1,
            Err(error) => {
                return Err(error).with_context(|| format!("creating worktrees/{id}"));
            }
        }
    }
}

/// An id made of the characters [`id_of`] keeps, as the kernel takes it.
fn name(id: &str) -> CString {
    CString::new(id).expect("an id holds no NUL")
}

/// A canonical path as the kernel takes it.
fn path_name(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).expect("a canonical path holds no NUL")
}

/// Opens the folder `name` in `parent` (the working folder when `None`),
/// failing where it is a symbolic link or not a folder.
fn open_folder(parent: Option<BorrowedFd<'_>>, name: &CStr) -> io::Result<OwnedFd> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: `name` is a NUL-terminated string and `parent` an open
    // descriptor for the call's length.
    let fd = unsafe { libc::openat(raw(parent), name.as_ptr(), flags) };
    owned(fd)
}

/// Makes the folder `name` in `parent`, where nothing stands of that name.
fn make_folder(parent: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    // SAFETY: as in `open_folder`.
    let made = unsafe { libc::mkdirat(parent.as_raw_fd(), name.as_ptr(), 0o777) };
    if made == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Writes `bytes` into the file `name`, made new in `folder`; fails where
/// anything (a link included) has that name already.
fn create_new(folder: BorrowedFd<'_>, name: &CStr, bytes: &[u8]) -> io::Result<()> {
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: as in `open_folder`.
    let fd = unsafe { libc::openat(folder.as_raw_fd(), name.as_ptr(), flags, 0o644) };
    File::from(owned(fd)?).write_all(bytes)
}

/// Removes the entry `name` of `folder` (never what a link leads to).
fn remove_checked(folder: BorrowedFd<'_>, name: &CStr, flags: libc::c_int) -> io::Result<()> {
    // SAFETY: as in `open_folder`.
    let removed = unsafe { libc::unlinkat(folder.as_raw_fd(), name.as_ptr(), flags) };
    if removed == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// [`remove_checked`] when taking back a failed link: what cannot be
/// removed is left to `git worktree prune`.
fn remove(folder: BorrowedFd<'_>, name: &CStr, flags: libc::c_int) {
    let _ = remove_checked(folder, name, flags);
}

/// `fd`, or the working folder's stand-in for calls that take a path.
fn raw(fd: Option<BorrowedFd<'_>>) -> RawFd {
    fd.map_or(libc::AT_FDCWD, |fd| fd.as_raw_fd())
}

/// The descriptor a call returned, or its error.
fn owned(fd: RawFd) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
