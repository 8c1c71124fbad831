//! Runs the mock model server by hand: `cinch-mock-model [--port N]`. Prints the base URL,
//! then one line per request on stderr, until killed.

use std::process::ExitCode;
use std::thread;
use std::time::Duration;

use cinch_mock_model::MockServer;

const USAGE: &str = "usage: cinch-mock-model [--port N]   (default: any free port)";

fn main() -> ExitCode {
    let mut port = 0u16;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => match args.next().and_then(|p| p.parse().ok()) {
                Some(p) => port = p,
                None => {
                    eprintln!("{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                println!("Scenarios: append /sc/<name> to the URL: s1 s2 s3 s3_500 s4 slow.");
                return ExitCode::SUCCESS;
            }
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let server = match MockServer::start_on(port, Vec::new()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cinch-mock-model: cannot listen on 127.0.0.1:{port}: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("{}", server.base_url());
    // The server keeps no log of its own; following its record is enough for a person watching.
    let mut shown = 0;
    loop {
        thread::sleep(Duration::from_millis(200));
        let requests = server.requests();
        for r in &requests[shown..] {
            let api = r.api.map(|a| format!(" {a:?}")).unwrap_or_default();
            let turn = r.turn.map(|t| format!(" turn={t}")).unwrap_or_default();
            let side = if r.side { " side" } else { "" };
            eprintln!("{} {} [{}]{api}{turn}{side}", r.method, r.path, r.scenario);
        }
        shown = requests.len();
    }
}
