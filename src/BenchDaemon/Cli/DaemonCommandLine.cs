using System.CommandLine;
using IpcBench.Daemon.Hosting;
using IpcBench.Daemon.Observability;
using IpcBench.Daemon.Run;
using Serilog;
using Serilog.Events;

namespace IpcBench.Daemon.Cli;

/// <summary>`BenchDaemon [serve]` runs the daemon; `BenchDaemon run` runs a benchmark matrix once and prints it.</summary>
public static class DaemonCommandLine
{
    public static async Task<int> InvokeAsync(string[] args)
    {
        var listen = new Option<string?>("--listen") { Description = "host:port of the gRPC control plane (default 127.0.0.1:50051)" };
        var serve = new Command("serve", "Run the daemon: gRPC control plane, scenarios in the background") { listen };
        serve.TreatUnmatchedTokensAsErrors = false;
        serve.SetAction((result, token) => ServeAsync(result.GetValue(listen), [.. result.UnmatchedTokens], token));

        var run = RunCommand.Create();
        var root = new RootCommand("IpcBench daemon: measures inter-process communication transports") { serve, run, listen };
        root.TreatUnmatchedTokensAsErrors = false;
        root.SetAction((result, token) => ServeAsync(result.GetValue(listen), [.. result.UnmatchedTokens], token));
        return await root.Parse(args).InvokeAsync().ConfigureAwait(false);
    }

    private static async Task<int> ServeAsync(string? listen, string[] configurationArguments, CancellationToken cancellationToken)
    {
        Logging.Configure(LogEventLevel.Information);
        try
        {
            var app = DaemonHost.Build(configurationArguments, options =>
            {
                if (listen is not null)
                {
                    options.ControlAddress = listen;
                }
            });
            await app.RunAsync().ConfigureAwait(false);
            return 0;
        }
        catch (Exception e) when (DaemonHost.IsConfigurationError(e))
        {
            Log.Fatal("Cannot start: {Reason}", e.Message);
            return 2;
        }
        catch (Exception e)
        {
            Log.Fatal(e, "The daemon stopped unexpectedly");
            return 1;
        }
        finally
        {
            await Log.CloseAndFlushAsync().ConfigureAwait(false);
        }
    }
}
