using System.Diagnostics;

// churn: allocates ~40 MB/s of garbage, some of it dying young and some only after reaching gen2 (a rolling window
// of ~16 MB), so that the GC heap's size and RSS swing with the collector's timing while the live bytes do not.
// leak: the same, and also keeps 4 MiB a second (1 KiB arrays) for good, as a leak of ~4 KiB per message at 1,000
// messages a second would.
// Prints "ready" once it runs; exits when its standard input closes.
bool leak = args is ["leak"];
if (!leak && args is not ["churn"])
{
    Console.Error.WriteLine("usage: HeapGrowth churn|leak");
    return 2;
}

const int LeakBytesPerSecond = 4 << 20;
const int LeakChunk = 1024;
var leaked = new List<byte[]>();
var window = new byte[2048][];
var random = new Random(1);
var clock = Stopwatch.StartNew();
var stop = new Thread(() =>
{
    while (Console.In.Read() >= 0)
    {
    }

    Environment.Exit(0);
}) { IsBackground = true };
stop.Start();
Console.WriteLine("ready");
for (long step = 0; ; step++)
{
    for (int i = 0; i < 40; i++)
    {
        var garbage = new byte[1024];
        garbage[i] = 1;
        GC.KeepAlive(garbage);
    }

    window[step % window.Length] = new byte[random.Next(1024, 16 * 1024)];
    while (leak && (long)leaked.Count * LeakChunk < clock.Elapsed.TotalSeconds * LeakBytesPerSecond)
    {
        leaked.Add(new byte[LeakChunk]);
    }

    if (step % 16 == 0)
    {
        Thread.Sleep(1);
    }
}
