//! `pallas-minimal-bridge --bind ADDR --model-url URL [--model NAME]`.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let result = match pallas_minimal_bridge::Config::from_args(std::env::args().skip(1)) {
        Ok(config) => pallas_minimal_bridge::serve(config).await,
        Err(e) => Err(e),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pallas-minimal-bridge: {e}");
            ExitCode::FAILURE
        }
    }
}
