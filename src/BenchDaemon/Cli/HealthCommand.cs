using System.CommandLine;
using System.Globalization;
using Grpc.Core;
using Grpc.Health.V1;
using Grpc.Net.Client;
using IpcBench.Contracts;
using IpcBench.Daemon.Core;

namespace IpcBench.Daemon.Cli;

/// <summary>
/// `BenchDaemon health`: one grpc.health.v1 Check of a daemon's control port; exit 0 when it answers SERVING, 1 when it
/// does not (NOT_SERVING, an unknown service, nothing listening, no answer in time). What docker-compose.yml's
/// healthcheck runs: the image has neither grpcurl nor grpc_health_probe, and a healthcheck is a command in the
/// container. Health is anonymous, so no token is needed.
/// </summary>
internal static class HealthCommand
{
    private const double MaxTimeoutSeconds = 60;

    public static Command Create()
    {
        var address = new Option<string>("--address")
        {
            Description = "The daemon's control port: host:port, http://host:port or https://host:port; 0.0.0.0 and [::] (a listening address) mean this machine",
            DefaultValueFactory = _ => new DaemonOptions().ControlAddress,
        };
        var service = new Option<string>("--service")
        {
            Description = "The service asked about: empty for the daemon, or ipcbench.v1.BenchControl",
            DefaultValueFactory = _ => "",
        };
        var timeout = new Option<double>("--timeout")
        {
            Description = "Seconds to wait for the answer (0 < t <= 60)",
            DefaultValueFactory = _ => 5,
        };
        var command = new Command("health", "Ask a daemon's grpc.health.v1 whether it serves: exit 0 SERVING, 1 otherwise (container health checks)")
        {
            address, service, timeout,
        };
        command.SetAction((result, cancellation) => CheckAsync(result.GetValue(address)!, result.GetValue(service) ?? "", result.GetValue(timeout), cancellation));
        return command;
    }

    /// <summary>Where to connect for a control address as the daemon is configured with it; null when it is no host:port or URL.</summary>
    internal static Uri? Target(string address) => DaemonAddress.Parse(address) is { IsHttpOrigin: true } parsed ? parsed.LocalTarget : null;

    private static async Task<int> CheckAsync(string address, string service, double seconds, CancellationToken cancellation)
    {
        if (Target(address) is not { } target)
        {
            await Console.Error.WriteLineAsync($"error: --address: '{address}' is not host:port, http://host:port or https://host:port").ConfigureAwait(false);
            return ExitCodes.Usage;
        }

        if (!(seconds > 0 && seconds <= MaxTimeoutSeconds))
        {
            await Console.Error.WriteLineAsync(string.Create(CultureInfo.InvariantCulture, $"error: --timeout: must be more than 0 and at most {MaxTimeoutSeconds}; got {seconds}")).ConfigureAwait(false);
            return ExitCodes.Usage;
        }

        using var channel = GrpcChannel.ForAddress(target);
        var asked = service.Length == 0 ? target.ToString() : $"{target} ({service})";
        try
        {
            var reply = await new Health.HealthClient(channel)
                .CheckAsync(new HealthCheckRequest { Service = service }, deadline: DateTime.UtcNow.AddSeconds(seconds), cancellationToken: cancellation)
                .ConfigureAwait(false);
            if (reply.Status == HealthCheckResponse.Types.ServingStatus.Serving)
            {
                await Console.Out.WriteLineAsync($"{asked}: SERVING").ConfigureAwait(false);
                return ExitCodes.Ok;
            }

            await Console.Error.WriteLineAsync($"{asked}: {reply.Status}").ConfigureAwait(false);
        }
        catch (RpcException e)
        {
            // Unavailable (nothing listening), DeadlineExceeded, or NotFound: grpc.health.v1's answer for an unknown service.
            var detail = e.StatusCode == StatusCode.NotFound ? $"the daemon reports no service '{service}'" : e.Status.Detail;
            await Console.Error.WriteLineAsync($"{asked}: {e.StatusCode}: {detail}").ConfigureAwait(false);
        }

        return ExitCodes.Failed;
    }
}
