using System.ComponentModel.DataAnnotations;
using IpcBench.Transports;

namespace IpcBench.Daemon.Core;

/// <summary>Daemon settings: section "IpcBench" of appsettings.json, IpcBench__* environment variables or --IpcBench:Key=value.</summary>
public sealed class DaemonOptions
{
    public const string SectionName = "IpcBench";

    /// <summary>
    /// host:port of the gRPC control plane (h2c, or TLS with <see cref="TlsCertificateFile"/>). Empty: no control port
    /// (the one-shot run uses this). Any address but loopback requires a bearer token (<see cref="ControlTokenFile"/>).
    /// </summary>
    public string ControlAddress { get; set; } = "127.0.0.1:50051";

    /// <summary>
    /// A file holding the control plane's bearer token (surrounding whitespace ignored; at least 16 characters). It
    /// must not be readable by group or others (chmod 600). The alternative is the environment variable
    /// IPCBENCH_CONTROL_TOKEN; not both. A token is not a setting like the others: it never goes on the command line,
    /// where every local user could read it in the process list.
    /// </summary>
    public string? ControlTokenFile { get; set; }

    /// <summary>Require the token on a loopback control address too (shared lab machines, tests). Off: loopback is open.</summary>
    public bool RequireControlToken { get; set; }

    /// <summary>PEM certificate (chain) for TLS on the control port; with <see cref="TlsKeyFile"/>. Unset: plain-text h2c.</summary>
    public string? TlsCertificateFile { get; set; }

    /// <summary>PEM private key (PKCS#8, PKCS#1 or SEC1, unencrypted) of <see cref="TlsCertificateFile"/>.</summary>
    public string? TlsKeyFile { get; set; }

    /// <summary>
    /// host:port of the Prometheus endpoint (GET /metrics, HTTP/1.1, its own port). Empty: no metrics port (the one-shot
    /// run never opens it). 0.0.0.0:9464 inside a container.
    /// </summary>
    public string MetricsAddress { get; set; } = "127.0.0.1:9464";

    /// <summary>Finished scenarios whose series /metrics keeps showing (the most recent ones); running ones always show.</summary>
    [Range(0, 1000)]
    public int MetricsRecentScenarios { get; set; } = 20;

    /// <summary>Also log to this file, one compact JSON (CLEF) event per line. Empty: console only.</summary>
    public string? JsonLogFile { get; set; }

    /// <summary>Where each daemon keeps its sockets; a subdirectory per daemon pid. Default: $TMPDIR/ipcbench.</summary>
    public string? RuntimeDirectory { get; set; }

    /// <summary>The BenchAgent executable (or .dll, run with dotnet). Default: BenchAgent beside the daemon.</summary>
    public string? AgentPath { get; set; }

    [Range(1, 4096)]
    public int MaxPublishers { get; set; } = 64;

    [Range(1, 4096)]
    public int MaxSubscribers { get; set; } = 64;

    /// <summary>The largest payload a spec may ask for; at most what every transport carries (64 MiB).</summary>
    [Range(1, TransportCapabilities.LargestPayloadBytes)]
    public int MaxPayloadBytes { get; set; } = TransportCapabilities.LargestPayloadBytes;

    [Range(1, 64)]
    public int MaxConcurrentScenarios { get; set; } = 4;

    /// <summary>Agent processes (one per subscriber on cross-process transports) all running scenarios may have at once.</summary>
    [Range(1, 65_536)]
    public int MaxAgents { get; set; } = 256;

    /// <summary>Shared memory all running scenarios may map together (bytes); 0: only what the file system has free.</summary>
    [Range(0, long.MaxValue)]
    public long SharedMemoryBudgetBytes { get; set; }

    /// <summary>
    /// The one shared-memory directory: shm-ring creates its rings here, iceoryx2 checks it for room (and is unavailable
    /// unless it is /dev/shm, where shm_open puts its segments), and a scenario needing more than it has free is refused.
    /// </summary>
    [Required]
    public string SharedMemoryDirectory { get; set; } = IpcBench.Transports.TransportSettings.DefaultSharedMemoryDirectory;

    /// <summary>
    /// Each transport's own settings, section IpcBench:Transports:&lt;transport id&gt; (e.g. IpcBench:Transports:shm-ring:RingBytes),
    /// documented in the transport's README and checked at start-up. Agents get their transport's section in their set-up.
    /// </summary>
    public Dictionary<string, Dictionary<string, string>> Transports { get; } = new(StringComparer.Ordinal);

    /// <summary>What the transports are built with: <see cref="SharedMemoryDirectory"/> and <see cref="Transports"/>.</summary>
    public TransportSettings TransportSettings() => new(
        SharedMemoryDirectory,
        Transports.Select(t => new KeyValuePair<string, IReadOnlyDictionary<string, string>>(t.Key, t.Value)));

    /// <summary>
    /// An agent that sends no report (they come once a second) for this long is taken as hung, e.g. stopped by SIGSTOP,
    /// and fails its scenario.
    /// </summary>
    [Range(1, 3600)]
    public int HeartbeatTimeoutSeconds { get; set; } = 10;

    /// <summary>
    /// After a scenario's warmup, how much longer it may wait for code generation to settle (the JIT using at most 2 % of
    /// a core over the last second in the daemon and in each agent) before its measured window begins anyway; 0: the
    /// window begins when the spec's warmup ends. Results record the warmup as run and whether it settled
    /// (docs/how-it-measures.md).
    /// </summary>
    [Range(0, 600)]
    public int CodeSettleTimeoutSeconds { get; set; } = 10;

    /// <summary>A soak's judgement takes a point this often: mean rate, latency p99 and every process's resources (docs/control-plane.md, "Soak").</summary>
    [Range(1, 600)]
    public int SoakPointSeconds { get; set; } = 10;

    /// <summary>The soak's sliding window, besides the fit since the start.</summary>
    [Range(1, 1440)]
    public int SoakWindowMinutes { get; set; } = 60;

    /// <summary>
    /// Measured seconds whose resource readings a soak's leak fits leave out: a process still grows for a while after its
    /// window began (code heap, tiered recompilation, the collector sizing its budgets, pools filled once). An in-process
    /// host grew 22 MiB of RSS over its first 28 s of a channels soak; an agent churning garbage 8.2 MiB between 12 s and
    /// 51 s. A leak of 1 MiB a second is still judged within two minutes at the default point.
    /// </summary>
    [Range(0, 3600)]
    public int SoakResourceWarmupSeconds { get; set; } = 60;

    /// <summary>
    /// How long an agent whose scenario ended well waits, idle, for the next scenario to need one (any transport): a warm
    /// agent skips its process start and most of its code generation, which a fresh one spends seconds of warmup on
    /// (docs/how-it-measures.md, "Warm agents"). The daemon hands it on only when /proc shows the scenario left nothing in
    /// it (receiving threads, descriptors, shared memory), and never for lock_memory. 0: every scenario starts fresh
    /// agents, as `run --fresh-agents` asks.
    /// </summary>
    [Range(0, 3600)]
    public int WarmAgentIdleSeconds { get; set; } = 15;

    /// <summary>How long agents get to start, connect and report ready.</summary>
    [Range(1, 600)]
    public int AgentStartTimeoutSeconds { get; set; } = 30;

    /// <summary>How long subscribers get to drain after publishers stop before their last messages count as lost.</summary>
    [Range(1, 600)]
    public int DrainTimeoutSeconds { get; set; } = 10;

    /// <summary>
    /// Scenarios kept, in memory and in the database: beyond this many the oldest finished ones (with their series)
    /// are deleted. Running ones are never deleted.
    /// </summary>
    [Range(1, 100_000)]
    public int MaxRetainedScenarios { get; set; } = 1000;

    /// <summary>Also delete finished scenarios created more than this many days ago from the database. 0: no age limit.</summary>
    [Range(0, 36_500)]
    public int RetentionDays { get; set; }

    /// <summary>
    /// The SQLite file scenarios and their per-second series are kept in, so they survive a restart. Default:
    /// $XDG_STATE_HOME/ipcbench/scenarios.db, else ~/.local/state/ipcbench/scenarios.db; its directory is created 0700.
    /// </summary>
    public string? DatabasePath { get; set; }

    public string ResolveDatabasePath()
    {
        if (!string.IsNullOrWhiteSpace(DatabasePath))
        {
            return Path.GetFullPath(DatabasePath);
        }

        // XDG Base Directory: a relative XDG_STATE_HOME is invalid and must be ignored.
        var state = Environment.GetEnvironmentVariable("XDG_STATE_HOME");
        if (string.IsNullOrEmpty(state) || !Path.IsPathRooted(state))
        {
            state = Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile), ".local", "state");
        }

        return Path.Combine(state, "ipcbench", "scenarios.db");
    }
}
