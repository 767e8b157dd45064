//! `zkgpu prove`'s progress lines and tables: start-up costs, per-proof times beside
//! ark-groth16's, the per-stage profile, and the stream's rate.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use zkgpu_groth16::ProofTimings;
use zkgpu_runtime::PipelineTiming;

/// A spinner with elapsed time on a terminal; plain start and end lines otherwise.
/// Whether steps print nothing (`--quiet`, `--json`).
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes every later [`Step`] silent (or not).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, std::sync::atomic::Ordering::Relaxed);
}

fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

pub struct Step {
    bar: ProgressBar,
    start: Instant,
    what: String,
}

impl Step {
    pub fn new(what: impl Into<String>) -> Self {
        let what = what.into();
        let bar = if quiet() {
            ProgressBar::hidden()
        } else {
            ProgressBar::new_spinner()
        };
        if quiet() {
        } else if bar.is_hidden() {
            eprintln!("{what} ...");
        } else {
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_message(what.clone());
            bar.enable_steady_tick(Duration::from_millis(120));
        }
        Self {
            bar,
            start: Instant::now(),
            what,
        }
    }

    /// Ends the step with a note; its seconds.
    pub fn done(self, note: &str) -> f64 {
        let s = self.start.elapsed().as_secs_f64();
        self.bar.finish_and_clear();
        if !quiet() {
            eprintln!("{}: {} {note}", self.what, secs(s));
        }
        s
    }
}

pub fn secs(s: f64) -> String {
    if s < 1.0 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

fn ratio(x: f64) -> String {
    if x < 1.0 {
        format!("{x:.3}x")
    } else {
        format!("{x:.1}x")
    }
}

/// A table row: its name and the timing it shows.
type Row = (&'static str, fn(&ProofTimings) -> f64);

/// A `--stream` run.
#[derive(Debug)]
pub struct StreamRun {
    pub gpu_proofs: usize,
    pub gpu_seconds: f64,
    pub workers: usize,
    /// Medians over the stream's proofs.
    pub synthesis: f64,
    pub gpu_part: f64,
    pub cpu_proofs: usize,
    pub cpu_seconds: f64,
}

/// What `zkgpu prove` measured.
#[derive(Debug)]
pub struct Report {
    costs: Vec<(String, f64)>,
    pipelines_beside: Option<f64>,
    first_proof: f64,
    runs: Vec<ProofTimings>,
    cpu_proof: f64,
    stream: Option<StreamRun>,
    /// The same stream across this many devices.
    across: Option<(usize, StreamRun)>,
}

impl Report {
    pub fn new() -> Self {
        Self {
            costs: Vec::new(),
            pipelines_beside: None,
            first_proof: 0.0,
            runs: Vec::new(),
            cpu_proof: 0.0,
            stream: None,
            across: None,
        }
    }

    /// A start-up step and its seconds.
    pub fn cost(&mut self, what: &str, s: f64) {
        self.costs.push((what.to_owned(), s));
    }

    /// Seconds the pipelines took on their own thread beside the key.
    pub fn pipelines_beside(&mut self, s: f64) {
        self.pipelines_beside = Some(s);
    }

    /// Seconds from the process's start to the first proof's return.
    pub fn first_proof(&mut self, s: f64) {
        self.first_proof = s;
    }

    pub fn run(&mut self, t: ProofTimings) {
        self.runs.push(t);
    }

    pub fn cpu_proof(&mut self, s: f64) {
        self.cpu_proof = s;
    }

    pub fn stream(&mut self, s: StreamRun) {
        self.stream = Some(s);
    }

    /// The stream's circuits proved again across `devices` devices.
    pub fn stream_across(&mut self, devices: usize, s: StreamRun) {
        self.across = Some((devices, s));
    }

    fn median(&self, f: impl Fn(&ProofTimings) -> f64) -> f64 {
        let mut v: Vec<f64> = self.runs.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    }

    pub fn print(&self, sequential: bool, pipes: Vec<PipelineTiming>, pipeline_cache: bool) {
        let threads = rayon::current_num_threads();
        println!();
        println!("| start-up: what a user waits for before the first proof | time |");
        println!("|---|---|");
        // Steps in parentheses ran beside others.
        let before = self
            .costs
            .iter()
            .filter(|(what, _)| !what.starts_with('('))
            .map(|(_, s)| s)
            .sum::<f64>();
        println!(
            "| everything else (process start, writing key files, checks) | {} |",
            secs((self.first_proof - before).max(0.0))
        );
        for (what, s) in &self.costs {
            println!("| {what} | {} |", secs(*s));
        }
        if let Some(p) = self.pipelines_beside {
            println!("| (pipelines, on a thread beside the key) | {} |", secs(p));
        }
        println!(
            "| **process start to first proof** | **{}** |",
            secs(self.first_proof)
        );
        println!();
        let total = self.median(|t| t.total);
        println!(
            "| per proof (median of {}) | zkgpu | ark-groth16 ({threads} CPU threads) | ratio |",
            self.runs.len()
        );
        println!("|---|---|---|---|");
        println!(
            "| **wall time, synthesis included** | **{}** | {} | **{}** |",
            secs(total),
            if self.cpu_proof > 0.0 {
                secs(self.cpu_proof)
            } else {
                "not run".into()
            },
            if self.cpu_proof > 0.0 {
                ratio(self.cpu_proof / total)
            } else {
                "".into()
            }
        );
        println!(
            "| synthesis (witness only; ark-groth16 builds matrices every proof) | {} | | |",
            secs(self.median(|t| t.synthesis))
        );
        println!(
            "| GPU part: witness map and five MSMs | {} | | |",
            secs(self.median(|t| t.prove))
        );
        println!(
            "| self-check (verify) | {} | | |",
            secs(self.median(|t| t.verify))
        );
        self.print_stages(sequential);
        if let Some(s) = &self.stream {
            let g = s.gpu_proofs as f64 / s.gpu_seconds;
            // Without reference proofs (--no-reference) the CPU columns say so.
            let cpu = (s.cpu_proofs > 0).then(|| s.cpu_proofs as f64 / s.cpu_seconds);
            println!();
            println!(
                "| stream of {} proofs ({} synthesis threads) | zkgpu | ark-groth16, one after the other ({} proofs) | ratio |",
                s.gpu_proofs, s.workers, s.cpu_proofs
            );
            println!("|---|---|---|---|");
            match cpu {
                Some(c) => println!(
                    "| **proofs per second** | **{g:.2}** | {c:.3} | **{}** |",
                    ratio(g / c)
                ),
                None => println!("| **proofs per second** | **{g:.2}** | not run | |"),
            }
            println!(
                "| wall time | {} | {} | |",
                secs(s.gpu_seconds),
                if cpu.is_some() {
                    secs(s.cpu_seconds)
                } else {
                    "not run".into()
                }
            );
            println!(
                "| per proof, median: synthesis (on a worker) / GPU part | {} / {} | | |",
                secs(s.synthesis),
                secs(s.gpu_part)
            );
            if let Some((d, a)) = &self.across {
                let r = a.gpu_proofs as f64 / a.gpu_seconds;
                println!();
                println!(
                    "| the same {} proofs ({} synthesis threads) | one device | {d} devices | ratio |",
                    a.gpu_proofs, a.workers
                );
                println!("|---|---|---|---|");
                println!(
                    "| **proofs per second** | {g:.2} | **{r:.2}** | **{:.2}x** |",
                    r / g
                );
                println!(
                    "| per proof, median: synthesis / GPU part | {} / {} | {} / {} | |",
                    secs(s.synthesis),
                    secs(s.gpu_part),
                    secs(a.synthesis),
                    secs(a.gpu_part)
                );
            }
        }
        let built: f64 = pipes.iter().map(|p| p.seconds).sum();
        let front: f64 = pipes.iter().map(|p| p.module_seconds).sum();
        println!();
        println!(
            "pipelines: {} built in {} (summed, the modules' WGSL front end {}; persistent pipeline cache: {}; {})",
            pipes.len(),
            secs(built),
            secs(front),
            if pipeline_cache { "on" } else { "none" },
            pipes
                .iter()
                .map(|p| format!("{}::{} {}", p.module, p.entry, secs(p.seconds)))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }

    fn print_stages(&self, sequential: bool) {
        println!();
        println!(
            "| stage (median of {}; {}) | time |",
            self.runs.len(),
            if sequential {
                "stages one at a time"
            } else {
                "two threads overlap, so stages add up to more than the GPU part"
            }
        );
        println!("|---|---|");
        let rows: [Row; 7] = [
            (
                "witness map (A z, B z, C z on CPU; 7 NTTs + quotient on GPU)",
                |t| t.witness_map,
            ),
            (
                "- sparse products, check, packing into staging (CPU, one pass)",
                |t| t.witness_map_parts.products,
            ),
            ("- 7 NTTs + quotient (GPU, submit to done)", |t| {
                t.witness_map_parts.gpu
            }),
            ("- quotient download", |t| t.witness_map_parts.download),
            ("MSM H (G1, after the witness map)", |t| t.msm_h),
            ("MSM A, B, L (G1, three base sets)", |t| t.msm_a_b_l),
            ("MSM B (G2)", |t| t.msm_b_g2),
        ];
        for (name, f) in rows {
            println!("| {name} | {} |", secs(self.median(f)));
        }
    }
}
