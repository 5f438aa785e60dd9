using System.Globalization;
using IpcBench.Soak;

// Usage: Soak DURATION [--transports a,b] [--parallel] [--payload BYTES] [--warmup DURATION] [--rate MSG_PER_S] [--wait spin|yield|block]
//             [--topology P:S] [--json FILE] [--daemon PATH]
//   DURATION: how long each transport's scenario is measured, e.g. 90s, 5m, 1h (with --parallel: all at once).
//   --warmup: unmeasured time first (default a tenth of DURATION, 5 s to 60 s): the scenarios' own start (pools, first
//             messages) before the first live-heap reading.
//   --rate: messages a second each publisher offers (default: closed loop, as fast as the subscribers take them).
//   --wait: the subscribers' wait strategy on every transport (default: each transport's own).
//   --topology: publishers and subscribers of each transport's ALL_TO_ALL scenario (default 2:4).
// Exit code: 0 when every check passed, 1 when one failed, 2 for bad arguments, 3 when the daemon could not be run.
try
{
    var options = SoakOptions.Parse(args);
    await using var soak = await SoakSession.StartAsync(options, Console.Error);
    var report = await soak.RunAsync();
    Console.Out.Write(report.ToMarkdown());
    if (options.JsonPath is { } json)
    {
        await File.WriteAllTextAsync(json, report.ToJson());
    }

    return report.Passed ? 0 : 1;
}
catch (ArgumentException e)
{
    Console.Error.WriteLine($"soak: {e.Message}");
    Console.Error.WriteLine("usage: Soak DURATION [--transports a,b] [--parallel] [--payload BYTES] [--warmup DURATION] [--rate MSG_PER_S] [--wait spin|yield|block] [--topology P:S] [--json FILE] [--daemon PATH]");
    return 2;
}
catch (SoakSetupException e)
{
    Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture, $"soak: {e.Message}"));
    return 3;
}
