//! The observation room: what a run observed, in one place. The runner fills it (a
//! [`StepRecord`] per step, the messages received, the mock journals, the logs: [`Observed`]);
//! the checks and the scenario assertions read it. A step's [`Observation`] is typed by
//! action (`step.rs`), with what the implementation left behind (`output.rs`: its process's
//! output, a file it wrote); its JSON face (`json.rs`) is the step output assertions query.

mod json;
mod output;
mod path;
mod record;
mod step;

pub use json::{MESSAGE_KEYS, output_node, output_query};
pub use output::{FileRead, ProcessOutput};
pub use record::{Observed, ReceivedMessage, StepRecord};
pub use step::{Connected, HealthAnswered, MessageSent, Observation, ReplyError};
