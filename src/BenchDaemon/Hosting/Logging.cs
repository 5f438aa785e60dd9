using Serilog;
using Serilog.Events;

namespace IpcBench.Daemon.Hosting;

public static class Logging
{
    /// <summary>
    /// Serilog to stderr (stdout stays clean for the run command's tables). Set up before the host so start-up failures
    /// are logged too; Serilog.Extensions.Hosting's bootstrap logger is not on the NuGet mirror, so this is the plain form.
    /// </summary>
    public static void Configure(LogEventLevel minimum)
    {
        Log.Logger = new LoggerConfiguration()
            .MinimumLevel.Is(minimum)
            .MinimumLevel.Override("Microsoft", LogEventLevel.Warning)
            .MinimumLevel.Override("Microsoft.Hosting.Lifetime", minimum <= LogEventLevel.Information ? LogEventLevel.Information : minimum)
            .Enrich.FromLogContext()
            .WriteTo.Console(
                outputTemplate: "[{Timestamp:HH:mm:ss.fff} {Level:u3}] {SourceContext}{ScenarioId:l} {Message:lj}{NewLine}{Exception}",
                standardErrorFromLevel: LogEventLevel.Verbose)
            .CreateLogger();
    }
}
