//! Where the time of an MSM went.

use crate::record::Stage;
/// Where the time of one MSM went (seconds). GPU stages come from timestamp queries where the
/// device has them (else they are zero and `gpu_total` is the wall time of the GPU work).
#[derive(Clone, Debug, Default)]
pub struct MsmTimings {
    /// Scalars written straight into the upload's staging memory by the host's threads:
    /// copied as stored where they are converted on the GPU (`scalars_on_gpu`), else
    /// converted to canonical integers in the same pass.
    pub host_scalars: f64,
    /// Whether the GPU converted the scalars from Montgomery form (`digits` includes it).
    pub scalars_on_gpu: bool,
    /// Set-up, bind groups and the recording of the passes, on another host thread while
    /// the scalars are written (natively; after them in a browser).
    pub upload: f64,
    /// Signed digits and bucket histogram.
    pub digits: f64,
    /// Per-window prefix sums of bucket sizes and of chunk counts, and the chunk counts.
    pub scan: f64,
    /// Scatter into buckets.
    pub scatter: f64,
    /// Bucket accumulation in chunks (mixed additions).
    pub accumulate: f64,
    /// Sums of the chunks of each bucket (full additions; copies for one-chunk buckets).
    pub combine: f64,
    /// Bucket reduction, phase 1.
    pub reduce: f64,
    /// Submit to readback complete, wall time.
    pub gpu_total: f64,
    /// Decoding and combining segment sums and windows on the host.
    pub host_combine: f64,
    /// Window width used.
    pub window_bits: u32,
    /// Reduction segments per window used.
    pub segments: u32,
    /// Accumulation chunk used (entries per invocation at most).
    pub chunk: u32,
    /// Runs of the MSM's stages: one per part of the bases in use, or one for two parts of
    /// one set run together (docs/msm.md "Limits").
    pub runs: u32,
    /// Every compute pass's GPU time, in order, where the MSM was timed: which dispatch of a
    /// stage takes the time (`zkgpu msm --passes` prints them).
    pub passes: Vec<PassTiming>,
}

/// One compute pass of a timed MSM.
#[derive(Clone, Debug)]
pub struct PassTiming {
    /// Its stage (`Accumulate`, ...).
    pub stage: String,
    /// Its dispatch (`Grid(x, y)`, or `Indirect(offset)` sized on the GPU).
    pub dispatch: String,
    /// Its GPU seconds.
    pub seconds: f64,
}

impl MsmTimings {
    /// Adds a pass's GPU time to its stage's field.
    pub(crate) fn add(&mut self, stage: Stage, secs: f64) {
        *match stage {
            Stage::Digits => &mut self.digits,
            Stage::Scan => &mut self.scan,
            Stage::Scatter => &mut self.scatter,
            Stage::Accumulate => &mut self.accumulate,
            Stage::Combine => &mut self.combine,
            Stage::Reduce => &mut self.reduce,
        } += secs;
    }
}
