//! The observation room: what a run observed, in one place. The runner fills it (a
//! [`StepRecord`] per step, the messages received, the mock journals, the logs: [`Observed`]);
//! the checks and the scenario assertions read it. A step's [`Observation`] is typed by
//! action (`step.rs`); its JSON face (`json.rs`) is the step output assertions query.

mod json;
mod path;
mod record;
mod step;

pub use json::{MESSAGE_KEYS, output_node, output_query};
pub use record::{Observed, ReceivedMessage, StepRecord};
pub use step::{Connected, HealthAnswered, MessageSent, Observation};
