using IpcBench.Reports;

namespace IpcBench.Tests.Shared;

/// <summary>
/// Report models shaped like real suites, with made-up but plausible figures (seeded, so every run renders the same):
/// the renderers and the browser test need every chart kind fed, not measurements.
/// </summary>
internal static class ReportSamples
{
    /// <summary>
    /// Repetitions for a compared matrix: a rank test needs 4 or more a side to be significant at all, and the
    /// comparison's correction for its 72 tests needs a little more than the minimum.
    /// </summary>
    public const int ComparedRepetitions = 6;

    public static readonly ReportEnvironment Environment = new("lab-01", "AMD EPYC 7B13", 2, "6.18.0", "Debian GNU/Linux 12", "10.0.12", "1.0.0+test", 512);

    /// <summary>A reference preset's suite: every cell of the preset, <paramref name="repetitions"/> rounds, one cell failed in round 2.</summary>
    public static SuiteReport Preset(string presetId, int repetitions = 3, string name = "reference run")
    {
        var preset = ReferencePresets.All.FirstOrDefault(p => p.Id == presetId) ?? throw new ArgumentException(presetId);
        var random = new Random(14);
        var cells = preset.Cells.Select((cell, index) => new ReportCell(cell.Key, preset.Duration, preset.Warmup,
            Enumerable.Range(1, repetitions).Select(round => Repetition(random, cell.Key, round, $"{presetId}-c{index}-r{round}",
                failed: index == 1 && round == 2)).ToList(),
            cell.Published)).ToList();
        return new SuiteReport("suite-0001", name, "COMPLETED", new DateTimeOffset(2026, 11, 25, 2, 16, 0, TimeSpan.Zero),
            new DateTimeOffset(2026, 11, 25, 2, 32, 0, TimeSpan.Zero), repetitions, Environment, cells, preset.Id, preset.Title, preset.Reproduces);
    }

    /// <summary>A plain matrix (no preset): several transports and payloads, 1:1 FULL streams; uds 64 KB's last round hit a slow spell.</summary>
    public static SuiteReport Matrix(string name, int repetitions = 3)
    {
        var random = new Random(7);
        var cells = new List<ReportCell>();
        foreach (var transport in new[] { "channels", "uds", "shm-ring", "iceoryx2" })
        {
            foreach (var payload in new[] { 8, 1024, 65536 })
            {
                var key = new CellKey(transport, payload);
                cells.Add(new ReportCell(key, TimeSpan.FromSeconds(2), TimeSpan.FromSeconds(0.5),
                    Enumerable.Range(1, repetitions).Select(r => Repetition(random, key, r, $"{transport}-{payload}-{r}", failed: false,
                        slowSpell: transport == "uds" && payload == 65536 && r == repetitions)).ToList(), []));
            }
        }

        return new SuiteReport("suite-0002", name, "COMPLETED", new DateTimeOffset(2026, 11, 25, 3, 0, 0, TimeSpan.Zero), null, repetitions,
            Environment, cells);
    }

    /// <summary>
    /// `run`'s quick matrix: five transports at 8 B, 1 KB, 64 KB and 512 KB, 1:1 FULL streams, in the waits a suite
    /// records for them (<see cref="ResolvedWaits"/>). Its own seed, so the other samples render as before.
    /// </summary>
    public static SuiteReport QuickMatrix(int repetitions = 3)
    {
        var random = new Random(35);
        var cells = (from transport in new[] { "channels", "uds", "shm-ring", "iceoryx2", "tcp" }
                     from payload in new[] { 8, 1024, 65536, 524288 }
                     let key = new CellKey(transport, payload)
                     select new ReportCell(key, TimeSpan.FromSeconds(2), TimeSpan.FromSeconds(0.5), Enumerable.Range(1, repetitions)
                         .Select(r => Repetition(random, key, r, $"{transport}-{payload}-{r}", failed: false)).ToList(), [])).ToList();
        return ResolvedWaits(new SuiteReport("suite-0035", "quick matrix", "COMPLETED", new DateTimeOffset(2026, 11, 27, 0, 0, 0, TimeSpan.Zero), null,
            repetitions, Environment, cells));
    }

    /// <summary>
    /// The cells in the waits their transports default to, named as a suite records them (the validator resolves the
    /// default): channels, shm-ring and iceoryx2 yield, uds, tcp and the rest block.
    /// </summary>
    public static SuiteReport ResolvedWaits(SuiteReport report) => report with
    {
        Cells = [.. report.Cells.Select(c => c with
        {
            Key = c.Key with { Wait = c.Key.Transport is "channels" or "shm-ring" or "iceoryx2" ? CellWait.Yield : CellWait.Block },
        })],
    };

    /// <summary>
    /// A suite whose vCPUs moved between rounds, as on the lab VM: rounds 1, 3 and 4 near (core-to-core probe ~100–140 ns),
    /// 2, 5 and 6 far (~480–630 ns). shm-ring and channels at 8 B run 3.5x and 2.5x faster near (bimodal by placement),
    /// uds does not notice (unimodal). Its own seed, so the other samples render as before.
    /// </summary>
    public static SuiteReport Placements(string name = "placements")
    {
        var random = new Random(25);
        int[] nearRounds = [1, 3, 4];
        var cells = new[] { ("shm-ring", 3.5), ("channels", 2.5), ("uds", 1.0) }.Select(t =>
        {
            var (transport, nearFactor) = t;
            var key = new CellKey(transport, 8);
            return new ReportCell(key, TimeSpan.FromSeconds(2), TimeSpan.FromSeconds(0.5), Enumerable.Range(1, 6).Select(round =>
            {
                bool near = nearRounds.Contains(round);
                var repetition = Repetition(random, key, round, $"{transport}-8-{round}", failed: false);
                return Scaled(repetition, near ? nearFactor : 1) with { ProbeNanoseconds = near ? 100 + random.Next(40) : 480 + random.Next(150) };
            }).ToList(), []);
        }).ToList();
        return new SuiteReport("suite-0004", name, "COMPLETED", new DateTimeOffset(2026, 11, 25, 4, 0, 0, TimeSpan.Zero), null, 6, Environment, cells);
    }

    /// <summary>
    /// Offered load at 1 KB 1:1: uds swept at 1 K, 10 K and 100 K msg/s per publisher (a cell each); shm-ring's rate search
    /// (closed-loop cell, four probes, sustainable at 40 K with the 80 K probe failing); tcp's search, whose lowest probe
    /// failed (no sustainable rate). Latency grows with the offered rate, steeply past what a transport sustains.
    /// </summary>
    public static SuiteReport Load(string name = "offered load")
    {
        var random = new Random(26);
        RepetitionResult At(CellKey key, double rate, string id, double p50)
        {
            var r = Repetition(random, key, 1, id, failed: false);
            return r with
            {
                MessagesPerSecond = rate,
                BytesPerSecond = rate * key.PayloadBytes,
                Latency = new LatencyPercentiles((long)rate, p50, p50 * 1.5, p50 * 3, p50 * 6, p50 * 12, p50 * 30),
            };
        }

        var cells = new List<ReportCell>();
        foreach (var (rate, p50) in new[] { (1e3, 9e3), (1e4, 11e3), (1e5, 40e3) })
        {
            var key = new CellKey("uds", 1024, RatePerPublisher: rate);
            cells.Add(new ReportCell(key, TimeSpan.FromSeconds(1), TimeSpan.Zero, [At(key, rate, $"uds-{rate}", p50)], []));
        }

        var shm = new CellKey("shm-ring", 1024);
        var probes = new[] { (2.5e3, true, 2e3), (1e4, true, 2.2e3), (4e4, true, 3e3), (8e4, false, 900e3) }
            .Select((p, i) => new RateProbeResult(p.Item1, p.Item2, p.Item2 ? string.Empty : "latency p99 2.7 ms above the bound 1 ms",
                At(shm, p.Item2 ? p.Item1 : p.Item1 * 0.9, $"shm-probe-{i}", p.Item3) with { SenderLagP99Nanoseconds = p.Item2 ? 1500 : 800e3 })).ToList();
        cells.Add(new ReportCell(shm, TimeSpan.FromSeconds(1), TimeSpan.Zero, [At(shm, 6e5, "shm-closed", 400e3)], [],
            Search: new RateSearchReport(4e4, 8e4, "max_steps (4) reached: bracketed within 100 %", probes)));
        var tcp = new CellKey("tcp", 1024);
        cells.Add(new ReportCell(tcp, TimeSpan.FromSeconds(1), TimeSpan.Zero, [At(tcp, 1.2e5, "tcp-closed", 600e3)], [],
            Search: new RateSearchReport(null, 469, "no sustainable rate: the lowest probe (469 msg/s per publisher) failed: sender lag dominates",
                [new RateProbeResult(469, false, "sender lag dominates", At(tcp, 469, "tcp-probe-0", 1.5e6))])));
        return new SuiteReport("suite-0026", name, "COMPLETED", new DateTimeOffset(2026, 11, 26, 0, 0, 0, TimeSpan.Zero), null, 1, Environment, cells);
    }

    /// <summary>
    /// The same matrix run again under another id: uds 20 % slower (REGRESSED), shm-ring 20 % faster (IMPROVED), latency
    /// moving the other way, every other cell's figures as they were (SAME).
    /// </summary>
    public static SuiteReport Candidate(SuiteReport baseline, string id = "suite-0003") => baseline with
    {
        SuiteId = id,
        Cells = [.. baseline.Cells.Select(c => c with
        {
            Repetitions = [.. c.Repetitions.Select(r => Scaled(r, c.Key.Transport switch { "uds" => 0.8, "shm-ring" => 1.2, _ => 1 }))],
        })],
    };

    private static RepetitionResult Scaled(RepetitionResult r, double factor) => factor == 1 ? r : r with
    {
        MessagesPerSecond = r.MessagesPerSecond * factor,
        BytesPerSecond = r.BytesPerSecond * factor,
        Latency = r.Latency with
        {
            P50 = r.Latency.P50 / factor, P90 = r.Latency.P90 / factor, P99 = r.Latency.P99 / factor,
            P999 = r.Latency.P999 / factor, P9999 = r.Latency.P9999 / factor, Max = r.Latency.Max / factor,
        },
    };

    private static RepetitionResult Repetition(Random random, CellKey key, int round, string id, bool failed, bool slowSpell = false)
    {
        if (failed)
        {
            return new RepetitionResult(round, id, "agent 0 exited with code 137", 0, 0, 0, 0, LatencyPercentiles.None, []);
        }

        // Cheaper per byte for zero-copy transports, in-process fastest; ±6 % noise so some cells cross the 10 % spread.
        double baseRate = key.Transport switch { "channels" => 1.2e6, "shm-ring" => 4e6, "iceoryx2" => 1e6, _ => 2.5e5 };
        double rate = baseRate / (1 + key.PayloadBytes / 32768.0) * (key.Access == CellAccess.HeaderOnly ? 1.5 : 1) * (1 + (random.NextDouble() - 0.5) * 0.12);
        if (key.Mode == CellMode.RoundTrip)
        {
            rate /= 8;
        }

        if (slowSpell)
        {
            rate *= 0.75;
        }

        double p50 = 1e9 / rate * (key.Mode == CellMode.RoundTrip ? 1 : 20);
        var latency = new LatencyPercentiles((long)(rate * 2), p50, p50 * 1.6, p50 * 3, p50 * 8, p50 * 20, p50 * 60);
        double daemonCpu = 95 + random.NextDouble() * 5;
        double agentsCpu = key.Transport == "channels" ? 0 : 90 + random.NextDouble() * 10;
        var series = Enumerable.Range(1, 12).Select(s => new SeriesPoint(s * 0.25, rate * (0.95 + random.NextDouble() * 0.1), daemonCpu, agentsCpu)).ToList();
        return new RepetitionResult(round, id, null, rate, rate * key.PayloadBytes, daemonCpu, agentsCpu, latency, series);
    }
}
