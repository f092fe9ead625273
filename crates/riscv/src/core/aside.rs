//! What few programs use of a core, boxed at its first use: the console's bytes and the
//! watched ranges. A core that writes no console and watches nothing (NanoSort's) keeps
//! 8 bytes for them instead of 56, and a node's 4 `Core`s fit mimalloc's 8 KiB class
//! (docs/profile.md, "What keeps it small").

use super::watch::Watch;

/// The boxed state, or nothing yet.
#[derive(Default)]
pub(crate) struct Aside(Option<Box<AsideState>>);

#[derive(Default)]
pub(crate) struct AsideState {
    /// Bytes the program wrote to its console (HTIF, semihosting).
    pub console: Vec<u8>,
    /// Watched ranges and the bytes loaded and stored there (`watch.rs`).
    pub watch: Watch,
}

impl Aside {
    /// The state, if any was made.
    #[inline]
    pub fn get(&self) -> Option<&AsideState> {
        self.0.as_deref()
    }

    /// The state, made now if not yet.
    pub fn get_mut(&mut self) -> &mut AsideState {
        self.0.get_or_insert_with(Box::default)
    }

    /// The console's bytes so far, taken out.
    pub fn take_console(&mut self) -> Vec<u8> {
        self.0.as_mut().map(|a| std::mem::take(&mut a.console)).unwrap_or_default()
    }
}
