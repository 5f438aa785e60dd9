using IpcBench.Daemon.Observability;
using Serilog;
using Serilog.Events;

namespace IpcBench.Daemon.Hosting;

public static class Logging
{
    private const string ConsoleTemplate = "[{Timestamp:HH:mm:ss.fff} {Level:u3}] {SourceContext}{ScenarioId:l} {Message:lj}{NewLine}{Exception}";

    private static LogEventLevel _minimum = LogEventLevel.Information;

    /// <summary>
    /// Serilog to stderr (stdout stays clean for the run command's tables). Set up before the host so start-up failures
    /// are logged too; Serilog.Extensions.Hosting's bootstrap logger is not on the NuGet mirror, so this is the plain form.
    /// </summary>
    public static void Configure(LogEventLevel minimum)
    {
        _minimum = minimum;
        Log.Logger = Create(jsonFile: null);
    }

    /// <summary>
    /// Adds a file of compact JSON events (CLEF, one per line; see <see cref="CompactJsonFormatter"/>) beside the console,
    /// at the same level: IpcBench:JsonLogFile. Called once the configuration is known, before the host takes the logger.
    /// </summary>
    public static void AddJsonFile(string path)
    {
        var previous = Log.Logger;
        Log.Logger = Create(path);
        (previous as IDisposable)?.Dispose();
    }

    private static Serilog.ILogger Create(string? jsonFile)
    {
        var configuration = new LoggerConfiguration()
            .MinimumLevel.Is(_minimum)
            .MinimumLevel.Override("Microsoft", LogEventLevel.Warning)
            .MinimumLevel.Override("Microsoft.Hosting.Lifetime", _minimum <= LogEventLevel.Information ? LogEventLevel.Information : _minimum)
            .Enrich.FromLogContext()
            .WriteTo.Console(outputTemplate: ConsoleTemplate, standardErrorFromLevel: LogEventLevel.Verbose);
        if (!string.IsNullOrEmpty(jsonFile))
        {
            configuration = configuration.WriteTo.File(new CompactJsonFormatter(), jsonFile,
                fileSizeLimitBytes: 1L << 30, rollOnFileSizeLimit: true, retainedFileCountLimit: 10);
        }

        return configuration.CreateLogger();
    }
}
