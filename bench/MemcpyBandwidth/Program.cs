using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;

// Single-thread memcpy (Span.CopyTo = Buffer.Memmove) between two 64-byte aligned buffers, per size: the ceiling for
// any transport that copies, and the cost of the one copy a chunked shm-ring message pays on each side.
int[] sizes = args.Length > 0
    ? [.. args.Select(a => int.Parse(a, CultureInfo.InvariantCulture))]
    : [8, 1024, 64 * 1024, 1024 * 1024, 64 * 1024 * 1024];
var budget = TimeSpan.FromMilliseconds(400);

Console.WriteLine("| memcpy size | GB/s | ns per copy |");
Console.WriteLine("|---:|---:|---:|");
foreach (int size in sizes)
{
    var (gbPerSecond, nsPerCopy) = Measure(size, budget);
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| {Bytes(size)} | {gbPerSecond:0.0} | {nsPerCopy:0.0} |"));
}

static unsafe (double GbPerSecond, double NsPerCopy) Measure(int size, TimeSpan budget)
{
    byte* source = (byte*)NativeMemory.AlignedAlloc((nuint)size, 64);
    byte* destination = (byte*)NativeMemory.AlignedAlloc((nuint)size, 64);
    try
    {
        var from = new Span<byte>(source, size);
        var to = new Span<byte>(destination, size);
        from.Fill(0x5A);
        to.Clear();
        from.CopyTo(to);

        // Batches sized so the clock is read rarely; best of several batches (the machine is shared).
        long perBatch = Math.Max(1, 64L * 1024 * 1024 / size);
        double best = double.MaxValue;
        var total = Stopwatch.StartNew();
        while (total.Elapsed < budget)
        {
            long start = Stopwatch.GetTimestamp();
            for (long i = 0; i < perBatch; i++)
            {
                from.CopyTo(to);
            }

            double ns = Stopwatch.GetElapsedTime(start).TotalNanoseconds / perBatch;
            best = Math.Min(best, ns);
        }

        return (size / best, best);
    }
    finally
    {
        NativeMemory.AlignedFree(source);
        NativeMemory.AlignedFree(destination);
    }
}

static string Bytes(int size) => size switch
{
    >= 1024 * 1024 => $"{size / (1024 * 1024)} MiB",
    >= 1024 => $"{size / 1024} KiB",
    _ => $"{size} B",
};
