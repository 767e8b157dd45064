//! A submitted witness checked before it is queued: well formed, every value in the field,
//! as many values as the key's circuit has signals, the constant one first. Stored as a
//! `.wtns` whichever way it came.

use ark_bn254::Fr;
use ark_std::One;

use crate::error::{ErrorCode, Result, ServiceError};

/// The witness `body` (a `.wtns`, or with `json` an array of decimal strings) checked against
/// a circuit of `signals` signals, as the `.wtns` to store.
pub(crate) fn checked_wtns(body: &[u8], json: bool, signals: usize) -> Result<Vec<u8>> {
    let values = if json {
        let text = std::str::from_utf8(body).map_err(|_| {
            ServiceError::new(ErrorCode::InvalidWitness, "the JSON witness is not UTF-8")
        })?;
        zkgpu_circom::read_witness_json(text).map_err(ServiceError::of_witness)?
    } else {
        zkgpu_circom::read_wtns(body).map_err(ServiceError::of_witness)?
    };
    check(&values, signals)?;
    Ok(if json {
        zkgpu_circom::write_wtns(&values)
    } else {
        body.to_vec()
    })
}

fn check(values: &[Fr], signals: usize) -> Result<()> {
    if values.len() != signals {
        return Err(ServiceError::new(
            ErrorCode::WitnessMismatch,
            format!(
                "the witness has {} values, the key's circuit {signals} signals",
                values.len()
            ),
        ));
    }
    if !values.first().is_some_and(|v| v.is_one()) {
        return Err(ServiceError::new(
            ErrorCode::WitnessMismatch,
            "its first value (the constant signal) is not 1",
        ));
    }
    Ok(())
}
