using System.ComponentModel.DataAnnotations;

namespace IpcBench.Daemon.Hosting;

/// <summary>Daemon settings: section "IpcBench" of appsettings.json, IpcBench__* environment variables or --IpcBench:Key=value.</summary>
public sealed class DaemonOptions
{
    public const string SectionName = "IpcBench";

    /// <summary>host:port of the gRPC control plane (h2c). Empty: no control port (the one-shot run uses this).</summary>
    public string ControlAddress { get; set; } = "127.0.0.1:50051";

    /// <summary>Where each daemon keeps its sockets; a subdirectory per daemon pid. Default: $TMPDIR/ipcbench.</summary>
    public string? RuntimeDirectory { get; set; }

    /// <summary>The BenchAgent executable (or .dll, run with dotnet). Default: BenchAgent beside the daemon.</summary>
    public string? AgentPath { get; set; }

    [Range(1, 4096)]
    public int MaxPublishers { get; set; } = 64;

    [Range(1, 4096)]
    public int MaxSubscribers { get; set; } = 64;

    [Range(1, int.MaxValue - 64)]
    public int MaxPayloadBytes { get; set; } = 64 * 1024 * 1024;

    [Range(1, 64)]
    public int MaxConcurrentScenarios { get; set; } = 4;

    /// <summary>How long agents get to start, connect and report ready.</summary>
    [Range(1, 600)]
    public int AgentStartTimeoutSeconds { get; set; } = 30;

    /// <summary>How long subscribers get to drain after publishers stop before their last messages count as lost.</summary>
    [Range(1, 600)]
    public int DrainTimeoutSeconds { get; set; } = 10;

    [Range(1, 100_000)]
    public int MaxRetainedScenarios { get; set; } = 1000;
}
