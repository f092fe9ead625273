//! How a subcommand ends and what it writes, the same for every one: a judged run's
//! problems and exit status (`judged`), its output files checked before anything is
//! simulated (`outputs`), and a JSON summary's text form (`text`).

pub mod judged;
pub mod outputs;
pub mod text;
