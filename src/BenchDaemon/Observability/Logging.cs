using IpcBench.Daemon.Core;
using Serilog;
using Serilog.Events;
using Serilog.Formatting.Compact;
using Serilog.Settings.Configuration;

namespace IpcBench.Daemon.Observability;

/// <summary>
/// Serilog to stderr (stdout stays clean for the run command's tables), in two steps: a bootstrap logger before the host
/// exists, so start-up failures are logged too, then the host's logger (<see cref="ConfigureHost"/>) once configuration
/// is known. Both start from the same defaults; configuration (Serilog:MinimumLevel, Serilog:WriteTo, ...) comes last.
/// </summary>
public static class Logging
{
    private const string ConsoleTemplate = "[{Timestamp:HH:mm:ss.fff} {Level:u3}] {SourceContext}{ScenarioId:l} {Message:lj}{NewLine}{Exception}";

    /// <summary>IpcBench:JsonLogFile: compact JSON events (CLEF) beside the console, at the same levels.</summary>
    public const string JsonLogFileKey = $"{DaemonOptions.SectionName}:{nameof(DaemonOptions.JsonLogFile)}";

    // The sink and formatter assemblies the daemon ships, named rather than found: left to find them, Serilog.Settings.
    // Configuration reads the daemon's deps.json for every library that mentions Serilog, ~175 methods compiled at each
    // start (of 3,555 to answer health). A sink outside these could not be configured anyway: it would not be deployed.
    private static readonly ConfigurationReaderOptions ReaderOptions = new(
        typeof(ConsoleLoggerConfigurationExtensions).Assembly,
        typeof(FileLoggerConfigurationExtensions).Assembly,
        typeof(LoggerSinkConfigurationDebugExtensions).Assembly,
        typeof(CompactJsonFormatter).Assembly);

    // The command's default level (serve: Information, run: Warning), set once before the host is built.
    private static LogEventLevel _minimum = LogEventLevel.Information;

    /// <summary>The bootstrap logger, console only; the host's logger replaces it in place (it is reloadable).</summary>
    public static void Configure(LogEventLevel minimum)
    {
        _minimum = minimum;
        Log.Logger = Defaults(new LoggerConfiguration()).CreateBootstrapLogger();
    }

    /// <summary>The host's logger: the defaults, Serilog:* from configuration over them, and the JSON file if configured.</summary>
    public static void ConfigureHost(LoggerConfiguration logger, IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(logger);
        ArgumentNullException.ThrowIfNull(configuration);
        Defaults(logger).ReadFrom.Configuration(configuration, ReaderOptions);
        var jsonFile = configuration[JsonLogFileKey];
        if (!string.IsNullOrWhiteSpace(jsonFile))
        {
            logger.WriteTo.File(new CompactJsonFormatter(), jsonFile,
                fileSizeLimitBytes: 1L << 30, rollOnFileSizeLimit: true, retainedFileCountLimit: 10);
        }
    }

    private static LoggerConfiguration Defaults(LoggerConfiguration logger) => logger
        .MinimumLevel.Is(_minimum)
        // ASP.NET Core's per-request chatter stays out; its start and stop lines stay in unless the level hides them.
        .MinimumLevel.Override("Microsoft", LogEventLevel.Warning)
        .MinimumLevel.Override("Microsoft.Hosting.Lifetime", _minimum <= LogEventLevel.Information ? LogEventLevel.Information : _minimum)
        .Enrich.FromLogContext()
        .WriteTo.Console(outputTemplate: ConsoleTemplate, standardErrorFromLevel: LogEventLevel.Verbose);
}
