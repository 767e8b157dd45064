//! A `.wtns` read as its bytes arrive (a service receiving one over the network): its values
//! are converted a batch at a time while the rest is still coming, so that little is left
//! to do after the last byte. The end still checks the whole file as [`crate::read_wtns`]
//! does, and wherever the early reading saw something it does not expect (sections in
//! another order, another field, a value past the modulus), the end reads the file whole:
//! the values and every error are [`crate::read_wtns`]'s.

use ark_ff::{BigInteger, PrimeField};

use crate::error::CircomError;
use crate::wtns::{convert, values_of};

/// Value bytes converted together (32768 values of 32 bytes): enough to spread over the
/// host's threads, little enough to keep pace with a network.
const BATCH: usize = 1 << 20;

/// What the bytes before the values say so far.
enum Head {
    /// Not all of it has arrived.
    More,
    /// Something the early reading leaves to the end's whole reading.
    Unusual,
    /// The values start at this byte and number this many.
    Values(usize, usize),
}

/// A `.wtns` over the scalar field `F`, pushed piece by piece ([`WtnsStream::push`]), then
/// read with [`WtnsStream::finish`] from the same bytes, whole.
#[derive(Debug)]
pub struct WtnsStream<F> {
    /// The bytes before the values, kept until they are all in.
    head: Vec<u8>,
    /// The values' first byte and count, once the head is read.
    layout: Option<(usize, usize)>,
    /// Bytes pushed.
    seen: usize,
    /// Value bytes not converted yet.
    pending: Vec<u8>,
    values: Vec<F>,
    /// The early reading has stopped; the end reads the whole file.
    stopped: bool,
}

impl<F: PrimeField> Default for WtnsStream<F> {
    fn default() -> Self {
        Self {
            head: Vec::new(),
            layout: None,
            seen: 0,
            pending: Vec::new(),
            values: Vec::new(),
            stopped: false,
        }
    }
}

fn u32_at(b: &[u8], at: usize) -> usize {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

impl<F: PrimeField> WtnsStream<F> {
    /// A stream before its first byte.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next bytes of the file.
    pub fn push(&mut self, piece: &[u8]) {
        self.seen += piece.len();
        if self.stopped {
            return;
        }
        if self.layout.is_some() {
            self.pending.extend_from_slice(piece);
            if self.pending.len() >= BATCH {
                self.convert_pending();
            }
            return;
        }
        self.head.extend_from_slice(piece);
        match self.read_head() {
            Head::More => {}
            Head::Unusual => self.stop(),
            Head::Values(at, count) => {
                self.layout = Some((at, count));
                self.pending = self.head.split_off(at);
                self.head = Vec::new();
                if self.pending.len() >= BATCH {
                    self.convert_pending();
                }
            }
        }
    }

    fn stop(&mut self) {
        self.stopped = true;
        self.head = Vec::new();
        self.pending = Vec::new();
        self.values = Vec::new();
    }

    /// snarkjs' layout: the header, section 1 (the field's size, its prime, the count),
    /// then section 2's head; anything else is left to the end.
    fn read_head(&self) -> Head {
        let (h, n8) = (&self.head, crate::curve::n8::<F>());
        if h.len() < 24 {
            return Head::More;
        }
        if &h[..4] != b"wtns" || u32_at(h, 4) != 2 || u32_at(h, 12) != 1 {
            return Head::Unusual;
        }
        let one = 8 + n8;
        if u64_at(h, 16) != one as u64 {
            return Head::Unusual;
        }
        let at = 24 + one + 12;
        if h.len() < at {
            return Head::More;
        }
        let count = u32_at(h, 24 + 4 + n8);
        let prime = F::MODULUS.to_bytes_le();
        if u32_at(h, 24) != n8 || h[28..28 + n8] != prime[..] || u32_at(h, 24 + one) != 2 {
            return Head::Unusual;
        }
        match count.checked_mul(n8) {
            Some(bytes) if bytes as u64 == u64_at(h, 24 + one + 4) => Head::Values(at, count),
            _ => Head::Unusual,
        }
    }

    /// Converts the whole values among the pending bytes (up to the count).
    fn convert_pending(&mut self) {
        let Some((_, count)) = self.layout else {
            return;
        };
        let n8 = crate::curve::n8::<F>();
        let take = (self.pending.len() / n8).min(count - self.values.len());
        match convert::<F>(&self.pending[..take * n8], self.values.len()) {
            Ok(v) => {
                self.values.extend(v);
                self.pending.drain(..take * n8);
            }
            Err(_) => self.stop(),
        }
    }

    /// The values of `whole`, which must be the bytes pushed, in order: the file checked
    /// whole as [`crate::read_wtns`] checks it, the values converted so far taken where the
    /// early reading agrees with it, the rest converted now.
    pub fn finish(self, whole: &[u8]) -> Result<Vec<F>, CircomError> {
        let (data, offset) = values_of::<F>(whole)?;
        let n8 = crate::curve::n8::<F>();
        match self.layout {
            Some((at, count))
                if !self.stopped
                    && at == offset
                    && count * n8 == data.len()
                    && self.seen == whole.len() =>
            {
                let done = self.values.len();
                let mut values = self.values;
                values.extend(convert::<F>(&data[done * n8..], done)?);
                Ok(values)
            }
            _ => convert(data, 0),
        }
    }

    /// Values converted so far (for tests and progress).
    pub fn converted(&self) -> usize {
        self.values.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{read_wtns, write_wtns};
    use ark_ff::UniformRand;
    use ark_std::rand::{Rng, SeedableRng, rngs::StdRng};

    fn streamed<F: PrimeField>(
        bytes: &[u8],
        cuts: &[usize],
    ) -> (Result<Vec<F>, CircomError>, usize) {
        let mut s = WtnsStream::<F>::new();
        let mut at = 0;
        for &c in cuts.iter().chain([bytes.len()].iter()) {
            let c = c.clamp(at, bytes.len());
            s.push(&bytes[at..c]);
            at = c;
        }
        let early = s.converted();
        (s.finish(bytes), early)
    }

    #[test]
    fn streamed_values_equal_read_wtns_at_every_cut() {
        let mut rng = StdRng::seed_from_u64(7);
        let v: Vec<ark_bn254::Fr> = (0..40).map(|_| ark_bn254::Fr::rand(&mut rng)).collect();
        let bytes = write_wtns(&v);
        for cut in 0..=bytes.len() {
            let (got, _) = streamed::<ark_bn254::Fr>(&bytes, &[cut]);
            assert_eq!(got.unwrap(), v, "cut at {cut}");
        }
        for _ in 0..50 {
            let mut cuts: Vec<usize> = (0..6).map(|_| rng.gen_range(0..bytes.len())).collect();
            cuts.sort_unstable();
            assert_eq!(streamed::<ark_bn254::Fr>(&bytes, &cuts).0.unwrap(), v);
        }
    }

    #[test]
    fn large_witnesses_are_converted_before_the_end() {
        let mut rng = StdRng::seed_from_u64(8);
        let n = 3 * BATCH / 32 + 5;
        let v: Vec<ark_bls12_381::Fr> = (0..n).map(|_| ark_bls12_381::Fr::rand(&mut rng)).collect();
        let bytes = write_wtns(&v);
        let cuts: Vec<usize> = (1..bytes.len() / 65_536).map(|k| k * 65_536).collect();
        let (got, early) = streamed::<ark_bls12_381::Fr>(&bytes, &cuts);
        assert_eq!(got.unwrap(), v);
        // All but the last batch's worth were converted as the bytes came.
        assert!(early >= n - BATCH / 32, "{early} of {n} converted early");
    }

    #[test]
    fn unusual_files_give_read_wtns_answers() {
        let mut rng = StdRng::seed_from_u64(9);
        let v: Vec<ark_bn254::Fr> = (0..5000).map(|_| ark_bn254::Fr::rand(&mut rng)).collect();
        let good = write_wtns(&v);
        let mut past = good.clone();
        // Value 4000 set to the modulus itself.
        let at = good.len() - 32 * (5000 - 4000);
        past[at..at + 32].copy_from_slice(&ark_bn254::Fr::MODULUS.to_bytes_le());
        let other_field = write_wtns(
            &v[..3]
                .iter()
                .map(|_| ark_bls12_381::Fr::from(3u8))
                .collect::<Vec<_>>(),
        );
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("past the modulus", past),
            ("truncated", good[..good.len() - 7].to_vec()),
            ("one byte more", [good.as_slice(), &[0]].concat()),
            ("another field", other_field),
            ("not a wtns", b"r1cs\x02\0\0\0".to_vec()),
            ("empty", Vec::new()),
        ];
        for (what, bytes) in cases {
            for cuts in [vec![], vec![1, 30, 100], vec![BATCH]] {
                let (got, _) = streamed::<ark_bn254::Fr>(&bytes, &cuts);
                let want = read_wtns::<ark_bn254::Fr>(&bytes);
                let text =
                    |r: Result<Vec<ark_bn254::Fr>, CircomError>| r.map_err(|e| e.to_string());
                assert_eq!(text(got), text(want), "{what}, cut at {cuts:?}");
            }
        }
    }
}
