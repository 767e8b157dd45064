//! Which field arithmetic a context's engines multiply with (docs/limbs.md, "The 64-bit
//! arithmetics"; docs/gpu.md): the portable one everywhere, a 64-bit one where the adapter
//! has the features, its known-answer check passed on this device, and (chosen
//! automatically) it measured faster.

use crate::GpuContext;
use crate::error::{GpuError, Result};
use crate::pipelines::Checks;
use num_bigint::BigUint;
use zkgpu_shaders::contract::arith_check::{self as chk, ArithParams};
use zkgpu_shaders::{ARITH_CHECK_FIELD, Arith, arith_check};

/// How a context picks its arithmetic ([`crate::ContextOptions::arith`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ArithChoice {
    /// The fastest arithmetic this device runs correctly: among those whose features the
    /// adapter has and whose known-answer check passed, the best measured rate (a short probe,
    /// kept beside the pipeline cache where one is configured). The portable one on software
    /// adapters (whose rates say nothing of a GPU's) and within WebGPU's default limits.
    #[default]
    Auto,
    /// This arithmetic, or [`GpuError::Arith`] when the device lacks its features or fails
    /// its known-answer check.
    Fixed(Arith),
}

impl ArithChoice {
    /// `auto` or an arithmetic's name (`portable`, `int64`, `f64`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(ArithChoice::Auto),
            _ => Arith::from_name(name).map(ArithChoice::Fixed),
        }
    }
}

/// What a context found out about one arithmetic.
#[derive(Clone, Debug, PartialEq)]
pub struct ArithReport {
    /// The arithmetic.
    pub arith: Arith,
    /// `Ok` when engines may use it; else why not.
    pub usable: std::result::Result<(), String>,
    /// Measured BLS12-381 Fq multiplications a second, where probed.
    pub rate: Option<f64>,
}

/// The features an arithmetic needs.
pub fn arith_features(arith: Arith) -> wgpu::Features {
    let mut f = wgpu::Features::empty();
    if arith.needs_int64() {
        f |= wgpu::Features::SHADER_INT64;
    }
    if arith.needs_f64() {
        f |= wgpu::Features::SHADER_F64;
    }
    f
}

/// Elements of the rate probe, and multiplications of each.
const PROBE_ELEMENTS: u32 = 1 << 16;
const PROBE_REPS: u32 = 64;
const WORKGROUP_SIZE: u32 = 64;
const OVERRIDES: &[(&str, f64)] = &[("WORKGROUP_SIZE", WORKGROUP_SIZE as f64)];

impl GpuContext {
    /// The arithmetic this context's engines compose their kernels with.
    pub fn arith(&self) -> Arith {
        self.arith.get().map_or(Arith::Portable, |a| a.0)
    }

    /// `Ok` when engines of this context may multiply with `arith` (its report says usable),
    /// else [`GpuError::Arith`] with the reason.
    pub fn check_arith(&self, arith: Arith) -> Result<()> {
        match self.arith_reports().iter().find(|r| r.arith == arith) {
            Some(ArithReport { usable: Ok(()), .. }) => Ok(()),
            Some(ArithReport { usable: Err(e), .. }) => Err(GpuError::Arith {
                arith: arith.name(),
                reason: e.clone(),
            }),
            None if arith == Arith::Portable => Ok(()),
            None => Err(GpuError::Arith {
                arith: arith.name(),
                reason: "not checked on this context".into(),
            }),
        }
    }

    /// What this context found out about every arithmetic (`zkgpu info` prints it).
    pub fn arith_reports(&self) -> &[ArithReport] {
        self.arith.get().map_or(&[], |a| &a.1)
    }

    /// Picks the arithmetic by `choice`: checks the candidates, probes their rates where the
    /// choice is automatic and more than one passed.
    pub(crate) async fn select_arith(
        &self,
        choice: ArithChoice,
    ) -> Result<(Arith, Vec<ArithReport>)> {
        let mut reports = Vec::new();
        for arith in Arith::ALL {
            let wanted = match choice {
                ArithChoice::Fixed(a) => a == arith,
                ArithChoice::Auto => !self.is_software(),
            };
            let usable = if arith == Arith::Portable {
                Ok(())
            } else if !self.features.contains(arith_features(arith)) {
                Err(format!(
                    "the device lacks {:?}",
                    arith_features(arith) - self.features
                ))
            } else if !wanted {
                Err("not checked (software adapter: chosen only when asked for)".to_owned())
            } else {
                self.known_answers(arith).await?
            };
            reports.push(ArithReport {
                arith,
                usable,
                rate: None,
            });
        }
        let chosen = match choice {
            ArithChoice::Fixed(a) => {
                let r = reports.iter().find(|r| r.arith == a).expect("every arith");
                if let Err(reason) = &r.usable {
                    return Err(GpuError::Arith {
                        arith: a.name(),
                        reason: reason.clone(),
                    });
                }
                a
            }
            ArithChoice::Auto => self.fastest(&mut reports).await?,
        };
        tracing::info!(arith = %chosen, "field arithmetic");
        Ok((chosen, reports))
    }

    /// The usable arithmetic of the best measured rate (the portable one alone is not probed).
    async fn fastest(&self, reports: &mut [ArithReport]) -> Result<Arith> {
        if reports.iter().filter(|r| r.usable.is_ok()).count() < 2 {
            return Ok(Arith::Portable);
        }
        let saved = self.saved_rates();
        let mut best = (Arith::Portable, 0.0);
        for r in reports.iter_mut().filter(|r| r.usable.is_ok()) {
            let rate = match saved.iter().find(|(a, _)| *a == r.arith) {
                Some(&(_, rate)) => rate,
                None => self.probe_rate(r.arith).await?,
            };
            r.rate = Some(rate);
            if rate > best.1 {
                best = (r.arith, rate);
            }
        }
        if saved.is_empty() {
            self.save_rates(reports);
        }
        Ok(best.0)
    }

    /// Runs `arith`'s multiplication on values at the ends of its range and compares with
    /// the exact products; for `f64`, first whether `fma` is fused. `Ok(Err(why))` when the
    /// device computes something else.
    async fn known_answers(&self, arith: Arith) -> Result<std::result::Result<(), String>> {
        let module = arith_check(ARITH_CHECK_FIELD, arith);
        if arith.needs_f64() {
            let pipeline = self
                .pipeline(&module, chk::entry::ARITH_FMA, Checks::Default, &[])
                .await?;
            let a = self.storage_buffer("arith_fma a", &[1u32])?;
            let out = self.storage_zeroed("arith_fma out", 4)?;
            let bg = self.bind_group(&pipeline, &[(chk::CHECK_A, &a), (chk::CHECK_OUT, &out)]);
            self.timed_pass(chk::entry::ARITH_FMA, |pass| {
                pass.set_pipeline(&pipeline.pipeline);
                pass.set_bind_group(0, &bg, &[]);
                pass.dispatch_workgroups(1, 1, 1);
            })
            .await?;
            let got: Vec<u32> = self.read_back(&out, 4).await?;
            if got[0] != 1 {
                return Ok(Err(format!(
                    "fma on f64 is not fused: fma(x, x, -x x) for x = 2^27 + 1 gave {}, not 1",
                    got[0]
                )));
            }
        }
        let (a, b, expect) = known_answer_vectors();
        let got = self.mul_chain(&module, &a, &b, 1).await?.0;
        if got != expect {
            let words = ARITH_CHECK_FIELD.packed_words() as usize;
            let bad = got
                .chunks(words)
                .zip(expect.chunks(words))
                .position(|(g, e)| g != e)
                .unwrap_or(0);
            return Ok(Err(format!(
                "wrong products on this device (case {bad} of {})",
                expect.len() / words
            )));
        }
        Ok(Ok(()))
    }

    /// BLS12-381 Fq multiplications a second of `arith`: a chain of multiplications over
    /// enough elements to fill the device, timed on the GPU.
    async fn probe_rate(&self, arith: Arith) -> Result<f64> {
        let module = arith_check(ARITH_CHECK_FIELD, arith);
        let (a, b) = probe_inputs();
        // A first run warms the clock and the pipeline; the second is timed.
        self.mul_chain(&module, &a, &b, PROBE_REPS).await?;
        let seconds = self.mul_chain(&module, &a, &b, PROBE_REPS).await?.1;
        Ok(f64::from(PROBE_ELEMENTS) * f64::from(PROBE_REPS) / seconds.max(1e-9))
    }

    /// `a b^reps` elementwise over packed words: the products and the pass's seconds.
    async fn mul_chain(
        &self,
        module: &zkgpu_shaders::Composed,
        a: &[u32],
        b: &[u32],
        reps: u32,
    ) -> Result<(Vec<u32>, f64)> {
        let pipeline = self
            .pipeline(
                module,
                chk::entry::ARITH_MUL_CHAIN,
                Checks::TrustedLoops,
                OVERRIDES,
            )
            .await?;
        let words = ARITH_CHECK_FIELD.packed_words() as usize;
        let count = (a.len() / words) as u32;
        let (x, y, row_stride) = crate::grid(
            count,
            WORKGROUP_SIZE,
            self.limits.max_compute_workgroups_per_dimension,
        );
        let buf_a = self.storage_buffer("arith_check a", a)?;
        let buf_b = self.storage_buffer("arith_check b", b)?;
        let bytes = (a.len() * 4) as u64;
        let out = self.storage_zeroed("arith_check out", bytes)?;
        let params = self.uniform_buffer(
            "arith_check params",
            &ArithParams {
                count,
                reps,
                row_stride,
                ..ArithParams::default()
            },
        );
        let bg = self.bind_group(
            &pipeline,
            &[
                (chk::CHECK_A, &buf_a),
                (chk::CHECK_B, &buf_b),
                (chk::CHECK_OUT, &out),
                (chk::CHECK, &params),
            ],
        );
        let seconds = self
            .timed_pass(chk::entry::ARITH_MUL_CHAIN, |pass| {
                pass.set_pipeline(&pipeline.pipeline);
                pass.set_bind_group(0, &bg, &[]);
                pass.dispatch_workgroups(x, y, 1);
            })
            .await?;
        Ok((self.read_back(&out, bytes).await?, seconds))
    }
}

/// Operands at the ends of the multiplication's range (0, 1, p - 1, 2p - 1, values whose
/// low limbs are all ones in every layout, and mixed ones) and their products `a b R^-1 mod p`,
/// as packed words.
pub fn known_answer_vectors() -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let known = ARITH_CHECK_FIELD.known().expect("a prime field");
    let params = known.params();
    let p = &params.modulus;
    let words = params.packed_words();
    let r_inv = params.r().modinv(p).expect("R is invertible mod p");
    let twice = p * 2u32;
    let mut values: Vec<BigUint> = vec![
        BigUint::from(0u32),
        BigUint::from(1u32),
        p - 1u32,
        &twice - 1u32,
    ];
    values.extend(
        (1..twice.bits())
            .step_by(7)
            .map(|t| (BigUint::from(1u32) << t) - 1u32),
    );
    let mut seed = BigUint::from(0x9e37_79b9_7f4a_7c15u64);
    for _ in 0..8 {
        seed = (&seed * &seed + 0x2545_f491u32) % &twice;
        values.push(seed.clone());
    }
    let pack = |x: &BigUint| {
        let mut w = x.to_u32_digits();
        w.resize(words, 0);
        w
    };
    let (mut a, mut b, mut out) = (Vec::new(), Vec::new(), Vec::new());
    for (i, x) in values.iter().enumerate() {
        let y = &values[(i * 5 + 3) % values.len()];
        a.extend(pack(x));
        b.extend(pack(y));
        out.extend(pack(&(x * y * &r_inv % p)));
    }
    (a, b, out)
}

impl GpuContext {
    /// A file named `{stem}-{adapter and driver}.txt` in the pipeline cache's directory, for
    /// what was measured on this device and should outlive the process (the arithmetics'
    /// rates, the MSM planner's constants); `None` where no directory is configured.
    pub fn cache_file(&self, stem: &str) -> Option<std::path::PathBuf> {
        let dir = self.pipeline_cache_dir.as_ref()?;
        let i = &self.info;
        let key: String = format!(
            "{stem}-{:x}-{:x}-{:?}-{}-{}",
            i.vendor, i.device, i.backend, i.driver, i.driver_info
        )
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
        Some(dir.join(format!("{key}.txt")))
    }

    /// The file of measured rates beside the pipeline cache: one per adapter and driver.
    fn rates_file(&self) -> Option<std::path::PathBuf> {
        self.cache_file("arith-rates")
    }

    /// Rates measured by an earlier process on this adapter and driver (`name rate` lines).
    fn saved_rates(&self) -> Vec<(Arith, f64)> {
        let Some(text) = self
            .rates_file()
            .and_then(|p| std::fs::read_to_string(p).ok())
        else {
            return Vec::new();
        };
        text.lines()
            .filter_map(|l| {
                let (name, rate) = l.split_once(' ')?;
                Some((Arith::from_name(name)?, rate.parse().ok()?))
            })
            .collect()
    }

    /// Keeps the rates just measured for the next process (failures only logged: the probe
    /// runs again then).
    fn save_rates(&self, reports: &[ArithReport]) {
        let Some(path) = self.rates_file() else {
            return;
        };
        let text: String = reports
            .iter()
            .filter_map(|r| Some(format!("{} {}\n", r.arith.name(), r.rate?)))
            .collect();
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, text));
        if let Err(e) = written {
            tracing::warn!(path = %path.display(), "keeping the arithmetics' rates: {e}");
        }
    }
}

impl GpuContext {
    /// Keeps the GPU busy for `duration` with chains of field multiplications, so that the
    /// work after it starts at the GPU's working clock: an idle GPU lowers its clock (the
    /// H100 from 1980 to 345 MHz) and takes a few hundred milliseconds of work to raise it
    /// again (docs/gpu.md). Costs `duration` of wall time and GPU time; opt-in (the prover
    /// runs it beside its CPU work, `zkgpu msm` and `zkgpu ntt` before their timed runs).
    pub async fn warm_clock(&self, duration: std::time::Duration) -> Result<()> {
        let module = arith_check(ARITH_CHECK_FIELD, self.arith());
        let (a, b) = probe_inputs();
        let start = web_time::Instant::now();
        // About 3 ms of work a submission on the H100: the GPU stays busy between them.
        while start.elapsed() < duration {
            self.mul_chain(&module, &a, &b, 16 * PROBE_REPS).await?;
        }
        Ok(())
    }
}

/// The known-answer operands repeated to [`PROBE_ELEMENTS`] elements: the rate probe's and the
/// clock warm-up's inputs.
fn probe_inputs() -> (Vec<u32>, Vec<u32>) {
    let (a, b, _) = known_answer_vectors();
    let words = ARITH_CHECK_FIELD.packed_words() as usize;
    let fill = |v: &[u32]| -> Vec<u32> {
        v.chunks(words)
            .cycle()
            .take(PROBE_ELEMENTS as usize)
            .flatten()
            .copied()
            .collect()
    };
    (fill(&a), fill(&b))
}
