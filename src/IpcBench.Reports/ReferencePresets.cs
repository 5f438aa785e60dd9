namespace IpcBench.Reports;

/// <summary>
/// The suites that reproduce each published figure of docs/published-figures.md, as data. Each figure sits
/// on the cell that reproduces it, with the method differences that explain a gap: published figures come from their
/// authors' machines and methods, so the ratios between transports are what should match, not the absolutes.
/// </summary>
public static class ReferencePresets
{
    private const int KB = 1024;
    private const int MB = 1024 * 1024;

    /// <summary>The presets that reproduce a published figure; a suite names these and the saturation ones (<see cref="PresetCatalog"/>).</summary>
    public static IReadOnlyList<ReferencePreset> All { get; } = [Section1(), Section2(), Section3(), Section4(), Section5()];

    /// <summary>§1: the iceoryx2-from-C# blog, 1:1, header-only as published and FULL beside it.</summary>
    private static ReferencePreset Section1()
    {
        const string Ref = "published-figures.md §1";
        const string Machine = " Machine: the blog's (not stated; named pipes alone used 12.6 cores) against this one: compare ratios between transports.";
        int[] payloads = [8, KB, 64 * KB, 512 * KB];
        var published = new Dictionary<string, double[]>
        {
            ["channels"] = [15.3e6, 13.6e6, 15.7e6, 15.3e6],
            ["named-pipes"] = [648e3, 316e3, 4.5e3, 589],
            ["iceoryx2"] = [2.2e6, 2.3e6, 2.1e6, 2.0e6],
        };
        var headerOnly = new Dictionary<string, string>
        {
            ["channels"] = "In-process on both sides, payload untouched (HEADER_ONLY), as published.",
            ["named-pipes"] = "Published: publisher and subscriber in one process; ours: the subscriber in an agent process. A pipe copies " +
                "every byte through the kernel whatever the access; .NET named pipes are Unix domain sockets on Linux.",
            ["iceoryx2"] = "Published: one process, the payload never written or read (512 KB at 2 M msg/s is ~1 TB/s: pointer passing); " +
                "ours: cross-process, HEADER_ONLY also lends the sample untouched.",
        };
        const string Full = "FULL beside the published method: every payload byte written, checksummed and verified on receipt, which " +
            "the published run never did; at large payloads this is bound by memory bandwidth, not by the transport.";
        var cpu = new Dictionary<(string, int), double> { [("channels", 8)] = 180, [("named-pipes", 8)] = 1257, [("named-pipes", 512 * KB)] = 1183, [("iceoryx2", 8)] = 195 };

        var cells = new List<PresetCell>();
        foreach (var access in new[] { CellAccess.HeaderOnly, CellAccess.Full })
        {
            foreach (var (transport, figures) in published)
            {
                for (int i = 0; i < payloads.Length; i++)
                {
                    var method = (access == CellAccess.HeaderOnly ? headerOnly[transport] : Full) + Machine;
                    var label = $"{Name(transport)}, {ReportFormatting.Bytes(payloads[i])}";
                    var attached = new List<PublishedFigure> { new(Ref, label, FigureMetric.MessagesPerSecond, figures[i], method) };
                    if (access == CellAccess.HeaderOnly && cpu.TryGetValue((transport, payloads[i]), out var percent))
                    {
                        attached.Add(new(Ref, label + ", whole-process CPU", FigureMetric.TotalCpuPercent, percent,
                            "Published: one process doing both sides; ours: daemon and agent added up." + Machine));
                    }

                    cells.Add(new PresetCell(new CellKey(transport, payloads[i], Access: access), attached));
                }
            }
        }

        return new ReferencePreset("reference-1", "§1 iceoryx2 from C#: channels, named pipes, iceoryx2, 1:1",
            "published-figures.md §1: 1:1 at 8 B / 1 KB / 64 KB / 512 KB, 10 s after 2 s warmup, channels (in-process) / named-pipes / iceoryx2; " +
            "HEADER_ONLY as published and FULL beside it. The claimed ratios (iceoryx2 3.3x pipes at 8 B, 3,371x at 512 KB, 6x less CPU) " +
            "follow from the cells.",
            TimeSpan.FromSeconds(10), TimeSpan.FromSeconds(2), cells, []);
    }

    /// <summary>§2: SharedMemoryIPC's memory-mapped "pipes", pipesCount independent pairs, on the shm-ring transport.</summary>
    private static ReferencePreset Section2()
    {
        const string Ref = "published-figures.md §2";
        int[] pipes = [1, 2, 4, 8];
        (int Bytes, string Chunk, double[] MsgPerSecond, double? OnePipeMiB)[] rows =
        [
            (KB, "1 KB", [260_600, 484_364, 690_670, 646_699], 254),
            (10 * KB, "1 KB", [82_970, 137_557, 185_508, 196_704], 810),
            (100 * KB, "100 KB", [44_429, 64_188, 95_378, 126_583], 4_339),
            (MB, "1 MB", [5_789, 10_198, 8_224, 8_117], 5_789),
            (10 * MB, "1 MB", [356, 495, 556, 539], 3_565),
        ];

        var cells = new List<PresetCell>();
        foreach (var row in rows)
        {
            for (int i = 0; i < pipes.Length; i++)
            {
                var method = $"Published: SharedMemoryIPC on an i7-4930K (6 cores, 12 threads), Windows 10, {row.Chunk} chunks; ours: shm-ring " +
                    "(its own chunk size, SlotDataBytes) on this machine, PAIRED publisher i -> subscriber i, payload written and verified. " +
                    $"{pipes[i]} pair(s) = {2 * pipes[i]} busy threads on this machine's cores.";
                var label = $"{ReportFormatting.Bytes(row.Bytes)}, {pipes[i]} pipe(s)";
                var attached = new List<PublishedFigure> { new(Ref, label, FigureMetric.MessagesPerSecond, row.MsgPerSecond[i], method) };
                if (pipes[i] == 1 && row.OnePipeMiB is { } mib)
                {
                    attached.Add(new(Ref, label, FigureMetric.MebibytesPerSecond, mib, method));
                }

                if (pipes[i] == 8 && row.Bytes == 100 * KB)
                {
                    attached.Add(new(Ref, label, FigureMetric.MebibytesPerSecond, 12_362, method));
                }

                cells.Add(new PresetCell(new CellKey("shm-ring", row.Bytes, pipes[i], pipes[i], CellTopology.Paired), attached));
            }
        }

        return new ReferencePreset("reference-2", "§2 memory-mapped pipes: shm-ring, PAIRED 1/2/4/8",
            "published-figures.md §2: pipesCount 1/2/4/8 independent source -> sink pairs (TOPOLOGY_PAIRED) at 1 KB / 10 KB / 100 KB / 1 MB / 10 MB " +
            "on the shm-ring transport; duration not published (5 s after 1 s warmup here).",
            TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(1), cells, []);
    }

    /// <summary>§3: iceoryx2 against Unix domain sockets in Rust: 1 MiB throughput, and one-way latency from 64 B to 4 MB.</summary>
    private static ReferencePreset Section3()
    {
        const string Ref = "published-figures.md §3";
        const string RustVm = " Published: Rust on an Apple M3 in a Linux VM, 1,000 messages; ours: .NET, cross-process, on this machine.";
        const string OwnBench = " Published: iceoryx2's own ping-pong on desktop x86, cores pinned, busy-wait receive; ours: round trip / 2, " +
            "SPIN for iceoryx2, each transport's default wait otherwise, on this machine.";
        var cells = new List<PresetCell>
        {
            new(new CellKey("uds", MB), [new(Ref, "UDS, 1 MiB: ~73 µs/msg (~14 GB/s)", FigureMetric.MessagesPerSecond, 1e6 / 73,
                "Every byte written and checked on both sides." + RustVm)]),
            new(new CellKey("iceoryx2", MB, Access: CellAccess.HeaderOnly), [new(Ref, "iceoryx2, 1 MiB: ~11 µs/msg (\"95 GB/s\")",
                FigureMetric.MessagesPerSecond, 1e6 / 11, "Published wrote and checked only the first and last byte; HEADER_ONLY touches none." + RustVm)]),
            new(new CellKey("iceoryx2", MB), [new(Ref, "iceoryx2, 1 MiB: ~11 µs/msg (\"95 GB/s\")", FigureMetric.MessagesPerSecond, 1e6 / 11,
                "FULL beside it: every byte written and verified, which the published run did not (first and last byte only)." + RustVm)]),
        };
        foreach (var bytes in new[] { 64, 4 * MB })
        {
            cells.Add(new(new CellKey("iceoryx2", bytes, Access: CellAccess.HeaderOnly, Mode: CellMode.RoundTrip, Wait: CellWait.Spin),
                [new(Ref, $"iceoryx2 one-way latency, {ReportFormatting.Bytes(bytes)}", FigureMetric.OneWayLatencyMicroseconds, 0.1, 0.3,
                    "Payload untouched, as in iceoryx2's benchmark (flat up to 4 MB because nothing is copied)." + OwnBench)]));
        }

        cells.Add(new(new CellKey("uds", 64, Mode: CellMode.RoundTrip), [new(Ref, "UDS one-way latency, 64 B", FigureMetric.OneWayLatencyMicroseconds,
            1.6, 2.1, "Every byte written and verified." + OwnBench)]));
        cells.Add(new(new CellKey("uds", 4 * MB, Mode: CellMode.RoundTrip), [new(Ref, "UDS one-way latency, 4 MB", FigureMetric.OneWayLatencyMicroseconds,
            1_100, 2_200, "Every byte written and verified." + OwnBench)]));

        return new ReferencePreset("reference-3", "§3 iceoryx2 vs Unix domain sockets: 1 MiB throughput, latency 64 B to 4 MB",
            "published-figures.md §3: 1:1 streams of 1 MiB over uds and iceoryx2 (iceoryx2 HEADER_ONLY as published, FULL beside it), and round trips " +
            "at 64 B and 4 MB for one-way latency (round trip / 2).",
            TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(1), cells, []);
    }

    /// <summary>§4: memory-mapped file with EventWaitHandle signalling, a request/acknowledge round trip per 256 KB message.</summary>
    private static ReferencePreset Section4()
    {
        const string Ref = "published-figures.md §4";
        const string Method = " Published: .NET 4 on Windows, a 2.2 GHz laptop (and a later run); writer signals \"written\", reader \"handled\". " +
            "Ours: the subscriber echoes every message back to the publisher, one in flight, payload written and verified, on this machine.";
        const int Payload = 256 * KB;
        var cells = new List<PresetCell>
        {
            new(new CellKey("shm-ring", Payload, Mode: CellMode.RoundTrip, Wait: CellWait.Block),
                [new(Ref, "MMF + EventWaitHandle, 256 KB: ~4,000 ops/s, ~12,000 in a later run", FigureMetric.MessagesPerSecond, 4_000, 12_000,
                    "Shared memory with kernel wake-ups (BLOCK), as the MMF with wait handles." + Method)]),
            new(new CellKey("named-pipes", Payload, Mode: CellMode.RoundTrip),
                [new(Ref, "raw named pipes, 256 KB: ~6,000 ops/s", FigureMetric.MessagesPerSecond, 6_000,
                    "Windows named pipes there; .NET named pipes are Unix domain sockets on Linux." + Method)]),
            new(new CellKey("grpc-uds", Payload, Mode: CellMode.RoundTrip), []),
        };

        return new ReferencePreset("reference-4", "§4 memory-mapped file + wait handles: 256 KB round trips",
            "published-figures.md §4: a request/acknowledge round trip per 256 KB message over shared memory with kernel signalling (shm-ring, BLOCK) " +
            "and over named pipes; grpc-uds beside them as today's RPC stack.",
            TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(1), cells,
            ["\"~10x faster than WCF at every payload size\": no WCF transport here (grpc-uds is run beside, not as a stand-in)."]);
    }

    /// <summary>§5: ipc-bench's classic ping-pong at 100 B and 1 KB.</summary>
    private static ReferencePreset Section5()
    {
        const string Ref = "published-figures.md §5";
        const string Method = " Published: ipc-bench (C) on an i5-4590S, one ping-pong counted as one message, as our round trips/s; " +
            "ours: .NET, payload written and verified, each transport's default wait, on this machine.";
        const string SpinMethod = " Published: ipc-bench (C) on an i5-4590S, one ping-pong counted as one message, as our round trips/s; " +
            "ours: .NET, payload written and verified, both sides spinning as ipc-bench's do, on this machine.";
        (string Label, double At100, double At1K)[] shared = [("mmap", 5.34e6, 1.70e6), ("shared memory", 4.70e6, 1.66e6)];
        // ipc-bench's mmap and shm ping-pongs spin on a flag, so the shared-memory figures are set against a spinning
        // shm-ring; the ring with its default wait runs beside it (no figure) to show what the spin buys.
        var figures = new Dictionary<string, (string Label, double At100, double At1K, string Note)[]>
        {
            ["shm-ring"] = [],
            ["uds"] = [("UDS", 130e3, 128e3, "Unix domain stream sockets on both sides.")],
            ["tcp"] = [("TCP", 70e3, 68e3, "Loopback TCP on both sides.")],
            ["zeromq"] = [("ZeroMQ (TCP)", 25e3, 23e3, "Published: libzmq over TCP; ours: NetMQ (C#) ROUTER/DEALER over loopback TCP.")],
            ["named-pipes"] = [],
        };

        var cells = new List<PresetCell>();
        foreach (var bytes in new[] { 100, KB })
        {
            cells.Add(new(new CellKey("shm-ring", bytes, Mode: CellMode.RoundTrip, Wait: CellWait.Spin), shared
                .Select(f => new PublishedFigure(Ref, $"{f.Label}, {ReportFormatting.Bytes(bytes)}", FigureMetric.MessagesPerSecond,
                    bytes == 100 ? f.At100 : f.At1K, "A ring in shared memory, spinning." + SpinMethod))
                .ToList()));
            foreach (var (transport, published) in figures)
            {
                cells.Add(new(new CellKey(transport, bytes, Mode: CellMode.RoundTrip), published
                    .Select(f => new PublishedFigure(Ref, $"{f.Label}, {ReportFormatting.Bytes(bytes)}", FigureMetric.MessagesPerSecond,
                        bytes == 100 ? f.At100 : f.At1K, f.Note + Method))
                    .ToList()));
            }
        }

        return new ReferencePreset("reference-5", "§5 classic IPC ping-pong at 100 B and 1 KB",
            "published-figures.md §5: 1:1 round trips at 100 B and 1 KB over shm-ring spinning (ipc-bench's mmap and shared memory spin), uds, tcp and " +
            "zeromq; shm-ring with its default wait and named-pipes beside them (a Unix domain socket underneath, so not ipc-bench's FIFO).",
            TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(1), cells,
            ["FIFO 266 K / 255 K, message queue 232 K / 214 K, pipe 162 K / 155 K msg/s: no FIFO, POSIX message queue or anonymous pipe transport here."]);
    }

    private static string Name(string transport) => transport switch
    {
        "channels" => "Channels (in-process)",
        "named-pipes" => "Named pipes",
        _ => transport,
    };
}
