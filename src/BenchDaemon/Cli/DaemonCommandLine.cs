using System.CommandLine;
using System.CommandLine.Help;
using System.Runtime.InteropServices;
using IpcBench.Daemon.Core;
using IpcBench.Daemon.Hosting;
using IpcBench.Daemon.Observability;
using IpcBench.Daemon.Run;
using IpcBench.Workload;
using Serilog;
using Serilog.Events;

namespace IpcBench.Daemon.Cli;

/// <summary>
/// `BenchDaemon [serve]` runs the daemon; `BenchDaemon run` runs a benchmark matrix once and prints it; `BenchDaemon
/// compare` compares two runs' report.json offline; `BenchDaemon health` asks a running daemon whether it serves.
/// </summary>
public static class DaemonCommandLine
{
    public static async Task<int> InvokeAsync(string[] args)
    {
        // Before anything allocates natively: a daemon that runs for days must not grow its malloc arenas.
        NativeHeap.PinMmapThreshold();
        var parsed = Parse(args);
        if (parsed.Errors.Count > 0 && parsed.Result.Action is not HelpAction)
        {
            foreach (var error in parsed.Errors)
            {
                await Console.Error.WriteLineAsync($"error: {error}").ConfigureAwait(false);
            }

            await Console.Error.WriteLineAsync(UsageErrors.HelpHint(parsed.Result)).ConfigureAwait(false);
            return ExitCodes.Usage;
        }

        using var interruption = new Interruption();
        var exitCode = await parsed.Result.InvokeAsync(new InvocationConfiguration { ProcessTerminationTimeout = null }, interruption.Token)
            .ConfigureAwait(false);
        return (interruption.Signal, parsed.Result.CommandResult.Command.Name) switch
        {
            (null, _) => exitCode,
            // serve's ordinary end (systemd, docker stop): 0 after a clean shutdown, its own code after a fault.
            (PosixSignal.SIGTERM, not "run") => exitCode,
            (PosixSignal.SIGTERM, _) => ExitCodes.Terminated,
            _ when exitCode is ExitCodes.Ok or ExitCodes.Failed or ExitCodes.Interrupted => ExitCodes.Interrupted,
            _ => exitCode,
        };
    }

    /// <summary>The command line parsed, with the <c>--Section:Key=value</c> settings set aside for the host and every problem found.</summary>
    internal static ParsedCommandLine Parse(IReadOnlyList<string> args)
    {
        var (settings, arguments) = ConfigurationArguments.Split(args);
        var result = Create(settings).Parse(arguments);
        return new ParsedCommandLine(result, settings, UsageErrors.Describe(result));
    }

    private static RootCommand Create(string[] settings)
    {
        var listen = new Option<string?>("--listen") { Description = "host:port of the gRPC control plane (default 127.0.0.1:50051)" };
        var serve = new Command("serve", "Run the daemon: gRPC control plane, scenarios in the background") { listen };
        serve.SetAction((result, token) => ServeAsync(result.GetValue(listen), settings));

        var run = RunCommand.Create(settings);
        var root = new RootCommand("IpcBench daemon: measures inter-process communication transports. "
            + "Settings (section IpcBench of appsettings.json) also as --IpcBench:Key=value, with any command.") { serve, run, CompareCommand.Create(), HealthCommand.Create(), listen };
        root.SetAction((result, token) => ServeAsync(result.GetValue(listen), settings));
        return root;
    }

    private static async Task<int> ServeAsync(string? listen, string[] configurationArguments)
    {
        Logging.Configure(LogEventLevel.Information);
        try
        {
            // The host stops itself on SIGTERM and Ctrl+C (its console or systemd lifetime), ending RunAsync.
            var app = DaemonHost.Build(configurationArguments, options =>
            {
                if (listen is not null)
                {
                    options.ControlAddress = listen;
                }
            });
            await app.RunAsync().ConfigureAwait(false);
            return ExitCodes.Ok;
        }
        catch (Exception e) when (DaemonHost.IsConfigurationError(e))
        {
            Log.Fatal("Cannot start: {Reason}", e.Message);
            return ExitCodes.Usage;
        }
        catch (Exception e)
        {
            Log.Fatal(e, "The daemon stopped unexpectedly");
            return ExitCodes.Failed;
        }
        finally
        {
            await Log.CloseAndFlushAsync().ConfigureAwait(false);
        }
    }
}

/// <summary>A parsed command line: System.CommandLine's result, the settings for the host, and the usage errors (none: it can run).</summary>
internal sealed record ParsedCommandLine(ParseResult Result, IReadOnlyList<string> Settings, IReadOnlyList<string> Errors);
