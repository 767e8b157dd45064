//! Blocking calls on native targets: every engine's operations are `async` (a browser's
//! WebGPU cannot block), and native callers wait on them with [`BlockOn::block_on`] instead
//! of each engine carrying a blocking twin of every method.

/// Waits for a future on the current thread (native only): `msm.run(request).block_on()`.
pub trait BlockOn: std::future::Future + Sized {
    /// Runs the future to completion on this thread and returns its output.
    fn block_on(self) -> Self::Output {
        pollster::block_on(self)
    }
}

impl<F: std::future::Future> BlockOn for F {}
