//! Prints the OracleCapture reference (Markdown) generated from the CRD schema:
//! `cargo run -p redoline-crds --bin refgen > docs/reference.md` (`make docs`).

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let text = redoline_crds::reference::markdown(&redoline_crds::crd());
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("refgen: cannot write the reference: {err}");
            ExitCode::FAILURE
        }
    }
}
