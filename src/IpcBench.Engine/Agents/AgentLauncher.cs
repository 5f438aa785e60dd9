using System.Diagnostics;
using IpcBench.Daemon.Core;
using IpcBench.Transports;
using Microsoft.Extensions.Options;

namespace IpcBench.Daemon.Agents;

/// <summary>Starts BenchAgent processes and forwards their output into the daemon's log under their own identity.</summary>
public sealed class AgentLauncher(IOptions<DaemonOptions> options, RuntimeDirectory runtime, IConfiguration configuration, ILogger<AgentLauncher> logger)
{
    /// <summary>The OpenTelemetry SDK's settings all start so (OTEL_EXPORTER_OTLP_ENDPOINT, _PROTOCOL, OTEL_BSP_*, ...).</summary>
    private const string OtelPrefix = "OTEL_";

    public const string TokenVariable = "IPCBENCH_AGENT_TOKEN";

    /// <summary>
    /// Runtime settings every agent gets unless the daemon's own environment sets them (whoever sets one keeps theirs).
    /// DOTNET_GCgen0size: an agent's steady garbage is its once-a-second report (~30 KB/s); with the default gen0 budget,
    /// sized from the last-level cache (tens of MB), its first collection came ~15 min into a run and its RSS climbed all
    /// that time, +26 % over a 30-minute soak, indistinguishable from a leak; 4 MiB gives a collection every couple of
    /// minutes (~100 µs, almost nothing live) and a flat RSS. DOTNET_TieredPGO_InstrumentOnlyHotCode: a fresh agent's
    /// warmup was mostly the JIT recompiling the framework's precompiled HTTP/2 client (its reports' channel) twice,
    /// instrumented then optimized, on the one background thread the hot loops leave a share of a core; the window waited
    /// 6-9 s for it (docs/how-it-measures.md, "What the settling waits for"). With 0 the runtime instruments our own code
    /// from its first call (the hot loops keep their PGO) and sends the framework's precompiled code straight to tier 1.
    /// </summary>
    private static readonly (string Variable, string Value)[] RuntimeDefaults =
    [
        ("DOTNET_GCgen0size", "0x400000"),
        ("DOTNET_TieredPGO_InstrumentOnlyHotCode", "0"),
    ];

    private readonly Lazy<(string FileName, string[] Prefix)> _executable = new(() => Resolve(options.Value.AgentPath));

    public string? UnavailableReason
    {
        get
        {
            try
            {
                _ = _executable.Value;
                return null;
            }
            catch (FileNotFoundException e)
            {
                return e.Message;
            }
        }
    }

    /// <summary>Starts a new agent process for <paramref name="session"/>; its connection may serve later sessions too.</summary>
    public void Launch(AgentSession session)
    {
        var connection = new AgentConnection(session);
        var (fileName, prefix) = _executable.Value;
        var start = new ProcessStartInfo(fileName)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var argument in prefix)
        {
            start.ArgumentList.Add(argument);
        }

        string[] arguments =
        [
            "--daemon", "unix:" + runtime.AgentSocketPath,
            "--scenario", session.ScenarioId,
            "--index", session.Index.ToString(),
            "--daemon-pid", Environment.ProcessId.ToString(),
        ];
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        // The span launching it (the scenario's "agents up" phase) parents the agent's own spans: one trace per scenario
        // across its processes. Null, and nothing passed, when no listener traces the daemon.
        if (Activity.Current is { IdFormat: ActivityIdFormat.W3C } launching)
        {
            start.ArgumentList.Add("--traceparent");
            start.ArgumentList.Add(launching.Id!);
        }

        // The daemon's OTLP settings may come from its command line or appsettings, which a child does not inherit as
        // the environment: handed on, so agents export to the same collector.
        foreach (var (key, value) in configuration.AsEnumerable(makePathsRelative: true))
        {
            if (key.StartsWith(OtelPrefix, StringComparison.Ordinal) && !key.Contains(':', StringComparison.Ordinal) && value is not null)
            {
                start.Environment[key] = value;
            }
        }

        // In the environment, not the command line, so other users cannot read it from ps.
        start.Environment[TokenVariable] = session.Token;
        foreach (var (variable, value) in RuntimeDefaults)
        {
            start.Environment.TryAdd(variable, value);
        }

        var process = new Process { StartInfo = start, EnableRaisingEvents = true };
        process.OutputDataReceived += (_, e) => Forward(connection, e.Data);
        process.ErrorDataReceived += (_, e) => Forward(connection, e.Data);
        process.Exited += (_, _) =>
        {
            connection.OnExited(SafeExitCode(process));
            // Reaped by now: a killed agent's debugger pipes and diagnostic socket would otherwise stay in TMPDIR forever.
            _ = DiagnosticFiles.RemoveOf(process.Id);
        };
        process.Start();
        connection.Process = process;
        connection.Pid = session.Pid = process.Id;
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        logger.LogInformation("Started {Agent} for scenario {ScenarioId}", session.Name, session.ScenarioId);
    }

    private void Forward(AgentConnection connection, string? line)
    {
        if (string.IsNullOrWhiteSpace(line))
        {
            return;
        }

        // Under the scenario the agent serves now; an idle warm agent's lines (its exit) under none.
        if (connection.Session is not { } session)
        {
            logger.LogInformation("[idle agent pid {AgentPid}] {AgentLine}", connection.Pid, line);
            return;
        }

        using (logger.BeginScope(new Dictionary<string, object> { ["ScenarioId"] = session.ScenarioId, ["Agent"] = session.Index }))
        {
            logger.LogInformation("[agent {AgentIndex} pid {AgentPid}] {AgentLine}", session.Index, session.Pid, line);
        }
    }

    private static int SafeExitCode(Process process)
    {
        try
        {
            return process.ExitCode;
        }
        catch (InvalidOperationException)
        {
            return -1;
        }
    }

    private static (string, string[]) Resolve(string? configured)
    {
        if (!string.IsNullOrEmpty(configured))
        {
            if (!File.Exists(configured))
            {
                throw new FileNotFoundException($"IpcBench:AgentPath '{configured}' does not exist.");
            }

            return configured.EndsWith(".dll", StringComparison.OrdinalIgnoreCase) ? (DotnetHost(), [configured]) : (configured, []);
        }

        var apphost = Path.Combine(AppContext.BaseDirectory, "BenchAgent");
        if (File.Exists(apphost))
        {
            return (apphost, []);
        }

        var assembly = Path.Combine(AppContext.BaseDirectory, "BenchAgent.dll");
        if (File.Exists(assembly))
        {
            return (DotnetHost(), [assembly]);
        }

        throw new FileNotFoundException($"BenchAgent was not found beside the daemon in {AppContext.BaseDirectory}; build the solution or set IpcBench:AgentPath.");
    }

    private static string DotnetHost() => Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } host ? host : "dotnet";
}
