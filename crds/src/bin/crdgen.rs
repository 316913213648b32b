//! Prints the OracleCapture CRD as YAML: `cargo run -p redoline-crds --bin crdgen > crds/oraclecaptures.redoline.io.yaml`.

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let yaml = match redoline_crds::crd_yaml() {
        Ok(yaml) => yaml,
        Err(err) => {
            eprintln!("crdgen: cannot render the CRD: {err}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(yaml.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("crdgen: cannot write the CRD: {err}");
            ExitCode::FAILURE
        }
    }
}
