//! A proving service for circom/snarkjs Groth16 keys (BN254 and BLS12-381): an HTTP API to register keys
//! and queue proofs, a durable job queue in SQLite (one machine) or PostgreSQL (several), and
//! GPU workers — in the API's process, or `zkgpu worker` processes on other machines.
//!
//! - [`start`] runs the API ([`ServeConfig`]), with worker lanes on each device of a
//!   [`zkgpu_runtime::DeviceSet`] or none; [`start_workers`] runs lanes alone.
//! - [`Db`] is the queue: a job is claimed under a lease that its worker renews; a job whose
//!   worker died is claimed again once its lease expires, and a result is written only under
//!   the claim that holds, so each job gets one result. Failures that the same input would
//!   repeat fail the job at once with their [`ErrorCode`]; the GPU's are retried up to
//!   [`WorkerConfig::max_attempts`].
//! - [`Client`] is a blocking client of the API.
//!
//! docs/service.md in the repository says how to run it and what it guarantees.

mod api;
mod auth;
mod bodies;
mod client;
mod curves;
mod db;
mod error;
mod events;
mod ids;
mod keys;
pub mod load;
mod metrics;
mod resident;
mod schema;
mod server;
mod witness;
mod worker;

pub use api::Limits;
pub use auth::Tokens;
pub use client::{Client, ProofResult, RemoteJob, RemoteKey};
pub use db::{Claimed, Db, Dialect, JobInfo, JobState, KeyInfo};
pub use error::{ErrorCode, Result, ServiceError};
pub use ids::{check_job_id, check_key_id};
pub use keys::KeyStore;
pub use schema::SCHEMA_VERSION;
pub use server::{Running, ServeConfig, start, start_workers};
pub use witness::WitnessStore;
pub use worker::{JobInputs, WorkerConfig, Workers, default_name};
