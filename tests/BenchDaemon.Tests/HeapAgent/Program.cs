using IpcBench.Agent;

[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]

// The environment is the test's switch: this program exists only for SoakAgentTests.
string mode = Environment.GetEnvironmentVariable("IPCBENCH_TEST_AGENT_HEAP") ?? "none";
if (mode is "leak" or "churn")
{
    new Thread(() => Heap(mode == "leak")) { IsBackground = true, Name = "heap " + mode }.Start();
}

return await AgentProgram.RunAsync(args);

static void Heap(bool leak)
{
    const int Chunk = 1024;
    var kept = new List<byte[]>();
    var window = new byte[1024][];
    var random = new Random(1);
    var clock = System.Diagnostics.Stopwatch.StartNew();
    for (long step = 0; ; step++)
    {
        // About 25 MB/s of garbage (a step of ~28 KB, then ~1.1 ms asleep): most dies young, the rolling window's arrays
        // (~8 MB) live long enough to reach gen2. Paced: unpaced, it allocated as fast as a core could, and the two
        // daemons' soaks shared the machine with two such cores.
        for (int i = 0; i < 20; i++)
        {
            GC.KeepAlive(new byte[Chunk]);
        }

        window[step % window.Length] = new byte[random.Next(Chunk, 15 * Chunk)];
        while (leak && (long)kept.Count * Chunk < clock.Elapsed.TotalSeconds * (1 << 20))
        {
            kept.Add(new byte[Chunk]);
        }

        Thread.Sleep(1);
    }
}
