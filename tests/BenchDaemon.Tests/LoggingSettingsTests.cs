using IpcBench.Daemon.Observability;
using IpcBench.Daemon.Tests.Infrastructure;
using Microsoft.Extensions.Configuration;
using Serilog;

namespace IpcBench.Daemon.Tests;

/// <summary>
/// Serilog:WriteTo from configuration reaches the sinks the daemon ships, which Logging names to Serilog instead of
/// letting it search the deps.json at every start.
/// </summary>
[Collection(LightCollection.Name)]
public sealed class LoggingSettingsTests
{
    [Fact]
    public void TheFileSink_IsConfiguredFromSerilogWriteTo()
    {
        var directory = Directory.CreateTempSubdirectory("ipcbench-logging-").FullName;
        try
        {
            string path = Path.Combine(directory, "daemon.log");
            var configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
            {
                ["Serilog:WriteTo:0:Name"] = "File",
                ["Serilog:WriteTo:0:Args:path"] = path,
            }).Build();
            var logger = new LoggerConfiguration();
            Logging.ConfigureHost(logger, configuration);
            using (var log = logger.CreateLogger())
            {
                log.Information("configured from {Section}", "Serilog:WriteTo");
            }

            Assert.Contains("configured from Serilog:WriteTo", File.ReadAllText(path), StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(directory, recursive: true);
        }
    }
}
