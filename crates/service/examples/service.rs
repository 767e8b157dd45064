//! The proving service in one process: the API on a free loopback port with a worker lane
//! on the default GPU, then a client that registers a snarkjs key, queues a witness, waits
//! and prints snarkjs' proof.json and public.json.
//!
//! ```sh
//! cargo run --release -p zkgpu-service --example service -- \
//!   crates/circom/tests/fixtures/multiplier.zkey crates/circom/tests/fixtures/multiplier.wtns
//! ```

#![allow(clippy::print_stdout)]

use zkgpu_runtime::{ContextOptions, DeviceChoice, DeviceSet};
use zkgpu_service::{Client, Limits, ServeConfig, Tokens, WorkerConfig};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(zkey), Some(wtns)) = (args.next(), args.next()) else {
        return Err("usage: service KEY.zkey WITNESS.wtns".into());
    };
    let (zkey, wtns) = (std::fs::read(zkey)?, std::fs::read(wtns)?);
    let data = std::env::temp_dir().join(format!("zkgpu-example-{}", std::process::id()));
    let devices = DeviceSet::open(ContextOptions::from_env()?, &DeviceChoice::Count(1)).await?;
    let running = zkgpu_service::start(
        ServeConfig {
            listen: "127.0.0.1:0".parse()?,
            db: format!("sqlite://{}", data.join("jobs.db").display()),
            data: data.clone(),
            tokens: Tokens::default(),
            limits: Limits::default(),
            worker: WorkerConfig::default(),
        },
        Some(&devices),
    )
    .await?;
    let base = format!("http://{}", running.addr);
    // The client blocks: off the async threads.
    let out = tokio::task::spawn_blocking(move || {
        let client = Client::new(&base, None);
        let key = client.register_key(&zkey)?;
        let job = client.submit(&key.id, &wtns)?;
        let done = client.wait(&job.id)?;
        println!(
            "job {}: {} in {:.1} ms",
            done.id,
            done.state,
            done.prove_ms.unwrap_or(0.0)
        );
        client.proof(&job.id)
    })
    .await??;
    println!("{:#}\n{:#}", out.proof, out.public);
    running.shutdown().await?;
    std::fs::remove_dir_all(&data)?;
    Ok(())
}
