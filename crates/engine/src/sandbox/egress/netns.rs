//! Puts the calling process in a network of its own whose only way out is
//! the egress proxy.
//!
//! Called in a single-threaded process about to exec the confined program
//! (a turn's CLI child, `cinch-helper sandboxed`). It:
//!
//! 1. forks the proxy's process, which stays in the host's network;
//! 2. enters a new network namespace (as root a plain one; otherwise inside
//!    a new user namespace that maps the caller's own uid and gid, so the
//!    program still runs as its user, with no capabilities once it execs);
//! 3. brings up its loopback and listens on 127.0.0.1:[`PROXY_PORT`] there;
//! 4. hands that listening socket to the proxy over a socket pair.
//!
//! The namespace has no other interface: a connection anywhere else, a
//! datagram, a DNS query finds no route. The proxy execs
//! `cinch-helper egress-proxy` and accepts on the socket it was handed: a
//! socket stays in the network it was made in, while what the proxy opens
//! itself is in the host's. It leaves once the confined process is gone,
//! and is in its process group and cgroup, so a turn's supervisor ends it
//! with the rest of the turn.
//!
//! Why the proxy is the turn's own rather than the server's: the turn's
//! supervisor outlives a restarted server, and so must the turn's way out;
//! a proxy in `cinch serve` would cut every running turn off while it
//! restarts. The proxy holds only its own socket and records refusals in a
//! file the server reads (see [`super::RefusalFeed`]).

use std::ffi::CString;
use std::io::Error;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};

use super::{Egress, PROXY_PORT, proxy};

/// The subcommand the proxy's process runs: `egress-proxy EGRESS_JSON PARENT_PID`.
pub const EGRESS_PROXY: &str = "egress-proxy";

/// Confines the calling process's network to the proxy; see the module.
/// The process must have a single thread.
pub fn confine(egress: &Egress) -> std::io::Result<()> {
    let config = CString::new(serde_json::to_string(egress).expect("plain data"))
        .map_err(|_| Error::other("the egress settings hold a NUL"))?;
    let (ours, theirs) = socket_pair()?;
    let parent = CString::new(std::process::id().to_string()).expect("digits");
    // SAFETY: the caller is single-threaded, so the child may do anything.
    let proxy_pid = unsafe { libc::fork() };
    if proxy_pid == -1 {
        return Err(Error::last_os_error());
    }
    if proxy_pid == 0 {
        drop(ours);
        let error = become_proxy(&theirs, &config, &parent);
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!("cinch egress proxy: {error}\n").as_bytes(),
        );
        // SAFETY: the forked child leaves without running the parent's exit handlers.
        unsafe { libc::_exit(127) };
    }
    drop(theirs);
    enter_namespace()?;
    bring_up_loopback()?;
    let listener = std::net::TcpListener::bind(("127.0.0.1", PROXY_PORT))?;
    send_fd(&ours, listener.as_raw_fd())
}

/// The proxy's side of the fork: waits for the listening socket, then
/// execs the proxy program with it on [`proxy::LISTENER_FD`], telling it
/// the process it serves (`parent`).
fn become_proxy(from: &OwnedFd, config: &CString, parent: &CString) -> Error {
    let listener = match receive_fd(from) {
        Ok(fd) => fd,
        Err(error) => return error,
    };
    // SAFETY: plain syscalls on descriptors this process owns; stdout is
    // the confined program's (a turn's raw log) and must not get a byte.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
        }
        // dup2 onto itself keeps close-on-exec, hence the fcntl.
        if libc::dup2(listener.as_raw_fd(), proxy::LISTENER_FD) == -1
            || libc::fcntl(proxy::LISTENER_FD, libc::F_SETFD, 0) == -1
        {
            return Error::last_os_error();
        }
    }
    let program = c"/proc/self/exe";
    let argv = [
        c"cinch-helper".as_ptr(),
        c"egress-proxy".as_ptr(),
        config.as_ptr(),
        parent.as_ptr(),
        std::ptr::null(),
    ];
    let envp = [std::ptr::null()];
    // SAFETY: NUL-terminated arrays of NUL-terminated strings that outlive the call.
    unsafe { libc::execve(program.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
    Error::last_os_error()
}

/// Whether this process may make the network [`confine`] makes: tried in a
/// child, which makes it and leaves (only system calls after the fork, so
/// a process with threads may ask).
pub fn available() -> bool {
    // SAFETY: the child makes only system calls, then _exits.
    let child = unsafe { libc::fork() };
    match child {
        -1 => false,
        0 => {
            // SAFETY: plain system calls in the forked child.
            unsafe {
                let plain = libc::geteuid() == 0 && libc::unshare(libc::CLONE_NEWNET) == 0;
                let made = plain || libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) == 0;
                libc::_exit(if made { 0 } else { 1 })
            }
        }
        pid => crate::sandbox::namespace::exited_cleanly(pid),
    }
}

/// A new network namespace: a plain one when the process may make one (root),
/// else one inside a new user namespace mapping only its own ids.
fn enter_namespace() -> std::io::Result<()> {
    // SAFETY: plain syscalls.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    // SAFETY: unshare takes flags only.
    if uid == 0 && unsafe { libc::unshare(libc::CLONE_NEWNET) } == 0 {
        return Ok(());
    }
    // SAFETY: as above; the caller is single-threaded, as a user namespace needs.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) } == -1 {
        let error = Error::last_os_error();
        return Err(Error::new(
            error.kind(),
            format!(
                "making a network namespace: {error} (the kernel must allow user namespaces: sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces)"
            ),
        ));
    }
    crate::sandbox::namespace::map_own_ids(uid, gid)
}

/// Sets `lo` up (`ip link set lo up`).
fn bring_up_loopback() -> std::io::Result<()> {
    // SAFETY: a datagram socket only to talk to the kernel, closed below.
    let socket = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if socket == -1 {
        return Err(Error::last_os_error());
    }
    // SAFETY: just made, owned here.
    let socket = unsafe { OwnedFd::from_raw_fd(socket) };
    // SAFETY: ifreq is plain data; zeroed is a valid value.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    // SAFETY: the ioctls read and write the ifreq passed.
    unsafe {
        if libc::ioctl(socket.as_raw_fd(), libc::SIOCGIFFLAGS, &mut request) == -1 {
            return Err(Error::last_os_error());
        }
        request.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        if libc::ioctl(socket.as_raw_fd(), libc::SIOCSIFFLAGS, &request) == -1 {
            return Err(Error::last_os_error());
        }
    }
    Ok(())
}

fn socket_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: socketpair writes two descriptors into the array.
    let made = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if made == -1 {
        return Err(Error::last_os_error());
    }
    // SAFETY: both just made, owned here.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Room for one descriptor's control message.
#[repr(C)]
union Control {
    bytes: [u8; 64],
    _align: libc::cmsghdr,
}

fn send_fd(over: &OwnedFd, fd: RawFd) -> std::io::Result<()> {
    let mut byte = [0u8; 1];
    let mut io = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut control = Control { bytes: [0; 64] };
    // SAFETY: msghdr is plain data; the CMSG macros stay within `control`,
    // which has room for one descriptor.
    unsafe {
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &mut io;
        message.msg_iovlen = 1;
        message.msg_control = control.bytes.as_mut_ptr().cast();
        message.msg_controllen = libc::CMSG_SPACE(size_of::<RawFd>() as u32) as _;
        let header = libc::CMSG_FIRSTHDR(&message);
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<RawFd>(), fd);
        if libc::sendmsg(over.as_raw_fd(), &message, 0) == -1 {
            return Err(Error::last_os_error());
        }
    }
    Ok(())
}

fn receive_fd(over: &OwnedFd) -> std::io::Result<OwnedFd> {
    let mut byte = [0u8; 1];
    let mut io = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut control = Control { bytes: [0; 64] };
    // SAFETY: as in `send_fd`; the kernel fills at most `msg_controllen`.
    unsafe {
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &mut io;
        message.msg_iovlen = 1;
        message.msg_control = control.bytes.as_mut_ptr().cast();
        message.msg_controllen = control.bytes.len() as _;
        let received = libc::recvmsg(over.as_raw_fd(), &mut message, libc::MSG_CMSG_CLOEXEC);
        if received == -1 {
            return Err(Error::last_os_error());
        }
        let header = libc::CMSG_FIRSTHDR(&message);
        if header.is_null()
            || (*header).cmsg_level != libc::SOL_SOCKET
            || (*header).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(Error::other(
                "the confined process went before handing over its socket",
            ));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(header).cast::<RawFd>());
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

/// How often the proxy looks whether the process it serves is still there.
const PARENT_CHECK: std::time::Duration = std::time::Duration::from_millis(250);

/// `egress-proxy EGRESS_JSON PARENT_PID`: runs the proxy on the socket it
/// was handed, until its parent, the process it serves, is gone. Returns
/// only on failure.
pub fn run_proxy(config: &std::ffi::OsStr, parent: &std::ffi::OsStr) -> anyhow::Error {
    let Some(parent) = parent.to_str().and_then(|pid| pid.parse::<i32>().ok()) else {
        return anyhow::anyhow!("the parent's pid is not a number");
    };
    // Not a parent death signal: the dying parent sends it, from inside its
    // Landlock domain, which may signal nothing outside (measured: the proxy
    // outlived the setup command it served, holding its output open). The
    // proxy looks for itself, and leaves once it has another parent.
    std::thread::spawn(move || {
        loop {
            // SAFETY: plain syscall.
            if unsafe { libc::getppid() } != parent {
                std::process::exit(0);
            }
            std::thread::sleep(PARENT_CHECK);
        }
    });
    let Some(config) = config.to_str() else {
        return anyhow::anyhow!("the egress settings are not UTF-8 JSON");
    };
    match serde_json::from_str::<Egress>(config) {
        Ok(egress) => proxy::serve(&egress),
        Err(error) => anyhow::anyhow!("reading the egress settings: {error}"),
    }
}
