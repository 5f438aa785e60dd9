//! A log-linear latency histogram (1024 sub-buckets per power of two, ~3 significant digits), recorded per message
//! like LatencyHistogram.Record on the C# side, which also keeps the sum, minimum and maximum: so does this one.

pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    sum: f64,
    min: i64,
    max: i64,
}

const SUB_BITS: u32 = 10;
const SUB: u64 = 1 << SUB_BITS;

impl Histogram {
    pub fn new() -> Self {
        Self { counts: vec![0; (64 * SUB) as usize], total: 0, sum: 0.0, min: i64::MAX, max: 0 }
    }

    #[inline(always)]
    fn index(v: u64) -> usize {
        if v < 2 * SUB {
            return v as usize;
        }
        let e = 63 - v.leading_zeros();
        let shift = e - SUB_BITS;
        ((shift as u64) * SUB + (v >> shift)) as usize
    }

    fn value(index: usize) -> u64 {
        let index = index as u64;
        if index < 2 * SUB {
            return index;
        }
        let shift = index / SUB - 1;
        let mantissa = index - shift * SUB;
        mantissa << shift
    }

    #[inline(always)]
    pub fn record(&mut self, ns: i64) {
        let ns = ns.clamp(0, 3_600_000_000_000);
        self.counts[Self::index(ns as u64)] += 1;
        self.total += 1;
        self.sum += ns as f64;
        self.max = self.max.max(ns);
        self.min = self.min.min(ns);
    }

    pub fn mean(&self) -> f64 {
        if self.total == 0 { 0.0 } else { self.sum / self.total as f64 }
    }

    pub fn min(&self) -> i64 {
        if self.total == 0 { 0 } else { self.min }
    }

    pub fn max(&self) -> i64 {
        self.max
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn percentile(&self, p: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let target = ((p / 100.0) * self.total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= target {
                return Self::value(i);
            }
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_within_a_thousandth() {
        let mut h = Histogram::new();
        for v in 1..=100_000i64 {
            h.record(v * 1000);
        }
        let p50 = h.percentile(50.0) as f64;
        assert!((p50 - 50_000_000.0).abs() / 50_000_000.0 < 0.002, "{p50}");
        let p99 = h.percentile(99.0) as f64;
        assert!((p99 - 99_000_000.0).abs() / 99_000_000.0 < 0.002, "{p99}");
    }
}
