using System.Diagnostics;
using OpenTelemetry;
using OpenTelemetry.Metrics;
using OpenTelemetry.Resources;
using OpenTelemetry.Trace;

namespace IpcBench.Agent;

/// <summary>
/// The agent's spans and runtime metrics over OTLP, to the collector the daemon exports to (the daemon hands its OTEL_*
/// settings on in the environment): a span "agent" under the daemon's span that launched it (--traceparent), so one
/// trace shows a scenario across its processes, with a child per phase (connect, warmup, run, drain); a warm agent starts
/// another "agent" span under each later scenario's assigning span. Nothing is created, and
/// nothing costs, without OTEL_EXPORTER_OTLP_ENDPOINT. The hot loops never touch it: phases change a few times a run.
/// </summary>
internal sealed class AgentTelemetry : IDisposable
{
    public const string SourceName = "IpcBench.Agent";
    public const string EndpointVariable = "OTEL_EXPORTER_OTLP_ENDPOINT";

    private static readonly TimeSpan FlushTimeout = TimeSpan.FromSeconds(1);

    private static readonly ActivitySource Source = new(SourceName, typeof(AgentTelemetry).Assembly.GetName().Version?.ToString());

    private readonly TracerProvider? _tracing;
    private readonly MeterProvider? _metrics;
    private Activity? _agent;
    private Activity? _phase;

    private AgentTelemetry(AgentArguments arguments, bool export)
    {
        if (!export)
        {
            return;
        }

        void Resource(ResourceBuilder resource) => resource.AddService("ipcbench-agent", serviceInstanceId: $"{arguments.ScenarioId}/{arguments.Index}")
            .AddAttributes([new("ipcbench.scenario.id", arguments.ScenarioId), new("ipcbench.agent.index", arguments.Index)]);
        // The exporters read the endpoint, protocol and batching from the OTEL_* environment, as the daemon's SDK does.
        _tracing = Sdk.CreateTracerProviderBuilder().ConfigureResource(Resource).AddSource(SourceName).AddOtlpExporter().Build();
        _metrics = Sdk.CreateMeterProviderBuilder().ConfigureResource(Resource).AddRuntimeInstrumentation().AddOtlpExporter().Build();
    }

    /// <summary>Ends the previous scenario's spans, if any, and starts "agent" under the span that assigned this one.</summary>
    public void BeginScenario(string scenarioId, int index, string? traceParent)
    {
        if (_tracing is null)
        {
            return;
        }

        _phase?.Dispose();
        _phase = null;
        _agent?.Dispose();
        ActivityContext.TryParse(traceParent, null, out var parent);
        _agent = Source.StartActivity("agent", ActivityKind.Internal, parent);
        _agent?.SetTag("ipcbench.scenario.id", scenarioId).SetTag("ipcbench.agent.index", index);
    }

    public static AgentTelemetry Start(AgentArguments arguments) =>
        new(arguments, !string.IsNullOrWhiteSpace(Environment.GetEnvironmentVariable(EndpointVariable)));

    /// <summary>Ends the current phase's span and starts the next under "agent".</summary>
    public void BeginPhase(string name)
    {
        _phase?.Dispose();
        _phase = _agent is { } agent ? Source.StartActivity(name, ActivityKind.Internal, agent.Context) : null;
    }

    public void Failed(string error) => _agent?.SetStatus(ActivityStatusCode.Error, error);

    /// <summary>
    /// Ends the spans and flushes both exporters before the process exits, within <see cref="FlushTimeout"/> each: the
    /// daemon gives an exiting agent a few seconds before it kills it, and a slow collector must not take them all.
    /// </summary>
    public void Dispose()
    {
        _phase?.Dispose();
        _agent?.Dispose();
        _tracing?.Shutdown((int)FlushTimeout.TotalMilliseconds);
        _metrics?.Shutdown((int)FlushTimeout.TotalMilliseconds);
        _tracing?.Dispose();
        _metrics?.Dispose();
    }
}
