//! A small seeded PRNG (SplitMix64): election jitter comes only from here, so a seed replays
//! a run exactly. Not for cryptography.

/// Seeded pseudo-random numbers.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A random id as Kafka's `Uuid.randomUuid()` picks one (topic ids, ACL ids, token ids):
    /// never ZERO or ONE (the metadata topic's), never starting with '-' in its string form.
    pub fn uuid(&mut self) -> uuid::Uuid {
        loop {
            let bits = (u128::from(self.next_u64()) << 64) | u128::from(self.next_u64());
            let id = uuid::Builder::from_random_bytes(bits.to_be_bytes()).into_uuid();
            let v = id.as_u128();
            if v != 0 && v != 1 && !crate::common::uuid::uuid_to_kafka_string(&id).starts_with('-')
            {
                return id;
            }
        }
    }

    /// Uniform in `[0, bound)`; 0 when `bound` is 0.
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 {
            return 0;
        }
        // Multiply-shift: unbiased enough for jitter, and deterministic.
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_and_bounds_hold() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        for _ in 0..1000 {
            let x = a.below(1000);
            assert_eq!(x, b.below(1000));
            assert!(x < 1000);
        }
        assert_eq!(Rng::new(1).below(0), 0);
    }
}
