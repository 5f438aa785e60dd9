using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using IpcBench.Workload;

// What FULL costs per message on one core, without any transport: the publisher's pass (checksum of the pattern from
// registers, then the fill) and the receiver's pass (checksum read from memory), in cache and, for scale, a memcpy of
// the same size. Best of several batches, because the machine is shared. Usage: PayloadCost [sizes...]
int[] sizes = args.Length > 0
    ? [.. args.Select(a => int.Parse(a, CultureInfo.InvariantCulture))]
    : [1024, 64 * 1024, 1024 * 1024];
var budget = TimeSpan.FromMilliseconds(400);

Console.WriteLine("| payload | fill | checksum of pattern | pattern then fill | fused fill+checksum | checksum over memory | memcpy | fused GB/s | receiver GB/s |");
Console.WriteLine("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
foreach (int size in sizes)
{
    Run(size, budget);
}

static unsafe void Run(int size, TimeSpan budget)
{
    byte* a = (byte*)NativeMemory.AlignedAlloc((nuint)size, 64);
    byte* b = (byte*)NativeMemory.AlignedAlloc((nuint)size, 64);
    try
    {
        var source = new Span<byte>(a, size);
        var target = new Span<byte>(b, size);
        source.Fill(3);
        target.Clear();
        ulong sink = 0;
        byte fill = 0;
        double fillNs = Best(size, budget, () => new Span<byte>(a, size).Fill(fill++));
        double patternNs = Best(size, budget, () => sink += PayloadChecksum.ComputeFilled(size, fill++, 7));
        double publisherNs = Best(size, budget, () =>
        {
            sink += PayloadChecksum.ComputeFilled(size, fill, 7);
            new Span<byte>(a, size).Fill(fill++);
        });
        double fusedNs = Best(size, budget, () => sink += PayloadChecksum.FillAndCompute(new Span<byte>(a, size), fill++, 7));
        double readNs = Best(size, budget, () => sink += PayloadChecksum.Compute(new ReadOnlySpan<byte>(a, size), 7));
        double copyNs = Best(size, budget, () => new Span<byte>(a, size).CopyTo(new Span<byte>(b, size)));
        GC.KeepAlive(sink);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"| {size} B | {fillNs:0} ns | {patternNs:0} ns | {publisherNs:0} ns | {fusedNs:0} ns | {readNs:0} ns | {copyNs:0} ns | {size / fusedNs:0.0} | {size / readNs:0.0} |"));
    }
    finally
    {
        NativeMemory.AlignedFree(a);
        NativeMemory.AlignedFree(b);
    }
}

static double Best(int size, TimeSpan budget, Action action)
{
    long perBatch = Math.Max(1, 16L * 1024 * 1024 / size);
    double best = double.MaxValue;
    var total = Stopwatch.StartNew();
    while (total.Elapsed < budget)
    {
        long start = Stopwatch.GetTimestamp();
        for (long i = 0; i < perBatch; i++)
        {
            action();
        }

        best = Math.Min(best, Stopwatch.GetElapsedTime(start).TotalNanoseconds / perBatch);
    }

    return best;
}
