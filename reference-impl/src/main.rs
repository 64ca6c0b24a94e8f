use std::process::ExitCode;

fn main() -> ExitCode {
    eprintln!("pallas: the command line is not built yet");
    ExitCode::from(2)
}
