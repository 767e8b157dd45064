//! The wasm module's exports: the page's suite (`run`), arkworks alone (`cpu_msm_ms`) and
//! the proving API (`Prover`, `merkle_key`, `merkle_inputs`; `CircomProver` for snarkjs keys)
//! that `web/zkgpu.js` wraps as `prove(keyBytes, inputs)` and `groth16Prove(zkey, wtns)`. One GPU context per page, opened on first use.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use zkgpu_runtime::{ContextOptions, GpuContext};

use crate::api::{self, MerkleInputs};
use crate::circom;
use crate::error::WebError;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console)]
    fn error(s: &str);
}

thread_local! {
    static CONTEXT: RefCell<Option<GpuContext>> = const { RefCell::new(None) };
}

/// A JS `Error` with `message` and `code` set (`web/zkgpu.js` passes it on).
fn js_error(e: WebError) -> JsValue {
    let err = js_sys::Error::new(&e.message);
    // Setting a property on a fresh Error object cannot fail.
    let _ = js_sys::Reflect::set(&err, &JsValue::from_str("code"), &JsValue::from_str(e.code));
    err.into()
}

/// An error of the suite or the key tools: code `INTERNAL` unless said otherwise.
fn js(e: impl std::fmt::Display) -> JsValue {
    js_error(WebError::new("INTERNAL", e))
}

/// The page's GPU context: the browser's WebGPU adapter, opened once. A panic's message goes
/// to the console (a wasm panic otherwise shows only "unreachable").
async fn context() -> Result<GpuContext, JsValue> {
    if let Some(ctx) = CONTEXT.with(|c| c.borrow().clone()) {
        return Ok(ctx);
    }
    std::panic::set_hook(Box::new(|info| error(&format!("zkgpu panicked: {info}"))));
    let ctx = GpuContext::new(ContextOptions::default())
        .await
        .map_err(|e| js_error(WebError::new("NO_WEBGPU", e)))?;
    CONTEXT.with(|c| *c.borrow_mut() = Some(ctx.clone()));
    Ok(ctx)
}

/// Runs [`crate::run_suite`] on the page's adapter (`log_prove` 0: no proof); resolves to
/// the report as JSON, or rejects with the error's text (no adapter, a GPU error).
#[wasm_bindgen]
pub async fn run(
    log_msm: u32,
    log_ntt: u32,
    log_prove: u32,
    depth: u32,
) -> Result<String, JsValue> {
    let ctx = context().await?;
    let sizes = crate::Sizes {
        msm: log_msm,
        ntt: log_ntt,
        prove: log_prove,
        depth: depth as usize,
    };
    let report = crate::run_suite(&ctx, sizes).await.map_err(js)?;
    Ok(report.to_json())
}

/// arkworks alone in this module: an MSM of `2^log_n` points on the CPU, milliseconds
/// (the page shows it when the browser has no WebGPU adapter).
#[wasm_bindgen]
pub fn cpu_msm_ms(log_n: u32) -> f64 {
    use ark_ec::{CurveGroup, PrimeGroup, VariableBaseMSM};
    use ark_ff::UniformRand;
    use ark_std::rand::{SeedableRng, rngs::StdRng};
    let mut rng = StdRng::seed_from_u64(1);
    let n = 1usize << log_n.min(16);
    let g = crate::G1::generator();
    let points: Vec<crate::G1> = (1..=n as u64).map(|k| g * crate::Fr::from(k)).collect();
    let bases = crate::G1::normalize_batch(&points);
    let scalars: Vec<crate::Fr> = (0..n).map(|_| crate::Fr::rand(&mut rng)).collect();
    let t = web_time::Instant::now();
    let _ = crate::G1::msm(&bases, &scalars);
    crate::ms(t)
}

/// A proving key (ark-serialize, compressed) for the Merkle paths that fit `2^log_constraints`
/// at `depth`, made in the page from the page's fixed seed (what the server's key file holds).
#[wasm_bindgen]
pub fn merkle_key(log_constraints: u32, depth: u32) -> Result<Vec<u8>, JsValue> {
    let paths = crate::prove::paths_for(log_constraints, depth as usize).map_err(js)?;
    api::merkle_key(paths, depth as usize, crate::prove::KEY_SEED).map_err(js)
}

/// Random inputs (JSON, see `docs/web.md`) for the Merkle paths that fit
/// `2^log_constraints` at `depth`.
#[wasm_bindgen]
pub fn merkle_inputs(log_constraints: u32, depth: u32, seed: u32) -> Result<String, JsValue> {
    let paths = crate::prove::paths_for(log_constraints, depth as usize).map_err(js)?;
    Ok(MerkleInputs::random(paths, depth as usize, u64::from(seed)).to_json())
}

/// A proving key read and uploaded to the page's GPU (`Prover.load(keyBytes)`), proving
/// again and again.
#[wasm_bindgen]
#[derive(Debug)]
pub struct Prover {
    inner: Rc<api::Prover>,
}

#[wasm_bindgen]
impl Prover {
    /// Reads the key's bytes and uploads its bases; rejects with the reason (malformed key,
    /// no adapter, out of GPU memory).
    pub async fn load(key: Vec<u8>) -> Result<Prover, JsValue> {
        let ctx = context().await?;
        let inner = api::Prover::load(&ctx, &key).await.map_err(js_error)?;
        Ok(Prover {
            inner: Rc::new(inner),
        })
    }

    /// Proves `inputs` (JSON) with `r` and `s` drawn from `seed` (32 bytes); resolves to JSON
    /// `{"proof":[bytes],"publicInputs":[decimal],"times":{...}}`, or rejects with the reason.
    pub fn prove(&self, inputs: String, seed: Vec<u8>) -> js_sys::Promise {
        let inner = Rc::clone(&self.inner);
        wasm_bindgen_futures::future_to_promise(async move {
            let proved = inner.prove(&inputs, &seed).await.map_err(js_error)?;
            #[derive(serde::Serialize)]
            #[serde(rename_all = "camelCase")]
            struct Wire<'a> {
                proof: &'a [u8],
                public_inputs: &'a [String],
                times: api::ProveTimes,
            }
            let wire = Wire {
                proof: &proved.proof,
                public_inputs: &proved.public_inputs,
                times: proved.times,
            };
            Ok(JsValue::from_str(
                &serde_json::to_string(&wire).map_err(js)?,
            ))
        })
    }

    /// ark-groth16's proof (bytes) of `inputs` for the same `seed`, on the CPU.
    pub fn reference(&self, inputs: &str, seed: &[u8]) -> Result<Vec<u8>, JsValue> {
        self.inner.reference(inputs, seed).map_err(js_error)
    }

    /// Whether `proof` verifies for `public_inputs` (a JSON array of decimal strings).
    pub fn verify(&self, public_inputs: &str, proof: &[u8]) -> Result<bool, JsValue> {
        let public: Vec<String> = serde_json::from_str(public_inputs)
            .map_err(|e| js_error(WebError::new("INVALID_INPUT", e)))?;
        self.inner.verify(&public, proof).map_err(js_error)
    }

    /// The domain size of the key's circuit.
    #[wasm_bindgen(getter, js_name = domainSize)]
    pub fn domain_size(&self) -> usize {
        self.inner.domain_size()
    }

    /// Reading the key's bytes, milliseconds.
    #[wasm_bindgen(getter, js_name = readMs)]
    pub fn read_ms(&self) -> f64 {
        self.inner.read_ms
    }

    /// Uploading the key's bases, milliseconds.
    #[wasm_bindgen(getter, js_name = prepareMs)]
    pub fn prepare_ms(&self) -> f64 {
        self.inner.prepare_ms
    }
}

/// A snarkjs `.zkey` read and uploaded to the page's GPU (`CircomProver.load(zkeyBytes)`),
/// proving `.wtns` witnesses: what `groth16Prove` of `web/zkgpu.js` wraps.
#[wasm_bindgen]
#[derive(Debug)]
pub struct CircomProver {
    inner: Rc<circom::CircomProver>,
}

#[wasm_bindgen]
impl CircomProver {
    /// Reads the key and uploads it; rejects with the reason (a malformed or foreign key, no
    /// adapter, out of GPU memory).
    pub async fn load(zkey: Vec<u8>) -> Result<CircomProver, JsValue> {
        let ctx = context().await?;
        let inner = circom::CircomProver::load(&ctx, &zkey)
            .await
            .map_err(js_error)?;
        Ok(CircomProver {
            inner: Rc::new(inner),
        })
    }

    /// Reads the key for the CPU prover in this module (a page without WebGPU); rejects with
    /// the reason (a malformed or foreign key).
    #[wasm_bindgen(js_name = loadCpu)]
    pub fn load_cpu(zkey: &[u8]) -> Result<CircomProver, JsValue> {
        let inner = circom::CircomProver::load_cpu(zkey).map_err(js_error)?;
        Ok(CircomProver {
            inner: Rc::new(inner),
        })
    }

    /// Where this prover proves: `"webgpu"` or `"cpu"`.
    #[wasm_bindgen(getter)]
    pub fn backend(&self) -> String {
        self.inner.backend().to_owned()
    }

    /// Proves the `.wtns` bytes with `r` and `s` from `seed` (32 bytes); resolves to JSON
    /// `{"proof":{...},"publicSignals":[...],"times":{...}}` (snarkjs' shapes).
    pub fn prove(&self, wtns: Vec<u8>, seed: Vec<u8>) -> js_sys::Promise {
        let inner = Rc::clone(&self.inner);
        wasm_bindgen_futures::future_to_promise(async move {
            let proved = inner.prove(&wtns, &seed).await.map_err(js_error)?;
            Ok(JsValue::from_str(
                &serde_json::to_string(&proved).map_err(js)?,
            ))
        })
    }

    /// The CPU prover's proof (JSON) of the same witness for the same seed.
    pub fn reference(&self, wtns: &[u8], seed: &[u8]) -> Result<String, JsValue> {
        let proof = self.inner.reference(wtns, seed).map_err(js_error)?;
        serde_json::to_string(&proof).map_err(js)
    }

    /// Whether `proof` (JSON) verifies for `public_signals` (JSON) against the key.
    pub fn verify(&self, public_signals: &str, proof: &str) -> Result<bool, JsValue> {
        self.inner.verify(public_signals, proof).map_err(js_error)
    }

    /// Constraints of the key's circuit.
    #[wasm_bindgen(getter)]
    pub fn constraints(&self) -> usize {
        self.inner.num_constraints()
    }

    /// Reading the key's bytes, milliseconds.
    #[wasm_bindgen(getter, js_name = readMs)]
    pub fn read_ms(&self) -> f64 {
        self.inner.read_ms
    }

    /// Uploading the key, milliseconds.
    #[wasm_bindgen(getter, js_name = prepareMs)]
    pub fn prepare_ms(&self) -> f64 {
        self.inner.prepare_ms
    }
}
