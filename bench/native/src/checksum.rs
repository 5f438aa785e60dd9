//! A faithful port of `src/IpcBench.Workload/PayloadChecksum.cs`: the same 64-bit checksum (AVX2 lanes multiplying
//! 32-bit halves, as xxHash3 does, then an 8-byte and a byte tail loop), bit for bit. The unit tests pin values computed
//! by the C# implementation.

const PRIME1: u64 = 0x9E37_79B1_85EB_CA87;
const PRIME2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const PRIME3: u64 = 0x1656_67B1_9E37_79F9;

/// The byte a publisher fills its payload with (PayloadChecksum.FillByte).
#[inline(always)]
pub fn fill_byte(sequence: i64, publisher_index: i32) -> u8 {
    (sequence.wrapping_mul(31).wrapping_add((publisher_index as i64).wrapping_mul(7)).wrapping_add(1)) as u8
}

pub fn compute(data: &[u8], seed: u64) -> u64 {
    let mut hash = seed ^ (data.len() as u64).wrapping_mul(PRIME1);
    let mut offset = 0usize;

    #[cfg(target_arch = "x86_64")]
    {
        if data.len() >= 64 && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is available (checked above); the loop stays inside `data`.
            let (h, o) = unsafe { avx2::blocks(data, seed, hash) };
            hash = h;
            offset = o;
        }
    }

    while offset + 8 <= data.len() {
        let word = u64::from_le_bytes(data[offset..offset + 8].try_into().unwrap());
        hash = (hash ^ word.wrapping_mul(PRIME2)).rotate_left(31).wrapping_mul(PRIME1);
        offset += 8;
    }

    while offset < data.len() {
        hash = (hash ^ (data[offset] as u64).wrapping_mul(PRIME3)).rotate_left(11).wrapping_mul(PRIME1);
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

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{PRIME1, PRIME2, PRIME3};
    use core::arch::x86_64::*;

    /// `Vector256.Create(e0, e1, e2, e3)`: element 0 first (`_mm256_set_epi64x` takes them last first).
    #[inline(always)]
    unsafe fn create(e0: u64, e1: u64, e2: u64, e3: u64) -> __m256i {
        _mm256_set_epi64x(e3 as i64, e2 as i64, e1 as i64, e0 as i64)
    }

    /// `(data ^ key)` low 32 bits × high 32 bits per 64-bit lane (Avx2.Multiply = vpmuludq), plus data.
    #[inline(always)]
    unsafe fn mix(data: __m256i, key: __m256i) -> __m256i {
        let keyed = _mm256_xor_si256(data, key);
        let product = _mm256_mul_epu32(keyed, _mm256_srli_epi64::<32>(keyed));
        _mm256_add_epi64(product, data)
    }

    #[inline(always)]
    unsafe fn fold(acc: __m256i, mut hash: u64) -> u64 {
        let mut lanes = [0u64; 4];
        _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, acc);
        for lane in lanes {
            hash = (hash ^ lane.wrapping_mul(PRIME2)).rotate_left(27).wrapping_mul(PRIME1);
        }
        hash
    }

    #[target_feature(enable = "avx2")]
    pub unsafe fn blocks(data: &[u8], seed: u64, hash: u64) -> (u64, usize) {
        let mut acc_a = create(seed, seed ^ PRIME1, seed ^ PRIME2, !seed);
        let mut acc_b = create(!seed ^ PRIME3, seed.wrapping_add(PRIME3), seed ^ PRIME3, seed.wrapping_sub(PRIME1));
        let mut key_a = create(PRIME1, PRIME2, PRIME3, PRIME1 ^ PRIME2);
        let mut key_b = create(PRIME2 ^ PRIME3, PRIME3 ^ PRIME1, PRIME2, PRIME3 ^ 0x5555_5555_5555_5555);
        let step = create(PRIME3, PRIME3, PRIME3, PRIME3);
        let mut offset = 0usize;
        let p = data.as_ptr();
        while offset + 64 <= data.len() {
            let data_a = _mm256_loadu_si256(p.add(offset) as *const __m256i);
            let data_b = _mm256_loadu_si256(p.add(offset + 32) as *const __m256i);
            acc_a = _mm256_add_epi64(acc_a, mix(data_a, key_a));
            acc_b = _mm256_add_epi64(acc_b, mix(data_b, key_b));
            key_a = _mm256_add_epi64(key_a, step);
            key_b = _mm256_add_epi64(key_b, step);
            offset += 64;
        }
        let hash = fold(acc_a, hash);
        let hash = fold(acc_b, hash);
        (hash, offset)
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
    fn matches_the_csharp_checksum_of_patterned_payloads() {
        for (len, expected) in [(200usize, 0xd8f220ffb1e423c7u64), (4099, 0xd7cac1af7e7579be)] {
            let data: Vec<u8> = (0..len).map(|i| (i * 13 + 5) as u8).collect();
            assert_eq!(compute(&data, 99), expected, "length {len}");
        }
    }
}
