//! The runtime's error type.

/// Everything that can go wrong between zkgpu and the GPU.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No adapter matched; the message says how to get one.
    #[error("no GPU adapter found: {hint}")]
    NoAdapter {
        /// What was looked for and how to get an adapter.
        hint: String,
    },
    /// An environment variable has a value zkgpu does not understand.
    #[error("environment variable {var}={value:?}: {reason}")]
    BadEnv {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What is accepted.
        reason: String,
    },
    /// The adapter refused the device request.
    #[error("requesting a device from adapter `{adapter}` failed: {source}")]
    RequestDevice {
        /// The adapter's name.
        adapter: String,
        /// wgpu's error.
        source: wgpu::RequestDeviceError,
    },
    /// A shader module or pipeline did not compile.
    #[error("creating pipeline `{module}::{entry}` failed: {message}")]
    Pipeline {
        /// The module's name.
        module: String,
        /// The entry point.
        entry: String,
        /// wgpu's message.
        message: String,
    },
    /// A buffer exceeds what the device allows.
    #[error(
        "buffer `{label}` needs {bytes} bytes, above the device's limit of {limit} bytes ({which})"
    )]
    BufferTooLarge {
        /// The buffer's label.
        label: String,
        /// Bytes asked for.
        bytes: u64,
        /// The limit.
        limit: u64,
        /// Which limit.
        which: &'static str,
    },
    /// An object made by one GPU context was given to an engine of another: a buffer of one
    /// device means nothing to another. Refused before anything is recorded; both contexts
    /// stay usable.
    #[error(
        "{what} belong to {made}, not to {used} of this engine: make them again with an \
         engine of this context (or copy them through the host)"
    )]
    ForeignContext {
        /// What was refused.
        what: String,
        /// The context that made it.
        made: crate::ContextId,
        /// The engine's context.
        used: crate::ContextId,
    },
    /// The device ran out of memory.
    #[error("out of GPU memory while {context}")]
    OutOfMemory {
        /// What was being done.
        context: String,
    },
    /// Mapping a buffer for readback failed.
    #[error("reading back `{label}` failed: {message}")]
    Readback {
        /// The buffer's label.
        label: String,
        /// Why.
        message: String,
    },
    /// The device reported an error outside any scope, or was lost.
    #[error("the GPU device failed: {0}")]
    Device(String),
    /// Waiting for the GPU failed.
    #[error("waiting for the GPU failed: {0}")]
    Poll(String),
    /// An argument is outside what the operation supports.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The field arithmetic asked for cannot run on this device: it lacks the features, or
    /// the known-answer check found wrong results (`zkgpu info` lists every arithmetic).
    #[error("the {arith} arithmetic cannot be used on this device: {reason}")]
    Arith {
        /// The arithmetic's name.
        arith: &'static str,
        /// Why not.
        reason: String,
    },
}

/// `Result` with [`GpuError`].
pub type Result<T, E = GpuError> = std::result::Result<T, E>;
