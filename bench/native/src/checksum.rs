//! A faithful port of `src/IpcBench.Workload/PayloadChecksum.cs`: the same 64-bit checksum (AVX2 lanes multiplying
//! 32-bit halves, as xxHash3 does, then an 8-byte and a byte tail loop), bit for bit, with the same speed-ups: both
//! lanes in one AVX-512 register where the CPU has it, and the publisher's fill fused with its checksum. The unit tests
//! pin values computed by the C# implementation.

const PRIME1: u64 = 0x9E37_79B1_85EB_CA87;
const PRIME2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const PRIME3: u64 = 0x1656_67B1_9E37_79F9;

/// The byte a publisher fills its payload with (PayloadChecksum.FillByte).
#[inline(always)]
pub fn fill_byte(sequence: i64, publisher_index: i32) -> u8 {
    (sequence.wrapping_mul(31).wrapping_add((publisher_index as i64).wrapping_mul(7)).wrapping_add(1)) as u8
}

pub fn compute(data: &[u8], seed: u64) -> u64 {
    // SAFETY: FILL = false only reads the `data.len()` bytes at the pointer.
    unsafe { run::<false>(data.as_ptr() as *mut u8, data.len(), 0, seed) }
}

/// Fills `payload` with `fill` and returns its checksum in the same pass, as PayloadChecksum.FillAndCompute: the
/// vector part is stored and mixed from registers.
pub fn fill_and_compute(payload: &mut [u8], fill: u8, seed: u64) -> u64 {
    // SAFETY: FILL = true writes exactly the `payload.len()` bytes at the pointer.
    unsafe { run::<true>(payload.as_mut_ptr(), payload.len(), fill, seed) }
}

/// Which vector lanes the blocks go through: AVX-512 and AVX2 give the same result (the C# code uses AVX-512 where
/// the CPU has it, so the reference does too); without AVX2 the scalar loop takes every byte, on both sides.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lanes {
    Avx512,
    Avx2,
    Scalar,
}

#[inline(always)]
fn lanes() -> Lanes {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return Lanes::Avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return Lanes::Avx2;
        }
    }
    Lanes::Scalar
}

#[inline(always)]
unsafe fn run<const FILL: bool>(p: *mut u8, len: usize, fill: u8, seed: u64) -> u64 {
    unsafe { run_with::<FILL>(lanes(), p, len, fill, seed) }
}

#[inline(always)]
unsafe fn run_with<const FILL: bool>(lanes: Lanes, p: *mut u8, len: usize, fill: u8, seed: u64) -> u64 {
    let mut hash = seed ^ (len as u64).wrapping_mul(PRIME1);
    let mut offset = 0usize;

    #[cfg(target_arch = "x86_64")]
    {
        if len >= 64 {
            // SAFETY: the feature was detected; the loops stay inside the `len` bytes at `p`.
            let (h, o) = match lanes {
                Lanes::Avx512 => unsafe { vector::blocks512::<FILL>(p, len, fill, seed, hash) },
                Lanes::Avx2 => unsafe { vector::blocks256::<FILL>(p, len, fill, seed, hash) },
                Lanes::Scalar => (hash, 0),
            };
            hash = h;
            offset = o;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = lanes;

    if FILL {
        unsafe { core::ptr::write_bytes(p.add(offset), fill, len - offset) };
    }
    while offset + 8 <= len {
        let word = u64::from_le_bytes(unsafe { core::ptr::read_unaligned(p.add(offset) as *const [u8; 8]) });
        hash = (hash ^ word.wrapping_mul(PRIME2)).rotate_left(31).wrapping_mul(PRIME1);
        offset += 8;
    }

    while offset < len {
        hash = (hash ^ (unsafe { *p.add(offset) } as u64).wrapping_mul(PRIME3)).rotate_left(11).wrapping_mul(PRIME1);
        offset += 1;
    }

    avalanche(hash)
}

#[inline(always)]
fn avalanche(mut hash: u64) -> u64 {
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(PRIME2);
    hash ^= hash >> 29;
    hash = hash.wrapping_mul(PRIME3);
    hash ^= hash >> 32;
    hash
}

#[inline(always)]
fn fold(lanes: &[u64], mut hash: u64) -> u64 {
    for &lane in lanes {
        hash = (hash ^ lane.wrapping_mul(PRIME2)).rotate_left(27).wrapping_mul(PRIME1);
    }
    hash
}

/// The accumulators' and keys' starting values, lane A (elements 0..4) then lane B (4..8), as PayloadChecksum.Lanes.
fn initial(seed: u64) -> ([u64; 8], [u64; 8]) {
    (
        [
            seed,
            seed ^ PRIME1,
            seed ^ PRIME2,
            !seed,
            !seed ^ PRIME3,
            seed.wrapping_add(PRIME3),
            seed ^ PRIME3,
            seed.wrapping_sub(PRIME1),
        ],
        [
            PRIME1,
            PRIME2,
            PRIME3,
            PRIME1 ^ PRIME2,
            PRIME2 ^ PRIME3,
            PRIME3 ^ PRIME1,
            PRIME2,
            PRIME3 ^ 0x5555_5555_5555_5555,
        ],
    )
}

#[cfg(target_arch = "x86_64")]
mod vector {
    use super::{fold, initial, PRIME3};
    use core::arch::x86_64::*;

    /// `(data ^ key)` low 32 bits × high 32 bits per 64-bit lane (Avx2.Multiply = vpmuludq), plus data.
    #[inline(always)]
    unsafe fn mix256(data: __m256i, key: __m256i) -> __m256i {
        let keyed = _mm256_xor_si256(data, key);
        _mm256_add_epi64(_mm256_mul_epu32(keyed, _mm256_srli_epi64::<32>(keyed)), data)
    }

    /// The same with lanes A and B side by side in one register (Avx512F.Multiply).
    #[inline(always)]
    unsafe fn mix512(data: __m512i, key: __m512i) -> __m512i {
        let keyed = _mm512_xor_si512(data, key);
        _mm512_add_epi64(_mm512_mul_epu32(keyed, _mm512_srli_epi64::<32>(keyed)), data)
    }

    /// Whole 64-byte blocks from `p` (FILL: stores `fill` there first and mixes it from registers).
    /// Returns the hash folded with both lanes and the bytes consumed.
    #[target_feature(enable = "avx2")]
    pub unsafe fn blocks256<const FILL: bool>(p: *mut u8, len: usize, fill: u8, seed: u64, hash: u64) -> (u64, usize) {
        let (acc, key) = initial(seed);
        let mut acc_a = _mm256_loadu_si256(acc.as_ptr() as *const __m256i);
        let mut acc_b = _mm256_loadu_si256(acc[4..].as_ptr() as *const __m256i);
        let mut key_a = _mm256_loadu_si256(key.as_ptr() as *const __m256i);
        let mut key_b = _mm256_loadu_si256(key[4..].as_ptr() as *const __m256i);
        let step = _mm256_set1_epi64x(PRIME3 as i64);
        let pattern = _mm256_set1_epi8(fill as i8);
        let mut offset = 0usize;
        while offset + 64 <= len {
            let (data_a, data_b) = if FILL {
                _mm256_storeu_si256(p.add(offset) as *mut __m256i, pattern);
                _mm256_storeu_si256(p.add(offset + 32) as *mut __m256i, pattern);
                (pattern, pattern)
            } else {
                (
                    _mm256_loadu_si256(p.add(offset) as *const __m256i),
                    _mm256_loadu_si256(p.add(offset + 32) as *const __m256i),
                )
            };
            acc_a = _mm256_add_epi64(acc_a, mix256(data_a, key_a));
            acc_b = _mm256_add_epi64(acc_b, mix256(data_b, key_b));
            key_a = _mm256_add_epi64(key_a, step);
            key_b = _mm256_add_epi64(key_b, step);
            offset += 64;
        }
        let mut lanes = [0u64; 8];
        _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, acc_a);
        _mm256_storeu_si256(lanes[4..].as_mut_ptr() as *mut __m256i, acc_b);
        (fold(&lanes, hash), offset)
    }

    #[target_feature(enable = "avx512f")]
    pub unsafe fn blocks512<const FILL: bool>(p: *mut u8, len: usize, fill: u8, seed: u64, hash: u64) -> (u64, usize) {
        let (acc, key) = initial(seed);
        let mut acc = _mm512_loadu_si512(acc.as_ptr() as *const __m512i);
        let mut key = _mm512_loadu_si512(key.as_ptr() as *const __m512i);
        let step = _mm512_set1_epi64(PRIME3 as i64);
        let pattern = _mm512_set1_epi8(fill as i8);
        let mut offset = 0usize;
        while offset + 64 <= len {
            let data = if FILL {
                _mm512_storeu_si512(p.add(offset) as *mut __m512i, pattern);
                pattern
            } else {
                _mm512_loadu_si512(p.add(offset) as *const __m512i)
            };
            acc = _mm512_add_epi64(acc, mix512(data, key));
            key = _mm512_add_epi64(key, step);
            offset += 64;
        }
        let mut lanes = [0u64; 8];
        _mm512_storeu_si512(lanes.as_mut_ptr() as *mut __m512i, acc);
        (fold(&lanes, hash), offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (length, sequence, publisher index, checksum of a payload filled with fill_byte) from the C# implementation.
    const FILLED: &[(usize, i64, i32, u64)] = &[
        (0, 0, 0, 0x0000000000000000),
        (7, 3, 0, 0x4cf452b097ee8718),
        (8, 5, 1, 0xaacababebd5691ad),
        (63, 9, 0, 0xc035e348cf5a2822),
        (64, 12345, 2, 0xb05e1a3b73313148),
        (100, 77, 0, 0x72a8e30c152f0ed7),
        (1000, 42, 3, 0x6902698367cd44cd),
        (65536, 1000001, 0, 0x7ef1a87b8da5e613),
        (524288, 7, 5, 0xe6700690c030ac50),
    ];

    #[test]
    fn matches_the_csharp_checksum_of_filled_payloads() {
        for &(len, seq, publisher, expected) in FILLED {
            let data = vec![fill_byte(seq, publisher); len];
            assert_eq!(compute(&data, seq as u64), expected, "length {len}, sequence {seq}");
        }
    }

    #[test]
    fn fill_and_compute_writes_the_pattern_and_matches_compute() {
        for &(len, seq, publisher, expected) in FILLED {
            let mut payload = vec![0u8; len];
            let fill = fill_byte(seq, publisher);
            assert_eq!(fill_and_compute(&mut payload, fill, seq as u64), expected, "length {len}");
            assert!(payload.iter().all(|&b| b == fill), "length {len}");
        }
    }

    #[test]
    fn every_lane_width_the_cpu_has_gives_the_same_checksum() {
        let widths: Vec<Lanes> = [Lanes::Avx512, Lanes::Avx2]
            .into_iter()
            .filter(|&l| match l {
                Lanes::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
                _ => std::arch::is_x86_feature_detected!("avx2"),
            })
            .collect();
        for len in [64usize, 100, 1000, 4099, 65536] {
            let mut data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let values: Vec<u64> =
                widths.iter().map(|&l| unsafe { run_with::<false>(l, data.as_mut_ptr(), len, 0, 11) }).collect();
            assert!(values.windows(2).all(|w| w[0] == w[1]), "length {len}: {values:x?}");
        }
    }

    #[test]
    fn matches_the_csharp_checksum_of_patterned_payloads() {
        for (len, expected) in [(200usize, 0xd8f220ffb1e423c7u64), (4099, 0xd7cac1af7e7579be)] {
            let data: Vec<u8> = (0..len).map(|i| (i * 13 + 5) as u8).collect();
            assert_eq!(compute(&data, 99), expected, "length {len}");
        }
    }
}
