//! [`MultiMsm`]: one MSM over the devices of a [`DeviceSet`]. The bases are split into
//! consecutive point ranges, one per device, sized in proportion to the devices' weights
//! (their measured speed); each device runs the MSM of its range on its own host thread, and
//! the host adds the partial sums.

use std::ops::Range;
use std::time::{Duration, Instant};

use ark_ff::Zero;
use zkgpu_curves::GpuCurve;
use zkgpu_runtime::{BlockOn, ContextId, DeviceSet, GpuError};

use crate::{Fold, GpuMsm, MsmConfig, MsmError, MsmRequest, PreparedBases, Result};

/// The MSM engines of group `C` on every device of a [`DeviceSet`], and the weights that
/// split an MSM's points between them.
#[derive(Debug)]
pub struct MultiMsm<C: GpuCurve> {
    engines: Vec<GpuMsm<C>>,
    weights: Vec<f64>,
}

/// Bases split across the devices of a [`MultiMsm`] ([`MultiMsm::prepare`]): each device's
/// point range and its bases there (none for an empty range).
#[derive(Debug)]
pub struct SplitBases<C: GpuCurve> {
    len: usize,
    shares: Vec<(Range<usize>, Option<PreparedBases<C>>)>,
    contexts: Vec<ContextId>,
}

impl<C: GpuCurve> SplitBases<C> {
    /// Number of bases.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Each device's point range, in the order of the set's devices.
    pub fn ranges(&self) -> Vec<Range<usize>> {
        self.shares.iter().map(|(r, _)| r.clone()).collect()
    }

    /// Each device's prepared bases (None where its range is empty).
    pub fn shares(&self) -> impl Iterator<Item = Option<&PreparedBases<C>>> {
        self.shares.iter().map(|(_, p)| p.as_ref())
    }
}

/// What one [`MultiMsm::run`] gave: the sum and each device's wall seconds (0 for a device
/// with no points).
#[derive(Clone, Debug)]
pub struct MultiOutput<C: GpuCurve> {
    /// `sum_i scalars[i] bases[i]` over the shorter of the two lengths.
    pub sum: C::Projective,
    /// Each device's seconds, from its thread's start to its partial sum.
    pub device_seconds: Vec<f64>,
}

impl<C: GpuCurve> MultiMsm<C> {
    /// An engine of `C` on every device of `devices`, with equal weights.
    pub fn new(devices: &DeviceSet) -> Result<Self> {
        let engines = devices
            .contexts()
            .iter()
            .map(GpuMsm::new)
            .collect::<Result<Vec<_>>>()?;
        let weights = vec![1.0; engines.len()];
        Ok(Self { engines, weights })
    }

    /// The engines, one per device.
    pub fn engines(&self) -> &[GpuMsm<C>] {
        &self.engines
    }

    /// The weights that split the points: device `i` gets about `weights[i] / sum` of them.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// The engine with these weights (one per device, finite, at least 0, not all 0). A
    /// weight of 0 gives that device no points.
    pub fn with_weights(mut self, weights: &[f64]) -> Result<Self> {
        check_weights(weights, self.engines.len())?;
        self.weights = weights.to_vec();
        Ok(self)
    }

    /// Measures every device on the same MSM (these bases and scalars, prepared on each),
    /// after `warmup` of untimed runs so that each device runs at its working clock, and
    /// sets the weights to the devices' speeds (the inverse of each one's median of `runs`).
    /// The devices are measured at the same time, as they will run. Returns the weights.
    pub fn calibrate(
        &mut self,
        bases: &[C::Affine],
        scalars: &[C::Scalar],
        warmup: Duration,
        runs: usize,
    ) -> Result<Vec<f64>> {
        let seconds = std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .engines
                .iter()
                .map(|e| scope.spawn(move || time_one(e, bases, scalars, warmup, runs)))
                .collect();
            handles.into_iter().map(joined).collect::<Result<Vec<_>>>()
        })?;
        let weights: Vec<f64> = seconds.iter().map(|s| 1.0 / s.max(1e-9)).collect();
        check_weights(&weights, self.engines.len())?;
        self.weights.clone_from(&weights);
        Ok(weights)
    }

    /// The consecutive point ranges of `len` points, one per device, in proportion to the
    /// weights (rounding down; the last device with a weight takes the rest).
    pub fn split(&self, len: usize) -> Vec<Range<usize>> {
        let total: f64 = self.weights.iter().sum();
        let last = self.weights.iter().rposition(|w| *w > 0.0).unwrap_or(0);
        let mut start = 0;
        let mut acc = 0.0;
        self.weights
            .iter()
            .enumerate()
            .map(|(i, w)| {
                acc += w;
                let end = if i >= last {
                    len
                } else {
                    // Never past len, whatever the rounding.
                    ((acc / total * len as f64) as usize).clamp(start, len)
                };
                let r = start..end;
                start = end;
                r
            })
            .collect()
    }

    /// Uploads `bases` split by [`MultiMsm::split`], each device's range to it (at once, one
    /// host thread per device).
    pub fn prepare(&self, bases: &[C::Affine]) -> Result<SplitBases<C>> {
        self.prepare_folded(bases, Fold::default())
    }

    /// [`MultiMsm::prepare`] with window multiples on every device
    /// ([`GpuMsm::prepare_sets_folded`]).
    pub fn prepare_folded(&self, bases: &[C::Affine], fold: Fold) -> Result<SplitBases<C>> {
        let ranges = self.split(bases.len());
        let prepared = std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .engines
                .iter()
                .zip(&ranges)
                .map(|(e, r)| {
                    let share = &bases[r.clone()];
                    scope.spawn(move || {
                        if share.is_empty() {
                            return Ok(None);
                        }
                        let p = e.prepare_sets_folded(&[share], fold).block_on()?;
                        e.ctx.wait()?;
                        Ok(Some(p))
                    })
                })
                .collect();
            handles.into_iter().map(joined).collect::<Result<Vec<_>>>()
        })?;
        Ok(SplitBases {
            len: bases.len(),
            shares: ranges.into_iter().zip(prepared).collect(),
            contexts: self.engines.iter().map(|e| e.ctx.id()).collect(),
        })
    }

    /// The most fold levels that keep every device's share of `len` points in one part
    /// ([`GpuMsm::folds_in_one_part`]).
    pub fn folds_in_one_part(&self, len: usize) -> u32 {
        self.engines
            .iter()
            .zip(self.split(len))
            .filter(|(_, r)| !r.is_empty())
            .map(|(e, r)| e.folds_in_one_part(r.len(), 1))
            .min()
            .unwrap_or(1)
    }

    /// `sum_i scalars[i] bases[i]` over the shorter of the two lengths (arkworks'
    /// `msm_unchecked`): each device's range on its own thread, the partial sums added on the
    /// host. Bases split by another [`MultiMsm`] (other devices) are refused.
    pub fn run(
        &self,
        bases: &SplitBases<C>,
        scalars: &[C::Scalar],
        config: MsmConfig,
    ) -> Result<MultiOutput<C>> {
        let ids: Vec<ContextId> = self.engines.iter().map(|e| e.ctx.id()).collect();
        if bases.contexts != ids {
            let made = bases.contexts.first().copied();
            return Err(match made {
                Some(made) if bases.contexts.len() == ids.len() => GpuError::ForeignContext {
                    what: "these split bases".into(),
                    made,
                    used: ids[0],
                }
                .into(),
                _ => MsmError::Config(format!(
                    "bases split across {} devices, engine of {}",
                    bases.contexts.len(),
                    ids.len()
                )),
            });
        }
        let n = bases.len.min(scalars.len());
        let parts = std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .engines
                .iter()
                .zip(&bases.shares)
                .map(|(e, (r, p))| {
                    let scalars = &scalars[r.start.min(n)..r.end.min(n)];
                    scope.spawn(move || {
                        let t = Instant::now();
                        let Some(p) = p.as_ref().filter(|_| !scalars.is_empty()) else {
                            return Ok((C::Projective::zero(), 0.0));
                        };
                        let sum = e.run(MsmRequest::new(p, scalars).config(config))?.sum()?;
                        Ok((sum, t.elapsed().as_secs_f64()))
                    })
                })
                .collect();
            handles.into_iter().map(joined).collect::<Result<Vec<_>>>()
        })?;
        Ok(MultiOutput {
            sum: parts.iter().map(|(s, _)| *s).sum(),
            device_seconds: parts.iter().map(|(_, t)| *t).collect(),
        })
    }
}

/// One device's median seconds on an MSM of `bases` and `scalars`, after `warmup`.
fn time_one<C: GpuCurve>(
    engine: &GpuMsm<C>,
    bases: &[C::Affine],
    scalars: &[C::Scalar],
    warmup: Duration,
    runs: usize,
) -> Result<f64> {
    let prepared = engine.prepare(bases)?;
    let once = || {
        let t = Instant::now();
        engine
            .run(MsmRequest::new(&prepared, scalars))
            .map(|_| t.elapsed().as_secs_f64())
    };
    let started = Instant::now();
    once()?;
    while started.elapsed() < warmup {
        once()?;
    }
    let mut times = (0..runs.max(1))
        .map(|_| once())
        .collect::<Result<Vec<_>>>()?;
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// `Ok` for weights fit to split points between `devices` devices.
fn check_weights(weights: &[f64], devices: usize) -> Result<()> {
    if weights.len() != devices {
        return Err(MsmError::Config(format!(
            "{} weights for {devices} devices",
            weights.len()
        )));
    }
    if weights.iter().any(|w| !w.is_finite() || *w < 0.0) || weights.iter().all(|w| *w == 0.0) {
        return Err(MsmError::Config(format!(
            "device weights {weights:?}: finite, at least 0 and not all 0"
        )));
    }
    Ok(())
}

/// A scoped thread's result; its panic (a bug of ours) passed on.
fn joined<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    match h.join() {
        Ok(done) => done,
        Err(p) => std::panic::resume_unwind(p),
    }
}
