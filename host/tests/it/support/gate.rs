//! One gate for the tests that load the machine or measure time, in the one
//! test binary where every file's tests run beside each other.
//!
//! A test takes a [`Permit`] for as long as it runs its heavy part: a real
//! agent or CLI, a browser or a compiler ([`Load::Agent`], one share of
//! [`SHARES`]), or a timing it asserts or a crowd of turns
//! ([`Load::Machine`], every share: nothing else that holds a permit runs
//! beside it). Tests that take no permit run as libtest schedules them.

use std::sync::{Condvar, Mutex, MutexGuard};

/// How many agents run at once. A real agent is a node process or two, busy for seconds at a
/// time: with four tests at once beside the nine agents of real_acp's 500 test, on 2 cores,
/// claude-acp had not called the model after 60 s and opencode had not asked for approval
/// after 240 s.
pub const SHARES: usize = 3;

/// What a test's heavy part costs the machine.
#[derive(Clone, Copy, Debug)]
pub enum Load {
    /// One real agent, CLI, browser or compiler: seconds of a core at a time.
    Agent,
    /// The whole machine: a test that asserts how long something took, or
    /// starts many agents or turns at once.
    Machine,
}

impl Load {
    fn shares(self) -> usize {
        match self {
            Load::Agent => 1,
            Load::Machine => SHARES,
        }
    }
}

/// Shares of the machine, [`SHARES`] in all.
struct Gate {
    shares: Mutex<Shares>,
    freed: Condvar,
}

/// The free shares, and how many [`Load::Machine`] tests wait for all of
/// them: while one waits, no [`Load::Agent`] test starts, or a stream of
/// them would keep it waiting until the end of the run.
struct Shares {
    free: usize,
    machines_waiting: usize,
}

/// The gate of every test in this binary.
static GATE: Gate = Gate::new();

/// Waits until `load`'s shares of the binary's gate are free and takes them.
pub fn hold(load: Load) -> Permit<'static> {
    GATE.hold(load)
}

/// A test's shares of the machine, given back when dropped.
#[must_use = "the permit holds its shares only until it is dropped"]
pub struct Permit<'gate> {
    gate: &'gate Gate,
    shares: usize,
}

impl Gate {
    const fn new() -> Self {
        Gate {
            shares: Mutex::new(Shares {
                free: SHARES,
                machines_waiting: 0,
            }),
            freed: Condvar::new(),
        }
    }

    /// Waits until `load`'s shares are free and takes them.
    fn hold(&self, load: Load) -> Permit<'_> {
        let wanted = load.shares();
        let machine = matches!(load, Load::Machine);
        let mut shares = self.lock();
        if machine {
            shares.machines_waiting += 1;
        }
        while shares.free < wanted || (!machine && shares.machines_waiting > 0) {
            shares = self
                .freed
                .wait(shares)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        if machine {
            shares.machines_waiting -= 1;
        }
        shares.free -= wanted;
        Permit {
            gate: self,
            shares: wanted,
        }
    }

    /// The counts, whole even after a test panicked holding the lock: each
    /// change to them is one assignment.
    fn lock(&self) -> MutexGuard<'_, Shares> {
        self.shares
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.gate.lock().free += self.shares;
        self.gate.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::{Gate, Load};

    /// Takes `load` on `gate` in a thread of its own, which says so on the
    /// channel returned and gives it back.
    fn taken_soon(gate: &'static Gate, load: Load) -> mpsc::Receiver<()> {
        let (taken, soon) = mpsc::channel();
        std::thread::spawn(move || {
            let _permit = gate.hold(load);
            let _ = taken.send(());
        });
        soon
    }

    #[test]
    fn a_machine_permit_waits_for_every_agent_and_agents_wait_behind_it() {
        let gate: &'static Gate = Box::leak(Box::new(Gate::new()));
        let mut agents: Vec<_> = (0..super::SHARES).map(|_| gate.hold(Load::Agent)).collect();
        let machine = taken_soon(gate, Load::Machine);
        while gate.lock().machines_waiting == 0 {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(machine.recv_timeout(Duration::from_millis(200)).is_err());
        // An agent asking after the machine waits behind it, a share free or not.
        agents.pop();
        let late_agent = taken_soon(gate, Load::Agent);
        assert!(late_agent.recv_timeout(Duration::from_millis(200)).is_err());
        drop(agents);
        machine.recv_timeout(Duration::from_secs(10)).unwrap();
        late_agent.recv_timeout(Duration::from_secs(10)).unwrap();
    }
}
