using System.Text.RegularExpressions;
using IpcBench.Daemon.Control;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Lab;
using IpcBench.Daemon.Observability;
using IpcBench.Reports;
using Serilog;
using Serilog.Events;

namespace IpcBench.Daemon.Run;

/// <summary>
/// `run --daemons`: the suite `run` would run, started on every daemon of a lab (all at once, or one after the other),
/// followed with one progress line per daemon, then one report with the machines side by side. Nothing runs here: no
/// host, no database, no agents; a daemon that fails or vanishes is reported as such and the others finish. Ctrl+C
/// stops the suite on every daemon and still reports what ran.
/// </summary>
internal static partial class LabRun
{
    public static async Task<int> ExecuteAsync(RunSettings settings, LabSettings lab, CancellationToken cancellationToken)
    {
        Logging.Configure(LogEventLevel.Warning);
        try
        {
            return await RunAsync(settings, lab, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            await Log.CloseAndFlushAsync().ConfigureAwait(false);
        }
    }

    private static async Task<int> RunAsync(RunSettings settings, LabSettings lab, CancellationToken cancellationToken)
    {
        var spec = RunSuiteSpec.From(settings, RunSuiteSpec.Lab);
        var created = DateTimeOffset.UtcNow;
        Directory.CreateDirectory(settings.OutputDirectory);
        foreach (var daemon in lab.Daemons.Where(d => lab.Token is not null && d.Endpoint.Scheme == "http" && !Hosting.ControlPlaneSecurity.IsLocalOnly(d.Address)))
        {
            Console.Error.WriteLine($"warning: {daemon.Name}: the token goes to {daemon.Address} unencrypted; give https:// or --ca-file where the daemon serves TLS");
        }

        Console.Error.WriteLine($"Running the suite on {lab.Daemons.Count} daemon(s) {(lab.OneAtATime ? "one at a time" : "at once")}: " +
            string.Join(", ", lab.Daemons.Select(d => d.Name == d.Address ? d.Address : $"{d.Name} ({d.Address})")) + $"; report in {settings.OutputDirectory}");

        var machines = lab.Daemons.Select(d => new LabMachineRun(d, LabChannels.Create(d, lab))).ToList();
        try
        {
            using (cancellationToken.Register(() => machines.ForEach(m => m.RequestStop())))
            {
                await LabProgress.RunAsync(ProgressDisplay.LiveConsole(Console.IsErrorRedirected, Console.Error, ProcessEnvironment()), machines, async progress =>
                {
                    if (lab.OneAtATime)
                    {
                        foreach (var machine in machines)
                        {
                            await machine.RunAsync(spec, progress, cancellationToken).ConfigureAwait(false);
                        }
                    }
                    else
                    {
                        await Task.WhenAll(machines.Select(m => m.RunAsync(spec, progress, cancellationToken))).ConfigureAwait(false);
                    }
                }).ConfigureAwait(false);
            }

            await Task.WhenAll(machines.Select(m => m.Stopping)).ConfigureAwait(false);
        }
        finally
        {
            machines.ForEach(m => m.Dispose());
        }

        var report = new LabReport(spec.Name, created, [.. machines.Select(m => m.Result)]);
        string markdown = LabMarkdownReport.Render(report, ScenarioComparer.DefaultThresholdPercent);
        await WriteAsync(settings.OutputDirectory, report, markdown, machines).ConfigureAwait(false);
        Console.Out.Write(markdown);
        return ExitCode(report, cancellationToken.IsCancellationRequested);
    }

    /// <summary>
    /// Interrupted wins; then no machine finished (1), some did not (<see cref="ExitCodes.Partial"/>), a failed
    /// scenario on a finished machine (1, as for a local run), else 0.
    /// </summary>
    public static int ExitCode(LabReport report, bool interrupted) =>
        interrupted ? ExitCodes.Interrupted
        : report.Finished.Count == 0 ? ExitCodes.Failed
        : report.Machines.Any(m => m.Failed) ? ExitCodes.Partial
        : report.Finished.Any(m => m.Report!.Cells.Any(c => c.Repetitions.Any(r => !r.Succeeded))) ? ExitCodes.Failed
        : ExitCodes.Ok;

    /// <summary>report.md, report.json and report.html of the lab, and each finished machine's own report-NAME.json (what `compare` reads).</summary>
    private static async Task WriteAsync(string directory, LabReport report, string markdown, IReadOnlyList<LabMachineRun> machines)
    {
        double threshold = ScenarioComparer.DefaultThresholdPercent;
        await File.WriteAllTextAsync(Path.Combine(directory, "report.md"), markdown).ConfigureAwait(false);
        await File.WriteAllTextAsync(Path.Combine(directory, "report.json"), LabDocument.Build(report, threshold).ToJson()).ConfigureAwait(false);
        await File.WriteAllTextAsync(Path.Combine(directory, "report.html"), LabHtmlReport.Render(report, threshold)).ConfigureAwait(false);
        var used = new HashSet<string>(StringComparer.Ordinal);
        foreach (var machine in machines.Where(m => m.ReportJson is not null))
        {
            var name = $"report-{UnsafeInFileName().Replace(machine.Daemon.Name, "_")}.json";
            name = used.Add(name) ? name : $"report-{used.Count + 1}.json";
            used.Add(name);
            await File.WriteAllTextAsync(Path.Combine(directory, name), machine.ReportJson).ConfigureAwait(false);
        }
    }

    private static Dictionary<string, string> ProcessEnvironment() =>
        Environment.GetEnvironmentVariables().Cast<System.Collections.DictionaryEntry>()
            .ToDictionary(e => (string)e.Key, e => e.Value as string ?? string.Empty, StringComparer.Ordinal);

    [GeneratedRegex("[^A-Za-z0-9._-]")]
    private static partial Regex UnsafeInFileName();
}
